/* fatal: a profile survives a fatal signal.
 *
 * For SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTERM, SIGINT, SIGHUP,
 * SIGQUIT, SIGXCPU, SIGXFSZ and SIGSYS, while the program leaves them at
 * their default action, the runtime's handler stands in for it: it writes
 * the profile, puts the default action back and lets the signal take the
 * process as it would have (same status, core dump as before: a fault is
 * retried, anything else raised again).  Writing runs in the dying thread
 * under a watchdog: the same signal, with its default action, arrives after
 * FATAL_WATCHDOG_SEC if the write hangs (a lock the dying thread holds, a
 * heap it broke), so a crash is never turned into a hang.
 *
 * A fault inside a runtime handler run that set a return point goes back
 * to it instead (rescue.h), before any of this.
 *
 * SIGIO, which the kernel sends in place of the runtime's real-time signal
 * when that signal's queue is full, is dropped when the kernel sent it
 * (and left to its default action when anyone else did), so a burst of
 * the runtime's events never ends the program.
 *
 * The program sees the default action: sigaction reads back SIG_DFL for
 * these signals (sigguard.c asks fatal_program_action), setting SIG_DFL
 * keeps the runtime's handler in place (so a program handler that resets
 * the default and re-raises still leaves a profile), and any other handler
 * replaces it, except for SIGSEGV and SIGBUS.  Whatever the program sets
 * for those (a handler: gcc's cc1, Rust's stack-overflow guard, a JVM), or
 * had set before the runtime started, is recorded and read back, and the
 * runtime's handler stays installed, with the handler's SA_ONSTACK and
 * SA_RESTART: a fault not rescued goes on to the program's handler as the
 * kernel would have sent it (sigchain.h).  So the handler runs' faults
 * stay rescued, and peek.h reads in place, in those programs too.  Under
 * SIG_IGN a fault ends the program (as the kernel's does, profile first)
 * and a signal sent is dropped.
 */
#ifndef WITCH_FATAL_H
#define WITCH_FATAL_H

#include <signal.h>

#define FATAL_WATCHDOG_SEC 3

/* Once, from the constructor, after the runtime is live. */
int fatal_install(void (*write_profile)(void));
/* The same stand-in for a signal another module keeps (sigguard's SIGTRAP
 * and real-time signal) when the program leaves it at a default action that
 * ends the process: the profile written, then the signal sent again with
 * its default action, which takes the process as the handler returns.
 * From that signal's handler; -ENOSYS before fatal_install. */
int fatal_end_with(int sig, siginfo_t *si, void *uc);
/* Around a profile write outside a fatal signal's handler (the exit's, an
 * exec's): a fatal signal sent meanwhile (a pool's SIGTERM to its workers
 * as they exit) must not end the process with the file half written, nor
 * be lost.  The sent ones (SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU,
 * SIGABRT) that the runtime stands in for stay open in this thread, which
 * the kernel gives a signal sent to the process when it is the first
 * thread: its handler notes it and returns, and fatal_hold_end ends the
 * process with it (those the program handles are blocked meanwhile: its
 * handler runs after the write).  One another thread takes waits in its
 * handler for fatal_hold_end, likewise.  A fault while held (a crash in
 * the write) goes on as before.  Async-signal-safe. */
struct fatal_hold {
	sigset_t old; /* the mask before, if masked */
	int masked;   /* the program's handled ones blocked meanwhile */
	int held;     /* begun, not yet ended */
};
void fatal_hold_begin(struct fatal_hold *h);
/* A sent signal this thread or another took meanwhile is raised here, with
 * its default action. */
void fatal_hold_end(struct fatal_hold *h);
/* Before a sandbox (sandboxguard.h): each signal the runtime stands in
 * for gets the program's action back in the kernel (SIG_DFL, or its own
 * fault handler), and the program's sigaction calls pass straight on.
 * 0 or the first -errno. */
int fatal_release(void);
/* After fatal_release, when the sandbox was not installed: stand in again,
 * as fatal_install did.  0 or -errno. */
int fatal_reinstall(void);
/* sigaction for the program on a signal the runtime may stand in for: returns
 * 1 when handled here (rc in errno semantics: 0), 0 when sig is none of these
 * (the caller goes on), -1 with errno on failure. */
int fatal_program_action(int sig, const struct sigaction *act, struct sigaction *oact);

#endif
