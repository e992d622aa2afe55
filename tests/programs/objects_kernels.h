/* objects_kernels.h: the store and load loops the objects known-answer
 * programs (objects_mix.c, objects_stack.c) run on every object, so time
 * per byte is the same whatever the object.  fill and refill are the same
 * loop under two names: their pairs <fill, refill> tell the two stores
 * apart.  Include after ka.h.
 */
#ifndef WITCH_TEST_OBJECTS_KERNELS_H
#define WITCH_TEST_OBJECTS_KERNELS_H

KA_FN void fill(uint32_t *p, uint32_t n, uint64_t v)
{
	for (uint32_t i = 0; i < n; i++) {
		KA_LCG(v);
		p[i] = KA_HI(v);
	}
}

KA_FN void refill(uint32_t *p, uint32_t n, uint64_t v)
{
	for (uint32_t i = 0; i < n; i++) {
		KA_LCG(v);
		p[i] = KA_HI(v);
	}
}

KA_FN uint64_t sum(const uint32_t *p, uint32_t n)
{
	uint64_t s = 0;
	for (uint32_t i = 0; i < n; i++)
		s += KA_LOAD(p, i);
	return s;
}

/* reps times: p = alloc(), fill(p, n) with a repetition's seed, sum(p, n),
 * free(p) (alloc_churn.c, calloc_fill.c).  The checksum; exits 2 when alloc
 * fails. */
KA_FN uint64_t churn_blocks(uint32_t *(*alloc)(void), long reps, uint32_t n, const char *prog)
{
	uint64_t total = 0;
	for (long r = 0; r < reps; r++) {
		uint32_t *p = alloc();
		if (!p) {
			fprintf(stderr, "%s: out of memory\n", prog);
			exit(2);
		}
		fill(p, n, 2 * (uint64_t)r + 1);
		total += sum(p, n);
		free(p);
	}
	return total;
}

#endif
