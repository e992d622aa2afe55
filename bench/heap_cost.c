/* heap_cost: what heap.c adds to malloc/free (bench/heap_cost.py runs it).
 *
 *     heap_cost MODE [N [THREADS]]
 *                           MODE: off (heap_init not called: the
 *                           interposers pass through), sampled (the
 *                           default: small blocks sampled by bytes), all
 *                           (every block tracked); THREADS (1): threads
 *                           running the pairs at once, each N of them
 *
 * Linked with the runtime's static library, so malloc and free are
 * heap.c's.  Prints ns per malloc+free pair of 32-100 byte blocks from
 * four call sites at stack depths 1-6, and per malloc+free of 16-271
 * byte blocks with 100,000 live.
 */
#include "witch/heap.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NI __attribute__((noinline))
static __thread void *volatile sink; /* per thread: a shared one would bounce a line */
NI static void pair(size_t n)
{
	void *p = malloc(n);
	sink = p;
	free(p);
}
NI static void d1(size_t n) { pair(n); __asm__ volatile(""); }
NI static void d2(size_t n) { d1(n); __asm__ volatile(""); }
NI static void d3(size_t n) { d2(n); __asm__ volatile(""); }
NI static void d4(size_t n) { d3(n); __asm__ volatile(""); }
NI static void d5(size_t n) { d4(n); __asm__ volatile(""); }

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static long pairs_each;

static void *run_pairs(void *unused)
{
	(void)unused;
	for (long i = 0; i < pairs_each; i++) {
		switch (i & 3) {
		case 0: pair(32); break;
		case 1: d2(48); break;
		case 2: d5(100); break;
		default: d3(64); break;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "off") && strcmp(argv[1], "sampled") && strcmp(argv[1], "all"))) {
		fprintf(stderr, "usage: heap_cost off|sampled|all [N [THREADS]]\n");
		return 2;
	}
	long n = argc > 2 ? atol(argv[2]) : 4000000;
	int threads = argc > 3 ? atoi(argv[3]) : 1;
	if (n < 1 || threads < 1 || threads > 64) {
		fprintf(stderr, "heap_cost: N >= 1 and THREADS 1-64\n");
		return 2;
	}
	/* No trimming in any mode: whether a round's last frees coalesce past
	 * glibc's 64 KiB consolidation threshold, and so trim the 16 MiB heap
	 * and fault it back in next round, depends on where the heap's top
	 * falls, which the runtime's start-up allocations move by a few KiB.
	 * Left to glibc, off read 470-610 ns a live pair (trimmed every
	 * round: 2,363 brk, 77,000 page faults) and sampled 52-78 (never). */
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	if (!strcmp(argv[1], "all"))
		heap_set_sample_bytes(0);
	if (strcmp(argv[1], "off") && heap_init() < 0)
		return 1;
	enum { LIVE = 100000 };
	static void *v[LIVE];
	/* Threads apart allocate from arenas apart: what they share is the
	 * runtime's (its table, its counters). */
	pthread_t tid[64];
	pairs_each = n;
	double t0 = now();
	for (int t = 1; t < threads; t++)
		if (pthread_create(&tid[t], NULL, run_pairs, NULL) != 0)
			return 1;
	run_pairs(NULL);
	for (int t = 1; t < threads; t++)
		pthread_join(tid[t], NULL);
	double t1 = now();
	long rounds = n / LIVE > 0 ? n / LIVE : 1;
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < LIVE; i++)
			v[i] = malloc(16 + (size_t)(i & 255));
		for (int i = 0; i < LIVE; i++)
			free(v[i]);
	}
	double t2 = now();
	struct heap_stats st;
	heap_get_stats(&st);
	printf("%s pair_ns %.1f live_ns %.1f tracked %llu untracked %llu\n", argv[1],
	       (t1 - t0) / n * 1e9, (t2 - t1) / ((double)rounds * LIVE) * 1e9,
	       (unsigned long long)st.blocks_tracked, (unsigned long long)st.blocks_untracked);
	return 0;
}
