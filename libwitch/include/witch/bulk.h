/* bulk: byte-counted sampling of the C library's bulk memory operations.
 *
 * A tick of the software sampler stands for CPU time; a memset or memcpy
 * moves tens of bytes a cycle, so it gets few ticks for its bytes, and each
 * tick it gets stands for many bytes: the estimate is unbiased (look.h) but
 * rests on a handful of samples.  The program's calls of memset, memcpy,
 * memmove, mempcpy, bzero and their _FORTIFY_SOURCE forms (__memcpy_chk,
 * ...) are interposed instead: every call of BULK_MIN_BYTES or more counts
 * its bytes (stored, or loaded for the load client), and each time the
 * count passes a random period (uniform in [P/2, 3P/2), P what a tick's
 * pick stands for, within bounds of BULK_PERIOD scaled by the sampler's
 * rate: bulk_note_pick) the byte it passed is sampled and stands for P
 * bytes, as a PMU samples every Nth event.  The sample is taken after the
 * call, its own access done, so its watchpoint waits for the next access
 * with no trap on the call's own; before it where the C library may touch
 * the byte twice (the first and last 256 bytes of each piece its vector
 * code is handed, an overlapping move), so that the second access decides.  Ticks that land in such a call
 * stand for no bytes (the count has them).  For the load client, memcmp
 * and bcmp are counted too, by the bytes they read (both buffers up to the
 * first difference), and sampled after the call.  calloc's clearing is
 * counted through bulk_libc_begin and bulk_fill_end, a moving realloc's
 * copy through bulk_libc_begin and bulk_copy_end.  Other calls inside the
 * C library (qsort's memcpy, strncpy's padding) are not interposed: ticks
 * sample them.
 *
 * Copies below 64 bytes are made by the wrapper itself (the stores the C
 * library's vector code makes for them, one jump fewer), in code that
 * counts as the program's (context.h CONTEXT_PROGRAM).  memset's calls,
 * longer copies below BULK_MIN_BYTES, calls before bulk_init, from the
 * runtime's own handlers, and in threads not profiled go straight to the
 * C library (before bulk_resolve, to byte loops).
 */
#ifndef WITCH_BULK_H
#define WITCH_BULK_H

#include <stdint.h>

#include "witch/config.h"
#include "witch/rng.h"

#define BULK_MIN_BYTES 256
/* Counted calls this long are timed, so that ticks do not stand for their
 * time (bulk_take_excluded_ns): two TSC reads and one add.  Timing had
 * doubled a 512-byte memcpy's wrapper (5 ns natively, 11 wrapped, 21
 * timed) and adds 8-11 to an 8 KiB one (80, 98); a shorter call leaves its
 * few ns to the next tick.  (A TSC read alone costs 37 ns back to back on
 * the PVM guests here, less beside a copy's own work.) */
#define BULK_TIMED_MIN 8192
#define BULK_PERIOD (32ull << 20) /* bytes per sample at BULK_PERIOD_TICK_NS between ticks */
#define BULK_PERIOD_TICK_NS 5e6 /* WITCH_RATE=200 */

struct bulk {
	/* (What each counted call reads and writes first, in one line.) */
	int64_t left;     /* bytes until the next sample */
	int active;       /* inside a counted call: ticks stand for no bytes */
	/* A counted call's time is not the ticks' to stand for: its bytes are
	 * counted.  enter_tsc: when the call began (or a tick skipped in it
	 * restarted the interval), 0 for a call too short to time
	 * (BULK_TIMED_MIN); excluded_tsc: the calls' time since the
	 * last tick took it (added by the calls, taken by the tick handler:
	 * one add instruction, one exchange). */
	uint64_t enter_tsc;
	uint64_t excluded_tsc;
	double period;    /* mean bytes between samples, now */
	double drawn;     /* ... when left was drawn: what its sample stands for */
	double tick_ns;   /* the sampler's mean interval, as last set */
	double pick_bytes; /* what a tick's pick stands for (a running mean),
			    * 0 before the first */
	/* What copies in pieces cost over whole ones since the last tick took
	 * it (bulk_take_pieces_ns), in ps: added by the calls, one locked add. */
	uint64_t pieces_ps;
};

/* First in the constructor, whether or not the runtime starts: find the
 * C library's functions, which the wrappers pass every call on to from
 * then on.  Before, they are byte loops: a runtime that declined to start
 * (a bad setting, a sanitizer, no traps) or ran the PMU sampler had left
 * them so, and the program's memset ran 7x, its memcpy 8x slower.
 * 0 or -ENOENT. */
int bulk_resolve(void);
/* Once the runtime starts with the software sampler: count the calls'
 * bytes for sample_kind's client.  0 or -ENOENT. */
int bulk_init(uint8_t sample_kind);

