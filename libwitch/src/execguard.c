/* execguard: write the profile before exec (see execguard.h). */
#include "witch/execguard.h"
#include "witch/export.h"
#include "witch/realfn.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#define EXEC_MAX_ARGS 4096 /* execl's arguments, gathered on the stack */

/* exit_group(2) without the C library (and without our own syscall
 * interposer): for the one case where _exit cannot be found. */
static void syscall_exit_group(int status)
{
	__asm__ volatile("syscall" : : "a"(231L), "D"((long)status) : "rcx", "r11", "memory");
}

extern char **environ;

static int (*guard_before)(const char *file);
static void (*guard_failed)(int stopped);

void execguard_set_hooks(int (*before)(const char *file), void (*failed)(int stopped))
{
	guard_before = before;
	guard_failed = failed;
}

/* The C library's definitions, each found at its first use (realfn.h). */
enum exec_real { REAL_EXECVE, REAL_EXECV, REAL_EXECVP, REAL_EXECVPE, REAL_FEXECVE, REAL_EXECVEAT,
		 REAL_EXIT, REAL_EXIT_ISO, REAL_N };
static const char *const real_names[REAL_N] = {"execve",  "execv",    "execvp", "execvpe",
					       "fexecve", "execveat", "_exit",  "_Exit"};
static void *real_slots[REAL_N];

static void *real_fn(enum exec_real which)
{
	return realfn_next(&real_slots[which], real_names[which]);
}

void execguard_prefork(void)
{
	for (int i = 0; i < REAL_N; i++)
		real_fn((enum exec_real)i);
}

static void (*guard_exit)(void);

void execguard_set_exit_hook(void (*before_exit)(void))
{
	guard_exit = before_exit;
}

typedef void (*exit_fn)(int) __attribute__((noreturn));

static __attribute__((noreturn)) void exit_guarded(enum exec_real which, int status)
{
	if (guard_exit)
		guard_exit();
	exit_fn real = (exit_fn)real_fn(which);
	if (real)
		real(status);
	for (;;) /* no C library _exit: the system call itself */
		syscall_exit_group(status);
}

WITCH_EXPORT void _exit(int status)
{
	exit_guarded(REAL_EXIT, status);
}

WITCH_EXPORT void _Exit(int status)
{
	exit_guarded(REAL_EXIT_ISO, status);
}

/* Every wrapper: hook, the real call, and on failure resume with errno kept. */
#define EXEC_GUARDED(file, call)                                                 \
	do {                                                                     \
		int stopped_ = guard_before ? guard_before(file) : 0;            \
		int rc_ = (call);                                                \
		int err_ = errno;                                                \
		if (guard_failed)                                                \
			guard_failed(stopped_);                                  \
		errno = err_;                                                    \
		return rc_;                                                      \
	} while (0)

WITCH_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	int (*real)(const char *, char *const[], char *const[]) = real_fn(REAL_EXECVE);
	if (!real)
		return errno = ENOSYS, -1;
	EXEC_GUARDED(path, real(path, argv, envp));
}

WITCH_EXPORT int execv(const char *path, char *const argv[])
{
	int (*real)(const char *, char *const[]) = real_fn(REAL_EXECV);
	if (!real)
		return errno = ENOSYS, -1;
	EXEC_GUARDED(path, real(path, argv));
}

WITCH_EXPORT int execvp(const char *file, char *const argv[])
{
	int (*real)(const char *, char *const[]) = real_fn(REAL_EXECVP);
	if (!real)
		return errno = ENOSYS, -1;
	EXEC_GUARDED(file, real(file, argv));
}

WITCH_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	int (*real)(const char *, char *const[], char *const[]) = real_fn(REAL_EXECVPE);
	if (!real)
		return errno = ENOSYS, -1;
	EXEC_GUARDED(file, real(file, argv, envp));
}

WITCH_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	int (*real)(int, char *const[], char *const[]) = real_fn(REAL_FEXECVE);
	if (!real)
		return errno = ENOSYS, -1;
	EXEC_GUARDED(argv[0] ? argv[0] : "", real(fd, argv, envp));
}

WITCH_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			  int flags)
{
	int (*real)(int, const char *, char *const[], char *const[], int) = real_fn(REAL_EXECVEAT);
	if (!real)
		return errno = ENOSYS, -1;
	EXEC_GUARDED(path, real(dirfd, path, argv, envp, flags));
}

/* execl, execlp, execle: the argument list as an array (NULL-terminated),
 * and for execle the environment after it. */
static int gather(const char *arg0, va_list ap, char **argv, char ***envp)
{
	int n = 0;
	argv[n++] = (char *)arg0;
	while (arg0 && n < EXEC_MAX_ARGS) {
		argv[n] = va_arg(ap, char *);
		if (!argv[n++])
			break;
	}
	if (arg0 && argv[n - 1]) {
		errno = E2BIG;
		return -1;
	}
	if (envp)
		*envp = va_arg(ap, char **);
	return 0;
}

WITCH_EXPORT int execl(const char *path, const char *arg, ...)
{
	char *argv[EXEC_MAX_ARGS + 1];
	va_list ap;
	va_start(ap, arg);
	int rc = gather(arg, ap, argv, NULL);
	va_end(ap);
	return rc < 0 ? rc : execv(path, argv);
}

WITCH_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char *argv[EXEC_MAX_ARGS + 1];
	va_list ap;
	va_start(ap, arg);
	int rc = gather(arg, ap, argv, NULL);
	va_end(ap);
	return rc < 0 ? rc : execvp(file, argv);
}

WITCH_EXPORT int execle(const char *path, const char *arg, ...)
{
	char *argv[EXEC_MAX_ARGS + 1];
	char **envp = NULL;
	va_list ap;
	va_start(ap, arg);
	int rc = gather(arg, ap, argv, &envp);
	va_end(ap);
	return rc < 0 ? rc : execve(path, argv, envp);
}
