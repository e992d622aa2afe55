/* exec_chain: processes made every way a program makes them, under the
 * profiler (issue 6).  run_exec.sh checks the outcome.
 *
 *   exec_chain            stage 1: an exec of a missing file (fails: the
 *                         program and its profiling go on), then
 *                         dead_two_loops' work (fraction 0.5, top pair
 *                         <fill, overwrite>; see dead_two_loops.c), then
 *                           - vfork + exec of "exec_chain quick",
 *                           - posix_spawn of "exec_chain quick",
 *                           - system("exit 3"),
 *                         and finally execv of itself as "exec_chain stage2".
 *   exec_chain stage2     the same work again, then exit 0.
 *   exec_chain quick      exit 0 at once.
 *
 * Expected profiles with WITCH_OUTPUT=p-%p.prof (no %e, so the exec'd image
 * would write the same name): stage 1 writes p-<pid>.prof.exec before its
 * exec, stage 2 p-<pid>.prof, each with fraction 0.5; the vfork child and
 * the spawned child each write p-<their pid>.prof.  system()'s shell (dash)
 * leaves by _exit, which runs no destructors, so it writes none.
 */
#include "ka.h"

#include <errno.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#define N (8u << 20)

extern char **environ;

#include "dead_loops.h"

static uint64_t work(void)
{
	uint32_t *a = ka_alloc((size_t)N * sizeof *a);
	uint64_t total = 0;
	for (int r = 0; r < 8; r++) {
		fill(a, 2 * (uint64_t)r + 1);
		overwrite(a, 2 * (uint64_t)r + 2);
		total += sum(a);
	}
	munmap(a, (size_t)N * sizeof *a);
	return total;
}

static int wait_status(pid_t pid)
{
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
	const char *self = "/proc/self/exe";

	if (argc > 1 && !strcmp(argv[1], "quick"))
		return 0;
	if (argc > 1 && !strcmp(argv[1], "stage2")) {
		printf("stage2 checksum=%016llx\n", (unsigned long long)work());
		return 0;
	}

	/* First, so that the work after it shows profiling went on. */
	execl("/nonexistent/witch-test", "witch-test", (char *)NULL);
	printf("exec of a missing file failed: %s\n", errno == ENOENT ? "ENOENT" : "other");

	printf("stage1 checksum=%016llx\n", (unsigned long long)work());

	char exe[4096];
	ssize_t n = readlink(self, exe, sizeof(exe) - 1);
	if (n <= 0)
		return 2;
	exe[n] = '\0';
	char *quick[] = {exe, "quick", NULL};

	fflush(stdout);
	pid_t pid = vfork();
	if (pid == 0) {
		execv(exe, quick);
		_exit(127);
	}
	printf("vfork child exited %d\n", wait_status(pid));

	if (posix_spawn(&pid, exe, NULL, NULL, quick, environ) != 0)
		return 2;
	printf("posix_spawn child exited %d\n", wait_status(pid));

	int st = system("exit 3");
	printf("system() returned %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);

	fflush(stdout);
	char *stage2[] = {exe, "stage2", NULL};
	execv(exe, stage2);
	printf("exec of stage2 failed\n");
	return 1;
}
