/* sigguard: keep the runtime's signals and share them (see sigguard.h). */
#include "witch/sigguard.h"
#include "witch/export.h"
#include "witch/fatal.h"
#include "witch/handler.h"
#include "witch/peek.h"
#include "witch/rescue.h"
#include "witch/sigchain.h"
#include "witch/watchpoint.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <ucontext.h>


typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef void (*sighandler_fn)(int);

static sigaction_fn guard_real_sigaction;
static int guard_rt_sig;
static volatile sig_atomic_t guard_on;
/* The program's own handlers: [0] SIGTRAP, [1] the runtime's RT signal. */
static struct sigaction guard_prog[2];

static sigaction_fn real_sigaction(void)
{
	if (!guard_real_sigaction)
		guard_real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	return guard_real_sigaction;
}

static int guarded_slot(int sig)
{
	if (!guard_on)
		return -1;
	return sig == SIGTRAP ? 0 : sig == guard_rt_sig ? 1 : -1;
}

/* Deliver to the program's handler as the kernel would have (sigchain.h);
 * SIG_DFL as the default action. */
static void guard_chain(int slot, int sig, siginfo_t *si, void *uc)
{
	if (sigchain_deliver(&guard_prog[slot], sig, si, uc) == 0)
		return;
	/* The default action of both signals ends the process: the profile
	 * first (fatal.h; an int3 or icebp at SIGTRAP's default lost it
	 * before), then the kernel does it, with the status the program would
	 * have had. */
	if (fatal_end_with(sig, si, uc) == 0)
		return;
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	real_sigaction()(sig, &dfl, NULL);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
}

static void guard_on_rt(int sig, siginfo_t *si, void *uc)
{
	if (!handler_on_signal(sig, si, uc))
		guard_chain(1, sig, si, uc);
}

#define GUARD_EFLAGS_TF 0x100ull

/* A SIGTRAP of one of the runtime's watchpoints (its tag, or a hit whose
 * DR6 bit was lost), or a single step's, that no profiled thread claims (a thread between its end and its
 * last trap, a fork's child before its thread begins), where the program keeps SIGTRAP's default:
 * only the runtime can have raised it, and the default would end the
 * program (the soak test's forked children died of signal 5 on a machine
 * whose watchpoints trap, 2 runs in 30).  Dropped, the trap flag cleared.
 * A SIGTRAP the program raised itself (kill, int3) still ends it. */
static int guard_stray_trap(const siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	if (!sigchain_is_default(&guard_prog[0]))
		return 0;
	if (watchpoint_trap_is_ours(si))
		return 1;
	if (si->si_code == TRAP_TRACE && (uc->uc_mcontext.gregs[REG_EFL] & (greg_t)GUARD_EFLAGS_TF)) {
		uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)GUARD_EFLAGS_TF;
		return 1;
	}
	return 0;
}

/* int1 (icebp) is a trap: the pc it reports is just past this byte. */
#define GUARD_ICEBP 0xf1

/* A debug exception whose cause the kernel found no bit for in DR6, which it
 * then reports as an icebp: TRAP_BRKPT, si_addr the pc.  An Emerald Rapids
 * VM (2026-12-03) delivered a data breakpoint's hit so about once in a few
 * 10^5 traps, the pc just past a watched store (2 of 300 runs of
 * dead_threads at 2000/s), and SIGTRAP's default action ended the program.
 * Where the runtime has watchpoints and no icebp opcode is just before the
 * pc, it is theirs, whatever the program's SIGTRAP action: without the
 * runtime the program would have had no such trap. */
static int guard_trap_is_lost(const siginfo_t *si, const void *ucv)
{
	const ucontext_t *uc = ucv;
	uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	uint8_t before;
	if (si->si_code != TRAP_BRKPT || (uint64_t)(uintptr_t)si->si_addr != pc ||
	    !watchpoint_any_open())
		return 0;
	return peek_read_remote(pc - 1, &before, 1) < 0 || before != GUARD_ICEBP;
}

