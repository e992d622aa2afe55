/* reservoir: unbiased watchpoint replacement, Witch 4.4.1 (see reservoir.h). */
#include "witch/reservoir.h"

int reservoir_pick_slot(struct reservoir *r, uint32_t armed_mask, int n, struct rng *rng)
{
	for (int i = 0; i < n; i++) {
		if (!(armed_mask & (1u << i))) {
			r->k = (uint64_t)__builtin_popcount(armed_mask & ((1u << n) - 1)) + 1;
			return i;
		}
	}
	r->k++;
	if (r->k <= (uint64_t)n || rng_next(rng) % r->k < (uint64_t)n)
		return (int)rng_below(rng, (uint32_t)n);
	return -1;
}
