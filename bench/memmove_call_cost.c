/* memmove_call_cost: ns a call of one memmove size, hot, as the wrappers
 * of bulk.c add to it (bench/results/bulk_fast_path.md).
 *
 *     cc -O2 -o memmove_call_cost bench/memmove_call_cost.c
 *     ./memmove_call_cost [BYTES [CALLS]]                     (native)
 *     LD_PRELOAD=build/libwitch.so WITCH_WATCHPOINTS=0 ./memmove_call_cost 512
 *
 * CALLS (default 20 million) calls of BYTES (default 512) from one source
 * to eight destinations a line apart, through a volatile pointer so that
 * each stays a call.  Interleave native and profiled runs and compare
 * medians: one run's figure moves by 10-30% on these VMs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *(*volatile move_fn)(void *, const void *, size_t) = memmove;

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 512;
	long calls = argc > 2 ? atol(argv[2]) : 20000000;
	const size_t span = 1u << 16;
	if (n > span - 8 * 64 || calls <= 0) {
		fprintf(stderr, "usage: memmove_call_cost [BYTES <= %zu [CALLS > 0]]\n", span - 8 * 64);
		return 2;
	}
	char *s = aligned_alloc(64, span), *d = aligned_alloc(64, span);
	if (!s || !d)
		return 1;
	memset(s, 1, span);
	memset(d, 2, span);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < calls; i++)
		move_fn(d + (i & 7) * 64, s, n);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
	printf("%zu bytes: %.2f ns a call\n", n, ns / (double)calls);
	return d[100] == 0;
}
