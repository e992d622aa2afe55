/* flush: write the profile every few seconds, so that a process killed
 * with SIGKILL (or ending by _exit) leaves its last complete profile.
 *
 * The writer is a thread, and a process that ever had two threads stays on
 * the C library's multi-threaded paths (atomic malloc, locked stdio, a
 * cancellation check around each system call) and, while it lasts, the
 * kernel's (a reference taken on the file at each fd call): 3-4% of
 * sqlite3's time.  So unless WITCH_FLUSH is set, the writer starts only
 * when the program starts a thread of its own; a program with none writes
 * at exit, _exit, exec and fatal signals (a SIGKILL loses its profile).
 */
#ifndef WITCH_FLUSH_H
#define WITCH_FLUSH_H

#include <stdint.h>

/* The flusher thread (not sampled, every signal blocked): each `seconds` it
 * folds every thread's measurements into the profile (thread_flush_all) and
 * writes it whole (profile_write).  0 = off.  Started now when `always`,
 * else at the program's first thread (flush_program_thread).  Returns 0 or
 * a negative errno. */
int flush_start(uint32_t seconds, int always);
/* The program is about to start a thread: the flusher starts if it waited
 * for one.  Returns 0 (also when nothing was to start) or a negative errno. */
int flush_program_thread(void);
/* No flush from now on; waits for one in progress.  Before the final write
 * (exit, exec), which must not race with it. */
void flush_stop(void);
/* After flush_stop, when an exec failed. */
void flush_resume(void);
/* The flusher returns, now, and is joined: no system call of its own
 * after (a sandbox comes next, sandboxguard.h).  1 if there was one, else
 * 0.  flush_restart starts one again (the sandbox did not come): 0 or a
 * negative errno. */
int flush_end(void);
int flush_restart(void);
/* The program's last thread has ended (thread_set_last_hook): the flusher
 * returns, so the process can end; not joined. */
void flush_program_gone(void);
void flush_prefork(void);
void flush_postfork_parent(void);
void flush_postfork_child(void);
/* A forked child (one thread) starts a flusher of its own, unless flushing
 * was stopped or waits for a thread, once fork has returned to it, not in
 * its atfork handler. */
int flush_start_in_child(void);

#endif
