/* forkguard: start profiling a forked child as fork returns (see forkguard.h). */
#include "witch/forkguard.h"
#include "witch/export.h"
#include "witch/realfn.h"

#include <errno.h>
#include <pty.h>
#include <sys/types.h>
#include <unistd.h>

static void (*guard_child_start)(void);

void forkguard_set_child_hook(void (*child_start)(void))
{
	guard_child_start = child_start;
}

/* The C library's definitions, each found at its first use (realfn.h). */
static void *real_fork, *real_libc_fork, *real_daemon, *real_forkpty;

/* In the child only (`in_child`): the hook, errno kept. */
static void child_started(int in_child)
{
	if (!in_child || !guard_child_start)
		return;
	int err = errno;
	guard_child_start();
	errno = err;
}

static pid_t fork_guarded(void **slot, const char *name)
{
	pid_t (*real)(void) = (pid_t(*)(void))realfn_next(slot, name);
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	pid_t pid = real();
	child_started(pid == 0);
	return pid;
}

WITCH_EXPORT pid_t fork(void)
{
	return fork_guarded(&real_fork, "fork");
}

WITCH_EXPORT pid_t __fork(void)
{
	return fork_guarded(&real_libc_fork, "__fork");
}

/* Returns in the grandchild only (the parents _exit inside). */
WITCH_EXPORT int daemon(int nochdir, int noclose)
{
	int (*real)(int, int) = (int (*)(int, int))realfn_next(&real_daemon, "daemon");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	int rc = real(nochdir, noclose);
	child_started(rc == 0);
	return rc;
}

WITCH_EXPORT pid_t forkpty(int *amaster, char *name, const struct termios *termp,
			   const struct winsize *winp)
{
	pid_t (*real)(int *, char *, const struct termios *, const struct winsize *) =
		(pid_t(*)(int *, char *, const struct termios *, const struct winsize *))realfn_next(&real_forkpty, "forkpty");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	pid_t pid = real(amaster, name, termp, winp);
	child_started(pid == 0);
	return pid;
}