static void guard_on_sigtrap(int sig, siginfo_t *si, void *uc)
{
	if (guard_trap_is_lost(si, uc)) {
		handler_on_lost_trap(); /* the watchpoint stays armed for its next hit */
		return;
	}
	if (!handler_on_sigtrap(si, uc) && !guard_stray_trap(si, uc))
		guard_chain(0, sig, si, uc);
}

int sigguard_pick_signal(void)
{
	if (!real_sigaction())
		return -ENOSYS;
	for (int sig = SIGRTMIN + 6; sig <= SIGRTMAX; sig++) {
		struct sigaction old;
		if (real_sigaction()(sig, NULL, &old) == 0 && sigchain_is_default(&old))
			return sig;
	}
	return -EBUSY;
}

void sigguard_handler_mask(sigset_t *set)
{
	sigfillset(set);
	sigdelset(set, SIGSEGV);
	sigdelset(set, SIGBUS);
	sigdelset(set, SIGILL);
	sigdelset(set, SIGFPE);
}

int sigguard_install(int rt_sig)
{
	struct sigaction sa;

	if (!real_sigaction())
		return -ENOSYS;
	memset(&sa, 0, sizeof(sa));
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigguard_handler_mask(&sa.sa_mask);
	sa.sa_sigaction = guard_on_rt;
	if (real_sigaction()(rt_sig, &sa, &guard_prog[1]) < 0)
		return -errno;
	sa.sa_sigaction = guard_on_sigtrap;
	if (real_sigaction()(SIGTRAP, &sa, &guard_prog[0]) < 0)
		return -errno;
	guard_rt_sig = rt_sig;
	guard_on = 1;
	return 0;
}

/* --- interposed ------------------------------------------------------------ */

static int guard_program_action(int sig, const struct sigaction *act, struct sigaction *oact)
{
	int fatal = fatal_program_action(sig, act, oact);
	if (fatal != 0)
		return fatal > 0 ? 0 : -1;
	if (!real_sigaction()) {
		errno = ENOSYS;
		return -1;
	}
	return real_sigaction()(sig, act, oact);
}

WITCH_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
	int slot = guarded_slot(sig);
	if (slot < 0) {
		int rc = guard_program_action(sig, act, oact);
		if (act && (sig == SIGSEGV || sig == SIGBUS))
			rescue_actions_changed(); /* after the change: rescue.h */
		return rc;
	}
	if (oact)
		*oact = guard_prog[slot];
	if (act)
		guard_prog[slot] = *act;
	return 0;
}

int sigguard_thread_open(void)
{
	sigset_t cur, one;
	if (!guard_on)
		return 0;
	int rc = pthread_sigmask(SIG_BLOCK, NULL, &cur);
	if (rc != 0)
		return -rc;
	if (sigismember(&cur, guard_rt_sig) != 1)
		return 0;
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		if (sigismember(&cur, sig) != 1)
			return -EPERM;
	sigemptyset(&one);
	sigaddset(&one, guard_rt_sig);
	rc = pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	return rc == 0 ? 1 : -rc;
}

/* As glibc's own: pthread_sigmask with errno.  Inside a handler run the mask
 * already blocks all a caller (libunwind) could want blocked: no change. */
WITCH_EXPORT int sigprocmask(int how, const sigset_t *set, sigset_t *oset)
{
	if (handler_in_run()) {
		if (oset)
			sigguard_handler_mask(oset);
		return 0;
	}
	int rc = pthread_sigmask(how, set, oset);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

/* glibc's signal() calls its sigaction internally, past the interposer:
 * the BSD and System V flavours are rebuilt on ours. */
static sighandler_fn guard_signal(int sig, sighandler_fn h, int flags)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = h;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

WITCH_EXPORT sighandler_fn signal(int sig, sighandler_fn h)
{
	return guard_signal(sig, h, SA_RESTART);
}

WITCH_EXPORT sighandler_fn bsd_signal(int sig, sighandler_fn h)
{
	return guard_signal(sig, h, SA_RESTART);
}

WITCH_EXPORT sighandler_fn sysv_signal(int sig, sighandler_fn h)
{
	return guard_signal(sig, h, SA_RESETHAND | SA_NODEFER);
}
