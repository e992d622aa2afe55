/* dense_memcpy: memcpy(a, b, 512 KiB), then a scalar loop overwrites every
 * byte of a before any read.  Expected dead fraction 0.5 - 1/(4R+2) (0.49998
 * at R = 12000), top pair <memcpy (called from bulk), kill>: see dense.h.
 * Usage: dense_memcpy [REPS]   (default 12000)
 */
#include "dense.h"

static uint32_t *b;

KA_FN static void bulk(uint32_t *a)
{
	memcpy(a, b, DENSE_N);
	__asm__ volatile(""); /* not a tail call: bulk stays in the context */
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 12000);
	uint32_t *a = ka_alloc(DENSE_N);
	uint64_t total = 0;
	b = ka_alloc(DENSE_N);
	for (uint32_t i = 0; i < DENSE_ELEMS; i++)
		b[i] = i * 2654435761u;
	for (long r = 0; r < reps; r++) {
		bulk(a);
		kill(a, 2 * (uint64_t)r + 1);
		total += sum(a);
	}
	printf("dense_memcpy reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	return 0;
}
