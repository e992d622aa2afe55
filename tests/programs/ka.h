/* ka.h: shared helpers for the known-answer programs (tests/programs/).
 *
 * Every store loop in these programs runs one step of a 64-bit LCG per
 * element and stores the high half:
 *
 *     v = v * A + C;  p[i] = (uint32_t)(v >> 32);
 *
 * The imul+add chain through v is ~4 cycles of latency per element and is
 * the critical path of every such loop, so *time per store* is the same in
 * every store loop of every program, whether the array is in L1 or in DRAM
 * (4 bytes every ~4 cycles is far below one core's write bandwidth).  That
 * matters because the soft sampler ticks on CPU time and takes the next
 * store after the tick: a store's chance of being sampled is proportional to
 * the time since the previous store.  With equal time per store, sample
 * counts (and thus Witch's proportional weights, 4.4.2) are proportional to
 * store counts, which is what the DeadSpy-style expected values count.
 *
 * KA_FN marks the functions whose names the tests check: noipa = noinline +
 * noclone + no_icf + no IPA, so each keeps its own name (no "fill.constprop.0"
 * clones, no identical-code folding of two functions with equal bodies).
 *
 * Arrays come from ka_alloc(): mmap(MAP_POPULATE) pre-faults every page in
 * the kernel, without user-mode stores, so first-touch page faults (kernel
 * CPU time charged to whichever store faults) do not inflate one loop's
 * sample weight in the first repetition.
 */
#ifndef KA_H
#define KA_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define KA_FN __attribute__((noipa))

#define KA_LCG_A 6364136223846793005ULL
#define KA_LCG_C 1442695040888963407ULL
/* One LCG step on the uint64_t lvalue v; a macro because the programs are
 * built with -fno-inline. */
#define KA_LCG(v) ((v) = (v) * KA_LCG_A + KA_LCG_C)
#define KA_HI(v) ((uint32_t)((v) >> 32))
/* The same, behind an empty asm that hides v's value from the optimizer, so
 * that consecutive steps are not folded into one multiply-add. */
#define KA_LCG_OPAQUE(v) do { KA_LCG(v); __asm__("" : "+r"(v)); } while (0)

/* Keep a call from being a tail call (`jmp malloc`): an allocation site is
 * the function that calls the allocator, so that function must call it. */
#define KA_NO_TAIL(x) __asm__ volatile("" : "+r"(x))

/* Read p[i] with a load instruction of its own (never folded into a
 * read-modify-write instruction such as `xor %eax,(mem)`). */
#define KA_LOAD(p, i) (((const volatile uint32_t *)(p))[i])

/* A cache-resident store loop beside the loop a test is about: b[i & 1023]
 * = an LCG step, one 8-byte store a step into 8 KiB (L1), ~4 cycles each
 * (the LCG's multiply-add chain): 8n bytes stored.  (chase_stream,
 * fresh_pages; `unused`: the programs without it build clean.) */
#define KA_STREAM_WORDS 1024u
KA_FN __attribute__((unused)) static void ka_stream(uint64_t *b, uint64_t n, uint64_t v)
{
	for (uint64_t i = 0; i < n; i++) {
		KA_LCG(v);
		b[i & (KA_STREAM_WORDS - 1)] = v;
	}
}

/* A phase's work: reps passes over p[0..n) (n a power of two), each
 * element an LCG step stored and a load of another: the same bytes a CPU
 * second in every phase of every program that splits its run in two
 * around what it tests (sandbox, fd_sweep, mask_all, each phase a KA_FN
 * of its own name calling this with its own seed v). */
static inline __attribute__((always_inline)) uint64_t ka_phase_work(uint32_t *p, uint32_t n, long reps, uint64_t v)
{
	for (long r = 0; r < reps; r++)
		for (uint32_t i = 0; i < n; i++) {
			KA_LCG(v);
			p[i] = KA_HI(v);
			v += KA_LOAD(p, (i * 7) & (n - 1));
		}
	return v;
}

static inline void *ka_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

/* Repeat count: argv[1] if given (a positive decimal), else def. */
static inline long ka_reps(int argc, char **argv, long def)
{
	if (argc < 2)
		return def;
	char *end;
	long n = strtol(argv[1], &end, 10);
	if (*argv[1] == '\0' || *end != '\0' || n < 1) {
		fprintf(stderr, "usage: %s [REPEAT_COUNT>0] [--phase-times]\n", argv[0]);
		exit(2);
	}
	return n;
}

/* --phase-times as argv[2]: print per-phase CPU seconds to stderr (stdout
 * stays identical between native and profiled runs). */
static inline int ka_want_times(int argc, char **argv)
{
	return argc >= 3 && strcmp(argv[2], "--phase-times") == 0;
}

static inline double ka_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Spend ms of the thread's CPU time storing into buf (1024 words) at a
 * steady rate, so the bytes a sampler's ticks stand for follow the CPU
 * time (fork_counts, fork_lazy). */
__attribute__((noinline, unused)) static void ka_spend_ms(double ms, uint64_t *buf)
{
	double until = ka_now() + ms * 1e-3;
	uint64_t v = 1;
	while (ka_now() < until)
		for (int i = 0; i < 10000; i++) {
			KA_LCG(v);
			((volatile uint64_t *)buf)[i & 1023] = v;
		}
}

#endif
