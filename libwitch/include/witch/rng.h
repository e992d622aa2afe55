/* rng: small, fast, seedable random numbers for reservoir decisions.
 *
 * Per-thread state, no locks: safe in signal handlers.
 */
#ifndef WITCH_RNG_H
#define WITCH_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s;
};

static inline void rng_seed(struct rng *r, uint64_t seed)
{
	/* splitmix64 step so that nearby seeds (tids) give unrelated streams */
	uint64_t z = seed + 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	r->s = (z ^ (z >> 31)) | 1;
}

/* The next xorshift64* value. */
static inline uint64_t rng_next(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dull;
}

/* Uniform in [0, n). */
static inline uint32_t rng_below(struct rng *r, uint32_t n)
{
	return (uint32_t)(((rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform in [0, 1). */
static inline double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
