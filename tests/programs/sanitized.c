/* sanitized: a program built with a sanitizer (-fsanitize=address,
 * thread, leak or undefined: one executable each, sanitized_<name>).
 *
 * Usage: sanitized [overflow]
 *   fills and sums a 4 MiB array 40 times (~0.1 s: ticks at 2000/s) and
 *   prints the sum; with overflow it then writes one int past a 40-byte
 *   block, which AddressSanitizer reports (exit 1) and the others do not
 *   see.
 * Under a preloaded libwitch.so before sanguard.h, the address build died
 * at its start (a jump to 0 in ASan's link-order check) and, with that
 * check off, in an ASan report on the profiler's own memcpy of the
 * program's memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int *volatile keep;

int main(int argc, char **argv)
{
	size_t n = 1u << 20;
	int *a = malloc(n * sizeof(*a));
	long sum = 0;
	if (!a)
		return 2;
	for (int r = 0; r < 40; r++) {
		memset(a, 0, n * sizeof(*a));
		for (size_t i = 0; i < n; i++)
			a[i] = (int)(i * (size_t)r);
		sum += a[r + 1];
	}
	printf("sum %ld\n", sum);
	fflush(stdout);
	free(a);
	if (argc > 1 && strcmp(argv[1], "overflow") == 0) {
		/* One past the end, at an index the compiler cannot see. */
		keep = malloc(40);
		keep[strlen(argv[1]) + 2] = 1;
		free(keep);
	}
	return 0;
}
