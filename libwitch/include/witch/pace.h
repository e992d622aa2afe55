/* pace: the time a tick stands for, measured in a loop's iterations.
 *
 * The software sampler weighs a tick by the bytes its window accesses per
 * modelled cycle (costmodel.h).  The model knows no cache misses, no page
 * faults and no mispredicted branches, so memory-bound or branchy loops are
 * weighed as if fast (a pointer chase through DRAM: ~200x).  Where a tick
 * lands in the same run of a loop as the tick before, the time between can
 * be counted in iterations instead:
 *
 *   tick k:    the window runs the loop on a register copy; from the tick
 *              (or the loop's first backward branch, if the tick was in a
 *              callee) to its last backward branch, the induction variables
 *              (registers that move by the same step every iteration: array
 *              cursors, counters) move by d_r in c modelled cycles.
 *   tick k+1:  its window branches back into the same code, in the same
 *              stack frame; the induction variables have moved by D_r =
 *              R * d_r from where tick k found them, the same R for all of
 *              them (or one, with the pointers the loop never writes as they
 *              were): the program ran R of tick k's stretches in the tick_ns
 *              of program time between, which the model would have taken
 *              R * c cycles for.
 *
 * Tick k+1 stands for that time: its window's byte rate is divided by
 * tick_ns / (R * c / cycles per ns).  Only that tick's: a loop's speed
 * changes (first touches of pages, warming caches, other data), and other
 * ticks keep the model's answer.
 *
 * Async-signal-safe: no malloc, no locks, no stdio.  One per thread; a
 * zeroed struct pace is a new one.
 */
#ifndef WITCH_PACE_H
#define WITCH_PACE_H

#include <stdint.h>

#include "witch/decode.h"

/* What one window saw of the loop it runs. */
struct pace_window {
	uint64_t key;                /* lowest backward-branch target (the loop's
	                                head, for logs); 0: no loop */
	uint64_t lo, hi;             /* code the loop spans */
	uint64_t rsp;                /* the loop's frame */
	uint64_t tick_rsp;
	uint64_t tick_gpr[DECODE_NGPR];
	uint64_t first[DECODE_NGPR]; /* where progress is counted from: the tick,
	                                if it is in the loop's frame, else the
	                                first backward branch */
	uint64_t last[DECODE_NGPR];  /* at the last backward branch */
	double first_cycles, last_cycles; /* modelled, from the tick */
	uint32_t written;            /* registers written from the tick to there */
	int iters;                   /* backward branches from first to last */
	uint64_t step[DECODE_NGPR];  /* change over the latest iteration */
	int steps;                   /* iterations seen whole (edge to edge) */
	uint32_t irregular;          /* registers whose step changed */
};

struct pace {
	struct pace_window cur, last;
	double tick_ns, cycles_per_ns; /* of this window */
	int measured;                  /* ... which measured last's loop */
	double factor;                 /* ... its real / modelled time */
};

struct pace_result {
	double factor; /* measured / modelled time since the last tick; 1: not measured */
	int measured;
};

/* A window starts at regs, tick_ns of program time after the last tick. */
void pace_window_begin(struct pace *p, const struct decode_regs *regs, double tick_ns,
		       double cycles_per_ns);
/* The window, run exactly so far, branched back from from_pc to regs->rip;
 * cycles: its modelled cycles so far; written: the general registers it
 * has written since the tick (bit i: gpr i).  The first such branch into
 * the last window's loop, in its frame, measures the time between. */
void pace_back_edge(struct pace *p, uint64_t from_pc, const struct decode_regs *regs,
		    double cycles, uint32_t written);
/* The window ends: what the time since the last tick measured. */
struct pace_result pace_window_end(struct pace *p);
/* A tick that ran no window (stepping, a byte-counted call): the next tick
 * cannot be measured against the last window. */
void pace_forget(struct pace *p);

#endif
