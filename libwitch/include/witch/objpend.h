/* objpend: what a context's pending sample weight stands for, by object
 * (data-centric attribution, docs/objects.md).
 *
 * Witch's proportional attribution (4.4.2) gives a trap its watched
 * context's whole pending weight, mu - eta: the samples the reservoir let
 * go wait there for the context's next trap.  One context may store to
 * several objects (a loop that fills a table's slot and bumps a counter on
 * the stack), and the one decided soon (the counter) traps far more often
 * than the one that waits (the slot): given all to the trapping
 * watchpoint's object, the slots' pending weight went to the counter
 * (hashtab: 27% of the dead bytes to `unknown`, another thread's stack,
 * where the oracle has 0).  So each context keeps its pending weight by
 * object, and a trap splits its verdict over them, as 4.4.2 spreads it
 * over the context's samples.
 *
 * A context's entry is allocated from the thread's arena when it first
 * gets a sample; the CCT node keeps its handle.  Async-signal-safe (the
 * thread's own).
 */
#ifndef WITCH_OBJPEND_H
#define WITCH_OBJPEND_H

#include <stdint.h>

#include "witch/arena.h"

/* Objects a context's entry keeps apart; more go to one "rest" part. */
#define OBJPEND_SLOTS 3
#define OBJPEND_REST UINT32_MAX

struct objpend_part {
	uint32_t obj;  /* objects.h id (0 unknown), or OBJPEND_REST */
	double weight; /* the samples' bytes */
};

/* A sample of weight bytes on object obj, in the context whose entry handle is *handle (0: none yet, allocated here
 * from a, never from its last quarter, which the calling context tree and
 * the pairs keep).  0, or -ENOMEM when that is full (the sample is then
 * not kept by object). */
int objpend_add(struct arena *a, uint32_t *handle, uint32_t obj, double weight);
/* The context's pending parts since its last take, cleared: up to
 * OBJPEND_SLOTS + 1 into parts (a REST part last when the slots overflowed).
 * Returns their count, 0 when nothing is kept. */
int objpend_take(struct arena *a, uint32_t handle, struct objpend_part *parts);

#endif
