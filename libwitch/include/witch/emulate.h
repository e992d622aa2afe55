/* emulate: run simple integer instructions on a register snapshot.
 *
 * The software sampler must reach the access a tick leads to.  Single-
 * stepping there costs a debug exception per instruction (~20 us on a VM:
 * most of the runtime's overhead on programs with long stretches between
 * accesses), so the sampler first runs the instructions on a copy of the
 * registers, and steps only over what this module does not know.
 *
 * Async-signal-safe: no malloc, no locks, no stdio.
 */
#ifndef WITCH_EMULATE_H
#define WITCH_EMULATE_H

#include <stdint.h>

#include "witch/decode.h"
#include "witch/decode_zydis.h"

#define EMULATE_MAX_STORES 48
#define EMULATE_MAX_CALLS 4

struct emulate_vec;

/* Where a run is in the call tree: what emulate_context makes a context of. */
struct emulate_frame {
	int frames_left;
	int n_calls;
	uint64_t call_ret[EMULATE_MAX_CALLS];
};

struct emulate {
	struct emulate_vec *vec; /* vector registers (emulate_vec.h), or NULL */
	/* Counts and scalars first: emulate_insn puts them back when an
	 * instruction fails (the arrays after them are only appended to). */
	int n_stores;
	float late_ns;        /* the last instruction's loads, past an L2 hit (memlat.h) */
	uint32_t frame_gen;   /* bumped at each emulated call and return */
	int n_calls;          /* emulated calls not returned from */
	int frames_left;      /* emulated returns out of the starting frame and its callers */
	uint64_t spill_lo, spill_hi; /* the span of stores past the slots (hi 0: none) */
	uint64_t code_page[2];       /* pages of code known readable */
	uint64_t store_addr[EMULATE_MAX_STORES];
	uint32_t store_len[EMULATE_MAX_STORES];
	uint64_t store_value[EMULATE_MAX_STORES]; /* what it stored, when known */
	uint8_t store_known[EMULATE_MAX_STORES];
	uint64_t call_ret[EMULATE_MAX_CALLS];  /* their return addresses */
	uint64_t call_slot[EMULATE_MAX_CALLS]; /* where each would have pushed it */
	/* The last vector store whose bytes were known, whole (emulate_vec.c):
	 * a wide one takes no slot above, and a picked store's value is what a
	 * client needs to skip its own trap. */
	uint64_t vstore_addr;
	uint64_t vstore_len; /* 0: none since emulate_begin or vstore_forget (a word: no padding) */
	uint8_t vstore[64];
};

/* Start a run of emulation at pc, the interrupted pc of a signal context (its
 * code page is readable).  vec: the thread's vector registers, begun for this
 * context (emulate_vec_begin); NULL: vector instructions as no-ops, below. */
void emulate_begin(struct emulate *e, uint64_t pc, struct emulate_vec *vec);
/* *to = *from, with only the noted stores of the store arrays: a window
 * copies its state at each pick it draws (look.c, ~15 a tick), and the
 * whole struct is 18 cache lines to write where a few stores use 2-5. */
void emulate_copy(struct emulate *to, const struct emulate *from);
/* The bytes the last emulated instruction stored at [addr, addr + len)
 * (len <= 64), whole and known: a general register's (its one noted store)
 * or a vector register's (e->vstore, cleared with emulate_vstore_forget
 * before the instruction ran).  stores_before: e->n_stores before it.  0
 * and buf, or -1. */
int emulate_last_stored(const struct emulate *e, int stores_before, uint64_t addr, uint32_t len,
			uint8_t *buf);
