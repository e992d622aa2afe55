/* sigguard: keep the runtime's signals and share them (see sigguard.h). */
#include "witch/sigguard.h"
#include "witch/export.h"
#include "witch/fatal.h"
#include "witch/handler.h"
#include "witch/peek.h"
#include "witch/rawsys.h"
#include "witch/rescue.h"
#include "witch/sigchain.h"
#include "witch/thread.h"
#include "witch/watchpoint.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
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
	sigguard_mask(SIG_UNBLOCK, &one, NULL);
	raise(sig);
}

/* The handlers run on the thread's own stack (thread_on_own_stack); the
 * program's, chained, where the kernel delivered, as it would have. */
static void guard_on_rt(int sig, siginfo_t *si, void *uc)
{
	if (!thread_on_own_stack(handler_on_signal, sig, si, uc))
		guard_chain(1, sig, si, uc);
}

static int guard_sigtrap_run(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	return handler_on_sigtrap(si, uc);
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
	if (!thread_on_own_stack(guard_sigtrap_run, sig, si, uc) && !guard_stray_trap(si, uc))
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

/* Signals 1-64 the program has a handler of its own for (not SIG_DFL or
 * SIG_IGN), as its sigaction calls set them: deps.h asks whether a tick
 * came inside one. */
static uint64_t guard_program_handled;

static void guard_note_handler(int sig, const struct sigaction *act)
{
	if (!act || sig < 1 || sig > 64)
		return;
	uint64_t bit = 1ull << (sig - 1);
	if (act->sa_handler == SIG_DFL || act->sa_handler == SIG_IGN)
		__atomic_fetch_and(&guard_program_handled, ~bit, __ATOMIC_RELAXED);
	else
		__atomic_fetch_or(&guard_program_handled, bit, __ATOMIC_RELAXED);
}

int sigguard_program_handler_blocked(const sigset_t *mask)
{
	uint64_t handled = __atomic_load_n(&guard_program_handled, __ATOMIC_RELAXED);
	for (; handled; handled &= handled - 1)
		if (sigismember(mask, __builtin_ctzll(handled) + 1) == 1)
			return 1;
	return 0;
}

WITCH_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
	int slot = guarded_slot(sig);
	if (slot < 0) {
		int rc = guard_program_action(sig, act, oact);
		if (rc == 0)
			guard_note_handler(sig, act);
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

/* --- signal masks ---------------------------------------------------------- */

static uint64_t guard_unwinder_lo, guard_unwinder_hi;
/* The thread's mask, as the program set it, blocks the runtime's signal,
 * which the runtime keeps open (it blocks every real-time signal). */
static __thread int guard_mask_hides __attribute__((tls_model("initial-exec")));

/* What the C library's pthread_sigmask does, without a lookup of it: the
 * kernel's, with the C library's own two signals (32 and 33: cancellation,
 * setxid) never blocked. */
int sigguard_mask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t s;
	if (set) {
		s = *set;
		((unsigned long *)&s)[0] &= ~(3ul << 31);
	}
	long rc = rawsys6(SYS_rt_sigprocmask, how, set ? (long)&s : 0, (long)old, _NSIG / 8, 0, 0);
	return rc < 0 ? (int)-rc : 0;
}

void sigguard_hold(int sig, struct sigguard_held *h)
{
	sigset_t one, now;
	sigemptyset(&one);
	sigaddset(&one, sig);
	h->sig = sig;
	sigguard_mask(SIG_BLOCK, &one, &h->old);
	h->pending = rawsys6(SYS_rt_sigpending, (long)&now, _NSIG / 8, 0, 0, 0, 0) == 0 &&
		     sigismember(&now, sig);
}

int sigguard_release(struct sigguard_held *h)
{
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, h->sig);
	struct timespec zero = {0, 0};
	int raised = !h->pending && rawsys6(SYS_rt_sigtimedwait, (long)&one, 0, (long)&zero,
					    _NSIG / 8, 0, 0) == h->sig;
	sigguard_mask(SIG_SETMASK, &h->old, NULL);
	return raised;
}

void sigguard_set_unwinder_text(uint64_t lo, uint64_t hi)
{
	guard_unwinder_lo = lo;
	guard_unwinder_hi = hi;
}

