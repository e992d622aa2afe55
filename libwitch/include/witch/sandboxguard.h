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
 * instruction (Chromium's sandbox), or a filter installed before the
 * runtime's constructor (systemd's SystemCallFilter=, a container's
 * profile): the runtime's first calls meet that one, and fail (one
 * `witch:` line) or are killed, as its filter says.
 */
#ifndef WITCH_SANDBOXGUARD_H
#define WITCH_SANDBOXGUARD_H

/* before() runs just before an install: 1 when it stopped profiling (then
 * failed() runs if the install fails, to resume), 0 when there was nothing
 * to stop. */
void sandboxguard_set_hooks(int (*before)(void), void (*failed)(void));

typedef long (*sandboxguard_syscall_fn)(long, ...);

/* For perfguard's syscall interposer: the call syscall(nr, a[0..5]) through
 * real, guarded as above when it installs a seccomp mode.  Returns what the
 * call returned, errno as it left it. */
long sandboxguard_syscall(sandboxguard_syscall_fn real, long nr, const long a[6]);

#endif
