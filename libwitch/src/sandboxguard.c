/* sandboxguard: profiling ends before a seccomp sandbox (see sandboxguard.h). */
#include "witch/sandboxguard.h"
#include "witch/export.h"
#include "witch/rawsys.h"
#include "witch/realfn.h"

#include <errno.h>
#include <linux/prctl.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

static int (*guard_before)(void);
static void (*guard_failed)(void);

void sandboxguard_set_hooks(int (*before)(void), void (*failed)(void))
{
	guard_before = before;
	guard_failed = failed;
}

/* The hook, the install, and on failure (-1: a filter with
 * SECCOMP_FILTER_FLAG_NEW_LISTENER returns a descriptor) resume with errno
 * kept. */
#define SANDBOX_GUARDED(type, call)                                              \
	do {                                                                     \
		int stopped_ = guard_before ? guard_before() : 0;                \
		type rc_ = (call);                                               \
		int err_ = errno;                                                \
		if (rc_ < 0 && stopped_ && guard_failed)                         \
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

/* The system calls the runtime makes (strace of profiled runs: threads,
 * forks, a crash, the exit), each with arguments that fail at once or do
 * nothing.  A filter that kills on the number kills on these too; one that
 * looks at the arguments may let these by and kill the real ones, which
 * no probe tells.  rt_sigreturn is not here (a handler's return: no
 * harmless form); a filter that lets the program's own signals through
 * allows it. */
static const struct probe_call {
	long nr;
	long a[6];
	char name[20]; /* an array, not a pointer: the table needs no relocation at
			* load, which had written a page more of every process */
} probe_calls[] = {
	{SYS_perf_event_open, {0, 0, -1, -1, 0, 0}, "perf_event_open"},
	{SYS_ioctl, {-1, 0x2400 /* PERF_EVENT_IOC_ENABLE */, 0}, "ioctl"},
	{SYS_timer_create, {1 /* CLOCK_MONOTONIC */, 0, 0}, "timer_create"},
	{SYS_timer_settime, {-1, 0, 0, 0}, "timer_settime"},
	{SYS_timer_delete, {-1}, "timer_delete"},
	{SYS_process_vm_readv, {0, 0, 0, 0, 0, 0}, "process_vm_readv"},
	{SYS_getpid, {0}, "getpid"},
	{SYS_gettid, {0}, "gettid"},
	{SYS_tgkill, {0, 0, 0}, "tgkill"},
	{SYS_rt_sigaction, {0, 0, 0, 8}, "rt_sigaction"},
	{SYS_rt_sigprocmask, {0 /* SIG_BLOCK */, 0, 0, 8}, "rt_sigprocmask"},
	{SYS_sigaltstack, {0, 0}, "sigaltstack"},
	{SYS_clock_gettime, {3 /* CLOCK_THREAD_CPUTIME_ID */, 0}, "clock_gettime"},
	{SYS_clock_getres, {1, 0}, "clock_getres"},
	{SYS_getrusage, {0, 0}, "getrusage"},
	{SYS_mincore, {0, 0, 0}, "mincore"},
	{SYS_madvise, {0, 0, 0}, "madvise"},
	{SYS_mprotect, {0, 0, 0}, "mprotect"},
	{SYS_mmap, {0, 0, 0, 0x22 /* MAP_PRIVATE | MAP_ANONYMOUS */, -1, 0}, "mmap"},
	{SYS_munmap, {0, 0}, "munmap"},
	{SYS_openat, {-100 /* AT_FDCWD */, 0, 0}, "openat"},
	{SYS_read, {-1, 0, 0}, "read"},
	{SYS_pread64, {-1, 0, 0, 0}, "pread64"},
	{SYS_write, {-1, 0, 0}, "write"},
	{SYS_close, {-1}, "close"},
	{SYS_fcntl, {-1, 1030 /* F_DUPFD_CLOEXEC */, 0}, "fcntl"},
	{SYS_newfstatat, {-1, 0, 0, 0}, "newfstatat"},
	{SYS_readlink, {0, 0, 0}, "readlink"},
	{SYS_getcwd, {0, 0}, "getcwd"},
	{SYS_rename, {0, 0}, "rename"},
	{SYS_unlink, {0}, "unlink"},
	{SYS_pipe2, {0, 0}, "pipe2"},
	{SYS_userfaultfd, {-1}, "userfaultfd"},
	{SYS_sched_yield, {0}, "sched_yield"},
	{SYS_sched_getaffinity, {0, 0, 0}, "sched_getaffinity"},
	{SYS_futex, {0, 1 /* FUTEX_WAKE */, 0}, "futex"},
	{SYS_nanosleep, {0, 0}, "nanosleep"},
	{SYS_prctl, {21 /* PR_GET_SECCOMP */}, "prctl"},
	/* The descriptor limit's lift (fdguard.h) and the address space's
	 * (limitguard.h): a read. */
	{SYS_prlimit64, {0, 7 /* RLIMIT_NOFILE */, 0, 0}, "prlimit64"},
	/* A signal held around a write (sigguard_hold). */
	{SYS_rt_sigpending, {0, 8}, "rt_sigpending"},
	{SYS_rt_sigtimedwait, {0, 0, 0, 8}, "rt_sigtimedwait"},
	/* The flusher's start: its policy set (an invalid one here) and its
	 * name (a null one). */
	{SYS_sched_setscheduler, {0, -1, 0}, "sched_setscheduler"},
	{SYS_prctl, {15 /* PR_SET_NAME */, 0}, "prctl(PR_SET_NAME)"},
	/* A program's mlockall, made range by range (lockguard.h): a
	 * length of 0. */
	{SYS_mlock2, {0, 0, 0}, "mlock2"},
	{SYS_munlock, {0, 0}, "munlock"},
};
#define PROBE_N (sizeof(probe_calls) / sizeof(probe_calls[0]))
#define PROBE_WAIT_MS 2000 /* a filter's supervisor that never answers */

/* The child: each call in turn, its index in *at first; PROBE_N when all
 * came back. */
static __attribute__((noreturn)) void probe_child(volatile int *at)
{
	for (unsigned i = 0; i < PROBE_N; i++) {
		*at = (int)i;
		const struct probe_call *c = &probe_calls[i];
		rawsys6(c->nr, c->a[0], c->a[1], c->a[2], c->a[3], c->a[4], c->a[5]);
	}
	*at = (int)PROBE_N;
	for (;;)
		rawsys6(SYS_exit_group, 0, 0, 0, 0, 0, 0);
}

/* The probe's mapping (shared, so a forked child's progress shows): the
 * progress, the word the kernel clears and wakes as a child that shares
 * the memory ends, and that child's stack. */
struct probe_page {
	volatile int at;
	volatile int tid;
};
#define PROBE_MAP_SIZE 65536

static int probe_child_fn(void *arg)
{
	probe_child(&((struct probe_page *)arg)->at);
}

/* A child that shares the memory (CLONE_VM) copies no page tables: ~1.5 ms
 * less of every start under a filter here.  Before Linux 5.16 a signal
 * that dumps core (SIGSYS, a filter's kill) also killed every process
 * sharing the dumper's memory, the program among them: there the child is
 * a fork.  (A filter's SECCOMP_RET_TRAP would run a SIGSYS handler in the
 * child, in the shared memory: at the constructor the program has set
 * none.) */
static int probe_may_share_memory(void)
{
	struct utsname u;
	int major = 0, minor = 0;
	if (rawsys6(SYS_uname, (long)&u, 0, 0, 0, 0, 0) != 0 ||
	    sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major > 5 || (major == 5 && minor >= 16);
}

/* Until the child ends (1), or PROBE_WAIT_MS pass (0). */
static int probe_wait(struct probe_page *pg, long pid, int shared)
{
	if (shared) {
		struct timespec left = {PROBE_WAIT_MS / 1000, 0};
		int tid;
		while ((tid = pg->tid) != 0) {
			long r = rawsys6(SYS_futex, (long)&pg->tid, 0 /* FUTEX_WAIT */, tid,
					 (long)&left, 0, 0);
			if (r == -ETIMEDOUT)
				return 0; /* (the timeout is each wait's: a spurious wake waits again) */
		}
		return 1;
	}
	int status;
	struct timespec step = {0, 20000}; /* a forked child takes ~0.3-1 ms here */
	for (long waited_us = 0; waited_us < PROBE_WAIT_MS * 1000l; waited_us += 20) {
		/* (a SIGCHLD the program ignores reaps it itself: ECHILD) */
		if (rawsys6(SYS_wait4, pid, (long)&status, WNOHANG, 0, 0, 0) != 0)
			return 1;
		rawsys6(SYS_nanosleep, (long)&step, 0, 0, 0, 0, 0);
	}
	return 0;
}

int sandboxguard_probe(char *why, size_t len)
{
	/* Raw calls only: no atfork handler, no interposer, no errno. */
	if (rawsys6(SYS_prctl, 21 /* PR_GET_SECCOMP */, 0, 0, 0, 0, 0) != 2)
		return 0; /* no filter (strict mode would not have reached here) */
	struct probe_page *pg = (struct probe_page *)rawsys6(
		SYS_mmap, 0, PROBE_MAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if ((long)pg < 0 && (long)pg > -4096)
		return 0; /* not known: the runtime meets the filter as it comes */
	pg->at = -1;
	int shared = probe_may_share_memory();
	long pid;
	if (shared) {
		/* the C library's clone: the child on its own stack, and no
		 * atfork handler run */
		pid = clone(probe_child_fn, (char *)pg + PROBE_MAP_SIZE,
			    CLONE_VM | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD, pg,
			    &pg->tid, NULL, &pg->tid);
		if (pid < 0)
			pid = -errno;
	} else {
		pid = rawsys6(SYS_clone, SIGCHLD, 0, 0, 0, 0, 0);
		if (pid == 0)
			probe_child(&pg->at);
	}
	int rc = 0;
	if (pid > 0) {
		int status;
		if (!probe_wait(pg, pid, shared))
			rawsys6(SYS_kill, pid, SIGKILL, 0, 0, 0, 0);
		rawsys6(SYS_wait4, pid, (long)&status, 0, 0, 0, 0);
		int i = pg->at;
		if (i >= 0 && i < (int)PROBE_N) {
			snprintf(why, len, "the seccomp filter in place kills the process at %s, which "
				 "the profiler calls", probe_calls[i].name);
			rc = -EPERM;
		}
	}
	rawsys6(SYS_munmap, (long)pg, PROBE_MAP_SIZE, 0, 0, 0, 0);
	return rc;
}
