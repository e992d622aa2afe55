/* sample: one sample, from a chosen access to an armed watchpoint.
 *
 * Every sampler ends here (a tick's pick, look.h; a PMU record; a
 * byte-counted call, bulk.h): the calling context (context.h), the
 * sample's weight into its context (Witch 4.4.2: mu, in bytes), the client
 * (craft.h), the reservoir (4.4.1) and the watchpoint.
 *
 * Async-signal-safe.
 */
#ifndef WITCH_SAMPLE_H
#define WITCH_SAMPLE_H

#include <stdint.h>
#include <ucontext.h>

#include "witch/arena.h"
#include "witch/config.h"
#include "witch/craft.h"
#include "witch/decode.h"
#include "witch/emulate.h"
#include "witch/look.h"

struct witch_thread;

/* The calling context of one tick, unwound once for all the picks of its
 * window (up to LOOK_MAX_PICKS; 2.35 a picking tick on lz): n 0 until the
 * first pick unwinds, negative when that failed. */
struct sample_tick_ctx {
	int n;
	uint64_t *pcs, *sps; /* the scratch's (below) */
};

/* A handler run's large locals, in the thread's arena, not on its signal
 * stack: a thread runs one handler at a time (handler_enter).  On the
 * signal stack tick_soft's and sample_take's arrays of CONFIG_MAX_DEPTH
 * frames made the deepest path ~40 KiB, every page of it touched in each
 * busy thread; here each array has the configured depth, all in one
 * piece, so a walk's first frames of all of them share a page or two. */
struct sample_scratch {
	struct look_pick picks[LOOK_MAX_PICKS]; /* a tick's (handler.c) */
	struct sample_tick_ctx tick;            /* ... its context */
	uint64_t *pcs, *sps;                    /* sample_take's */
	uint64_t *tick_pcs;                     /* ... the tick's, for a verdict */
	uint64_t *decide_pcs;                   /* ... a verdict's, from the trace */
	uint64_t *trap_pcs;                     /* a trap's (handler.c) */
};

/* Bytes of memory s's arrays want for depth frames each. */
#define SAMPLE_SCRATCH_ARRAYS 7
static inline size_t sample_scratch_mem_size(uint32_t depth)
{
	return sizeof(uint64_t) * depth * SAMPLE_SCRATCH_ARRAYS;
}
/* Lays out s's arrays, depth frames each, over mem (8-byte aligned,
 * sample_scratch_mem_size(depth) bytes). */
void sample_scratch_init(struct sample_scratch *s, void *mem, uint32_t depth);

/* What to sample.  leaf: the accessing instruction, the context's leaf;
 * self_pc: the instruction whose trap is the access itself running (0: the
 * first access of the sampled kind); ran: it has run already (a PMU
 * sample); emu: the calls and returns run ahead to get there, or NULL. */
struct sample_req {
	uint64_t leaf;
	uint64_t self_pc;
	const struct decode_access *a;
	double weight; /* bytes the sample stands for */
	int ran;
	const struct emulate *emu;
	uint32_t self_skip; /* traps of self_pc on these bytes that come first */
	const struct look_trace *trace; /* the accesses before it (look.h), or NULL */
	uint32_t trace_pos;
	int stored_known;   /* the bytes a store writes, from the run ahead: */
	const uint8_t *stored; /* a->len of them (at most WATCHPOINT_VALUE_MAX) */
	struct sample_tick_ctx *tick_ctx; /* shared by a tick's picks, or NULL */
};

/* The access of in the client samples, or NULL. */
const struct decode_access *sample_wanted(const struct decode_insn *in);
/* The accesses the client's watchpoints trap on (enum decode_kind bits). */
uint8_t sample_watch_kinds(void);
/* Take the sample r describes; uc: the signal (or getcontext) context. Every
 * way it can be dropped is counted in t->stats. */
void sample_take(struct witch_thread *t, ucontext_t *uc, const struct sample_req *r);
/* A verdict on a sample watched in context watch_ctx (and object watch_obj):
 * the pair <watch_ctx, the trap's context pcs[0..n)> gets its share
 * (Witch 4.4.2, Eq. 4.1).  From a trap, or from the window (sample_take). */
void sample_verdict(struct witch_thread *t, uint32_t watch_ctx, uint32_t watch_obj,
		    const uint64_t *pcs, int n, enum craft_verdict v, int approx);
/* The slot's sample no longer counts as armed in its context; disarm. */
void sample_release(struct witch_thread *t, int slot);
/* The same, in the handler run of the slot's own signal, before the
 * program ran on: re-arming it needs one ioctl fewer
 * (watchpoint_disarm_signalled). */
void sample_release_trapped(struct witch_thread *t, int slot);
/* Let go the samples watched since before tick before_tick (drcost.h:
 * armed watchpoints slow the program's system calls over budget);
 * UINT64_MAX: every one.  Returns how many went. */
int sample_expire(struct witch_thread *t, uint64_t before_tick);

#endif
