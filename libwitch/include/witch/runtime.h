/* runtime: the process's one runtime state.
 *
 * witch.c's constructor fills it once, in this order, and nothing else
 * writes it; every module reads it here (no copies of the settings or the
 * signal number kept about).
 *
 *   cfg    the settings (config.h)
 *   craft  the client (craft.h)
 *   sig    the real-time signal the runtime's events raise
 *   live   set last, once the signal handlers are installed and the main
 *          thread is profiled: new threads are profiled from then on (a
 *          setup that failed halfway leaves them alone)
 *   off    set (a plain store, no call) to make every handler return at
 *          once, from the moment the runtime starts shutting down
 *   sealed set before a seccomp sandbox goes in (sandboxguard.h): from then
 *          on the runtime makes no system call, whatever runs (a thread's
 *          end, a fork, the exit)
 */
#ifndef WITCH_RUNTIME_H
#define WITCH_RUNTIME_H

#include <signal.h>

#include "witch/config.h"
#include "witch/craft.h"

struct witch_runtime {
	const struct witch_config *cfg;
	const struct craft *craft;
	int sig;
	volatile sig_atomic_t live;
	volatile sig_atomic_t off;
	volatile sig_atomic_t sealed;
};

extern struct witch_runtime witch_rt;

#endif
