/* context: the program's calling contexts, taken from inside the runtime.
 *
 * Async-signal-safe.
 */
#ifndef WITCH_CONTEXT_H
#define WITCH_CONTEXT_H

#include <stdint.h>
#include <ucontext.h>

struct witch_thread;

/* The runtime's own code, once at start: samples and traps whose context
 * passes through it are the profiler's, not the program's; except [through_lo,
 * through_hi), wrappers the program calls through (bulk.h), whose frames are
 * left out of contexts. */
void context_set_runtime_text(uint64_t lo, uint64_t hi, uint64_t through_lo, uint64_t through_hi);
void context_runtime_text(uint64_t *lo, uint64_t *hi);
/* 1 if a frame of pcs[0..n) is the runtime's code. */
int context_in_runtime(const uint64_t *pcs, int n);
/* The context of a signal context: pcs[0] = leaf (the accessing instruction,
 * which may differ from the interrupted pc), then the callers; skip drops
 * innermost frames that are not the accessing code's (a trapping call's
 * callee).  The thread's read-write watchpoints on its stack are paused
 * meanwhile, so the unwinder's reads do not trap (Witch 4.5).  sps (may be
 * NULL) gets each frame's stack pointer (unwind.h).  Returns the frame count
 * or -errno. */
int context_of_signal(struct witch_thread *t, ucontext_t *uc, uint64_t leaf, int skip,
		      uint64_t *pcs, uint64_t *sps, int max);
/* A context taken inside the runtime on the program's call of fn (bulk.h): the
 * runtime's frames after the leaf go, fn becomes the leaf, the program's call
 * site its caller.  New count or -EINVAL. */
int context_of_call(uint64_t *pcs, int n, uint64_t fn);

#endif
