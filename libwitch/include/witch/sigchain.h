/* sigchain: hand a signal the runtime's handler caught on to the handler
 * the program set for it, as the kernel would have delivered it.
 *
 * The runtime keeps its own handler installed for the signals it needs
 * (sigguard.c: SIGTRAP and its real-time signal; fatal.c: SIGSEGV and
 * SIGBUS, so a fault in a handler run is always rescued) and records what
 * the program set instead.  A signal that is not the runtime's goes to the
 * recorded action here: the program's mask and the signal itself (unless
 * SA_NODEFER) blocked while its handler runs, SA_RESETHAND honoured, the
 * kernel's siginfo and ucontext passed as they came (a handler that edits
 * the context, to skip a faulting instruction, edits the one the kernel
 * restores).  SIG_DFL is the caller's: only it knows the default action.
 * Async-signal-safe.
 */
#ifndef WITCH_SIGCHAIN_H
#define WITCH_SIGCHAIN_H

#include <signal.h>

/* 1 when act is SIG_DFL (the caller applies the default action). */
int sigchain_is_default(const struct sigaction *act);
/* 1 when act is a handler of the program's (neither SIG_DFL nor SIG_IGN). */
int sigchain_is_handler(const struct sigaction *act);

/* Deliver sig to *act from the runtime's handler for it (si, uc: that
 * handler's).  SIG_IGN: nothing.  A handler: called with the mask the
 * kernel would have set; SA_RESETHAND sets its handler to SIG_DFL first
 * (flags and mask kept, as the kernel keeps them).
 * Returns 0, or -EINVAL when *act is SIG_DFL (nothing done). */
int sigchain_deliver(struct sigaction *act, int sig, siginfo_t *si, void *uc);

#endif
