/* fatal: a profile survives a fatal signal (see fatal.h). */
#include "witch/fatal.h"
#include "witch/rescue.h"
#include "witch/sigchain.h"
#include "witch/sigguard.h"
#include "witch/thread.h"

#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);

static const int fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL,  SIGFPE,  SIGABRT, SIGTERM,
				    SIGINT,  SIGHUP, SIGQUIT, SIGXCPU, SIGXFSZ, SIGSYS};
#define FATAL_N (sizeof(fatal_signals) / sizeof(fatal_signals[0]))

static sigaction_fn fatal_real_sigaction;
static void (*fatal_write)(void);
static volatile sig_atomic_t fatal_owned[FATAL_N]; /* our handler is the kernel's */
/* What the program last set while owned: SIG_DFL, or for the faults
 * (fatal_chains) its own handler, which ours passes their faults on to. */
static struct sigaction fatal_prog[FATAL_N];
static int fatal_writing;
/* fatal_hold_begin's count of writes under way, and the signal another
 * thread took meanwhile, to end the process with when the last one ends. */
static int fatal_holds;
static int fatal_deferred;
static __thread int fatal_holding __attribute__((tls_model("initial-exec")));
static const int fatal_sent[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU, SIGABRT};
static int fatal_released; /* fatal_release: the program's actions are the kernel's */
static int fatal_sigio_owned;

/* One of the signals that are sent to end a process (fatal_sent). */
static int fatal_is_sent(int sig)
{
	for (unsigned i = 0; i < sizeof(fatal_sent) / sizeof(fatal_sent[0]); i++)
		if (fatal_sent[i] == sig)
			return 1;
	return 0;
}

static int fatal_index(int sig)
{
	for (unsigned i = 0; i < FATAL_N; i++)
		if (fatal_signals[i] == sig)
			return (int)i;
	return -1;
}

/* The faults a handler run may cause (rescue.h): the runtime's handler
 * stays installed for them, whatever handler the program sets. */
static int fatal_chains(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS;
}

static void fatal_default(int sig)
{
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	fatal_real_sigaction(sig, &dfl, NULL);
}

/* Write the profile at most once, under a watchdog: sig itself, with its
 * default action back, after FATAL_WATCHDOG_SEC. */
static void fatal_write_guarded(int sig)
{
	timer_t timer;
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = sig;
	ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	int have_timer = timer_create(CLOCK_MONOTONIC, &ev, &timer) == 0;
	if (have_timer) {
		struct itimerspec its;
		memset(&its, 0, sizeof(its));
		its.it_value.tv_sec = FATAL_WATCHDOG_SEC;
		timer_settime(timer, 0, &its, NULL);
	}
	if (fatal_write)
		fatal_write();
	if (have_timer)
		timer_delete(timer);
}

/* The write's frames (the profile's emit, its 4 KiB buffer: outbuf.h) on
 * the thread's own stack: the program's sigaltstack may be a small one
 * (thread.h). */
static int fatal_write_run(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	fatal_write_guarded(sig);
	return 0;
}

/* A profile write under fatal_hold_begin in another thread ends before
 * this signal takes the process: it is left to that thread to raise, as
 * its write ends (the process may be past exit's other steps by then). */
