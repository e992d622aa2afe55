/* rusage_run.c: run a program and report its own peak RSS (bench/real_programs.py).
 *
 * usage: rusage_run FILE PROGRAM [ARG...]
 *
 * Why: ru_maxrss of a child forked from a big process (the Python driver) is
 * at least that process's RSS, because the kernel records the pre-exec
 * address space's high-water mark at exec.  This launcher is small (~1 MiB),
 * so the program it forks and execs is measured alone.  Writes "pid PID\n"
 * to FILE as soon as the program is started, then "maxrss KIB\n",
 * "user SECONDS\n" and "sys SECONDS\n" after it ends (wait4: the program and the
 * descendants it reaped).  SIGTERM, SIGINT
 * and SIGHUP are passed on to the program.  RUSAGE_RUN_LD_PRELOAD, if set,
 * becomes the program's LD_PRELOAD (so the launcher itself is not profiled).  Exits as the program did: same
 * exit code, or the same signal (re-raised, without a core file).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: rusage_run FILE PROGRAM [ARG...]\n");
		return 127;
	}
	FILE *out = fopen(argv[1], "w");
	if (!out) {
		perror(argv[1]);
		return 127;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sigemptyset(&sa.sa_mask);
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 127;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		fclose(out);
		/* The preload is for the program, not for this launcher. */
		const char *preload = getenv("RUSAGE_RUN_LD_PRELOAD");
		if (preload) {
			setenv("LD_PRELOAD", preload, 1);
			unsetenv("RUSAGE_RUN_LD_PRELOAD");
		}
		execvp(argv[2], argv + 2);
		fprintf(stderr, "rusage_run: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	child = pid;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	fprintf(out, "pid %d\n", (int)pid);
	fflush(out);
	sigprocmask(SIG_SETMASK, &old, NULL);
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("wait4");
			return 127;
		}
	fprintf(out, "maxrss %ld\nuser %ld.%06ld\nsys %ld.%06ld\n", ru.ru_maxrss,
		(long)ru.ru_utime.tv_sec, (long)ru.ru_utime.tv_usec,
		(long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
	fclose(out);
	if (WIFSIGNALED(status)) {
		struct rlimit no_core = {0, 0};
		setrlimit(RLIMIT_CORE, &no_core);
		signal(WTERMSIG(status), SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		raise(WTERMSIG(status));
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
}
