/* sandboxed_exec: run a program under a seccomp filter installed before it
 * starts, as systemd's SystemCallFilter= or a container runtime does.
 *
 * The filter allows every system call but one, KILL, on which it kills
 * the process (SIGSYS).  Then LD_PRELOAD is set to LIB (this launcher
 * itself runs unprofiled) and PROG is exec'd: its runtime starts under
 * the filter.
 *
 * Usage: sandboxed_exec KILL LIB PROG [ARGS...]
 *   KILL: perf_event_open, timer_settime, process_vm_readv,
 *         sched_setscheduler or acct (a call no runtime makes)
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
	const char *name;
	long nr;
} calls[] = {
	{"perf_event_open", SYS_perf_event_open},
	{"timer_settime", SYS_timer_settime},
	{"process_vm_readv", SYS_process_vm_readv},
	{"acct", SYS_acct},
	{"sched_setscheduler", SYS_sched_setscheduler},
};

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: sandboxed_exec KILL LIB PROG [ARGS...]\n");
		return 2;
	}
	long nr = -1;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(argv[1], calls[i].name))
			nr = calls[i].nr;
	if (nr < 0) {
		fprintf(stderr, "sandboxed_exec: unknown call %s\n", argv[1]);
		return 2;
	}
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("sandboxed_exec: seccomp");
		return 2;
	}
	if (setenv("LD_PRELOAD", argv[2], 1)) {
		perror("sandboxed_exec: setenv");
		return 2;
	}
	execvp(argv[3], argv + 3);
	perror("sandboxed_exec: exec");
	return 127;
}
