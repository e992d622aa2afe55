/* bulk_call_cost: what a program's memmove call costs through bulk.c's
 * wrapper, nothing armed.
 *
 *     cc -O2 -o bulk_call_cost bench/bulk_call_cost.c
 *     ./bulk_call_cost                                         (native)
 *     LD_PRELOAD=build/libwitch.so WITCH_WATCHPOINTS=0 ./bulk_call_cost
 *
 * For each size, ns per call of one memmove of the whole block ("whole":
 * the wrapper decides how it reaches glibc) and of the same bytes as the
 * program's own 2 KiB calls ("2 KiB calls"), best of 7 passes over 64 MiB
 * of calls.  Native, the second column is what bulk.c's pieces cost; under
 * the runtime with nothing armed the first should read as native's first
 * plus the wrapper's few ns (bench/results/bulk_pieces_unarmed.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Through a pointer, so the compiler leaves every call a call. */
static void *(*volatile move_fn)(void *, const void *, size_t) = memmove;

int main(void)
{
	static const size_t sizes[] = {512, 2048, 4096, 16384, 32768, 65536, 131072, 262144, 524288, 1048576};
	enum { PASSES = 7, PIECE = 2048 };
	const size_t span = 1u << 20, bytes_per_pass = 64u << 20;
	char *src = aligned_alloc(64, span), *dst = aligned_alloc(64, span);
	if (!src || !dst)
		return 1;
	memset(src, 1, span);
	memset(dst, 2, span);
	printf("%8s %12s %14s\n", "bytes", "whole ns", "2 KiB calls ns");
	for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
		size_t n = sizes[s];
		long calls = (long)(bytes_per_pass / n);
		double best_whole = 1e9, best_pieces = 1e9;
		for (int p = 0; p < PASSES; p++) {
			double t0 = now_s();
			for (long i = 0; i < calls; i++)
				move_fn(dst, src, n);
			double t1 = now_s();
			for (long i = 0; i < calls; i++)
				for (size_t off = 0; off < n; off += PIECE)
					move_fn(dst + off, src + off, n - off < PIECE ? n - off : PIECE);
			double t2 = now_s();
			best_whole = t1 - t0 < best_whole ? t1 - t0 : best_whole;
			best_pieces = t2 - t1 < best_pieces ? t2 - t1 : best_pieces;
		}
		printf("%8zu %12.1f %14.1f\n", n, best_whole / (double)calls * 1e9,
		       best_pieces / (double)calls * 1e9);
	}
	return 0;
}
