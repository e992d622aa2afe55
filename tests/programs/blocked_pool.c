/* blocked_pool: a worker started with its creator's signals blocked, as
 * worker pools do (xz -T: the creator blocks every signal around
 * pthread_create, so the worker inherits the mask).
 *
 *   blocked_pool [SECONDS [all|named]]
 *     SECONDS  default 0.3: the worker and main each store into an array
 *              of their own that long
 *     all      (default) the creator blocks every signal: the runtime
 *              opens its own in the worker (sigguard.h), so both threads
 *              tick: stat threads_signal_opened = 1 of threads = 2, and the
 *              ticks' clock covers both threads' CPU time (clock_ns /
 *              cpu_ns ~0.95 at 2000/s; ~0.48 when only main ticks)
 *     named    every signal but SIGRTMIN: a mask that holds the runtime's
 *              signal (SIGRTMIN+6 or above) without all the real-time
 *              ones is the program's choice, left so: the worker gets no
 *              ticks, threads_signal_blocked = 1 of 2, said in the report,
 *              clock_ns / cpu_ns ~0.48
 * The program runs as natively either way.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds = 0.3;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t churn(void)
{
	static __thread uint32_t a[4096];
	uint64_t s = 0;
	double end = now() + seconds;
	while (now() < end)
		for (uint32_t i = 0; i < 4096; i++) {
			a[i] = i * 2654435761u + (uint32_t)s;
			s += a[(i * 7) & 4095];
		}
	return s;
}

static void *worker(void *arg)
{
	(void)arg;
	return (void *)(uintptr_t)churn();
}

int main(int argc, char **argv)
{
	if (argc > 1)
		seconds = atof(argv[1]);
	sigset_t all, old;
	sigfillset(&all);
	if (argc > 2 && strcmp(argv[2], "named") == 0)
		sigdelset(&all, SIGRTMIN);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_t th;
	if (pthread_create(&th, NULL, worker, NULL) != 0)
		return 1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	uint64_t s = churn();
	void *r;
	pthread_join(th, &r);
	/* The sums are the work; their low bit is always printed as 0. */
	printf("blocked_pool: done %d\n", (int)(((s ^ (uintptr_t)r) & 1) & 0));
	return 0;
}
