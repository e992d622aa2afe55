/* perfguard: a program that uses hardware breakpoints itself gets them.
 *
 * Interposed: syscall (glibc has no perf_event_open wrapper; programs call
 * syscall(SYS_perf_event_open, ...)).  When the program's breakpoint event
 * is refused for want of a debug register (ENOSPC) while the runtime holds
 * some in the calling thread, the runtime gives one up and the call is
 * tried again, as often as needed.  seccomp goes to sandboxguard.h, close,
 * close_range, dup2 and dup3 to fdguard.h; every other call passes
 * straight on.
 */
#include "witch/fdguard.h"
#include "witch/sandboxguard.h"
#include "witch/thread.h"
#include "witch/export.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef long (*syscall_fn)(long, ...);

WITCH_EXPORT long syscall(long nr, ...)
{
	static syscall_fn real;
	va_list ap;
	long a[6];

	/* syscall(2) takes up to six arguments in registers; reading six is
	 * what the C library's own does. */
	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real)
		real = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (nr == SYS_seccomp)
		return sandboxguard_syscall(real, nr, a);
	long ret;
	if (fdguard_syscall(nr, a, &ret))
		return ret;
	long rc = real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (nr != SYS_perf_event_open || rc >= 0 || errno != ENOSPC)
		return rc;
	const struct perf_event_attr *attr = (const struct perf_event_attr *)a[0];
	if (!attr || attr->type != PERF_TYPE_BREAKPOINT)
		return rc;
	while (rc < 0 && errno == ENOSPC && thread_yield_watchpoint() == 0)
		rc = real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	return rc;
}
