/* sig_share: a program that uses signals the way real programs do, while
 * the profiler samples it (issue 6).  Everything it prints must be the same
 * with and without libwitch, and the profile must still hold the answer.
 *
 *   1. A SIGTRAP handler of its own, installed after the runtime started
 *      (the runtime single-steps with SIGTRAP): raise(SIGTRAP) 3 times ->
 *      its handler runs 3 times, and reading the handler back gives its own.
 *   2. A handler for every real-time signal (signal()), each raised once ->
 *      each counted once; the runtime's RT signal among them.
 *      Each handler runs with its own signal blocked and no other (the
 *      runtime's handler blocks all but faults while it runs, and hands its
 *      signal on with the mask the kernel would have set).
 *   3. Stores while every signal is blocked, then unblocked; sigprocmask
 *      (interposed: a no-op only inside the runtime's handler runs) blocks,
 *      reports and unblocks as the C library's does.
 *   4. Its own sigaltstack and an SA_ONSTACK SIGUSR1 handler that checks it
 *      runs on that stack.
 *   5. siglongjmp out of a SIGUSR2 handler.
 *   6. The dead_two_loops work (fill, overwrite, sum), so the profile has a
 *      known answer: fraction 0.5, top pair <fill, overwrite> (derivation in
 *      dead_two_loops.c), whatever the program did with signals before.
 *
 * Usage: sig_share [REPS]      default 6
 */
#include "ka.h"

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>

#define N (8u << 20)

static volatile sig_atomic_t traps, rt_seen[64], rt_mask_ok[64], usr1_on_stack, usr2_count;
static char altstack[64 * 1024];
static sigjmp_buf jump;

static void on_trap(int sig)
{
	traps++;
}

static void on_rt(int sig)
{
	sigset_t cur;
	rt_seen[sig - SIGRTMIN]++;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	rt_mask_ok[sig - SIGRTMIN] = sigismember(&cur, sig) && !sigismember(&cur, SIGUSR1) &&
				     !sigismember(&cur, SIGINT);
}

static void on_usr1(int sig)
{
	char here;
	usr1_on_stack = &here >= altstack && &here < altstack + sizeof(altstack);
}

static volatile sig_atomic_t held_count;

static void on_usr2_held(int sig)
{
	held_count++;
}

static void on_usr2(int sig)
{
	usr2_count++;
	siglongjmp(jump, 1);
}

#include "dead_loops.h"

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 6);
	uint32_t *a = ka_alloc((size_t)N * sizeof *a);
	uint64_t total = 0;
	struct sigaction sa, back;
	sigset_t all, none;

	/* 1. SIGTRAP */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_trap;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTRAP, &sa, NULL);
	for (int i = 0; i < 3; i++)
		raise(SIGTRAP);
	sigaction(SIGTRAP, NULL, &back);
	printf("sigtrap handler ran %d times, reads back as its own: %s\n", (int)traps,
	       back.sa_handler == on_trap ? "yes" : "no");

	/* 2. every real-time signal */
	int nrt = SIGRTMAX - SIGRTMIN + 1, ok = 0;
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
		signal(s, on_rt);
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
		raise(s);
	int masked = 0;
	for (int i = 0; i < nrt; i++) {
		ok += rt_seen[i] == 1;
		masked += rt_mask_ok[i];
	}
	printf("real-time signals delivered once each: %d of %d\n", ok, nrt);
	printf("... each with its own signal blocked and no other: %d of %d\n", masked, nrt);

	/* 3. all blocked, then not */
	sigfillset(&all);
	sigemptyset(&none);
	sigprocmask(SIG_BLOCK, &all, NULL);
	fill(a, 99);
	sigprocmask(SIG_SETMASK, &none, NULL);
	sigset_t one, old, pend;
	sigemptyset(&one);
	sigaddset(&one, SIGUSR2);
	signal(SIGUSR2, on_usr2_held);
	sigprocmask(SIG_BLOCK, &one, &old);
	raise(SIGUSR2);
	sigpending(&pend);
	int held = sigismember(&pend, SIGUSR2) && held_count == 0 && !sigismember(&old, SIGUSR2);
	fill(a, 98);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	printf("SIGUSR2 held while blocked by sigprocmask: %s, delivered once unblocked: %s\n",
	       held ? "yes" : "no", held_count == 1 ? "yes" : "no");

	/* 4. own alternate stack */
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack), .ss_flags = 0};
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	printf("SIGUSR1 ran on the program's alternate stack: %s\n", usr1_on_stack ? "yes" : "no");

	/* 5. longjmp out of a handler */
	signal(SIGUSR2, on_usr2);
	if (sigsetjmp(jump, 1) == 0)
		raise(SIGUSR2);
	printf("left SIGUSR2's handler by siglongjmp: %d\n", (int)usr2_count);

	/* 6. the known answer */
	for (long r = 0; r < reps; r++) {
		fill(a, 2 * (uint64_t)r + 1);
		overwrite(a, 2 * (uint64_t)r + 2);
		total += sum(a);
	}
	printf("sig_share reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	return 0;
}
