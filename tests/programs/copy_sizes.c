/* copy_sizes: memcpy of SIZE bytes into one buffer, over and over, each
 * time from a source row that differs from the last in every byte.  It
 * tests that the profiler's own copy of a short call (bulk.c's wrapper
 * copies calls below 64 bytes itself) stores what the C library's would,
 * store for store: a profiler of stores must not add stores, nor take any
 * away.
 *
 * glibc's memcpy below 64 bytes (its AVX2, EVEX and AVX-512 versions
 * alike) stores the first and the last 4, 8, 16 or 32 bytes, the largest
 * that fits, so these sizes store:
 *   16: [0,16) then [0,16) again        32 bytes, 16 of them twice
 *   24: [0,16) then [8,24)              32 bytes,  8 twice
 *   32: [0,32) then [0,32) again        64 bytes, 32 twice
 * Each iteration also pushes copy_rows' return address for the call, and
 * stores nothing else (the result is kept in a register).
 *
 * silent (a store whose next store to the same bytes writes the same
 * value; SilentCraft samples explicit stores, not pushes): the first store
 * of a byte stored twice is followed by the second, with the same value:
 * silent.  The second is followed by the next iteration's first, from
 * another row: every byte differs, not silent.  By bytes:
 *   16: 16 / 32 = 0.50
 *   24:  8 / 32 = 0.25
 *   32: 32 / 64 = 0.50
 * A copy that stored each byte once (as bulk.c's first version did for 16
 * and 32 bytes: 8- and 16-byte halves) reads 0 for both.  The first
 * iteration's stores and the setup's are a few KiB against hundreds of
 * MiB: below 0.001.
 *
 * Usage: copy_sizes SIZE [REPS]   (REPS millions of copies, default 60)
 */
#include "ka.h"

#include <string.h>

#define ROWS 256
#define ROW 64

/* From memory: gcc must call memcpy, not inline the copy. */
static volatile size_t copy_bytes;

KA_FN static uint64_t copy_rows(uint8_t *dst, const uint8_t *src, long count)
{
	size_t n = copy_bytes;
	uint64_t acc = 0;
	for (long i = 0; i < count; i++) {
		memcpy(dst, src + ROW * (i & (ROWS - 1)), n);
		acc += dst[n - 1];
	}
	return acc;
}

int main(int argc, char **argv)
{
	if (argc < 2 || atoi(argv[1]) < 1 || atoi(argv[1]) > ROW) {
		fprintf(stderr, "usage: copy_sizes SIZE(1-%d) [REPS]\n", ROW);
		return 2;
	}
	copy_bytes = (size_t)atoi(argv[1]);
	long reps = ka_reps(argc - 1, argv + 1, 60);
	uint8_t *src = ka_alloc(ROWS * ROW), *dst = ka_alloc(ROW);
	/* Row r's byte j is r + j: consecutive rows (255 -> 0 too) differ in
	 * every byte. */
	for (int r = 0; r < ROWS; r++)
		for (int j = 0; j < ROW; j++)
			src[ROW * r + j] = (uint8_t)(r + j);
	uint64_t acc = 0;
	for (long r = 0; r < reps; r++)
		acc += copy_rows(dst, src, 1000000);
	printf("copy_sizes: %lu\n", (unsigned long)acc);
	return 0;
}
