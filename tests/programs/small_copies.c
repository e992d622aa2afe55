/* small_copies: a loop whose every iteration stores an 8-byte tag and then
 * calls memcpy for 48 bytes (rows 64 bytes apart), beside a scalar loop
 * that stores as many bytes without any call.  Under libwitch the
 * program's memcpy is bulk.c's wrapper, which copies calls below 64 bytes
 * itself (the stores glibc's memcpy makes: the first and the last 32
 * bytes, overlapping; the run ahead runs the wrapper's code), so this is
 * the shape that tests the run-ahead window across such calls: cut short
 * there, it weighed the stores before each call several times over.
 *
 * Bytes stored per iteration of copy_rows (dead client: pushes count):
 *   the tag 8 + the call's return address 8 + memcpy's 64 = 80
 * (glibc's AVX2, EVEX and AVX-512 memcpy alike: two 32-byte stores, 16
 * bytes of them overlapping).
 * fill stores 8 bytes an iteration and runs 10 for each of copy_rows': 80.
 * copy_rows keeps its pointers in callee-saved registers, pushed once per
 * call of copy_rows (a few bytes a repetition, < 0.01% of the total).
 * By bytes: fill 0.5; copy_rows and memcpy (leaf in the C library) 0.5.
 * Usage: small_copies [REPS]   (default 6000)
 */
#include "ka.h"

#include <string.h>

#define ROWS 4096
#define ROW 64

/* The size comes from memory: gcc must call memcpy, not inline a copy. */
static volatile size_t row_bytes = 48;

KA_FN static void copy_rows(uint8_t *dst, const uint8_t *src, uint64_t *tag)
{
	size_t n = row_bytes;
	for (long i = 0; i < ROWS; i++) {
		tag[i] = (uint64_t)i;
		memcpy(dst + ROW * i, src + ROW * i, n);
	}
}

KA_FN static void fill(uint64_t *a)
{
	for (long i = 0; i < 10 * ROWS; i++)
		a[i] = (uint64_t)i;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 6000);
	uint8_t *dst = ka_alloc(ROWS * ROW), *src = ka_alloc(ROWS * ROW);
	uint64_t *tag = ka_alloc(ROWS * sizeof(uint64_t));
	uint64_t *a = ka_alloc(10 * ROWS * sizeof(uint64_t));

	for (long r = 0; r < reps; r++) {
		copy_rows(dst, src, tag);
		fill(a);
	}
	printf("small_copies: %lu\n", (unsigned long)(dst[ROW * 7 + 3] + a[5] + tag[9]));
	return 0;
}
