/* fd_sweep: a program that closes every descriptor it did not open, as
 * daemons and the children they fork do, halfway through its work.
 *
 *   a second thread starts and waits (it holds descriptors of the
 *   runtime's own: its clock)
 *   phase_one()  REPS passes of stores and loads over 1 MiB
 *   the sweep, as WAY says
 *   the program takes every free number below 1024 (a server's sockets),
 *   then lets the second thread end
 *   phase_two()  the same work again, then the checksum on stdout, exit 0
 *
 * Before fdguard.h the sweep closed the runtime's descriptors: sampling
 * stopped for good (phase_two had none of the profile's bytes), and the
 * second thread's end closed the numbers the program had taken since, the
 * program's own files (the check after it fails, exit 1).  Now the sweep
 * passes over them: the same work each phase, half the bytes each.
 *
 * WAY: closefrom    closefrom(3)
 *      close_range  close_range(3, ~0U, 0)
 *      syscall      syscall(SYS_close_range, 3, ~0U, 0)
 *      close_loop   close() of 3 .. sysconf(_SC_OPEN_MAX) - 1 (at most 65536)
 *      proc_fd      close() of each number /proc/self/fd lists, 3 and up
 *                   (each must return 0: each was open)
 *      daemon       fork first: the parent waits and exits with the
 *                   child's status; the child setsid()s and does the rest
 *                   with closefrom(3)
 *      none         no sweep: the runtime's closes are all its own
 *      take         dup2 a pipe onto each number /proc/self/fd lists, 3
 *                   and up: the program takes the runtime's numbers, so
 *                   the main thread's sampling ends there (phase_two has
 *                   none of the bytes); what must hold is that the second
 *                   thread's end closes none of them (fdguard.h)
 *
 * Usage: fd_sweep WAY [REPS]     default REPS = 150 (~0.3 s a phase)
 * Exit 0, or 1 with a line on stderr saying what did not hold.
 */
#include "ka.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define N (1u << 18)
#define TOP 1024

static uint32_t buf[N];

KA_FN uint64_t phase_one(uint32_t *p, long reps)
{
	return ka_phase_work(p, N, reps, 1);
}

KA_FN uint64_t phase_two(uint32_t *p, long reps)
{
	return ka_phase_work(p, N, reps, 2);
}

static pthread_barrier_t go;

static void *waiter(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&go);
	return NULL;
}

static int failed(const char *what)
{
	fprintf(stderr, "fd_sweep: %s\n", what);
	return 1;
}

/* The numbers /proc/self/fd lists, 3 and up, but the listing's own. */
static int listed(int *fds, int max)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d)) && n < max;) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] != '.' && fd >= 3 && fd != dirfd(d))
			fds[n++] = fd;
	}
	closedir(d);
	return n;
}

static int sweep(const char *way, int pipe_rd)
{
	int fds[TOP], n;
	if (!strcmp(way, "closefrom") || !strcmp(way, "daemon")) {
		closefrom(3);
	} else if (!strcmp(way, "close_range")) {
		if (close_range(3, ~0u, 0) != 0)
			return failed("close_range failed");
	} else if (!strcmp(way, "syscall")) {
		if (syscall(SYS_close_range, 3, ~0u, 0) != 0)
			return failed("syscall(SYS_close_range) failed");
	} else if (!strcmp(way, "close_loop")) {
		long max = sysconf(_SC_OPEN_MAX);
		for (long fd = 3; fd < (max > 65536 || max < 0 ? 65536 : max); fd++)
			close((int)fd);
	} else if (!strcmp(way, "proc_fd")) {
		if ((n = listed(fds, TOP)) < 0)
			return failed("cannot list /proc/self/fd");
		for (int i = 0; i < n; i++)
			if (close(fds[i]) != 0)
				return failed("a close of a listed descriptor failed");
	} else if (!strcmp(way, "take")) {
		if ((n = listed(fds, TOP)) < 0)
			return failed("cannot list /proc/self/fd");
		for (int i = 0; i < n; i++)
			if (fds[i] != pipe_rd && dup2(pipe_rd, fds[i]) != fds[i])
				return failed("dup2 onto a listed descriptor failed");
	} else if (strcmp(way, "none")) {
		return failed("WAY: closefrom, close_range, syscall, close_loop, proc_fd, daemon, take or none");
	}
	return 0;
}

/* Numbers 3..TOP-1 that are the pipe (ino), taken or found so: owned[]. */
static int same_file(int fd, ino_t ino)
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_ino == ino;
}

static int run(const char *way, long reps)
{
	int p[2];
	pthread_t th;
	if (pipe(p) != 0)
		return failed("cannot open a pipe");
	struct stat st;
	if (fstat(p[0], &st) != 0)
		return failed("cannot stat the pipe");
	pthread_barrier_init(&go, NULL, 2);
	if (pthread_create(&th, NULL, waiter, NULL) != 0)
		return failed("cannot start a thread");
	uint64_t sum = phase_one(buf, reps);
	int keep = !strcmp(way, "take") ? p[0] : -1;
	if (keep < 0) {
		close(p[1]);
		close(p[0]);
	}
	if (sweep(way, p[0]) != 0)
		return 1;
	/* Every free number below TOP, the pipe's (or /dev/null's where the
	 * sweep closed the pipe). */
	int src = keep >= 0 ? keep : open("/dev/null", O_RDONLY);
	if (src < 0 || fstat(src, &st) != 0)
		return failed("cannot open /dev/null");
	static char mine[TOP];
	for (int fd; (fd = dup(src)) >= 0;) {
		if (fd >= TOP) {
			close(fd);
			break;
		}
		mine[fd] = 1;
	}
	mine[src] = 1;
	if (keep >= 0)
		for (int fd = 3; fd < TOP; fd++)
			mine[fd] |= same_file(fd, st.st_ino); /* the numbers dup2 took */
	pthread_barrier_wait(&go);
	pthread_join(th, NULL);
	for (int fd = 3; fd < TOP; fd++)
		if (mine[fd] && !same_file(fd, st.st_ino)) {
			fprintf(stderr, "fd_sweep: descriptor %d, the program's, was closed or replaced\n", fd);
			return 1;
		}
	for (int fd = 3; fd < TOP; fd++)
		if (mine[fd] && fd != src)
			close(fd);
	sum += phase_two(buf, reps);
	printf("fd_sweep checksum %016llx\n", (unsigned long long)sum);
	return 0;
}

int main(int argc, char **argv)
{
	const char *way = argc > 1 ? argv[1] : "closefrom";
	long reps = ka_reps(argc - 1, argv + 1, 150);
	if (strcmp(way, "daemon"))
		return run(way, reps);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return failed("cannot fork");
	if (pid == 0) {
		setsid();
		int rc = run(way, reps);
		fflush(stdout);
		_exit(rc);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return failed("cannot wait for the child");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
