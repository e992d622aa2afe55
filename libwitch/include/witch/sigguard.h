/* sigguard: the runtime's two signals, kept from and shared with the program.
 *
 * Interposed: sigaction, signal, bsd_signal, sysv_signal.  From the moment
 * sigguard_install succeeds, a program that sets a handler for SIGTRAP or
 * rt_sig does not replace the runtime's: its handler is recorded and gets
 * every signal the runtime does not claim (a SIGTRAP that is not our single
 * step, an rt_sig that is not our sampler's or watchpoint's), as the kernel
 * would have delivered it; reading the handler back returns the program's
 * own.  SIG_DFL and SIG_IGN are honoured the same way.  Every other signal
 * goes straight to the C library.
 *
 * A handler run blocks every signal but the faults (sigguard_handler_mask),
 * so nothing the program does can come in while the runtime's tables or
 * libunwind's locked cache are half changed.  Also interposed: sigprocmask
 * and pthread_sigmask, no-ops inside a handler run.  libunwind blocks every
 * signal around each cache lookup (two system calls a frame, ~13 an
 * unwind: a tenth of a tick's handler time); there they are blocked
 * already, and the faults stay open for the rescue (rescue.h).  Outside
 * one, a mask that blocks every real-time signal leaves the runtime's open
 * (a daemon that takes its signals by signalfd blocked all of them in its
 * main thread, which then never ticked again), and reads back as set.
 */
#ifndef WITCH_SIGGUARD_H
#define WITCH_SIGGUARD_H

#include <signal.h>
#include <stdint.h>

/* A real-time signal nobody has a handler for (from SIGRTMIN+6 up), or -EBUSY.
 * Call before sigguard_install. */
int sigguard_pick_signal(void);
/* Install the runtime's handlers for rt_sig (samples, watchpoint traps) and
 * SIGTRAP (single steps), SA_ONSTACK.  Whatever handler the program had for
 * them becomes the program's "chained" handler. Returns 0 or a negative errno.
 * (fork needs nothing: the child inherits the handlers and the recorded
 * program handlers alike.) */
int sigguard_install(int rt_sig);
/* The mask a handler run holds: all signals but SIGSEGV, SIGBUS, SIGILL and
 * SIGFPE (a fault with its signal blocked kills at once). */
void sigguard_handler_mask(sigset_t *set);
/* At a thread's start: opens the runtime's signal where the mask the thread
 * inherited blocks every real-time signal, as a worker pool's creator does
 * around pthread_create (xz -T; before, its workers, which do the work,
 * never ticked).  The ticks are CPU-time ticks, raised while the thread
 * runs in user mode, so they bring no EINTR to a thread asleep in poll or
 * nanosleep.  Returns 1 if open under a mask that blocks every other
 * real-time signal (opened here, or kept open by its creator's
 * pthread_sigmask), 0 if open otherwise, -EPERM if held
 * by a mask that names it without all the others (a program waiting for
 * that signal itself: left so), or a negative errno. */
int sigguard_thread_open(void);
/* The runtime's own changes of a thread's mask: the C library's
 * pthread_sigmask, past the interposer below (0 or an errno value).
 * Async-signal-safe. */
int sigguard_mask(int how, const sigset_t *set, sigset_t *old);
/* A signal the runtime's own system call may raise and the program must
 * not get (SIGXFSZ from a profile past ulimit -f, SIGPIPE from a line to
 * a closed pipe: each would end it), held around the call: blocked, and
 * on release taken back if the call raised it (unless the program's own
 * was pending already), the mask restored.  Async-signal-safe. */
struct sigguard_held {
	sigset_t old;
	int sig, pending;
};
void sigguard_hold(int sig, struct sigguard_held *h);
/* 1 if the call raised it. */
int sigguard_release(struct sigguard_held *h);
/* libunwind's code (unwind_text_range): its masks, around locks the
 * handler takes too, are applied as it asks. */
void sigguard_set_unwinder_text(uint64_t lo, uint64_t hi);
/* 1 if the mask blocks a signal the program has set a handler of its own
 * for (other than the runtime's two): a context such a handler may be
 * running in, since a handler runs with its signal blocked (SA_NODEFER
 * aside).  Async-signal-safe. */
int sigguard_program_handler_blocked(const sigset_t *mask);

#endif
