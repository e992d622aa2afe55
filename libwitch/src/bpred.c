/* bpred: a model of the CPU's branch predictor over windows' outcomes (see bpred.h). */
#include "witch/bpred.h"

static uint32_t pc_hash(uint64_t pc)
{
	return (uint32_t)((pc * 0x9e3779b97f4a7c15ull) >> 40);
}

/* A 2-bit counter (1-4; 0 untrained) steps toward the outcome. */
static void counter_train(uint8_t *c, int taken)
{
	if (!*c)
		*c = taken ? 3 : 2; /* weakly, the way it went */
	else if (taken && *c < 4)
		(*c)++;
	else if (!taken && *c > 1)
		(*c)--;
}

int bpred_mispredicted(struct bpred *p, uint64_t pc, uint64_t target, int taken)
{
	uint32_t h = pc_hash(pc);
	uint8_t *hist = &p->history[h % BPRED_HISTORIES];
	uint8_t *local = &p->counter[(h ^ ((uint32_t)*hist << 4)) % BPRED_COUNTERS];
	uint8_t *global = &p->global[(h ^ p->path) % BPRED_COUNTERS];
	uint8_t *bias = &p->bias[h % BPRED_BIASES];
	int guess;
	if (*global == 1 || *global == 4)
		guess = *global == 4; /* the path here says so, confidently */
	else if (*local)
		guess = *local >= 3;
	else if (*bias)
		guess = *bias >= 3; /* this history is new: the way the branch mostly goes */
	else
		guess = target < pc; /* untrained: loops branch back */
	counter_train(local, taken);
	counter_train(global, taken);
	counter_train(bias, taken);
	*hist = (uint8_t)((*hist << 1) | (taken != 0));
	p->path = (uint16_t)(((p->path << 1) | (taken != 0)) & (BPRED_COUNTERS - 1));
	return guess != taken;
}
