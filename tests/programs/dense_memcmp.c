/* dense_memcmp: the load client's byte count of memcmp (bulk.h).
 *
 *   A, B: 64 KiB each, equal.  R times: compare(A, B) (memcmp of 64 KiB:
 *   it loads both buffers whole, 128 KiB), then sum(A) (a scalar loop of
 *   8-byte loads over A, 64 KiB).
 *
 * Loaded bytes per repetition: compare 128 KiB, sum 64 KiB, so by bytes
 *     compare 2/3 (0.667), sum 1/3 (0.333)
 * for the load client, WITCH_WATCHPOINTS=0 (the samples' weights).  glibc's
 * vector memcmp runs some 4x the bytes a cycle of the scalar loop, so a
 * tick-weighed estimate rests on its few ticks, each weighed by the cost
 * model (2x its share here before memcmp was counted: 0.80-0.84).
 *
 * Usage: dense_memcmp [REPS]   (default 80000, ~0.5 s)
 */
#include "ka.h"

#include <string.h>

#define BYTES (64u << 10)

KA_FN int compare(const void *a, const void *b)
{
	int rc = memcmp(a, b, BYTES);
	KA_NO_TAIL(rc);
	return rc;
}

KA_FN uint64_t sum(const uint64_t *a)
{
	uint64_t s = 0;
	for (uint32_t i = 0; i < BYTES / 8; i++)
		s += ((const volatile uint64_t *)a)[i];
	return s;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 80000);
	uint64_t *a = ka_alloc(BYTES), *b = ka_alloc(BYTES), total = 0;
	for (uint32_t i = 0; i < BYTES / 8; i++)
		a[i] = b[i] = i * 0x9E3779B97F4A7C15ull;
	for (long r = 0; r < reps; r++) {
		total += (uint64_t)compare(a, b);
		total += sum(a);
	}
	printf("dense_memcmp reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	return 0;
}
