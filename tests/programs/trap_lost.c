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
 *   step-blocked  blocked       "stepped 0"              the same
 *   late       blocked around   "late 0"                 the same
 *              each fill
 *
 * Profiled, "lost" and "lost-own" count one traps_lost in the profile.
 * step-blocked blocks SIGTRAP (only) and stores around cpuid for 0.4 s of
 * CPU time: the emulator stops at cpuid, so the run ahead single-steps
 * over it to the store after (steps in hundreds of 2000/s ticks).  A
 * step's trap is forced through a blocked SIGTRAP at its default action
 * (the kernel's force_sig), so the runtime must not step there: profiled,
 * skip_no_step > 0 and the program lives.  ("stepped 0" is its own count
 * of SIGTRAPs it saw: none, blocked.)
 * late fills a 64 KiB array with SIGTRAP blocked, unblocks it, and again,
 * for 0.4 s of CPU time.  The runtime's tick is not blocked: it samples
 * fill's stores and watches them, and the next fill's store to a watched
 * word fires while SIGTRAP is blocked; the kernel sends that perf SIGTRAP
 * when the mask lifts, flagged asynchronous, at the sigprocmask's return.
 * Judged by that pc it found no access (traps_unresolved); then it was
 * counted late (traps_async > 0) and never judged.  Since 2026-12-07 the
 * first tick that finds SIGTRAP blocked moves the thread's traps to the
 * runtime's own signal (handler.c's tick_route_traps; stat
 * sigtrap_blocked 1), which the mask leaves open: fill's watched stores
 * are judged as they happen (traps ~1900 a run, none unresolved, none
 * late; the check: over 100).
 * Build: -O2 -g.  Usage: trap_lost MODE
 */
#include <cpuid.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
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

static volatile uint32_t words[1 << 12];

/* Stores around cpuid until 0.4 s of CPU time has passed. */
static void store_around_cpuid(void)
{
	struct timespec t0, t;
	unsigned x = 0, eax, ebx, ecx, edx;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		for (unsigned i = 0; i < (1u << 12); i += 64) {
			words[i] = x++;
			__cpuid(0, eax, ebx, ecx, edx);
			words[i + 1] = x + eax;
		}
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 400000000L);
}

static volatile uint32_t filled[1 << 14];

/* Fills with SIGTRAP blocked, until 0.4 s of CPU time has passed. */
static void fill_blocked(void)
{
	struct timespec t0, t;
	sigset_t trap;
	uint32_t x = 0;
	sigemptyset(&trap);
	sigaddset(&trap, SIGTRAP);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	do {
		sigprocmask(SIG_BLOCK, &trap, NULL);
		for (unsigned i = 0; i < (1u << 14); i++)
			filled[i] = x++;
		sigprocmask(SIG_UNBLOCK, &trap, NULL);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < 400000000L);
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
	} else if (!strcmp(mode, "step-blocked")) {
		sigset_t trap;
		sigemptyset(&trap);
		sigaddset(&trap, SIGTRAP);
		signal(SIGTRAP, on_trap);
		sigprocmask(SIG_BLOCK, &trap, NULL);
		store_around_cpuid();
		printf("stepped %d\n", (int)own_calls);
		return 0;
	} else if (!strcmp(mode, "late")) {
		signal(SIGTRAP, on_trap);
		fill_blocked();
		printf("late %d\n", (int)own_calls);
		return 0;
	} else {
		fprintf(stderr, "usage: trap_lost lost|lost-own|icebp|icebp-dfl|step-blocked|late\n");
		return 2;
	}
	if (own)
		printf("own handler %d\n", (int)own_calls);
	else
		printf("survived\n");
	return 0;
}
