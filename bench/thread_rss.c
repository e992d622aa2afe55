/* thread_rss: N threads that each store into a block of their own for a
 * while of CPU time, for bench/thread_rss.py: what a busy thread costs
 * the runtime in memory.
 *
 * usage: thread_rss N [CPU_SECONDS_EACH]
 *
 * Each thread spins over its own 16 KiB (a store and a load an iteration)
 * until its thread CPU clock passes the seconds given (default 0.6), so
 * every thread takes ticks, windows, samples and stack walks.  Prints
 * "ok" and exits 0.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned sink;
static double seconds = 0.6;

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *spin(void *arg)
{
	unsigned s = 0, *block = calloc(4096, sizeof(*block));
	if (!block)
		return arg;
	double end = thread_cpu() + seconds;
	for (unsigned long i = 0;; i++) {
		block[i & 4095] = (unsigned)i * 2654435761u;
		s += block[(i * 7) & 4095];
		if ((i & 0xffff) == 0 && thread_cpu() > end)
			break;
	}
	sink = s;
	free(block);
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	if (argc > 2)
		seconds = atof(argv[2]);
	if (n < 1 || n > 256) {
		fprintf(stderr, "thread_rss: N must be 1-256\n");
		return 2;
	}
	pthread_t th[256];
	int started = 0;
	for (int i = 0; i < n; i++)
		started += pthread_create(&th[i], NULL, spin, NULL) == 0;
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	if (started != n) {
		fprintf(stderr, "thread_rss: %d of %d threads started\n", started, n);
		return 1;
	}
	puts("ok");
	return 0;
}
