/* context: the program's calling contexts, taken from inside the runtime.
 *
 * Async-signal-safe.
 */
#ifndef WITCH_CONTEXT_H
#define WITCH_CONTEXT_H

#include <stdint.h>
#include <ucontext.h>

struct witch_thread;

/* Wrappers the program calls through to the C library (bulk.c's memcpy,
 * heap.c's tracked allocations): their frames are left out of contexts, so
 * what the C library does for the program is the program's. */
#define CONTEXT_THROUGH __attribute__((section("witch_through"), noinline))
/* Code that does the program's own work in place of the C library's: bulk.c's
 * copies below 64 bytes.  Ticks and traps there are the
 * program's accesses, not the runtime's, and a leaf there is named as the C
 * library's function (context_leaf). */
#define CONTEXT_PROGRAM __attribute__((section("witch_program")))

/* The runtime's own code, once at start: samples and traps whose context
 * passes through it are the profiler's, not the program's; except the
 * CONTEXT_THROUGH wrappers. */
void context_set_runtime_text(uint64_t lo, uint64_t hi);
void context_runtime_text(uint64_t *lo, uint64_t *hi);
/* Leave the CONTEXT_THROUGH wrappers' frames out of pcs[1..n) (and sps, may
 * be NULL): the program's call goes through them to the C library.  The
 * leaf stays (an access of the wrapper's own is the runtime's).  Returns
 * the new count. */
int context_drop_through(uint64_t *pcs, uint64_t *sps, int n);
/* 1 if a frame of pcs[0..n) is the runtime's code (CONTEXT_PROGRAM's is not). */
int context_in_runtime(const uint64_t *pcs, int n);
/* 1 if pc is the runtime's own code (CONTEXT_PROGRAM's is not). */
int context_pc_runtime(uint64_t pc);
/* 1 if pc is in CONTEXT_PROGRAM code. */
int context_pc_program(uint64_t pc);
/* The program's access at pc as a context's leaf: pc, or for CONTEXT_PROGRAM
 * code the C library function it does the work of (bulk_program_leaf). */
uint64_t context_leaf(uint64_t pc);
/* The context of a signal context: pcs[0] = leaf (the accessing instruction,
 * which may differ from the interrupted pc), then the callers; skip drops
 * innermost frames that are not the accessing code's (a trapping call's
 * callee).  The thread's read-write watchpoints on the stack libunwind
 * reads are paused meanwhile, so the unwinder's reads do not trap (Witch
 * 4.5).  sps (may be NULL) gets each frame's stack pointer (unwind.h).
 * Returns the frame count or -errno. */
int context_of_signal(struct witch_thread *t, ucontext_t *uc, uint64_t leaf, int skip,
		      uint64_t *pcs, uint64_t *sps, int max);
/* A context taken inside the runtime on the program's call of fn (bulk.h): the
 * runtime's frames after the leaf go, fn becomes the leaf, the program's call
 * site its caller.  New count or -EINVAL. */
int context_of_call(uint64_t *pcs, int n, uint64_t fn);

#endif
