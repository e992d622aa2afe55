/* watch_word: which part of a sampled access a watchpoint watches.
 *
 * Header-only, one definition for the runtime (watchpoint_pick_word) and
 * the oracle's count-based simulation of Witch (tools/oracle/simulate.c,
 * a Valgrind tool that links no libwitch), which must draw alike.
 *
 * The largest aligned 8/4/2/1-byte piece inside [addr, addr + len) around
 * its byte addr + random % span, span = min(len, value_max): each byte of
 * the access's first value_max (the bytes a client remembers) equally
 * likely.  A wide store (16-64 bytes of a vector register) is then judged
 * by a word drawn uniformly, not always by its first, whose fate may differ
 * from the others'.
 */
#ifndef WITCH_WATCH_WORD_H
#define WITCH_WATCH_WORD_H

#include <stdint.h>

static inline void watch_word_pick(uint64_t addr, uint32_t len, uint64_t random,
				   uint32_t value_max, uint64_t *waddr, uint32_t *wlen)
{
	uint32_t span = len < value_max ? len : value_max;
	uint64_t b = addr + (span ? random % span : 0);
	for (uint32_t l = 8; l > 1; l >>= 1) {
		uint64_t piece = b & ~(uint64_t)(l - 1);
		if (piece >= addr && piece + l <= addr + len) {
			*waddr = piece;
			*wlen = l;
			return;
		}
	}
	*waddr = b;
	*wlen = 1;
}

#endif
