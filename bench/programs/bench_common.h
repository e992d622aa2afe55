/* bench_common.h: what the six benchmark programs share (README.md here).
 *
 *   uint64_t bench_xorshift64(uint64_t *state)   next value of Marsaglia's
 *                                                xorshift64; inputs are
 *                                                deterministic, no time/pid
 *   uint64_t bench_seed_state(uint64_t seed)      a non-zero state from a seed
 *   void bench_seed(uint64_t seed), uint64_t bench_next(void)
 *       the same on one program-wide state (the single-threaded programs)
 *   long bench_parse_scale(const char *name, int argc, char **argv)
 *       the one optional SCALE argument (1 to 1000000, default 1); anything
 *       else prints "usage: NAME [SCALE]" and exits 2
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static inline uint64_t bench_xorshift64(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

static inline uint64_t bench_seed_state(uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
	return s ? s : 1;
}

/* Program-wide state; unseeded, it starts from a fixed non-zero value. */
static uint64_t bench_rng_state __attribute__((unused)) = 0x853c49e6748fea9bULL;

static inline void bench_seed(uint64_t seed)
{
	bench_rng_state = bench_seed_state(seed);
}

static inline uint64_t bench_next(void)
{
	return bench_xorshift64(&bench_rng_state);
}

static inline long bench_parse_scale(const char *name, int argc, char **argv)
{
	if (argc == 1)
		return 1;
	if (argc == 2) {
		char *end;
		errno = 0;
		long v = strtol(argv[1], &end, 10);
		if (errno == 0 && end != argv[1] && *end == '\0' && v > 0 && v <= 1000000)
			return v;
	}
	fprintf(stderr, "usage: %s [SCALE]\n", name);
	exit(2);
}

#endif
