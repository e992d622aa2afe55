/* fork_walk: a process with a thread forks in a loop, each child exiting
 * at once, for SECONDS.  Under the profiler the process has its flusher
 * (flush.h), which walks the loaded modules (dl_iterate_phdr) every quarter
 * second; a child forked while a walk held the C library's module-list
 * lock, which the child does not get reset, hung in the runtime's first
 * walk as it started profiling (ehpages.h; the soak's rare timeout).  3 of
 * 5 runs of 8 s hung before the fix, none of 8 since.
 *
 * Usage: fork_walk [SECONDS]     default 6; prints "fork_walk: done"
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 6.0);
	pthread_t th;
	if (pthread_create(&th, NULL, idle, NULL) != 0)
		return 2;
	while (now() < end) {
		pid_t pid = fork();
		if (pid < 0)
			return 3;
		if (pid == 0)
			_exit(0);
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return 4;
	}
	printf("fork_walk: done\n");
	return 0;
}
