/* bulk_calls: many large calls of one of the C library's memory functions,
 * which libwitch.so wraps (bulk.h), for counting the instructions they
 * take.  Natively each runs the C library's vector code, ~32-64 bytes an
 * instruction; a wrapper that has not found the C library's function runs
 * a byte loop, several instructions a byte.
 *
 * Usage: bulk_calls memset|memcpy|memmove|mempcpy|memcmp [CALLS]
 * (default 64 calls of 256 KiB); prints a checksum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES (256u << 10)

int main(int argc, char **argv)
{
	const char *fn = argc > 1 ? argv[1] : "memset";
	int calls = argc > 2 ? atoi(argv[2]) : 64;
	unsigned char *a = malloc(BYTES), *b = malloc(BYTES);
	/* (volatile: the compiler must call what the test names) */
	void *(*volatile set)(void *, int, size_t) = memset;
	void *(*volatile cpy)(void *, const void *, size_t) = memcpy;
	void *(*volatile mov)(void *, const void *, size_t) = memmove;
	void *(*volatile pcpy)(void *, const void *, size_t) = mempcpy;
	int (*volatile cmp)(const void *, const void *, size_t) = memcmp;
	long sum = 0;

	if (!a || !b)
		return 1;
	set(a, 1, BYTES);
	set(b, 1, BYTES);
	for (int i = 0; i < calls; i++) {
		if (strcmp(fn, "memset") == 0)
			set(a, i, BYTES);
		else if (strcmp(fn, "memcpy") == 0)
			cpy(b, a, BYTES);
		else if (strcmp(fn, "memmove") == 0)
			mov(b, a, BYTES);
		else if (strcmp(fn, "mempcpy") == 0)
			sum += (unsigned char *)pcpy(b, a, BYTES) - b;
		else if (strcmp(fn, "memcmp") == 0)
			sum += cmp(a, b, BYTES);
		else
			return 2;
	}
	printf("%s %ld %d %d\n", fn, sum, a[BYTES / 2], b[BYTES / 3]);
	return 0;
}
