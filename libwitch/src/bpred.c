/* bpred: a local two-level branch predictor over windows' outcomes (see bpred.h). */
#include "witch/bpred.h"

static uint32_t pc_hash(uint64_t pc)
{
	return (uint32_t)((pc * 0x9e3779b97f4a7c15ull) >> 40);
}

int bpred_mispredicted(struct bpred *p, uint64_t pc, uint64_t target, int taken)
{
	uint32_t h = pc_hash(pc);
	uint8_t *hist = &p->history[h % BPRED_HISTORIES];
	uint8_t *ctr = &p->counter[(h ^ ((uint32_t)*hist << 4)) % BPRED_COUNTERS];
	int guess = *ctr ? *ctr >= 3 : target < pc; /* untrained: loops branch back */
	if (!*ctr)
		*ctr = taken ? 3 : 2; /* weakly, the way it went */
	else if (taken && *ctr < 4)
		(*ctr)++;
	else if (!taken && *ctr > 1)
		(*ctr)--;
	*hist = (uint8_t)((*hist << 1) | (taken != 0));
	return guess != taken;
}
