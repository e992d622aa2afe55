/* bpred: which of a window's conditional branches the CPU mispredicts.
 *
 * The cost model (costmodel.h) knew no mispredicted branches, so a loop
 * whose branches follow its data (a merge's compare, a hash probe's
 * found/not found) was weighed as if it ran at full speed: sort's
 * merge_runs at ~2x its bytes, hashtab's CLOCK sweep at ~15x.  Each
 * window runs its branches exactly, so the sampler sees their outcomes;
 * this models a local two-level predictor (Yeh and Patt's PAg: a per-branch
 * history of 8 outcomes selects a 2-bit counter) trained on the outcomes
 * every window of the thread has seen.  It predicts what a real front end
 * predicts well (loop exits of short fixed trip counts, alternations,
 * biased branches) and misses what it misses (branches on random data,
 * ~half the time).  Histories go on across windows although the program
 * ran between them: a branch's first outcome in a window may be charged a
 * miss a modern predictor would not make.
 *
 * One per thread, zeroed to start (untrained: backward taken, forward not
 * taken, as a window without this model assumed).  Async-signal-safe.
 */
#ifndef WITCH_BPRED_H
#define WITCH_BPRED_H

#include <stdint.h>

#define BPRED_HISTORIES 256 /* per-branch histories, by pc */
#define BPRED_COUNTERS 4096 /* 2-bit counters, by pc and history */

struct bpred {
	uint8_t history[BPRED_HISTORIES]; /* last 8 outcomes, newest in bit 0 */
	uint8_t counter[BPRED_COUNTERS];  /* 0: untrained; 1-2 not taken, 3-4 taken */
};

/* The conditional branch at pc (jumping to target) went taken or not: 1
 * where the model predicted otherwise, else 0.  Trains the model. */
int bpred_mispredicted(struct bpred *p, uint64_t pc, uint64_t target, int taken);

#endif
