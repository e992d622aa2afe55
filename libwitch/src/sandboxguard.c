/* sandboxguard: profiling ends before a seccomp sandbox (see sandboxguard.h). */
#include "witch/sandboxguard.h"
#include "witch/export.h"
#include "witch/realfn.h"

#include <errno.h>
#include <linux/prctl.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <sys/syscall.h>

static int (*guard_before)(void);
static void (*guard_failed)(void);

void sandboxguard_set_hooks(int (*before)(void), void (*failed)(void))
{
	guard_before = before;
	guard_failed = failed;
}

/* The hook, the install, and on failure resume with errno kept. */
#define SANDBOX_GUARDED(type, call)                                              \
	do {                                                                     \
		int stopped_ = guard_before ? guard_before() : 0;                \
		type rc_ = (call);                                               \
		int err_ = errno;                                                \
		if (rc_ != 0 && stopped_ && guard_failed)                        \
			guard_failed();                                          \
		errno = err_;                                                    \
		return rc_;                                                      \
	} while (0)

long sandboxguard_syscall(sandboxguard_syscall_fn real, long nr, const long a[6])
{
	/* (SECCOMP_GET_ACTION_AVAIL and _GET_NOTIF_SIZES install nothing) */
	if (nr != SYS_seccomp || (a[0] != SECCOMP_SET_MODE_STRICT && a[0] != SECCOMP_SET_MODE_FILTER))
		return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	SANDBOX_GUARDED(long, real(nr, a[0], a[1], a[2], a[3], a[4], a[5]));
}

typedef int (*prctl_fn)(int, ...);
static void *real_prctl;

WITCH_EXPORT int prctl(int option, ...)
{
	va_list ap;
	unsigned long a[4];
	/* prctl(2) takes up to four more arguments; reading four is what the
	 * C library's own does. */
	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	prctl_fn real = (prctl_fn)realfn_next(&real_prctl, "prctl");
	if (!real)
		return errno = ENOSYS, -1;
	if (option != PR_SET_SECCOMP)
		return real(option, a[0], a[1], a[2], a[3]);
	SANDBOX_GUARDED(int, real(option, a[0], a[1], a[2], a[3]));
}
