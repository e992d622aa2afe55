/* fork_lazy: target program for run_fork_lazy.sh: a fork child starts
 * sampling lazily, at its first millisecond of CPU time (thread.h), in
 * each way a child can reach that point.
 *
 * usage: fork_lazy MODE MS
 *
 * The parent forks once as MODE says and exits with the child's status
 * (0, or the code of the check that failed).  A child "spends" MS ms of
 * CPU time storing at a steady rate.
 *   lazy     the child counts its POSIX timers at once (/proc/self/timers:
 *            0, as its sampler, which has one, is not open yet; else exit
 *            3; timers are not inherited), spends MS, counts again (at
 *            least 1; else exit 4)
 *   thread   the child starts a thread at once, before its own start;
 *            both spend MS
 *   refork   the child forks a grandchild at once, before its own start;
 *            both spend MS (the child exits with the grandchild's status)
 *   fds      the parent spends MS (it ticks: its thread's sampler and
 *            fault log are open), lists its perf_event descriptors (the
 *            runtime's), forks; the child puts /dev/null at once on each
 *            that is not a perf_event one again (the child's trigger takes
 *            the lowest number free; none left: exit 6), spends MS, then
 *            checks that each is still /dev/null (else exit 5): the start
 *            must not close what the program opened where its parent's
 *            descriptors were
 *   thread_fork  a second thread forks; the child spends MS
 */
#include "ka.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double spend_ms;

static uint64_t buf[2][1024];

static void spend(int which)
{
	ka_spend_ms(spend_ms, buf[which]);
}

static void *spend_thread(void *arg)
{
	(void)arg;
	spend(1);
	return NULL;
}

static int timers(void)
{
	char buf[4096];
	int fd = open("/proc/self/timers", O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len < 0)
		return -1;
	buf[len] = 0;
	int n = 0;
	for (char *p = buf; (p = strstr(p, "ID:")) != NULL; p += 3)
		n++;
	return n;
}

static int wait_status(pid_t pid)
{
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return 2;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int child_lazy(void)
{
	if (timers() != 0)
		return 3;
	spend(0);
	return timers() >= 1 ? 0 : 4;
}

static int child_thread(void)
{
	pthread_t th;
	if (pthread_create(&th, NULL, spend_thread, NULL) != 0)
		return 2;
	spend(0);
	pthread_join(th, NULL);
	return 0;
}

static int child_refork(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		spend(1);
		_exit(0);
	}
	spend(0);
	return wait_status(pid);
}

/* The parent's perf_event descriptors (the runtime's: its main thread's
 * sampler and fault log), listed before the fork. */
static int parent_fd[16], parent_fds;

static int perf_fds_list(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[300], link[64];
	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL && parent_fds < 16) {
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		ssize_t len = readlink(path, link, sizeof(link) - 1);
		if (len > 0) {
			link[len] = 0;
			if (strstr(link, "perf_event"))
				parent_fd[parent_fds++] = atoi(e->d_name);
		}
	}
	closedir(d);
	return parent_fds;
}

static int is_perf_fd(int fd)
{
	char path[64], link[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ssize_t len = readlink(path, link, sizeof(link) - 1);
	if (len <= 0)
		return 0;
	link[len] = 0;
	return strstr(link, "perf_event") != NULL;
}

static int child_fds(void)
{
	struct stat null_st, st;
	int put[16], n = 0;
	int null = open("/dev/null", O_RDONLY);
	if (null < 0 || fstat(null, &null_st) < 0)
		return 2;
	for (int i = 0; i < parent_fds; i++)
		if (!is_perf_fd(parent_fd[i]))
			put[n++] = parent_fd[i];
	if (n == 0)
		return 6;
	for (int i = 0; i < n; i++)
		if (dup2(null, put[i]) != put[i])
			return 2;
	spend(0);
	for (int i = 0; i < n; i++)
		if (fstat(put[i], &st) < 0 || st.st_rdev != null_st.st_rdev)
			return 5;
	return 0;
}

static void *fork_thread(void *arg)
{
	pid_t pid = fork();
	if (pid == 0) {
		spend(0);
		_exit(0);
	}
	*(int *)arg = wait_status(pid);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: fork_lazy lazy|thread|refork|fds|thread_fork MS\n");
		return 2;
	}
	const char *mode = argv[1];
	spend_ms = atof(argv[2]);
	if (strcmp(mode, "thread_fork") == 0) {
		pthread_t th;
		int status = 2;
		if (pthread_create(&th, NULL, fork_thread, &status) != 0)
			return 2;
		pthread_join(th, NULL);
		return status;
	}
	int (*child)(void) = strcmp(mode, "lazy") == 0	     ? child_lazy
			     : strcmp(mode, "thread") == 0 ? child_thread
			     : strcmp(mode, "refork") == 0 ? child_refork
			     : strcmp(mode, "fds") == 0	     ? child_fds
							     : NULL;
	if (!child) {
		fprintf(stderr, "fork_lazy: unknown mode %s\n", mode);
		return 2;
	}
	if (child == child_fds) {
		spend(1);
		if (perf_fds_list() < 1)
			return 6;
	}
	pid_t pid = fork();
	if (pid == 0)
		exit(child());
	return wait_status(pid);
}
