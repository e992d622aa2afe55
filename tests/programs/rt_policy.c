/* rt_policy: a real-time program (SCHED_FIFO) that starts a thread.
 *
 * Usage: rt_policy
 *   sets SCHED_FIFO priority 10 for itself (exit 77 where it may not:
 *   no CAP_SYS_NICE, or no real-time budget), starts a worker that spins
 *   ~0.1 s of CPU, sleeps 0.6 s, prints its threads' policies (main and
 *   the worker: both FIFO), and, where RT_REPORT names a file, writes
 *   there "COMM POLICY" for every thread of the process, the runtime's
 *   too.
 * Before thread_create_unprofiled chose SCHED_OTHER, the runtime's
 * flusher, started with the program's first thread, inherited SCHED_FIFO
 * from the thread that started it: a real-time thread of the profiler's
 * waking four times a second ahead of the program's own.
 */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile int worker_tid;

static void *worker(void *arg)
{
	worker_tid = (int)syscall(SYS_gettid);
	struct timespec t0, t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	volatile unsigned long x = 0;
	do {
		for (int i = 0; i < 10000; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 100000000L);
	struct timespec rest = {1, 0};
	nanosleep(&rest, NULL); /* alive while main reports */
	return arg;
}

static const char *policy_name(int p)
{
	return p == SCHED_FIFO ? "fifo" : p == SCHED_RR ? "rr" : p == SCHED_OTHER ? "other" : "?";
}

int main(void)
{
	struct sched_param sp = {.sched_priority = 10};
	if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
		printf("SKIP: SCHED_FIFO refused here\n");
		return 77;
	}
	pthread_t t;
	if (pthread_create(&t, NULL, worker, NULL) != 0)
		return 1;
	struct timespec wait = {0, 600000000};
	nanosleep(&wait, NULL);
	printf("main %s, worker %s\n", policy_name(sched_getscheduler(0)),
	       policy_name(sched_getscheduler(worker_tid)));
	const char *path = getenv("RT_REPORT");
	DIR *d = path ? opendir("/proc/self/task") : NULL;
	FILE *out = d ? fopen(path, "w") : NULL;
	struct dirent *e;
	while (out && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char p[320], comm[64] = "";
		snprintf(p, sizeof(p), "/proc/self/task/%s/comm", e->d_name);
		FILE *c = fopen(p, "r");
		if (c && fgets(comm, sizeof(comm), c))
			comm[strcspn(comm, "\n")] = 0;
		if (c)
			fclose(c);
		fprintf(out, "%s %s\n", comm, policy_name(sched_getscheduler(atoi(e->d_name))));
	}
	if (out)
		fclose(out);
	if (d)
		closedir(d);
	pthread_join(t, NULL);
	return 0;
}
