/* dense_memcpy: memcpy(a, b, 512 KiB), then a scalar loop overwrites every
 * byte of a before any read.  Expected dead fraction 0.5 - 1/(4R+2) (0.49998
 * at R = 12000: b's initialising stores are used once, by the first copy),
 * top pair <memcpy (called from bulk), kill>: see dense.h.
 * Usage: dense_memcpy [REPS]   (default 12000)
 */
#include "dense.h"

static uint32_t *b;

KA_FN static void bulk(uint32_t *a, long r)
{
	(void)r;
	memcpy(a, b, DENSE_N);
	__asm__ volatile(""); /* not a tail call: bulk stays in the context */
}

int main(int argc, char **argv)
{
	b = ka_alloc(DENSE_N);
	for (uint32_t i = 0; i < DENSE_ELEMS; i++)
		b[i] = i * 2654435761u;
	return dense_main(argc, argv, "dense_memcpy", bulk);
}
