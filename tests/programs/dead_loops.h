/* dead_loops.h: dead_two_loops' three loops, shared by the programs that
 * reuse its known answer (fraction 0.5, top pair <fill, overwrite>; the
 * derivation is in dead_two_loops.c).  Define N, the ints per array, before
 * including.  Each program includes it once, so each keeps its own copies
 * named fill, overwrite and sum (what the tests look for).
 */
#ifndef DEAD_LOOPS_H
#define DEAD_LOOPS_H

#include "ka.h"

KA_FN void fill(uint32_t *p, uint64_t v)
{
	for (uint32_t i = 0; i < N; i++) {
		KA_LCG(v);
		p[i] = KA_HI(v);
	}
}

KA_FN void overwrite(uint32_t *p, uint64_t v)
{
	for (uint32_t i = 0; i < N; i++) {
		KA_LCG(v);
		p[i] = KA_HI(v);
	}
}

KA_FN uint64_t sum(const uint32_t *p)
{
	uint64_t s = 0;
	for (uint32_t i = 0; i < N; i++)
		s += p[i];
	return s;
}

#endif
