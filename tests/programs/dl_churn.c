/* dl_churn: threads that load and unload a library without pause, sampled.
 *
 *   dl_churn LIBRARY [SECONDS]
 *
 * Two threads dlopen LIBRARY (dlwork.c), run it a little and dlclose it, over
 * and over, for SECONDS (default 2); a third thread ends and is replaced
 * all the while (a thread's first exit loads libgcc_s).  These threads
 * spend much of their time inside the dynamic loader, so the profiler's
 * ticks land there, some inside the lock and unlock of the loader's lock.
 * A handler that unwinds through dl_iterate_phdr, which takes that lock,
 * deadlocks there (the soak test found it); the runtime's own module
 * snapshot (libwitch/src/phdrs.c) must not.  And a handler run ended by a
 * fault (a module unmapped under its unwind: rescue.h) must leave no lock
 * held: libunwind's global cache lock did, and the thread's next tick
 * waited on itself (about 1 run in 15; unwind.c keeps no cache since).  Prints "dl_churn: done" and
 * exits 0, natively and under the profiler.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *churn_lib;
static double churn_seconds = 2;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *churn(void *arg)
{
	double end = now() + churn_seconds;
	uint64_t s = 0;
	while (now() < end) {
		void *h = dlopen(churn_lib, RTLD_NOW | RTLD_LOCAL);
		if (!h)
			abort();
		uint64_t (*run)(int) = (uint64_t (*)(int))dlsym(h, "dlwork_run");
		if (run && ((uintptr_t)arg & 1))
			s += run(0);
		dlclose(h);
	}
	return (void *)(uintptr_t)s;
}

static void *short_lived(void *arg)
{
	(void)arg;
	pthread_exit(NULL);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: dl_churn LIBRARY [SECONDS]\n");
		return 2;
	}
	churn_lib = argv[1];
	if (argc > 2)
		churn_seconds = atof(argv[2]);
	pthread_t th[2];
	for (uintptr_t i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, churn, (void *)i) != 0)
			return 1;
	double end = now() + churn_seconds;
	while (now() < end) {
		pthread_t t;
		if (pthread_create(&t, NULL, short_lived, NULL) != 0)
			return 1;
		pthread_join(t, NULL);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	puts("dl_churn: done");
	return 0;
}
