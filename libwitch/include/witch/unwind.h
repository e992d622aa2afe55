/* unwind: calling context of a signal context, with libunwind.
 *
 * Async-signal-safe as libunwind's local unwinding is: no malloc, no stdio.
 */
#ifndef WITCH_UNWIND_H
#define WITCH_UNWIND_H

#include <stdint.h>
#include <ucontext.h>

/* libunwind is loaded at the first tick that can (deps.h), and set up at
 * the first walk after, to keep no cache of its own (unwind.c says why;
 * each thread keeps its rules instead, unwind_rules.h).  Until then walks
 * fail with -EAGAIN. */
/* Walk the interrupted thread's stack, by r's rules where they lead and
 * libunwind from where they end (unwind_rules.h; r learns from it); the
 * interrupted frame's caller from the tick's run-ahead where it returned
 * out of that frame (unwind_rules_expect_caller).
 * pcs[0] is the interrupted pc (exact); pcs[i > 0] are return addresses
 * minus one, so each lies in its call instruction.  sps (may be NULL)
 * gets each frame's stack pointer: frame i's stack is [sps[i], sps[i+1]).
 * Returns the number of frames (>= 1) or a negative errno. */
struct unwind_rules;
/* Told before libunwind first reads the stack at or above sp in a walk,
 * and again if a later part reads from lower: libunwind reads in place,
 * where a read-write watchpoint would trap.  The rules read through
 * peek.h, which keeps off watched bytes, so a walk by rules alone tells
 * nothing. */
struct unwind_guard {
	void (*before_reads)(void *arg, uint64_t sp);
	void *arg;
};
/* g may be NULL. */
int unwind_context(struct unwind_rules *r, ucontext_t *uc, const struct unwind_guard *g,
		   uint64_t *pcs, uint64_t *sps, int max);
/* Start of the procedure holding pc, from the unwind tables: 0, or
 * -ENOENT where none covers pc (fnrange.h keeps the answers). */
int unwind_proc_start(uint64_t pc, uint64_t *fn_start);
/* ... and its end: the procedure is [*start, *end). */
int unwind_proc_range(uint64_t pc, uint64_t *start, uint64_t *end);

#endif
