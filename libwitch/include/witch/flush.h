/* flush: write the profile every few seconds, so that a process killed
 * with SIGKILL (or ending by _exit) leaves its last complete profile.
 */
#ifndef WITCH_FLUSH_H
#define WITCH_FLUSH_H

#include <stdint.h>

/* Start the flusher thread (not sampled, every signal blocked): each `seconds`
 * it folds every thread's measurements into the profile (thread_flush_all) and
 * writes it whole (profile_write).  0 = off. Returns 0 or a negative errno. */
int flush_start(uint32_t seconds);
/* No flush from now on; waits for one in progress.  Before the final write
 * (exit, exec), which must not race with it. */
void flush_stop(void);
/* After flush_stop, when an exec failed. */
void flush_resume(void);
void flush_prefork(void);
void flush_postfork_parent(void);
void flush_postfork_child(void);
/* A forked child starts a flusher of its own (unless flushing was stopped)
 * once fork has returned to it, not in its atfork handler. */
int flush_start_in_child(void);

#endif
