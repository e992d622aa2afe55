/* fd_limit: a threaded program that uses every descriptor number its soft
 * RLIMIT_NOFILE gives it.
 *
 * Usage: fd_limit THREADS [fork | set SOFT | full]
 *   starts THREADS threads that each spin ~30 ms of CPU time (so each is
 *   profiled: its clock, its fault log), prints its limit as it reads it
 *   ("soft=N"), then opens /dev/null until EMFILE and prints how many it
 *   opened and the highest number it got; then
 *   fork      closes them, and a child it forks does the same count
 *   set SOFT  sets its own soft limit to SOFT first, and prints it again
 *   full      keeps them open and starts THREADS more threads, which the
 *             runtime must profile with no number of the program's free,
 *             and exits with them still open (the profile is written then)
 * Natively the count is the limit less the three standard streams.  A
 * profiled thread holds one to six of the runtime's descriptors, which
 * came out of the program's numbers before fdguard.h put them above its
 * limit: under a soft limit of 256, 16 threads left it ~230 of 253.
 * Exit 0, or 1 where a step failed (a line on stderr says which).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64

static pthread_barrier_t spun, release;

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *worker(void *arg)
{
	volatile unsigned long x = 0;
	double t0 = thread_cpu_s();
	while (thread_cpu_s() - t0 < 0.03)
		for (int i = 0; i < 10000; i++)
			x += (unsigned long)i * 7;
	pthread_barrier_wait(&spun);
	pthread_barrier_wait(&release);
	return arg;
}

/* Starts n workers and waits for them to have spun. */
static int start(pthread_t *t, int n)
{
	if (pthread_barrier_init(&spun, NULL, (unsigned)n + 1) ||
	    pthread_barrier_init(&release, NULL, (unsigned)n + 1))
		return -1;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return -1;
	pthread_barrier_wait(&spun);
	return 0;
}

static void finish(pthread_t *t, int n)
{
	pthread_barrier_wait(&release);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&spun);
	pthread_barrier_destroy(&release);
}

static void say_limit(void)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_NOFILE, &r) == 0)
		printf("soft=%llu\n", (unsigned long long)r.rlim_cur);
	else
		printf("getrlimit failed\n");
}

/* Opens /dev/null until EMFILE; prints the count and the highest number;
 * closes them unless keep.  0, or -1 on another error.  What is counted is
 * how many the program can hold: a descriptor the runtime holds for a
 * moment (a file it reads in another thread's tick) is let go, so after an
 * EMFILE it tries again a few times, a millisecond apart. */
static int count(const char *who, int keep)
{
	static int fds[1 << 16];
	int n = 0, hi = -1, fd, err = 0;
	for (int again = 0; again < 4; again++) {
		while (n < (int)(sizeof(fds) / sizeof(fds[0])) &&
		       (fd = open("/dev/null", O_RDONLY)) >= 0) {
			fds[n++] = fd;
			if (fd > hi)
				hi = fd;
		}
		err = errno;
		if (err != EMFILE)
			break;
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	printf("%s opened %d, highest %d\n", who, n, hi);
	fflush(stdout);
	if (!keep)
		for (int i = 0; i < n; i++)
			close(fds[i]);
	if (err != EMFILE) {
		fprintf(stderr, "fd_limit: open stopped on %s, not EMFILE\n", strerror(err));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 0;
	const char *mode = argc > 2 ? argv[2] : "";
	pthread_t t[MAX_THREADS], more[MAX_THREADS];
	if (n < 0 || n > MAX_THREADS || start(t, n) != 0) {
		fprintf(stderr, "usage: fd_limit THREADS(0-%d) [fork | set SOFT | full]\n", MAX_THREADS);
		return 1;
	}
	say_limit();
	if (strcmp(mode, "set") == 0 && argc > 3) {
		struct rlimit r;
		getrlimit(RLIMIT_NOFILE, &r);
		r.rlim_cur = strtoull(argv[3], NULL, 10);
		if (setrlimit(RLIMIT_NOFILE, &r) != 0) {
			fprintf(stderr, "fd_limit: setrlimit: %s\n", strerror(errno));
			return 1;
		}
		say_limit();
	}
	int full = strcmp(mode, "full") == 0;
	if (count("main", full) != 0)
		return 1;
	if (strcmp(mode, "fork") == 0) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0)
			_exit(count("child", 0) != 0);
		int st;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "fd_limit: the child failed\n");
			return 1;
		}
	}
	finish(t, n);
	if (full) {
		/* Every number of the program's in use: the runtime's new threads
		 * must find theirs above its limit. */
		if (start(more, n) != 0) {
			fprintf(stderr, "fd_limit: threads could not start with every number used\n");
			return 1;
		}
		finish(more, n);
		printf("%d more threads ran\n", n);
	}
	return 0;
}