/* Before an instruction whose vector store emulate_last_stored may ask. */
static inline void emulate_vstore_forget(struct emulate *e)
{
	e->vstore_len = 0;
}
/* Advance regs (gprs, rip, arithmetic flags) over in, the instruction at
 * regs->rip as decode_at_zydis decoded it (in and z) with regs.  Integer
 * moves, lea, ALU ops and shifts, imul, mul, div/idiv (not #DE), cmov/set, sign extensions, push/pop,
 * leave, jcc, direct or indirect jmp and call, ret; and, as no-ops,
 * instructions that touch no general register, flag or control flow (vector
 * and x87 arithmetic, vector loads and stores); with vec, the vector code
 * emulate_vec.h runs, which may also write general registers and flags
 * (kmovd, vpmovmskb, kortest, ptest...).  Calls and returns are kept in
 * e, for emulate_context.  Loads read memory without faulting; stores change
 * no memory and are noted with their value where it is known (general
 * registers, pushes, return addresses), so a later load that one such store
 * covers gets it.  Returns 0, or -ENOTSUP  not emulated here, or a load of
 * stored bytes whose value is not known (vector stores, partly covered), or
 * calls nested deeper than EMULATE_MAX_CALLS -EFAULT   a load, or the code it
 * leads to, could not be read (the caller decodes there next: decode_at reads
 * code in place) On error regs are unchanged. */
int emulate_insn(struct emulate *e, struct decode_regs *regs, const struct decode_insn *in,
		 const struct decode_zydis *z);
/* Return as a ret at regs' rsp would from the emulated call that pushed
 * its return address there, without running the callee (a call the window
 * models instead, look.c).  Returns 0, or -ENOTSUP when the latest emulated
 * call did not push at rsp. */
int emulate_return_from_call(struct emulate *e, struct decode_regs *regs);
/* The run left its frame other than by an emulated ret (look.c: the
 * program's registers set past an allocation interposer's own return):
 * counted as that ret would be.  -ENOTSUP inside a call it emulated. */
int emulate_frame_left(struct emulate *e);
/* 1 if the code page holding pc is mapped (checked once per page and
 * remembered in e), so decoding there cannot fault. */
int emulate_code_readable(struct emulate *e, uint64_t pc);
/* Read len bytes at addr for an emulated load, without faulting (through
 * peek_read; with e->vec, a whole aligned chunk at a time, kept
 * for the run's later loads).  Returns 0 or -EFAULT. */
int emulate_read(struct emulate *e, uint64_t addr, void *buf, uint32_t len);
/* The bytes [addr, addr + len) hold after the emulated stores, when the
 * latest store to touch them covers them all and its value is known (a
 * general register's): 0 and *v; else -1. */
int emulate_forwarded(const struct emulate *e, uint64_t addr, uint32_t len, uint64_t *v);
/* Whether an emulated store touched [addr, addr + len). */
int emulate_stored(const struct emulate *e, uint64_t addr, uint32_t len);
/* What a load of [addr, addr + len) reads after the emulated stores: the
 * program's bytes (emulate_read) with what the stores to any of them wrote
 * put over them in their order, so a load partly covered by stores of
 * known values (strlen's 32-byte compare over the byte its caller just
 * stored) reads what the program would.  0, -ENOTSUP when one of those
 * stores' values is not known (checked before anything is read), or
 * -EFAULT. */
int emulate_read_stored(struct emulate *e, uint64_t addr, uint8_t *buf, uint32_t len);
/* The same over bytes the caller read itself (buf: the program's bytes at
 * [addr, addr + len), read before the window's stores would run): 0, or
 * -ENOTSUP, buf then untouched. */
int emulate_overlay_stored(const struct emulate *e, uint64_t addr, uint8_t *buf, uint32_t len);
/* The frame the run is in now; the context of pcs[0..n) (the starting
 * context, leaf first) at frame f, as emulate_context. */
void emulate_frame_of(const struct emulate *e, struct emulate_frame *f);
int emulate_context_frame(const struct emulate_frame *f, uint64_t *pcs, int n, int max);
/* pcs[0..n) is the calling context where emulation began (leaf first, callers
 * as return address - 1); rewrite it for where it is now: drop the frames
 * emulated returns left, add the emulated calls. pcs[0] (the leaf) is left for
 * the caller to set.  sps, when not NULL, are the frames' stack pointers
 * (unwind.h: frame i owns [sps[i], sps[i+1])), rewritten alike: an emulated
 * callee owns down from where its return address was pushed, sps[0] the
 * lowest such.  Returns the new length (at most max), or -EINVAL when the
 * returns left every frame. */
int emulate_context(const struct emulate *e, uint64_t *pcs, uint64_t *sps, int n, int max);

#endif
