/* dead_threads: dead_two_loops in 4 threads, each on its own array.
 *
 *   thread t (0..3), own array a_t of N = 4M ints (16 MiB; 64 MiB in all,
 *   twice the 32 MiB L3):
 *     for r in 1..R: fill(a_t); overwrite(a_t); total_t += sum(a_t)
 *
 * DeadSpy definitions, per thread exactly as in dead_two_loops.c: fill's
 * stores are killed by overwrite's (waste, pair <fill, overwrite>),
 * overwrite's are read by sum (use, pair <overwrite, sum>), no thread touches
 * another's array.  Stores: 4*R*N dead + 4*R*N used => fraction = 0.5; the
 * only waste pair (by leaf functions) is <fill, overwrite>, share 1.0; top
 * pair <fill, overwrite>.  (Call paths end in worker/start_thread instead of
 * main; the same pair from 4 threads has the same path and may be merged.)
 *
 * Sampling by CPU time: the sampler ticks on each thread's own CPU time at
 * WITCH_RATE per CPU-second, so each thread gets samples in proportion to
 * its own work regardless of how 4 threads share 2 cores.  fill and
 * overwrite run the identical loop (one LCG step per store, ka.h), so equal
 * time per store, equal samples; sum's store-free time (~10-20%) is dropped
 * or carried to the next store (a use), giving 0.43..0.5.  Expected 0.5 +-0.1.
 * Measured natively (--phase-times, 20 reps), per thread: fill 0.093 s,
 * overwrite 0.093 s, sum 0.032 s of CPU.
 * Needs watchpoints per thread (each thread's debug registers are its own),
 * and per-thread timers: if only the main thread were sampled there would be
 * no samples at all, since main only waits in pthread_join.
 *
 * Build: -O2 -g -fno-inline -fno-tree-vectorize
 * -fno-tree-loop-distribute-patterns -pthread; scalar stores checked with
 * objdump.
 *
 * --mask-signals: the threads start with every signal blocked, as xz's
 * (tuklib's mythread_create) and other thread pools' workers do, so that
 * the process's signals go to main.  The same answer: the runtime keeps its
 * own signal open (sigguard.h), and a perf SIGTRAP would wait for good in
 * such a thread while its breakpoint, still armed, trapped into the kernel
 * at every hit, so those threads' traps come as that signal instead
 * (stat sigtrap_blocked: 4, one a worker).  Before, the workers' traps
 * waited for good: the profile had none (traps 0, fraction 0).
 *
 * Usage: dead_threads [REPS] [--phase-times | --mask-signals]   default REPS =
 * 20 (~0.6 s wall on 2 cores, ~1.2 CPU-s)
 */
#include "ka.h"
#include <pthread.h>
#include <signal.h>

#define NTHREADS 4
#define N (4u << 20)

struct work {
	uint32_t *a;
	uint64_t idx;
	long reps;
	int times;
	uint64_t total;
	double t[3];
	pthread_t tid;
};

#include "dead_loops.h"

KA_FN void *worker(void *arg)
{
	struct work *w = arg;
	uint64_t total = 0;
	double t0 = 0;

	for (long r = 0; r < w->reps; r++) {
		if (w->times) t0 = ka_now();
		fill(w->a, 2 * (uint64_t)r + 1 + (w->idx << 40));
		if (w->times) { w->t[0] += ka_now() - t0; t0 = ka_now(); }
		overwrite(w->a, 2 * (uint64_t)r + 2 + (w->idx << 40));
		if (w->times) { w->t[1] += ka_now() - t0; t0 = ka_now(); }
		total += sum(w->a);
		if (w->times) w->t[2] += ka_now() - t0;
	}
	w->total = total;
	return NULL;
}

int main(int argc, char **argv)
{
	static struct work w[NTHREADS];
	long reps = ka_reps(argc, argv, 20);
	int times = ka_want_times(argc, argv);
	int masked = argc >= 3 && strcmp(argv[2], "--mask-signals") == 0;
	sigset_t all, old;

	for (int t = 0; t < NTHREADS; t++) {
		w[t].a = ka_alloc((size_t)N * sizeof *w[t].a);
		w[t].idx = (uint64_t)t;
		w[t].reps = reps;
		w[t].times = times;
	}
	if (masked) {
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old); /* what the threads start with */
	}
	for (int t = 0; t < NTHREADS; t++) {
		int e = pthread_create(&w[t].tid, NULL, worker, &w[t]);
		if (e) {
			fprintf(stderr, "pthread_create: %s\n", strerror(e));
			return 2;
		}
	}
	if (masked)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	uint64_t sum_all = 0;
	for (int t = 0; t < NTHREADS; t++) {
		pthread_join(w[t].tid, NULL);
		sum_all += w[t].total;
	}
	printf("dead_threads threads=%d reps=%ld n=%u checksum=%016llx\n",
	       NTHREADS, reps, N, (unsigned long long)sum_all);
	if (times)
		for (int t = 0; t < NTHREADS; t++)
			fprintf(stderr, "thread %d cpu s: fill %.3f overwrite %.3f sum %.3f\n",
				t, w[t].t[0], w[t].t[1], w[t].t[2]);
	return 0;
}
