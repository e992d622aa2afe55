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
 * Histories go on across windows, but the program ran on between them: a
 * window finds a branch's history where the last one left it, not where
 * the CPU's is (a 4-step loop's exit, read out of step, was missed ~1.15
 * times a window, and stack_case's deep weighed at 0.73 of its bytes).  So
 * until the window has run a branch 8 times, a mixed history is out of
 * sync: its outcome counts as a miss at the rate the branch misses in sync
 * (a running mean over its in-sync outcomes), once 32 of those are known;
 * a history of one direction (straight-line code's branches) is the same
 * in sync or not.  bench/sampled.py, 11 programs, 6 seeds, 2000/s: median
 * distance 0.059 -> 0.044, stack_case's 0.025 -> 0.011, dense_vector's
 * 0.055 -> 0.025 (bench/results/sampled_bpred.md).  Before that rate
 * stands, which on a real program's sparse branches is mostly (hundreds
 * of them share the 256 histories: what one finds was left by others),
 * the path decides once the window's own 12 branches have put it in sync,
 * else the branch's bias where saturated, else the stale history: that
 * one alone counted ~2 misses a 64-cycle window in sqlite3, a coin flip
 * each, and weighed python3's and sqlite3's branchy code at half its
 * bytes (bench/results/bpred_sync.md).
 * What it cannot learn that a CPU can: long repeating patterns (a CPU's
 * global history reaches thousands of branches; bench/weights.c's
 * `pattern` is weighed at ~0.3 of its bytes) and, by the same token, some
 * of printf's branches (bench/programs/strings: 0.5 of its bytes).
 *
 * One per thread, zeroed to start (untrained: backward taken, forward not
 * taken, as a window without this model assumed), ~13 KiB.
 * Async-signal-safe.
 */
#ifndef WITCH_BPRED_H
#define WITCH_BPRED_H

#include <stdint.h>

#define BPRED_HISTORIES 256 /* per-branch histories, by pc */
#define BPRED_COUNTERS 4096 /* 2-bit counters, by pc and history */
#define BPRED_BIASES 1024   /* 2-bit counters, by pc alone */

/* One branch slot's own state, in one line: a branch reads and writes it
 * together, and at the budget's rates it is cold (six arrays of it took
 * lz's ticks 23.7 L2 misses here, one 21.3: bench/results/cold_ticks.md). */
struct bpred_slot {
	uint32_t seen_window; /* the window seen counts in */
	uint16_t miss_rate;   /* in sync: misses a 1024 outcomes */
	uint16_t owed;        /* out of sync: fractions of a miss */
	uint8_t history;      /* last 8 outcomes, newest in bit 0 */
	uint8_t seen;         /* outcomes this window, up to 8 */
	uint8_t rated;        /* in-sync outcomes miss_rate averages */
} __attribute__((aligned(16)));

struct bpred {
	uint8_t counter[BPRED_COUNTERS];  /* 0: untrained; 1-2 not taken, 3-4 taken */
	uint8_t global[BPRED_COUNTERS];   /* the same, by pc and the path's outcomes */
	uint8_t bias[BPRED_BIASES];       /* the same, by pc: where no history has trained */
	uint16_t path;                    /* the last 12 outcomes of any branch */
	uint16_t window_branches;         /* outcomes this window (the path's in sync at 12) */
	uint32_t window;                  /* windows begun */
	struct bpred_slot slot[BPRED_HISTORIES]; /* per-branch state, by pc */
};

/* A window begins: the program ran on since the last, so a branch's
 * history here is not the CPU's until the window has run it 8 times. */
void bpred_window_begin(struct bpred *p);

/* The conditional branch at pc (jumping to target) went taken or not: 1
 * where the model predicted otherwise, else 0.  Trains the model. */
int bpred_mispredicted(struct bpred *p, uint64_t pc, uint64_t target, int taken);

#endif
