/* bpred: which of a window's conditional branches the CPU mispredicts.
 *
 * The cost model (costmodel.h) knew no mispredicted branches, so a loop
 * whose branches follow its data (a merge's compare, a hash probe's
 * found/not found, lz's match search) was weighed as if it ran at full
 * speed: lz's find_longest_match at 2.4x its bytes, hashtab's CLOCK sweep
 * at 5x.  Each window runs its branches exactly, so the sampler sees their
 * outcomes; this models a predictor trained on the outcomes of every window
 * the thread has run, in two parts, as real ones combine them (TAGE's
 * idea, at its smallest):
 *   - local: a per-branch history of its last 8 outcomes selects a 2-bit
 *     counter (Yeh and Patt's PAg): loop exits of short fixed trip counts,
 *     alternations, biased branches;
 *   - global: the last 12 outcomes of any branch, with the pc, select
 *     another, which decides where it is sure (saturated): a branch that
 *     follows the path to it;
 *   - bias: a 2-bit counter by pc alone (TAGE's base predictor), for a
 *     branch whose history is one its local counters have not seen: the
 *     way it mostly goes, where the static guess below missed every new
 *     history of a steady forward branch (strings' printf code: 0.56 ->
 *     0.65 of its bytes, sort's 0.44 -> 0.52; bench/weights.c's kernels
 *     unchanged).
 * Branches on random data it misses about half the time, as a CPU does.
 * Histories go on across windows although the program ran between them.
 * What it cannot learn that a CPU can: long repeating patterns (a CPU's
 * global history reaches thousands of branches; bench/weights.c's
 * `pattern` is weighed at ~0.3 of its bytes) and, by the same token, some
 * of printf's branches (bench/programs/strings: 0.5 of its bytes).
 *
 * One per thread, zeroed to start (untrained: backward taken, forward not
 * taken, as a window without this model assumed), ~9.5 KiB.
 * Async-signal-safe.
 */
#ifndef WITCH_BPRED_H
#define WITCH_BPRED_H

#include <stdint.h>

#define BPRED_HISTORIES 256 /* per-branch histories, by pc */
#define BPRED_COUNTERS 4096 /* 2-bit counters, by pc and history */
#define BPRED_BIASES 1024   /* 2-bit counters, by pc alone */

struct bpred {
	uint8_t history[BPRED_HISTORIES]; /* last 8 outcomes, newest in bit 0 */
	uint8_t counter[BPRED_COUNTERS];  /* 0: untrained; 1-2 not taken, 3-4 taken */
	uint8_t global[BPRED_COUNTERS];   /* the same, by pc and the path's outcomes */
	uint8_t bias[BPRED_BIASES];       /* the same, by pc: where no history has trained */
	uint16_t path;                    /* the last 12 outcomes of any branch */
};

/* The conditional branch at pc (jumping to target) went taken or not: 1
 * where the model predicted otherwise, else 0.  Trains the model. */
int bpred_mispredicted(struct bpred *p, uint64_t pc, uint64_t target, int taken);

#endif
