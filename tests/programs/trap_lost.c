/* trap_lost: a debug exception whose cause the kernel could not read never
 * ends a profiled program, and a real icebp still reaches it (sigguard.c).
 *
 * The kernel reads a #DB's cause from DR6; finding no bit set, it takes the
 * exception for an icebp (int1) and sends SIGTRAP with si_code TRAP_BRKPT
 * and si_addr the pc.  On an Emerald Rapids VM a watchpoint's hit arrived
 * so, the pc just past the watched store, in 2 of 300 profiled runs of
 * dead_threads at 2000/s, and SIGTRAP's default action ended the program.
 * No instruction makes DR6 come up empty on demand, so mode "lost" forges
 * the very signal: rt_tgsigqueueinfo to its own thread (a thread may send
 * itself a kernel si_code), TRAP_BRKPT, si_addr the address just past the
 * syscall instruction, which is the pc the handler's context then holds.
 * A real icebp differs in one thing: its opcode 0xf1 is just before the pc.
 *
 *   mode       SIGTRAP action   natively                 profiled
 *   lost       default          dies of SIGTRAP          "survived", exit 0
 *   lost-own   own handler      "own handler 1"          "own handler 0" (the
 *                                                        runtime's trap, not
 *                                                        the program's)
 *   icebp      own handler      "own handler 1"          the same
 *   icebp-dfl  default          dies of SIGTRAP          the same
 *
 * Profiled, "lost" and "lost-own" count one traps_lost in the profile.
 * Build: -O2 -g.  Usage: trap_lost MODE
 */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile sig_atomic_t own_calls;

static void on_trap(int sig)
{
	(void)sig;
	own_calls++;
}

/* The forged signal, delivered as the syscall returns: its si_addr is the
 * label just past the syscall instruction. */
static long queue_lost_trap(void)
{
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGTRAP;
	si.si_code = TRAP_BRKPT;
	long tgid = getpid(), tid = syscall(SYS_gettid); /* no call once r10 is set */
	register long r10 __asm__("r10") = (long)&si;
	long rc;
	__asm__ volatile("lea 1f(%%rip), %%rcx\n\t"
			 "mov %%rcx, %c[addr](%%r10)\n\t"
			 "syscall\n"
			 "1:"
			 : "=a"(rc)
			 : "0"((long)SYS_rt_tgsigqueueinfo), "D"(tgid), "S"(tid),
			   "d"((long)SIGTRAP), "r"(r10),
			   [addr] "i"(offsetof(siginfo_t, si_addr))
			 : "rcx", "r11", "memory");
	return rc;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int own = !strcmp(mode, "lost-own") || !strcmp(mode, "icebp");
	if (own && signal(SIGTRAP, on_trap) == SIG_ERR) {
		perror("signal");
		return 2;
	}
	if (!strncmp(mode, "lost", 4)) {
		long rc = queue_lost_trap();
		if (rc != 0) {
			fprintf(stderr, "rt_tgsigqueueinfo: %ld\n", rc);
			return 2;
		}
	} else if (!strncmp(mode, "icebp", 5)) {
		__asm__ volatile(".byte 0xf1" ::: "memory");
	} else {
		fprintf(stderr, "usage: trap_lost lost|lost-own|icebp|icebp-dfl\n");
		return 2;
	}
	if (own)
		printf("own handler %d\n", (int)own_calls);
	else
		printf("survived\n");
	return 0;
}