static void fatal_wait_holds(int sig)
{
	if (fatal_holding || !__atomic_load_n(&fatal_holds, __ATOMIC_SEQ_CST))
		return;
	__atomic_store_n(&fatal_deferred, sig, __ATOMIC_SEQ_CST);
	for (int ms = 0; ms < FATAL_WATCHDOG_SEC * 1000; ms++) {
		if (!__atomic_load_n(&fatal_holds, __ATOMIC_SEQ_CST))
			return;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

/* The sent signals the runtime stands in for stay open in the writing
 * thread: the kernel gives a signal sent to the process to its first
 * thread when that thread does not block it, so the exit's write, which
 * runs there, takes it itself and its handler only notes it
 * (fatal_handler).  Blocked, as they were until stop 89, they went to
 * another thread, which the kernel had woken and given the signal when
 * the writer's exit_group took the process first: status 0 for 143 in
 * 4-30 runs of 40-60 (term_in_write.thread.budget).  Those with a handler
 * of the program's are blocked, as before: it runs after the write; all
 * of them once fatal_release gave the kernel the program's actions. */
void fatal_hold_begin(struct fatal_hold *h)
{
	sigset_t theirs;
	sigemptyset(&theirs);
	for (unsigned k = 0; k < sizeof(fatal_sent) / sizeof(fatal_sent[0]); k++) {
		int i = fatal_index(fatal_sent[k]);
		if (fatal_released || (i >= 0 && sigchain_is_handler(&fatal_prog[i])))
			sigaddset(&theirs, fatal_sent[k]); /* (released: no handler of ours) */
	}
	h->masked = !sigisemptyset(&theirs) && sigguard_mask(SIG_BLOCK, &theirs, &h->old) == 0;
	h->held = 1;
	fatal_holding++;
	__atomic_add_fetch(&fatal_holds, 1, __ATOMIC_SEQ_CST);
}

void fatal_hold_end(struct fatal_hold *h)
{
	if (!h->held)
		return;
	h->held = 0;
	fatal_holding--;
	if (__atomic_sub_fetch(&fatal_holds, 1, __ATOMIC_SEQ_CST) == 0) {
		int sig = __atomic_exchange_n(&fatal_deferred, 0, __ATOMIC_SEQ_CST);
		if (sig) {
			fatal_default(sig); /* (this thread's own note left it ours) */
			syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
		}
	}
	if (h->masked)
		sigguard_mask(SIG_SETMASK, &h->old, NULL);
}

static void fatal_handler(int sig, siginfo_t *si, void *uc)
{
	if (rescue_fault(sig, si, uc))
		return; /* not reached: a fault in a handler run goes back to it */
	int i = fatal_index(sig);
	/* The program's handler has it, or SIG_IGN drops a signal sent; a
	 * fault the program ignores ends it all the same, as the kernel's. */
	if (i >= 0 && (sigchain_is_handler(&fatal_prog[i]) || !(si && si->si_code > 0)) &&
	    sigchain_deliver(&fatal_prog[i], sig, si, uc) == 0)
		return;
	/* Sent while this thread writes under a hold: noted, and
	 * fatal_hold_end ends the process with it as the write ends (the write
	 * goes on; its system calls take EINTR).  Not an abort() in the write
	 * itself, which ends the process as before. */
	if (fatal_holding && fatal_is_sent(sig) && si && si->si_code <= 0 &&
	    !(sig == SIGABRT && si->si_code == SI_TKILL)) {
		__atomic_store_n(&fatal_deferred, sig, __ATOMIC_SEQ_CST);
		return;
	}
	int saved = errno;
	fatal_default(sig); /* from here on the signal does what it would have */
	if (!__atomic_exchange_n(&fatal_writing, 1, __ATOMIC_SEQ_CST)) {
		thread_on_own_stack(fatal_write_run, sig, si, uc);
	} else {
		/* Another thread is writing: give it the watchdog's time. */
		struct timespec ts = {FATAL_WATCHDOG_SEC, 0};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	fatal_wait_holds(sig);
	errno = saved;
	/* A fault comes back when the instruction runs again; anything sent
	 * (kill, raise, abort) is sent again. */
	if (si && si->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
				      sig == SIGFPE))
		return;
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	sigguard_mask(SIG_UNBLOCK, &one, NULL);
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
}

int fatal_end_with(int sig, siginfo_t *si, void *uc)
{
	if (!fatal_real_sigaction || !fatal_write)
		return -ENOSYS;
	fatal_handler(sig, si, uc);
	return 0;
}

/* Our handler as the kernel's for fatal_signals[i], standing in for
 * fatal_prog[i].  For the program's handler, its SA_ONSTACK and SA_RESTART,
 * so it runs on the stack and restarts the calls it would have; for
 * SIG_DFL, SA_ONSTACK: a stack overflow still writes the profile on the
 * thread's sigaltstack; for SIG_IGN, SA_RESTART too: a signal sent then
 * interrupts no call the program makes. */
static int fatal_own(unsigned i)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fatal_handler;
	/* NODEFER: the watchdog's signal is this one, and must get through. */
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	if (sigchain_is_handler(&fatal_prog[i]))
		sa.sa_flags |= fatal_prog[i].sa_flags & (SA_ONSTACK | SA_RESTART);
	else if (sigchain_is_default(&fatal_prog[i]))
		sa.sa_flags |= SA_ONSTACK;
	else
		sa.sa_flags |= SA_ONSTACK | SA_RESTART;
	sigfillset(&sa.sa_mask);
	sigdelset(&sa.sa_mask, fatal_signals[i]);
	if (fatal_real_sigaction(fatal_signals[i], &sa, NULL) < 0)
		return -errno;
	fatal_owned[i] = 1;
	return 0;
}

/* The runtime's perf_event fds signal through its real-time signal; when
 * that signal's queue is full the kernel sends SIGIO instead, whose default
 * action would end the program.  Those (si_code SI_KERNEL or POLL_*) are
 * dropped; a SIGIO someone sent gets the default action, as without us. */
static void sigio_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si && si->si_code > 0)
		return;
	fatal_default(sig);
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
}

