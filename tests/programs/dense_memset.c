/* dense_memset: memset(a, r, 512 KiB), then a scalar loop overwrites every
 * byte before any read.  Expected dead fraction 0.5, top pair
 * <memset (called from bulk), kill>: see dense.h for the derivation.
 * Usage: dense_memset [REPS]   (default 12000)
 */
#include "dense.h"

KA_FN static void bulk(uint32_t *a, int r)
{
	memset(a, r & 0xff, DENSE_N);
	__asm__ volatile(""); /* not a tail call: bulk stays in the context */
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 12000);
	uint32_t *a = ka_alloc(DENSE_N);
	uint64_t total = 0;
	for (long r = 0; r < reps; r++) {
		bulk(a, (int)r);
		kill(a, 2 * (uint64_t)r + 1);
		total += sum(a);
	}
	printf("dense_memset reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	return 0;
}
