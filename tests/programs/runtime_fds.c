/* runtime_fds: the runtime's long-lived descriptors stay out of the
 * program's way (fdio_move_high), so a program that dup2s onto small
 * numbers it chose, as a shell sets a pipeline up, neither closes the
 * runtime's nor has its own closed by the runtime's fork hooks.
 *
 * Run under libwitch.so with WITCH_RATE=2000 and nothing armed
 * (runtime_fds.sh).  The program burns 300 ms of CPU (~600 ticks: the
 * page-fault log opens at the first), then:
 *   1. the runtime's descriptors (perf events: the sampler's clock and the
 *      page-fault log, at least two; a userfaultfd; libunwind's pipe) are
 *      all at or above the floor, min(soft RLIMIT_NOFILE, 1024) - 128;
 *   2. it dup2s a pipe's read end onto 3..15 (as bash moves a pipe to fd
 *      6), forks, and the child finds each of 3..15 still the pipe (same
 *      inode): the fork hooks closed nothing of the program's.  Before
 *      the fix a tick's fault log was opened at the lowest free number,
 *      bash's dup2 of its pipe there closed it, and each fork child's
 *      hook closed the pipe: "cannot duplicate fd 6 to fd 0";
 *   3. the 100 bytes it wrote into the pipe before are all there after
 *      300 ms more of ticks in it and its child: libunwind's own pipe
 *      (its memory checks during a walk write a byte and read one back)
 *      sat at the lowest free numbers too, so its walks read the
 *      program's pipe once the program dup2'd onto them, taking bytes or
 *      blocking for good (this test hung ~1 run in 20).
 * Exit 0 when all hold, 1 with a line saying which did not.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOW_LAST 15

static volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A pipe of the process's own, both ends here, non-blocking and
 * close-on-exec below the floor: libunwind's (none of the program's yet;
 * one inherited from ctest has one end here). */
static int own_pipe_below(long floor)
{
	struct stat a, b;
	for (int r = 3; r < floor && r < 256; r++) {
		if (fstat(r, &a) < 0 || !S_ISFIFO(a.st_mode) || (fcntl(r, F_GETFL) & O_ACCMODE) != O_RDONLY)
			continue;
		for (int w = 3; w < floor && w < 256; w++)
			if (w != r && fstat(w, &b) == 0 && b.st_ino == a.st_ino &&
			    (fcntl(w, F_GETFL) & O_ACCMODE) == O_WRONLY && (fcntl(r, F_GETFL) & O_NONBLOCK) &&
			    (fcntl(r, F_GETFD) & FD_CLOEXEC)) {
				printf("a pipe of the runtime's at fds %d and %d, below the floor %ld\n", r, w,
				       floor);
				return 1;
			}
	}
	return 0;
}

static int check_open_fds(long floor)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d) {
		perror("opendir");
		return 1;
	}
	int bad = 0, runtime = 0, self = dirfd(d);
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		int fd = atoi(e->d_name);
		char link[64], to[256];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(link, to, sizeof(to) - 1);
		to[n > 0 ? n : 0] = '\0';
		if (fd == self || (!strstr(to, "[perf_event]") && !strstr(to, "[userfaultfd]")))
			continue;
		runtime++;
		if (fd < floor) {
			printf("fd %d (%s) below the floor %ld\n", fd, to, floor);
			bad = 1;
		}
	}
	closedir(d);
	if (runtime < 2) {
		printf("%d perf or userfaultfd descriptors: want the sampler's clock and the "
		       "page-fault log\n", runtime);
		bad = 1;
	}
	return bad;
}

static void burn(double ms)
{
	double t0 = cpu_ms();
	while (cpu_ms() - t0 < ms)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i * 2654435761u;
}

int main(void)
{
	burn(300);
	struct rlimit r;
	long top = 1024;
	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < (rlim_t)top)
		top = (long)r.rlim_cur;
	long floor = top > 256 ? top - 128 : top / 2;
	int bad = check_open_fds(floor) | own_pipe_below(floor);

	int p[2];
	if (pipe(p) < 0) {
		perror("pipe");
		return 1;
	}
	/* Bytes in the pipe that only the program reads. */
	static const char payload[100];
	if (write(p[1], payload, sizeof(payload)) != (ssize_t)sizeof(payload)) {
		perror("write");
		return 1;
	}
	struct stat want;
	fstat(p[0], &want);
	for (int fd = 3; fd <= LOW_LAST; fd++)
		if (fd != p[0] && fd != p[1] && dup2(p[0], fd) < 0) {
			perror("dup2");
			return 1;
		}
	/* More ticks, their walks now among the program's descriptors. */
	burn(200);
	fflush(stdout); /* (not twice) */
	pid_t pid = fork();
	if (pid == 0) {
		int lost = 0;
		for (int fd = 3; fd <= LOW_LAST; fd++) {
			struct stat st;
			if (fstat(fd, &st) < 0 || st.st_ino != want.st_ino) {
				printf("child: fd %d is no longer the program's pipe\n", fd);
				lost = 1;
			}
		}
		burn(100);
		fflush(stdout);
		_exit(lost);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		bad = 1;
	int left = -1;
	if (ioctl(p[0], FIONREAD, &left) < 0 || left != (int)sizeof(payload)) {
		printf("the pipe holds %d of the program's %zu bytes: the runtime read some\n", left,
		       sizeof(payload));
		bad = 1;
	}
	return bad;
}