static int sigio_install(void)
{
	struct sigaction cur, sa;
	if (fatal_real_sigaction(SIGIO, NULL, &cur) < 0)
		return -errno;
	if ((cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL)
		return 0; /* the program's own */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sigio_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (fatal_real_sigaction(SIGIO, &sa, NULL) < 0)
		return -errno;
	fatal_sigio_owned = 1;
	return 0;
}

int fatal_install(void (*write_profile)(void))
{
	fatal_real_sigaction = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	if (!fatal_real_sigaction)
		return -ENOSYS;
	fatal_write = write_profile;
	rescue_set_fault_handler(fatal_handler); /* peek.h reads in place under it */
	for (unsigned i = 0; i < FATAL_N; i++) {
		struct sigaction cur;
		if (fatal_real_sigaction(fatal_signals[i], NULL, &cur) < 0)
			return -errno;
		/* What the program left at the default, and any action on a
		 * fault (a handler a library's constructor set before us). */
		if (!sigchain_is_default(&cur) && !fatal_chains(fatal_signals[i]))
			continue;
		fatal_prog[i] = cur;
		int rc = fatal_own(i);
		if (rc < 0)
			return rc;
	}
	return sigio_install();
}

int fatal_release(void)
{
	int rc = 0;
	if (!fatal_real_sigaction || fatal_released)
		return 0;
	fatal_released = 1;
	for (unsigned i = 0; i < FATAL_N; i++) {
		if (!fatal_owned[i])
			continue;
		fatal_owned[i] = 0;
		if (fatal_real_sigaction(fatal_signals[i], &fatal_prog[i], NULL) < 0 && rc == 0)
			rc = -errno;
	}
	if (fatal_sigio_owned) {
		fatal_sigio_owned = 0;
		fatal_default(SIGIO);
	}
	return rc;
}

int fatal_reinstall(void)
{
	if (!fatal_released)
		return 0;
	fatal_released = 0;
	return fatal_install(fatal_write);
}

int fatal_program_action(int sig, const struct sigaction *act, struct sigaction *oact)
{
	int i = fatal_index(sig);
	if (i < 0 || !fatal_real_sigaction || fatal_released)
		return 0;
	/* Ours stays for SIG_DFL, and for any action on a fault. */
	int keep = act && (sigchain_is_default(act) || fatal_chains(sig));
	if (!fatal_owned[i] && !keep)
		return 0; /* the program's own action is in place and stays its business */
	struct sigaction old;
	if (fatal_owned[i])
		old = fatal_prog[i];
	else if (fatal_real_sigaction(sig, NULL, &old) < 0)
		return -1;
	if (act && keep) {
		fatal_prog[i] = *act;
		if (fatal_own((unsigned)i) < 0) /* again: the flags follow the action */
			return -1;
	} else if (act) {
		/* SIG_IGN or a handler for the others: the program's from now on. */
		if (fatal_real_sigaction(sig, act, NULL) < 0)
			return -1;
		fatal_owned[i] = 0;
	}
	if (oact)
		*oact = old;
	return 1;
}
