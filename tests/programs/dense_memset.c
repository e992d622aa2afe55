/* dense_memset: memset(a, r, 512 KiB), then a scalar loop overwrites every
 * byte before any read.  Expected dead fraction 0.5, top pair
 * <memset (called from bulk), kill>: see dense.h for the derivation.
 * Usage: dense_memset [REPS]   (default 12000)
 */
#include "dense.h"

KA_FN static void bulk(uint32_t *a, long r)
{
	memset(a, (int)(r & 0xff), DENSE_N);
	__asm__ volatile(""); /* not a tail call: bulk stays in the context */
}

int main(int argc, char **argv)
{
	return dense_main(argc, argv, "dense_memset", bulk);
}
