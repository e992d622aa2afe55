/* reservoir: which sample a watchpoint goes to (Witch 4.4.1).
 *
 * With k samples offered since a slot was last free, the k-th replaces a
 * victim with probability n/k, so every one of those k samples is being
 * monitored with the same probability n/k: no temporal bias.  A freed slot
 * (a trap the client disarmed) takes the next sample with probability 1,
 * and k restarts from the number of slots then armed.  O(1) state.
 */
#ifndef WITCH_RESERVOIR_H
#define WITCH_RESERVOIR_H

#include <stdint.h>

#include "witch/rng.h"

struct reservoir {
	uint64_t k;
};

/* A new sample arrives; armed_mask has bit i set when slot i is armed, n slots
 * exist.  Returns the slot to arm the sample in (a free one if any, else a
 * uniformly chosen victim), or -1 to leave it unmonitored. */
int reservoir_pick_slot(struct reservoir *r, uint32_t armed_mask, int n, struct rng *rng);

#endif
