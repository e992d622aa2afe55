/* dense_vector: an AVX2 loop of 32-byte stores fills a, then a scalar loop
 * overwrites every byte before any read.  Expected dead fraction 0.5, top
 * pair <bulk, kill>: see dense.h.  Exits 77 (skipped) on a CPU without AVX2.
 * Usage: dense_vector [REPS]   (default 12000)
 */
#include "dense.h"

#include <immintrin.h>

__attribute__((target("avx2"))) KA_FN static void bulk(uint32_t *a, long r)
{
	__m256i v = _mm256_set1_epi32((int)r);
	for (uint32_t i = 0; i < DENSE_ELEMS; i += 8)
		_mm256_store_si256((__m256i *)(a + i), v);
}

int main(int argc, char **argv)
{
	if (!__builtin_cpu_supports("avx2")) {
		printf("dense_vector: no AVX2 on this CPU\n");
		return 77;
	}
	return dense_main(argc, argv, "dense_vector", bulk);
}
