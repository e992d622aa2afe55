/* fatal: a profile survives a fatal signal (see fatal.h). */
#include "witch/fatal.h"
#include "witch/rescue.h"

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
static volatile sig_atomic_t fatal_owned[FATAL_N]; /* our handler stands in for SIG_DFL */
static struct sigaction fatal_prog[FATAL_N];        /* what the program last set (SIG_DFL) */
static int fatal_writing;

static int fatal_index(int sig)
{
	for (unsigned i = 0; i < FATAL_N; i++)
		if (fatal_signals[i] == sig)
			return (int)i;
	return -1;
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

static void fatal_handler(int sig, siginfo_t *si, void *uc)
{
	if (rescue_fault(sig, si, uc))
		return; /* not reached: a fault in a handler run goes back to it */
	int saved = errno;
	fatal_default(sig); /* from here on the signal does what it would have */
	if (!__atomic_exchange_n(&fatal_writing, 1, __ATOMIC_SEQ_CST)) {
		fatal_write_guarded(sig);
	} else {
		/* Another thread is writing: give it the watchdog's time. */
		struct timespec ts = {FATAL_WATCHDOG_SEC, 0};
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	errno = saved;
	/* A fault comes back when the instruction runs again; anything sent
	 * (kill, raise, abort) is sent again. */
	if (si && si->si_code > 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
				      sig == SIGFPE))
		return;
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, NULL);
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
}

int fatal_end_with(int sig, siginfo_t *si, void *uc)
{
	if (!fatal_real_sigaction || !fatal_write)
		return -ENOSYS;
	fatal_handler(sig, si, uc);
	return 0;
}

static int fatal_own(unsigned i)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fatal_handler;
	/* NODEFER: the watchdog's signal is this one, and must get through. */
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
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
	return fatal_real_sigaction(SIGIO, &sa, NULL) < 0 ? -errno : 0;
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
		/* Only what the program left at the default (not ignored, not its own). */
		if ((cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL)
			continue;
		fatal_prog[i] = cur;
		int rc = fatal_own(i);
		if (rc < 0)
			return rc;
	}
	return sigio_install();
}

int fatal_program_action(int sig, const struct sigaction *act, struct sigaction *oact)
{
	int i = fatal_index(sig);
	if (i < 0 || !fatal_real_sigaction)
		return 0;
	if (!fatal_owned[i] && !(act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL))
		return 0; /* the program's own handler is in place and stays its business */
	if (fatal_owned[i] && oact)
		*oact = fatal_prog[i];
	if (!act)
		return fatal_owned[i] ? 1 : 0;
	if (!(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL) {
		struct sigaction old;
		if (!fatal_owned[i] && fatal_real_sigaction(sig, NULL, &old) == 0 && oact)
			*oact = old;
		fatal_prog[i] = *act;
		if (!fatal_owned[i] && fatal_own((unsigned)i) < 0)
			return -1;
		return 1;
	}
	/* Another handler (or SIG_IGN): the program's from now on. */
	if (fatal_real_sigaction(sig, act, NULL) < 0)
		return -1;
	fatal_owned[i] = 0;
	return 1;
}
