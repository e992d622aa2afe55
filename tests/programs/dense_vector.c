/* dense_vector: an AVX2 loop of 32-byte stores fills a, then a scalar loop
 * overwrites every byte before any read.  Expected dead fraction 0.5, top
 * pair <bulk, kill>: see dense.h.  Exits 77 (skipped) on a CPU without AVX2.
 * Usage: dense_vector [REPS]   (default 12000)
 */
#include "dense.h"

#include <immintrin.h>

__attribute__((target("avx2"))) KA_FN static void bulk(uint32_t *a, int r)
{
	__m256i v = _mm256_set1_epi32(r);
	for (uint32_t i = 0; i < DENSE_ELEMS; i += 8)
		_mm256_store_si256((__m256i *)(a + i), v);
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 12000);
	if (!__builtin_cpu_supports("avx2")) {
		printf("dense_vector: no AVX2 on this CPU\n");
		return 77;
	}
	uint32_t *a = ka_alloc(DENSE_N);
	uint64_t total = 0;
	for (long r = 0; r < reps; r++) {
		bulk(a, (int)r);
		kill(a, 2 * (uint64_t)r + 1);
		total += sum(a);
	}
	printf("dense_vector reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	return 0;
}
