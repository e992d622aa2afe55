/* startstep: a short process's fixed cost, step by step (WITCH_STARTUP_TIMES).
 *
 * A process that never ticks pays for the constructor and the exit alone,
 * ~1.5-2 ms here, mostly first touches of pages and the profile file's
 * creation (docs/cost.md), and which step pays what moves with every change
 * to the start.  With WITCH_STARTUP_TIMES=1 each step's TSC is kept and
 * the exit says them in one line, "startup steps (us): NAME=US ...";
 * bench/startup_steps.py takes their medians over runs.  Its own setting,
 * not a verbosity: the steps that say something verbose would count their
 * lines' writes.  Otherwise a mark reads one flag and returns.
 */
#ifndef WITCH_STARTSTEP_H
#define WITCH_STARTSTEP_H

#include <stdint.h>

/* The constructor began at tsc (read before the settings were known); on:
 * WITCH_STARTUP_TIMES. */
void startstep_begin(uint64_t tsc, int on);
/* The step named has just ended (a string literal: kept, not copied). */
void startstep_mark(const char *name);
/* The steps' times in one verbose line (after cost_init: the TSC's rate). */
void startstep_say(void);

#endif
