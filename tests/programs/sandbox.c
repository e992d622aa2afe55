/* sandbox: a program that sandboxes itself with seccomp halfway through.
 *
 *   phase_one()  REPS passes of stores and loads over 1 MiB
 *   the sandbox: a filter that allows only what the rest of this program
 *                makes itself (write, exit, memory, futex, the clock) and
 *                kills the process on anything else (SIGSYS), installed
 *                as WAY says
 *   phase_two()  the same work again, then the checksum on stdout, exit 0
 *
 * A profiler that makes a system call of its own past the filter (a tick's
 * ioctl, the profile's open at exit) kills the program; the runtime writes
 * its profile before the filter goes in and stops for good
 * (sandboxguard.h).  So, with WITCH_WATCHPOINTS=0, the profile's sampled
 * bytes are all phase_one's.  When the install fails, profiling goes on:
 * the bytes split between the phases (the same work each: 0.5).
 *
 * WAY: prctl   prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ...)
 *      tsync   syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, TSYNC, ...)
 *              (libseccomp's way) for every thread, with a second thread
 *              that works, spins across the install, works once more
 *              after it and ends
 *      listener  syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
 *              NEW_LISTENER, ...) with a filter that allows all but acct,
 *              which it hands to a supervisor (none: this program never
 *              calls it): the install returns a descriptor, not 0
 *      strict  syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT): only read,
 *              write, _exit and sigreturn; phase two ends with the exit
 *              system call itself
 *      crash   as prctl, then a NULL store after the checksum: the
 *              program dies of SIGSEGV as natively, its default action
 *              given back to it before the filter (the runtime's stand-in
 *              would write a profile, through calls the filter kills)
 *      fail    prctl with no filter (EFAULT): not sandboxed
 *
 * Usage: sandbox WAY [REPS]     default REPS = 150 (~0.3 s a phase)
 */
#include "ka.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N (1u << 18)

static uint32_t buf[N], other[N];

KA_FN uint64_t phase_one(uint32_t *p, long reps)
{
	return ka_phase_work(p, N, reps, 1);
}

KA_FN uint64_t phase_two(uint32_t *p, long reps)
{
	return ka_phase_work(p, N, reps, 2);
}

#define ALLOW(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static struct sock_filter filter[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	ALLOW(__NR_write), ALLOW(__NR_exit), ALLOW(__NR_exit_group), ALLOW(__NR_rt_sigreturn),
	ALLOW(__NR_brk), ALLOW(__NR_mmap), ALLOW(__NR_munmap), ALLOW(__NR_madvise),
	ALLOW(__NR_futex), ALLOW(__NR_clock_gettime), ALLOW(__NR_newfstatat),
	ALLOW(__NR_getrandom), ALLOW(__NR_rt_sigprocmask),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
};

/* listener's: everything but acct, which goes to the supervisor. */
static struct sock_filter notify_acct[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_acct, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

static long reps;
static volatile int sandboxed;
static uint64_t other_sum;

/* tsync's second thread: works, spins (ticking) until the sandbox is in,
 * and works once more, past it. */
static void *other_thread(void *arg)
{
	(void)arg;
	uint64_t v = phase_one(other, reps / 4 + 1);
	while (!sandboxed)
		__asm__ volatile("pause");
	other_sum = v + phase_two(other, 1);
	return NULL;
}

static int fail(const char *what)
{
	static const char msg[] = "sandbox: cannot ";
	if (write(2, msg, sizeof(msg) - 1) < 0 || write(2, what, strlen(what)) < 0 || write(2, "\n", 1) < 0)
		return 2;
	return 2;
}

int main(int argc, char **argv)
{
	const char *way = argc > 1 ? argv[1] : "prctl";
	reps = ka_reps(argc - 1, argv + 1, 150);
	struct sock_fprog prog = {sizeof(filter) / sizeof(filter[0]), filter};
	pthread_t th;
	int tsync = !strcmp(way, "tsync");

	if (tsync && pthread_create(&th, NULL, other_thread, NULL) != 0)
		return fail("start a thread");
	uint64_t sum = phase_one(buf, reps);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return fail("set no_new_privs");
	if (!strcmp(way, "prctl") || !strcmp(way, "crash")) {
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
			return fail("install the filter");
	} else if (tsync) {
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0)
			return fail("install the filter on every thread");
	} else if (!strcmp(way, "listener")) {
		struct sock_fprog notify = {sizeof(notify_acct) / sizeof(notify_acct[0]), notify_acct};
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			    &notify) <= 0)
			return fail("install a filter with a listener");
	} else if (!strcmp(way, "strict")) {
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, NULL) != 0)
			return fail("enter strict mode");
	} else if (!strcmp(way, "fail")) {
		if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL) == 0 || errno != EFAULT)
			return fail("fail to install a filter");
	} else {
		return fail("tell the way (prctl, tsync, listener, strict, crash or fail)");
	}
	sandboxed = 1;
	sum += phase_two(buf, reps);
	if (tsync) {
		pthread_join(th, NULL);
		sum += other_sum;
	}
	/* formatted by hand: stdio's first write asks fstat, which strict
	 * mode kills */
	char line[64] = "sandbox checksum ";
	size_t n = strlen(line);
	for (int shift = 60; shift >= 0; shift -= 4)
		line[n++] = "0123456789abcdef"[(sum >> shift) & 15];
	line[n++] = '\n';
	if (write(1, line, n) != (ssize_t)n)
		return 3;
	if (!strcmp(way, "strict"))
		syscall(SYS_exit, 0); /* exit_group is not strict mode's */
	if (!strcmp(way, "crash")) {
		int *volatile nowhere = NULL;
		*nowhere = 1;
	}
	return 0;
}
