/* forkguard: a forked child starts profiling when fork returns to it, not
 * inside the atfork handler.  The child handler (witch.c) only resets what
 * the parent's threads left behind; starting threads and perf events there
 * would run before the program's own child handlers have repaired its
 * state, and would be paid again by every handler registered after ours.
 *
 * Interposed: fork, __fork, daemon and forkpty (the last two fork inside
 * the C library, past a fork interposer).  _Fork runs no atfork handlers
 * and vfork shares the parent's memory: their children are not profiled
 * (the child's exec, if any, profiles the new image).
 */
#ifndef WITCH_FORKGUARD_H
#define WITCH_FORKGUARD_H

/* child_start runs in the new process as fork returns there, after every
 * atfork child handler, with errno kept for the program. */
void forkguard_set_child_hook(void (*child_start)(void));

#endif