/* Signals 1-64 as the kernel keeps them: the first word of a sigset_t. */
static uint64_t guard_word(const sigset_t *s)
{
	uint64_t w;
	memcpy(&w, s, sizeof(w));
	return w;
}

static uint64_t guard_bit(int sig)
{
	return 1ull << (sig - 1);
}

/* Whether mask w blocks every real-time signal. */
static int guard_all_rt(uint64_t w)
{
	uint64_t rt = (guard_bit(SIGRTMAX) << 1) - guard_bit(SIGRTMIN);
	return (w & rt) == rt;
}

/* The program's pthread_sigmask, from code at ret: 0 or an errno value.
 * A mask that blocks every real-time signal (sigfillset: a daemon that
 * takes its signals by signalfd or sigwait, a thread pool's creator) has
 * the runtime's left open, as a thread that begins so has (before, the
 * program's main thread never ticked again); the program reads its mask
 * back as it set it.  A mask naming the runtime's signal without all the
 * others blocks it (a program waiting for that signal itself).
 * libunwind's masks, around locks the handler takes too, are as it asks. */
static int guard_program_mask(int how, const sigset_t *set, sigset_t *oset, const void *ret)
{
	uint64_t pc = (uint64_t)(uintptr_t)ret;
	int unwinder = pc >= guard_unwinder_lo && pc < guard_unwinder_hi;
	if (!guard_on || !set || unwinder) {
		int rc = sigguard_mask(how, set, oset);
		if (rc == 0 && oset && guard_on && !set && !unwinder && guard_mask_hides)
			sigaddset(oset, guard_rt_sig);
		return rc;
	}
	if (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
		return EINVAL;
	int ours = guard_rt_sig, rc;
	uint64_t bit = guard_bit(ours), asked = guard_word(set);
	sigset_t want = *set, old, one;
	sigemptyset(&one);
	sigaddset(&one, ours);
	if (how != SIG_UNBLOCK)
		sigdelset(&want, ours); /* put back below where it stays blocked */
	rc = sigguard_mask(how, &want, &old);
	if (rc != 0)
		return rc;
	/* The program's view before and after its call, and ours as it is. */
	uint64_t was = guard_word(&old), view = was | (guard_mask_hides ? bit : 0);
	uint64_t after = how == SIG_SETMASK ? asked : how == SIG_BLOCK ? view | asked : view & ~asked;
	int hides = (after & bit) && guard_all_rt(after);
	int blocked_now = how == SIG_SETMASK ? 0 :
			  how == SIG_BLOCK   ? (was & bit) != 0 :
					       (was & bit) && !(asked & bit);
	int block = (after & bit) && !hides;
	if (block != blocked_now)
		sigguard_mask(block ? SIG_BLOCK : SIG_UNBLOCK, &one, NULL);
	if (oset) {
		*oset = old;
		if (guard_mask_hides)
			sigaddset(oset, ours);
	}
	guard_mask_hides = hides;
	return 0;
}

int sigguard_thread_open(void)
{
	sigset_t cur, one;
	if (!guard_on)
		return 0;
	int rc = sigguard_mask(SIG_BLOCK, NULL, &cur);
	if (rc != 0)
		return -rc;
	int was_blocked = sigismember(&cur, guard_rt_sig) == 1;
	/* Where its creator's mask hid the runtime's signal
	 * (guard_program_mask), the thread's, as the program sees it, blocks
	 * it too. */
	guard_mask_hides = guard_all_rt(guard_word(&cur) | guard_bit(guard_rt_sig));
	if (!guard_mask_hides)
		return was_blocked ? -EPERM : 0;
	if (!was_blocked)
		return 1;
	sigemptyset(&one);
	sigaddset(&one, guard_rt_sig);
	rc = sigguard_mask(SIG_UNBLOCK, &one, NULL);
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
	int rc = guard_program_mask(how, set, oset, __builtin_return_address(0));
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

WITCH_EXPORT int pthread_sigmask(int how, const sigset_t *set, sigset_t *oset)
{
	if (handler_in_run()) {
		if (oset)
			sigguard_handler_mask(oset);
		return 0;
	}
	return guard_program_mask(how, set, oset, __builtin_return_address(0));
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
