/* vgguard: a program run under Valgrind.
 *
 * Valgrind runs the program as translated code, with the guest's registers
 * written back to its own state only at chosen points.  A debug register
 * still watches the guest's bytes, so the translated code trips it, and
 * the SIGTRAP reaches the runtime's handler with the guest state of the
 * last such point; back from the handler, Valgrind resumes from that
 * state.  lz died so within 0.6 s under `valgrind --tool=none` (a jump
 * into its heap, SIGSEGV).  So where watchpoints would be armed the
 * runtime does not start there, and says so in one line; with none armed
 * (WITCH_WATCHPOINTS=0 or window: the tick's handler only, which
 * bench/cold_misses.py runs under cachegrind) it profiles as asked.
 *
 * At start-up only.
 */
#ifndef WITCH_VGGUARD_H
#define WITCH_VGGUARD_H

/* 1 if Valgrind's core is in the process (its preloaded
 * vgpreload_core-<platform>.so), else 0. */
int vgguard_under_valgrind(void);

#endif
