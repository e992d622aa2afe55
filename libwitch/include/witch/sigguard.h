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
 */
#ifndef WITCH_SIGGUARD_H
#define WITCH_SIGGUARD_H

#include <signal.h>

/* A real-time signal nobody has a handler for (from SIGRTMIN+6 up), or -EBUSY.
 * Call before sigguard_install. */
int sigguard_pick_signal(void);
/* Install the runtime's handlers for rt_sig (samples, watchpoint traps) and
 * SIGTRAP (single steps), SA_ONSTACK.  Whatever handler the program had for
 * them becomes the program's "chained" handler. Returns 0 or a negative errno.
 * (fork needs nothing: the child inherits the handlers and the recorded
 * program handlers alike.) */
int sigguard_install(int rt_sig);

#endif