/* The interposed memcpy's own address (sanguard.h). */
const void *bulk_own_memcpy(void);
/* A thread's count starts (thread_begin), its period following the sampler's
 * mean tick interval. */
void bulk_thread_begin(struct bulk *b, struct rng *rng, uint64_t tick_ns);
/* The sampler's mean interval changed (budget.h): so does the period. */
void bulk_set_period(struct bulk *b, uint64_t tick_ns);
/* A tick picked an access standing for bytes (look.h): the period follows
 * what a tick's pick stands for, so that a counted call's sample weighs as
 * much as a tick's (samples of equal weight: the least variance for their
 * number).  Within [1/16, 1] of the period by time (BULK_PERIOD), at which
 * lz's 128 KiB memsets, a fifth of its stores, got 0 samples in a 0.5 s
 * run at the default budget and 38 of 1,800 at 2000/s (11x a tick
 * pick's weight each). */
void bulk_note_pick(struct bulk *b, double bytes);
/* For a tick: the time spent in counted calls since the last tick took it,
 * in ns, which the tick's interval does not stand for.  Before (2026-11-27)
 * it did: realloc_copy at 2000/s, whose copy runs 16-60x slower with a
 * debug register armed (rep movsb), weighed its scalar fill and refill 24%
 * over their bytes and read 0.27-0.30 for 1/3. */
double bulk_take_excluded_ns(struct bulk *b);
/* For a tick: what the copies that went in pieces since the last tick took
 * it cost the program over the whole calls it asked for (ns, priced by
 * size: bulk_pieces_extra_ps).  The profiler's cost: no handler times it,
 * and the budget and the estimate count it (stat cost_pieces_ns). */
double bulk_take_pieces_ns(struct bulk *b);
/* What a copy of n bytes in CHUNK pieces costs over glibc's whole call, in
 * ps (the EPYC's, bench/bulk_call_cost.c). */
uint64_t bulk_pieces_extra_ps(uint64_t n);
/* A tick was skipped and restarted the interval: if it landed in a timed
 * counted call, only the call's time from here on is the next interval's
 * to leave out. */
void bulk_tick_skipped(struct bulk *b);

/* A C library call that stores with no memset or memcpy call of the
 * program to count: calloc's clearing, a realloc that moves the block
 * (heap.c).  What it stored is counted as a counted call's bytes are.
 * bulk_libc_begin before the call, with the most it may store (ticks
 * inside stand for no bytes; NULL when not counted: under BULK_FILL_MIN
 * bytes, the load client, a thread not profiled, inside another counted
 * call); then one of the ends after it.  A sample is the count's byte,
 * taken after the store (its trap decides the next access). */
#define BULK_FILL_MIN 4096
struct witch_thread;
struct witch_thread *bulk_libc_begin(uint64_t most);
/* calloc: the bytes it stored are the block's resident pages (mincore): the
 * C library clears what it reuses and leaves fresh pages from the kernel (a
 * new mapping, the heap's new top) untouched, as they are zero. */
void bulk_fill_end(struct witch_thread *t, const void *block, uint64_t bytes);
/* realloc: the destination and the bytes it did copy (0: none, it resized
 * in place or remapped). */
void bulk_copy_end(struct witch_thread *t, const void *dst, uint64_t copied);
/* The bytes of [block, block + bytes) on resident pages, or 0 (mincore
 * failed); at_resident_byte (when not NULL): the address of the k-th of
 * them (k < the count), else left alone. */
uint64_t bulk_resident_bytes(const void *block, uint64_t bytes, uint64_t k,
			     uint64_t *at_resident_byte);

/* What a call of a wrapper does, as the run-ahead window sees it (look.c):
 * a window must not stop where the program calls memcpy, or the stores just
 * before such calls (spills, the return address) would stand for the time
 * the window did not run, and be over-counted several times. */
struct bulk_call {
	uint64_t real;     /* run this C library function instead (same arguments,
	                      same result); 0: the call is counted (bulk_enter),
	                      go past it */
	uint64_t bytes;    /* the call's size */
	uint64_t result;   /* rax after the call, when real == 0 */
};
/* pc is the entry of a wrapper called with the arguments in gpr (rdi, rsi,
 * rdx): 0 and *c filled; -ENOENT for any other pc, a wrapper the window
 * does not model (the _chk forms, bzero), or a call the wrapper copies
 * itself (below 64 bytes: the window runs the wrapper's code). */
int bulk_window_call(uint64_t pc, const uint64_t *gpr, struct bulk_call *c);
/* A pc in the wrappers' own copies (the CONTEXT_PROGRAM section: calls
 * below 64 bytes) as the program's leaf: as far into the C library's
 * function the wrapper stands in for as pc is into the wrapper (named as
 * that function, one context per store); pc itself before bulk_resolve.
 * Async-signal-safe. */
uint64_t bulk_program_leaf(uint64_t pc);

#endif
