/* dense.h: the dense-store known-answer programs (dense_memset, dense_memcpy,
 * dense_vector) share one shape, so one derivation serves all three:
 *
 *   for r in 1..R:
 *     bulk(a)      N bytes of a stored densely: memset, memcpy from b, or an
 *                  AVX2 loop of 32-byte stores
 *     kill(a)      a[i] = lcg for every 4-byte element: scalar, one LCG step
 *                  (~4 cycles, ka.h) per 4-byte store
 *     total += sum(a)   loads every element
 *
 * Dead (DeadSpy, byte counts): every byte bulk stores is next stored by kill
 * (waste, pair <bulk, kill>); every byte kill stores is next loaded by sum
 * (use).  Per repetition N bytes waste and N bytes use.  The only other stores
 * are b's initialisation once (N bytes, used by the first memcpy's loads:
 * use) and a handful of return-address pushes.  Fraction:
 *     memset, vector:  R*N / (2*R*N)        = 0.5
 *     memcpy:          R*N / (2*R*N + N)    = 0.5 - 1/(4R+2) ~ 0.499
 * The waste's only pair is <bulk, kill> (share 1.0).
 *
 * Time is nothing like bytes here, which is the point: bulk stores N bytes in
 * a few microseconds (32 bytes a store; `rep stosb/movsb` under plain
 * LD_PRELOAD, glibc's vector loops under `witch run`), kill takes ~1 cycle a
 * byte.  A sampler that follows CPU time sees bulk in a few percent of its
 * ticks; one that follows stored bytes sees it in half.
 *
 * N = 512 KiB: fits this machine's L2, a typical scratch buffer.  R = 12000 by
 * default (~2 s natively, several hundred samples at the default rate).
 */
#ifndef DENSE_H
#define DENSE_H

#include "ka.h"

#define DENSE_N (512u << 10)
#define DENSE_ELEMS (DENSE_N / 4)

KA_FN static void kill(uint32_t *a, uint64_t v)
{
	for (uint32_t i = 0; i < DENSE_ELEMS; i++) {
		KA_LCG(v);
		a[i] = KA_HI(v);
	}
}

KA_FN static uint64_t sum(const uint32_t *a)
{
	uint64_t s = 0;
	for (uint32_t i = 0; i < DENSE_ELEMS; i++)
		s += KA_LOAD(a, i);
	return s;
}

/* The whole program: R repetitions of bulk, kill, sum (above); name and a
 * checksum on stdout.  bulk(a, r) is the program's bulk store. */
static inline int dense_main(int argc, char **argv, const char *name,
			     void (*bulk)(uint32_t *a, long r))
{
	long reps = ka_reps(argc, argv, 12000);
	uint32_t *a = ka_alloc(DENSE_N);
	uint64_t total = 0;
	for (long r = 0; r < reps; r++) {
		bulk(a, r);
		kill(a, 2 * (uint64_t)r + 1);
		total += sum(a);
	}
	printf("%s reps=%ld checksum=%016llx\n", name, reps, (unsigned long long)total);
	return 0;
}

#endif
