/* precise: the access behind a watchpoint trap (Witch 4.5, "precise PC").
 *
 * x86 reports a data breakpoint after the access, with the registers as the
 * accessing instruction left them and rip past it.  precise_resolve finds
 * that instruction and which of its accesses touched the watched bytes:
 *   - a rep string instruction with iterations left traps on itself;
 *   - a call traps on the callee's first instruction, having stored its
 *     return address (the call is the leaf; the callee's frame is dropped);
 *   - a ret's read of its return address traps at the return site;
 *   - a branch that loaded its target from the watched bytes traps at the
 *     target: `call *[m]` (before the return address; the callee's frame
 *     is dropped) or a PLT entry's `jmp *GOT` the caller called directly;
 *   - anything else: the instruction ending at rip, known where a window
 *     decoded it (decode_cache_note) or found by decoding forward from the
 *     function start (unwind tables), its accesses recomputed with the
 *     pointer registers push/pop/string ops moved;
 *   - one memory operand whose address register the instruction itself
 *     overwrote (mov rax, [rax]) must be the access.
 *
 * Async-signal-safe.  Returns 0, or -ENOENT when no instruction fits.
 */
#ifndef WITCH_PRECISE_H
#define WITCH_PRECISE_H

#include <stdint.h>

#include "witch/decode.h"

struct precise_access {
	uint64_t pc;           /* the accessing instruction: the context's leaf */
	int skip_frames;       /* innermost frames of the trap's stack walk that are
				* not the accessing code's (a call's callee) */
	uint8_t kind;          /* enum decode_kind */
	uint8_t elem;          /* enum decode_elem */
	uint64_t addr;         /* the access */
	uint32_t len;
	uint64_t overlap_addr; /* the bytes both watched and touched */
	uint32_t overlap_len;
};

struct decode_zcache;

/* zc: the thread's decodings (decode_zcache.h), whose prev cache (not NULL)
 * holds the instructions' ends. */
int precise_resolve(struct decode_zcache *zc, const struct decode_regs *regs,
		    uint64_t watch_addr, uint32_t watch_len, struct precise_access *out);

/* When precise_resolve found nothing: whether the jump at pc (the sample's
 * own instruction), run with regs, loads the watched word and goes where it
 * points, to rip.  A jump through memory leaves no trace of itself: a PLT
 * stub reached by a tail call (`jmp f@plt`, no return address names it), a
 * dispatch table's `jmp *[table + 8*op]` (python3's eval loop).  Each jump
 * through one word is one instruction in a stub; a table may be jumped
 * through from several sites of one function, and pc stands for them.
 * Under LoadCraft such traps were ~2/3 of python3's unresolved ones (3.4%
 * of its traps), their redundant loads dropped.  0 and *out (a load, the
 * jump the leaf), or -ENOENT. */
int precise_resolve_branch_at(const struct decode_regs *regs, uint64_t watch_addr,
			      uint32_t watch_len, uint64_t pc, struct precise_access *out);

struct emulate_vec;

/* The bytes the trapped store p wrote (p->len at most 8, little-endian),
 * from the registers after it, regs (rip past it), and the vector state
 * vec begun on the trap's signal frame (emulate_vec.h): where its
 * instruction loads nothing and writes no general register (mov to
 * memory, movnti, a vector store; not rep stos, push or a read-modify-
 * write), its operands are as they were, and running it again on a copy
 * gives what it stored.  A client that would read those bytes under its
 * armed watchpoint, through process_vm_readv, has them so.  0 and *value,
 * or -ENOENT. */
int precise_stored_value(struct decode_zcache *zc, struct emulate_vec *vec,
			 const struct decode_regs *regs, const struct precise_access *p,
			 uint64_t *value);

#endif
