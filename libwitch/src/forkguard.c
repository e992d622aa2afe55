/* forkguard: start profiling a forked child as fork returns (see forkguard.h). */
#include "witch/forkguard.h"
#include "witch/export.h"

#include <dlfcn.h>
#include <errno.h>
#include <pty.h>
#include <sys/types.h>
#include <unistd.h>

static void (*guard_child_start)(void);

void forkguard_set_child_hook(void (*child_start)(void))
{
	guard_child_start = child_start;
}

static void *real_fn(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* In the child only (`in_child`): the hook, errno kept. */
static void child_started(int in_child)
{
	if (!in_child || !guard_child_start)
		return;
	int err = errno;
	guard_child_start();
	errno = err;
}

static pid_t fork_guarded(const char *name)
{
	pid_t (*real)(void) = (pid_t(*)(void))real_fn(name);
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
	return fork_guarded("fork");
}

WITCH_EXPORT pid_t __fork(void)
{
	return fork_guarded("__fork");
}

/* Returns in the grandchild only (the parents _exit inside). */
WITCH_EXPORT int daemon(int nochdir, int noclose)
{
	int (*real)(int, int) = (int (*)(int, int))real_fn("daemon");
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
		(pid_t(*)(int *, char *, const struct termios *, const struct winsize *))real_fn("forkpty");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	pid_t pid = real(amaster, name, termp, winp);
	child_started(pid == 0);
	return pid;
}
