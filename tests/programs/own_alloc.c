/* own_alloc: a program linked with its own allocator (own_alloc_lib.c, as
 * redis-server links jemalloc).  Every block it gets, through every entry
 * point, must come from that allocator, and malloc_usable_size must accept
 * it: under a profiler that sends malloc to the C library instead, the
 * check below fails (exit 3), or malloc_usable_size traps (SIGILL).
 * Also works the heap hard enough for samples (a store loop over blocks).
 * Usage: own_alloc [ROUNDS]   (default 200) */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int own_alloc_owns(const void *p);
size_t own_alloc_served(void);

static int check(void *p, size_t n, const char *how)
{
	if (!p || !own_alloc_owns(p) || malloc_usable_size(p) < n) {
		printf("own_alloc: %s gave %p, not the program's allocator's\n", how, p);
		return 3;
	}
	memset(p, 1, n);
	return 0;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 200;
	unsigned long sum = 0;
	int rc = 0;
	for (long r = 0; r < rounds && rc == 0; r++) {
		size_t n = 4096 + (size_t)(r % 7) * 512;
		void *a = malloc(n), *b = calloc(4, n / 4), *c = NULL, *d = NULL;
		rc |= check(a, n, "malloc") | check(b, n, "calloc");
		a = realloc(a, 2 * n);
		rc |= check(a, 2 * n, "realloc");
		if (posix_memalign(&c, 64, n) != 0)
			c = NULL;
		rc |= check(c, n, "posix_memalign");
		d = aligned_alloc(64, n);
		rc |= check(d, n, "aligned_alloc");
		for (int k = 0; k < 200; k++)
			for (size_t i = 0; i < n; i += 8)
				((volatile unsigned long *)a)[i / 8] = i + (size_t)k;
		sum += ((unsigned long *)a)[1];
		free(a);
		free(b);
		free(c);
		free(d);
	}
	if (rc == 0 && own_alloc_served() < (size_t)rounds * 5) {
		printf("own_alloc: the program's allocator served %zu blocks, expected >= %ld\n",
		       own_alloc_served(), rounds * 5);
		rc = 3;
	}
	printf("own_alloc rounds=%ld sum=%lu\n", rounds, sum);
	return rc;
}
