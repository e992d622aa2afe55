/* sandboxguard: a seccomp sandbox ends profiling first.
 *
 * A program that sandboxes itself (OpenSSH's privilege-separated child,
 * vsftpd, tor, anything built on libseccomp) installs a filter that lets
 * through the system calls it makes itself and kills the process, or fails
 * the call, on any other.  The runtime's own (a tick's ioctl and timer, its
 * reads through the kernel, the profile's open and rename at exit) are on
 * no such list: a profiled program died of SIGSYS at its first tick after
 * sandboxing.  So before a filter, or strict mode, goes in, the runtime
 * writes the profile and stops for good (runtime.h: sealed): no system
 * call of its own after, in any thread.  If the install fails, profiling
 * resumes.
 *
 * Seen: prctl(PR_SET_SECCOMP), interposed here, and syscall(SYS_seccomp)
 * with SECCOMP_SET_MODE_STRICT or _FILTER (libseccomp's way), which
 * perfguard's syscall interposer hands over.  Not seen: a raw system call
 * instruction (Chromium's sandbox).
 *
 * A filter in place before the runtime starts (systemd's
 * SystemCallFilter=, a container's profile) is probed instead
 * (sandboxguard_probe): a child tries each system call the runtime makes,
 * with arguments that do nothing; if the filter kills it, the runtime
 * does not start.  What the filter fails instead is met as any refusal.
 */
#ifndef WITCH_SANDBOXGUARD_H
#define WITCH_SANDBOXGUARD_H

#include <stddef.h>

/* before() runs just before an install: 1 when it stopped profiling (then
 * failed() runs if the install fails, to resume), 0 when there was nothing
 * to stop. */
void sandboxguard_set_hooks(int (*before)(void), void (*failed)(void));

typedef long (*sandboxguard_syscall_fn)(long, ...);

/* For perfguard's syscall interposer: the call syscall(nr, a[0..5]) through
 * real, guarded as above when it installs a seccomp mode.  Returns what the
 * call returned, errno as it left it. */
long sandboxguard_syscall(sandboxguard_syscall_fn real, long nr, const long a[6]);

/* At start: 0 when no seccomp filter is in place, or the one in place lets
 * every system call of the runtime's through (or fails it: no harm);
 * -EPERM when it kills the process at one, named in why.  Costs a child
 * process only where a filter is in place. */
int sandboxguard_probe(char *why, size_t len);

#endif
