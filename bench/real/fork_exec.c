/* fork_exec.c: a shell's pattern alone, for bench/startup.py: a process
 * that has run a while forks N children, each of which execs PROGRAM at
 * once, and waits for each.
 *
 * usage: fork_exec N MS PROGRAM [ARG...]
 *
 * Why: a script's processes are mostly forks that exec at once, and what a
 * fork costs a profiled parent (the fork hooks, the child's start before
 * its exec, the larger address space copied and torn down) is the
 * runtime's alone when the child execs unprofiled.  So the children exec
 * with LD_PRELOAD taken out of their environment; the parent first
 * computes for MS milliseconds so that it has ticked and its tables hold
 * something, as a shell that has run a while does.  Exits 1 if a child
 * did not exit 0.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: fork_exec N MS PROGRAM [ARG...]\n");
		return 2;
	}
	int n = atoi(argv[1]);
	double ms = atof(argv[2]);

	/* The children's environment: the parent's without LD_PRELOAD. */
	size_t ne = 0;
	while (environ[ne])
		ne++;
	char **env = calloc(ne + 1, sizeof(*env));
	if (!env)
		return 2;
	for (size_t i = 0, j = 0; i < ne; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0)
			env[j++] = environ[i];

	volatile unsigned long sink = 0;
	for (double t0 = now_ms(); now_ms() - t0 < ms;)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i * i;

	int bad = 0;
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork_exec: fork");
			return 2;
		}
		if (pid == 0) {
			execve(argv[3], argv + 3, env);
			_exit(127);
		}
		int st;
		if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			bad = 1;
	}
	return bad;
}
