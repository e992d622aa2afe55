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
 * tick_ns / (R * c / cycles per ns).
 *
 * Not when tick k+1 is in another call of the loop's function at the same
 * stack depth: a function called once a row restarts its cursors on the
 * same arrays, and a counter ahead of where tick k saw it is no progress
 * (small_copies' copy loop: 64 of ~700 ticks "measured" 100-1800x slow and
 * weighed as nothing).  The loop's frame tells: the words at its stack
 * pointer (the caller's registers the function saved, the caller's loop
 * counter among them) are as tick k found them, but for those the loop
 * itself stores to.
 *
 * Only that tick's: a loop's speed
 * changes (first touches of pages, warming caches, other data), and other
 * ticks keep the model's answer.
 *
 * Async-signal-safe: no malloc, no locks, no stdio.  One per thread; a
 * zeroed struct pace is a new one.
 */
#ifndef WITCH_PACE_H
#define WITCH_PACE_H

#include <stddef.h>
#include <stdint.h>

#include "witch/decode.h"

#define PACE_FRAME_WORDS 8 /* a frame's words compared: its saved registers */

/* Reads the program's memory: 0, or a negative errno (peek.h's peek_read). */
typedef int (*pace_read_fn)(uint64_t addr, void *buf, size_t len);

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
	uint64_t frame[PACE_FRAME_WORDS]; /* the words at rsp when the window ended */
	uint32_t frame_stored;       /* of them, those the window stored to */
	int frame_known;
};

struct pace {
	struct pace_window cur, last;
	double tick_ns, cycles_per_ns; /* of this window */
	int measured;                  /* ... which measured last's loop */
	double factor;                 /* ... its real / modelled time */
	int other_call;                /* ... found its frame changed */
	pace_read_fn read;             /* of this window; NULL: frames unread */
};

struct pace_result {
	double factor;  /* measured / modelled time since the last tick; 1: not measured */
	int measured;
	int other_call; /* back in the last window's loop, in another call of its function */
};

/* A window starts at regs, tick_ns of program time after the last tick;
 * read: how to read the loop's frame (NULL: not read, not compared). */
void pace_window_begin(struct pace *p, const struct decode_regs *regs, double tick_ns,
		       double cycles_per_ns, pace_read_fn read);
/* The window stored to addr[0..n) (len bytes each), and to [spill_lo,
 * spill_hi) where it stopped keeping them one by one (0, 0: nowhere). */
void pace_window_stored(struct pace *p, const uint64_t *addr, const uint32_t *len, int n,
			uint64_t spill_lo, uint64_t spill_hi);
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
