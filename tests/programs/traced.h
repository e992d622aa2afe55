/* traced.h: what traced_calls.c and traced_far.c share: the callees that
 * decide step's stores (kill's store, look's load), the pass that reads
 * every word after (sum), and the main loop.  Each program includes it
 * once, after defining N; it defines its own step, then TRACED_MAIN;
 * their answers are derived in each program's comment.
 */
#ifndef TRACED_H
#define TRACED_H

#include "ka.h"

/* Leaf functions (no frame): a call from step pushes a return address,
 * which the callee's ret reads. */
KA_FN static void kill(uint64_t *a, uint64_t i, uint64_t v)
{
	a[i] = v;
}

KA_FN static uint64_t look(const uint64_t *a, uint64_t i)
{
	return ((const volatile uint64_t *)a)[i];
}

KA_FN static uint64_t sum(const uint64_t *a, uint64_t n)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++)
		s += ((const volatile uint64_t *)a)[i];
	return s;
}

/* main: per repetition r, step(a, 2r + 1), then sum(a); --phase-times
 * prints each part's time.  A macro, so that step's caller is main (the
 * tests check the path [kill, step, main]). */
#define TRACED_MAIN(NAME, DEFAULT_REPS)                                           \
	int main(int argc, char **argv)                                           \
	{                                                                         \
		long reps = ka_reps(argc, argv, DEFAULT_REPS);                    \
		int times = ka_want_times(argc, argv);                            \
		uint64_t *a = ka_alloc(N * sizeof(uint64_t));                     \
		uint64_t total = 0;                                               \
		double t_step = 0, t_sum = 0;                                     \
		for (long r = 0; r < reps; r++) {                                 \
			double t0 = ka_now();                                     \
			total += step(a, 2 * (uint64_t)r + 1);                    \
			double t1 = ka_now();                                     \
			total += sum(a, N);                                       \
			t_step += t1 - t0;                                        \
			t_sum += ka_now() - t1;                                   \
		}                                                                 \
		if (times)                                                        \
			fprintf(stderr, "step %.3f s, sum %.3f s\n", t_step, t_sum); \
		printf(NAME " reps=%ld total=%016llx\n", reps, (unsigned long long)total); \
		return 0;                                                         \
	}

#endif
