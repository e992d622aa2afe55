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

#define HISTORY_BITS 8 /* outcomes that put a branch's history in sync */
#define PATH_BITS 12    /* outcomes that put the path in sync */
#define RATE_ONE 1024   /* miss_rate's 1.0 */
#define RATED_MIN 32    /* in-sync outcomes before the rate stands */

void bpred_window_begin(struct bpred *p)
{
	p->window++;
	p->window_branches = 0;
}

/* An outcome predicted from a history the program ran past, before the
 * branch's in-sync rate stands.  The CPU's predictor ran every outcome
 * between the windows: what stays true out of step tells its guess
 * better than the stale history, which on a sparse branch guesses about
 * as well as a coin (~2 misses a window in sqlite3): the path, once this
 * window's own branches fill it, else the branch's bias where saturated
 * (counted as predicted), else the stale guess (bench/results/bpred_sync.md). */
static int miss_unrated(const struct bpred *p, uint8_t global, uint8_t bias, int taken,
			int stale_miss)
{
	if (p->window_branches >= PATH_BITS && global)
		return (global >= 3) != taken;
	if (bias == 1 || bias == 4)
		return 0;
	return stale_miss;
}

/* An outcome predicted from a history the program ran past, once the
 * branch's in-sync miss rate stands: counted at that rate (the CPU's
 * history was in sync), in whole misses as the fractions add up. */
static int miss_owed(struct bpred_slot *s)
{
	s->owed = (uint16_t)(s->owed + s->miss_rate);
	if (s->owed < RATE_ONE)
		return 0;
	s->owed = (uint16_t)(s->owed - RATE_ONE);
	return 1;
}

int bpred_mispredicted(struct bpred *p, uint64_t pc, uint64_t target, int taken)
{
	uint32_t h = pc_hash(pc);
	struct bpred_slot *s = &p->slot[h % BPRED_HISTORIES];
	if (s->seen_window != p->window) {
		s->seen_window = p->window;
		s->seen = 0;
	}
	uint8_t *hist = &s->history;
	/* A history of one direction only is the same in and out of sync
	 * (straight-line code's branches: malloc's); a mixed one (a loop's
	 * exit every 4th time) was left at a place the program ran past. */
	int in_sync = s->seen >= HISTORY_BITS || *hist == 0 || *hist == 0xff;
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
	int miss = guess != taken;
	if (in_sync) {
		/* A running mean over ~32 outcomes (the first ones: a plain mean). */
		int n = s->rated < RATED_MIN ? s->rated + 1 : RATED_MIN;
		s->miss_rate = (uint16_t)(s->miss_rate + (miss * RATE_ONE - s->miss_rate) / n);
		if (s->rated < 255)
			s->rated++;
	} else if (s->rated < RATED_MIN) {
		miss = miss_unrated(p, *global, *bias, taken, miss);
	} else {
		miss = miss_owed(s);
	}
	if (p->window_branches < UINT16_MAX)
		p->window_branches++;
	counter_train(local, taken);
	counter_train(global, taken);
	counter_train(bias, taken);
	*hist = (uint8_t)((*hist << 1) | (taken != 0));
	p->path = (uint16_t)(((p->path << 1) | (taken != 0)) & (BPRED_COUNTERS - 1));
	if (s->seen < HISTORY_BITS)
		s->seen++;
	return miss;
}
