/* decode_zcache: Zydis's decodings, kept from run to run (a window, look.c).
 *
 * A loop run ahead decodes each of its instructions once, not once an
 * iteration, and a hot loop once across ticks.  The code may change
 * between runs (a JIT, a library unmapped and another mapped there), never
 * within one: a decoding from an earlier run is used once its bytes are
 * found unchanged at pc (a compare of up to 15 bytes against Zydis's
 * ~0.3 us a decode).  Everything here runs in signal handlers.
 */
#ifndef WITCH_DECODE_ZCACHE_H
#define WITCH_DECODE_ZCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "witch/decode_zydis.h"

/* Set-associative, the oldest way replaced: a window runs ahead ~40-200
 * instructions, and 128 direct-mapped slots missed 15-61% of them at
 * 2000/s (bench/programs interp, lz, hashtab, strings: conflicts); 64 sets
 * of 4 miss 0.3, 4, 21 and 48% (strings' printf code: mostly first
 * visits).  A thread starts with 64 sets (80 KiB touched) and grows to 512
 * (640 KiB) when a shadow of the grown cache's tags says it would save
 * many misses: 2048 slots cut sort's misses 35 -> 3%, python3's 43 -> 9%,
 * and their handler time a tick 15-30%, but gcc's cc1 misses 80% either
 * way, and the memory is a thread's (bench/results/handler_tick_cost.md). */
#define DECODE_ZCACHE_SET_BITS 6
#define DECODE_ZCACHE_GROWN_BITS 9
#define DECODE_ZCACHE_WAYS 4
#define DECODE_ZCACHE_SLOTS_MAX ((1u << DECODE_ZCACHE_GROWN_BITS) * DECODE_ZCACHE_WAYS)
/* The shadow keeps the tags of one grown set in 4 (set sampling, as cache
 * partitioning's utility monitors do: a few sets predict the whole), and
 * compares its misses with the cache's own on the same lookups. */
#define DECODE_ZSHADOW_SAMPLE_BITS 2
#define DECODE_ZSHADOW_SLOTS \
	((1u << (DECODE_ZCACHE_GROWN_BITS - DECODE_ZSHADOW_SAMPLE_BITS)) * DECODE_ZCACHE_WAYS)
/* Asked every this many shadowed lookups (~4,000 in all: ~30 ticks),
 * over all of them since the thread began (halved past 64 periods, so an
 * old phase fades) once there are 2 periods (~60 ticks: 0.6 s at 100 a
 * second).  A period alone would have grown gcc's cc1 (2 of its 160
 * periods halve the misses, while over its run they fall 80 -> 74%). */
#define DECODE_ZSHADOW_PERIOD 1024u
#define DECODE_ZSHADOW_FIRST (2 * DECODE_ZSHADOW_PERIOD)
#define DECODE_ZSHADOW_HALVE (64 * DECODE_ZSHADOW_PERIOD)
/* Grown caches a process may hold: issue 13's +4 MiB of peak RSS a
 * process is the line, and a single-threaded python3 is at +2.5. */
#define DECODE_ZCACHE_GROWN_MAX 2u

/* A lookup reads a set's tags, one cache line apart from the decodings: a
 * handler that runs rarely finds the cache cold, and a hit is used in
 * place, not copied out. */
struct decode_zcache_tag {
	uint64_t pc;
	uint32_t gen;  /* the run that last found it current */
	uint8_t len;   /* of bytes; 0: empty */
};

struct decode_zcache_slot {
	uint8_t bytes[15]; /* the code decoded, to check it is still there */
	struct decode_zydis z;
} __attribute__((aligned(64)));

struct decode_zshadow {
	uint64_t pc[DECODE_ZSHADOW_SLOTS]; /* 0: empty */
	uint32_t gen[DECODE_ZSHADOW_SLOTS];
	uint32_t lookups;      /* shadowed, since the thread began (halved) */
	uint32_t misses;       /* ... the grown cache would have missed */
	uint32_t small_misses; /* ... the cache missed */
};

struct decode_zcache {
	uint32_t gen;
	uint32_t set_bits; /* DECODE_ZCACHE_SET_BITS, or _GROWN_BITS */
	struct decode_zcache_tag *tag;   /* DECODE_ZCACHE_SLOTS_MAX of each, */
	struct decode_zcache_slot *slot; /* only the first sets' touched until grown */
	struct decode_zshadow shadow;
	uint64_t hits, misses;
	/* Told each new decoding's end (decode_cache_note), NULL: none.  A
	 * window's instructions are where the program runs, and so where
	 * its watchpoints trap. */
	struct decode_cache *prev;
};

/* Bytes of memory decode_zcache_init wants: the grown cache's (64: the
 * decodings' alignment). */
#define DECODE_ZCACHE_MEM_SIZE                                                               \
	((sizeof(struct decode_zcache_tag) + sizeof(struct decode_zcache_slot)) *            \
		 DECODE_ZCACHE_SLOTS_MAX + 64)
/* An empty cache of 64 sets over mem (zeroed, DECODE_ZCACHE_MEM_SIZE
 * bytes: untouched pages cost nothing until it grows); prev NULL. */
void decode_zcache_init(struct decode_zcache *c, void *mem);
/* 1 when c has grown (and counts against DECODE_ZCACHE_GROWN_MAX). */
static inline int decode_zcache_grown(const struct decode_zcache *c)
{
	return c->set_bits == DECODE_ZCACHE_GROWN_BITS;
}
/* A run begins: kept decodings are checked against their code again. */
void decode_zcache_begin(struct decode_zcache *c);
/* decode_at_zydis, with Zydis's part from c when pc was decoded before and
 * its bytes are the same (checked once a run).  *z: Zydis's decoding, in
 * c, valid until the next call.  May grow c (above). */
int decode_at_zydis_cached(struct decode_zcache *c, uint64_t pc, const struct decode_regs *regs,
			   struct decode_insn *out, const struct decode_zydis **z);
/* The thread that owns c ends: its grown cache no longer counts against
 * the process's DECODE_ZCACHE_GROWN_MAX. */
void decode_zcache_release(struct decode_zcache *c);
/* In a fork's child no thread's cache counts (each thread begins anew). */
void decode_zcache_postfork_child(void);

#endif
