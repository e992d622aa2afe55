/* dead_fork: the dead_two_loops pattern, in a parent and in its forked child.
 *
 * Both processes run: fill() stores every element, overwrite() stores every
 * element again (killing fill's stores), sum() loads every element (using
 * overwrite's).  As in dead_two_loops, half the stores are dead and the two
 * store loops take the same time per store (one LCG step each), so each
 * process's own profile must show fraction 0.5 +- 0.1 with the top pair
 * <fill, overwrite>.  The child starts with a fresh profile (nothing the
 * parent measured before fork), writes its own file, and exits with 3; the
 * parent waits and exits with the child's status + 4 = 7.
 *
 * Usage: dead_fork [REPS [_exit|atfork]]   with "_exit" the child ends with
 * _exit(3), as forked workers do: no destructors run, and the runtime's
 * _exit still writes the child's profile.  With "atfork" the program's own
 * atfork child handler (registered after the runtime's, so it runs after
 * it) prints the threads and perf_event fds the child has at that moment:
 * natively 1 and 0, and the same under the profiler, which starts the
 * child's threads and events only when fork has returned to it.
 */
#include "ka.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#define N (4u << 20)

KA_FN void fill(uint32_t *p, uint64_t *v)
{
	for (uint32_t i = 0; i < N; i++) {
		KA_LCG(*v);
		p[i] = KA_HI(*v);
	}
}

KA_FN void overwrite(uint32_t *p, uint64_t *v)
{
	for (uint32_t i = 0; i < N; i++) {
		KA_LCG(*v);
		p[i] = KA_HI(*v);
	}
}

KA_FN uint64_t sum(const uint32_t *p)
{
	uint64_t s = 0;
	for (uint32_t i = 0; i < N; i++)
		s += KA_LOAD(p, i);
	return s;
}

/* Entries of /proc/self/DIR, all of them or those whose link names a perf_event. */
static int count_entries(const char *dir, int perf_only)
{
	char path[64], link[128];
	int n = 0;
	snprintf(path, sizeof(path), "/proc/self/%s", dir);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		if (perf_only) {
			char fd[64 + 256 + 2];
			snprintf(fd, sizeof(fd), "%s/%s", path, e->d_name);
			ssize_t k = readlink(fd, link, sizeof(link) - 1);
			if (k < 0)
				continue;
			link[k] = '\0';
			if (!strstr(link, "perf_event"))
				continue;
		}
		n++;
	}
	closedir(d);
	return n;
}

static int child_threads = -1, child_perf_fds = -1;

static void child_handler(void)
{
	child_threads = count_entries("task", 0);
	child_perf_fds = count_entries("fd", 1);
}

static uint64_t work(uint32_t *p, long reps)
{
	uint64_t v = 1, s = 0;
	for (long r = 0; r < reps; r++) {
		fill(p, &v);
		overwrite(p, &v);
		s += sum(p);
	}
	return s;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 6);
	uint32_t *p = ka_alloc((size_t)N * sizeof(uint32_t));
	int atfork = argc >= 3 && strcmp(argv[2], "atfork") == 0;
	if (atfork && pthread_atfork(NULL, NULL, child_handler) != 0)
		return 1;
	uint64_t s = work(p, reps);
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (atfork)
			printf("child's atfork handler: %d thread(s), %d perf_event fd(s)\n",
			       child_threads, child_perf_fds);
		printf("child %016llx\n", (unsigned long long)work(p, reps));
		if (argc >= 3 && strcmp(argv[2], "_exit") == 0) {
			fflush(stdout);
			_exit(3);
		}
		return 3;
	}
	int status = 0;
	waitpid(pid, &status, 0);
	printf("parent %016llx\n", (unsigned long long)s);
	return WIFEXITED(status) ? WEXITSTATUS(status) + 4 : 1;
}
