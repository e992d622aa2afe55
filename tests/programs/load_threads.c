/* load_threads: load_search in 4 threads, each on its own arrays.
 *
 *   thread k (0..3), own t_k[] and d_k[] of N = 1M ints each (4 MiB each;
 *   32 MiB in all):
 *     init(t_k, ST_k)                        t_k[i] = lcg_i(ST_k) & 0x7fffffff
 *     for r in 0..R-1:
 *       total_k += search(t_k, ST_k, KEY)    never finds KEY = 1, loads all N
 *       rewrite(d_k, S_kr)                   stores only, a new seed each r
 *       total_k += scan(d_k, SD)             s += d_k[i] ^ lcg_i(SD)
 *
 * LoadCraft definitions, per thread exactly as in load_search.c: search's
 * load of t_k[i] is repeated by the next repetition's search with the same
 * value (waste, pair <search, search>); scan's load of d_k[i] is followed
 * by rewrite's store (no verdict) and then the next scan's load of a new
 * value (use, pair <scan, scan>); no thread touches another's arrays.
 * Loads: 4*R*N waste + 4*R*N use => fraction = 0.5; the only waste pair (by
 * leaf functions) is <search, search>, share 1.0, the top pair; every pair
 * watched in scan traps in scan.  (Call paths end in worker/start_thread;
 * the same pair from 4 threads has the same path and may be merged.)
 *
 * Sampling by CPU time: the sampler ticks on each thread's own CPU time, so
 * each thread gets samples in proportion to its own work however 4 threads
 * share 2 cores.  search and scan have one LCG step per load on their
 * loop-carried chains (ka.h), so equal time per load, equal samples;
 * rewrite's ticks (no loads) count for neither.  Expected 0.5 +- 0.1
 * (slightly above under the profiler: see load_search.c on single steps).
 * A repetition takes ~3.5 ms of a thread's CPU time, ~5 of its load samples
 * at WITCH_RATE=2000, as in load_search.c.
 * Measured natively (--phase-times, 80 reps), per thread: search 0.10 s,
 * rewrite 0.09 s, scan 0.10 s of CPU.
 * Needs watchpoints and timers per thread (main only waits in pthread_join).
 *
 * Build: -O2 -g -fno-inline -fno-tree-vectorize
 * -fno-tree-loop-distribute-patterns -pthread; one scalar 4-byte load per
 * element in search and scan (KA_LOAD), checked with objdump.
 *
 * Usage: load_threads [REPS] [--phase-times]   default REPS = 80 (~0.7 s
 * wall on 2 cores, ~1.2 CPU-s)
 */
#include "ka.h"
#include <pthread.h>

#define NTHREADS 4
#define N (1u << 20)
#define ST 4242u
#define SD 31337u
#define KEY 1u

struct work {
	uint32_t *t, *d;
	uint64_t idx;
	long reps;
	int times;
	uint64_t total;
	double tm[3];
	pthread_t tid;
};

#include "load_kernels.h"

KA_FN void *worker(void *arg)
{
	struct work *w = arg;
	uint64_t total = 0;
	uint64_t st = ST + w->idx;
	double t0 = 0;

	init(w->t, st);
	for (long r = 0; r < w->reps; r++) {
		if (w->times) t0 = ka_now();
		total += search(w->t, st, KEY);
		if (w->times) { w->tm[0] += ka_now() - t0; t0 = ka_now(); }
		rewrite(w->d, 2 * (uint64_t)r + 1 + (w->idx << 40));
		if (w->times) { w->tm[1] += ka_now() - t0; t0 = ka_now(); }
		total += scan(w->d, SD);
		if (w->times) w->tm[2] += ka_now() - t0;
	}
	w->total = total;
	return NULL;
}

int main(int argc, char **argv)
{
	static struct work w[NTHREADS];
	long reps = ka_reps(argc, argv, 80);
	int times = ka_want_times(argc, argv);

	for (int k = 0; k < NTHREADS; k++) {
		w[k].t = ka_alloc((size_t)N * sizeof *w[k].t);
		w[k].d = ka_alloc((size_t)N * sizeof *w[k].d);
		w[k].idx = (uint64_t)k;
		w[k].reps = reps;
		w[k].times = times;
	}
	for (int k = 0; k < NTHREADS; k++) {
		int e = pthread_create(&w[k].tid, NULL, worker, &w[k]);
		if (e) {
			fprintf(stderr, "pthread_create: %s\n", strerror(e));
			return 2;
		}
	}
	uint64_t all = 0;
	for (int k = 0; k < NTHREADS; k++) {
		pthread_join(w[k].tid, NULL);
		all += w[k].total;
	}
	printf("load_threads threads=%d reps=%ld n=%u checksum=%016llx\n",
	       NTHREADS, reps, N, (unsigned long long)all);
	if (times)
		for (int k = 0; k < NTHREADS; k++)
			fprintf(stderr, "thread %d cpu s: search %.3f rewrite %.3f scan %.3f\n",
				k, w[k].tm[0], w[k].tm[1], w[k].tm[2]);
	return 0;
}
