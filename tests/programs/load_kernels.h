/* load_kernels.h: the loops load_search.c and load_threads.c share.
 * Define N (elements per array) before including.  See load_search.c for
 * what each loop is for and why every loop runs one LCG step per element.
 */
#ifndef LOAD_KERNELS_H
#define LOAD_KERNELS_H

#include "ka.h"

KA_FN void init(uint32_t *p, uint64_t v)
{
	for (uint32_t i = 0; i < N; i++) {
		KA_LCG(v);
		p[i] = KA_HI(v) & 0x7fffffff;
	}
}

KA_FN uint32_t search(const uint32_t *p, uint64_t v, uint32_t key)
{
	for (uint32_t i = 0; i < N; i++) {
		KA_LCG(v);
		if ((KA_LOAD(p, i) ^ KA_HI(v)) == key)
			return i;
	}
	return N;
}

KA_FN void rewrite(uint32_t *p, uint64_t v)
{
	for (uint32_t i = 0; i < N; i++) {
		KA_LCG(v);
		p[i] = KA_HI(v);
	}
}

KA_FN uint64_t scan(const uint32_t *p, uint64_t v)
{
	uint64_t s = 0;
	for (uint32_t i = 0; i < N; i++) {
		KA_LCG(v);
		s += KA_LOAD(p, i) ^ KA_HI(v);
	}
	return s;
}

#endif
