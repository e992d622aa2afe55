/* weights: loops whose stored and loaded bytes are known, for what the
 * software sampler's weights add up to (bench/weights.py runs it).
 *
 *     weights KERNEL     prints "KERNEL stores S loads L": the bytes the
 *                        kernel's own function stores and loads
 *
 * Each kernel is one noinline function (the samples whose innermost frame
 * it is are its estimate), ~0.1-0.5 s natively, and stands for one way code
 * runs on a core: at full width, through calls, on a chain through a
 * register, on a branch the CPU cannot predict and on one it can, on
 * atomic read-modify-writes, on a pointer chase through DRAM, on a stream
 * through DRAM.  Counts are of the
 * C statements; the compiled loops were checked against them (objdump):
 * every store and load the kernels make is one of these.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#define NOI __attribute__((noinline, noclone))

static uint64_t stores, loads;

/* 8 B stored an iteration, ~2 cycles each: the core at full width. */
NOI static void k_scalar(uint64_t *a, long n, long reps)
{
	for (long r = 0; r < reps; r++)
		for (long i = 0; i < n; i++)
			a[i] = (uint64_t)(i * r) ^ (uint64_t)(i >> 3);
	stores += 8 * (uint64_t)(n * reps);
}

NOI static uint64_t mix(uint64_t x)
{
	return x * 2654435761u ^ (x >> 7);
}

/* 8 B stored and the call's 8 B return address pushed an iteration. */
NOI static void k_calls(uint64_t *a, long n, long reps)
{
	for (long r = 0; r < reps; r++)
		for (long i = 0; i < n; i++)
			a[i] = mix((uint64_t)(i + r));
	stores += 16 * (uint64_t)(n * reps);
}

/* 8 B loaded an iteration into a sum.  The barrier keeps GCC from running
 * two rounds at once (it vectorized the outer loop: one load for two
 * rounds' elements, half the bytes the statement names). */
NOI static void k_sum(const uint64_t *a, long n, long reps, uint64_t *out)
{
	uint64_t s = 0;
	for (long r = 0; r < reps; r++) {
		for (long i = 0; i < n; i++)
			s += a[i] ^ (uint64_t)r;
		__asm__ volatile("" : "+r"(s));
	}
	*out = s;
	loads += 8 * (uint64_t)(n * reps);
	stores += 8;
}

/* A branch on a fresh random bit each iteration (xorshift in registers):
 * mispredicted half the time.  8 B loaded and stored an iteration. */
NOI static void k_branchy(uint64_t *a, long n, long reps)
{
	uint64_t x = 88172645463325252ull;
	for (long r = 0; r < reps; r++)
		for (long i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if (x & (1ull << 40))
				a[i] += (uint64_t)i;
			else
				a[i] ^= (uint64_t)r;
		}
	stores += 8 * (uint64_t)(n * reps);
	loads += 8 * (uint64_t)(n * reps);
}

/* The same branch on 4096 random bytes read again every round: the CPU
 * learns the repeating pattern (~3 cycles an iteration here), the model
 * cannot (bpred.h).  8 B stored, 9 B loaded an iteration. */
NOI static void k_pattern(uint64_t *a, const uint8_t *b, long n, long reps)
{
	for (long r = 0; r < reps; r++)
		for (long i = 0; i < n; i++) {
			if (b[i])
				a[i] += (uint64_t)i;
			else
				a[i] ^= (uint64_t)r;
		}
	stores += 8 * (uint64_t)(n * reps);
	loads += 9 * (uint64_t)(n * reps);
}

/* A pointer chase through 64 MiB (a DRAM miss a step) with a store beside
 * each load: 8 B loaded and 8 B stored a step. */
NOI static void k_chase(uint64_t *next, long steps, uint64_t *out)
{
	uint64_t p = 0;
	for (long i = 0; i < steps; i++) {
		p = next[p];
		next[p ^ 1] = (uint64_t)i;
	}
	*out = p;
	loads += 8 * (uint64_t)steps;
	stores += 8 * (uint64_t)steps + 8;
}

/* A copy between two 32 MiB arrays, bound by DRAM's bandwidth: 8 B loaded
 * and 8 B stored an iteration. */
NOI static void k_stream(uint64_t *d, const uint64_t *s, long n, long reps)
{
	for (long r = 0; r < reps; r++) {
		for (long i = 0; i < n; i++)
			d[i] = s[i] + (uint64_t)r;
		__asm__ volatile("" : : "r"(d) : "memory");
	}
	stores += 8 * (uint64_t)(n * reps);
	loads += 8 * (uint64_t)(n * reps);
}

/* An atomic add to a shared counter beside each store, as a mutex or a
 * reference count does (~17-20 cycles a locked op here, the store buffer
 * drained each time): 8 B stored, and the counter's 8 B loaded and stored,
 * an iteration. */
NOI static void k_locked(uint64_t *a, uint64_t *counter, long n, long reps)
{
	for (long r = 0; r < reps; r++)
		for (long i = 0; i < n; i++) {
			__atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST);
			a[i] = (uint64_t)(i + r);
		}
	stores += 16 * (uint64_t)(n * reps);
	loads += 8 * (uint64_t)(n * reps);
}

/* A polynomial of degree 12 at each element, by Horner's rule: 8 B loaded
 * and 8 B stored an iteration, with a chain of 12 dependent multiply-adds
 * (~70 cycles of FP latency) between them that no later iteration waits
 * for.  An out-of-order core runs several iterations' chains at once, as it
 * does a libm exp in a loop; a window of the code ahead that ends with the
 * first iteration's chain weighs it as if it did not.  The inner loop is
 * unrolled whole and the coefficients stay in registers (objdump: the
 * loop's only memory operands are x[i] and y[i]). */
NOI static void k_horner(const double *x, double *y, long n, long reps)
{
	const double c[13] = {0.5,   -0.25, 0.125,  -0.0625, 0.03125, -0.015625, 0.0078125,
			      -0.004, 0.002, -0.001, 0.0005, -0.00025, 0.000125};
	for (long r = 0; r < reps; r++)
		for (long i = 0; i < n; i++) {
			double v = x[i], p = c[0];
#pragma GCC unroll 12
			for (int k = 1; k <= 12; k++)
				p = p * v + c[k];
			y[i] = p;
		}
	stores += 8 * (uint64_t)(n * reps);
	loads += 8 * (uint64_t)(n * reps);
}

/* Stores down the two edge columns of a 512 x 512 matrix of doubles (4 KiB
 * rows, stencil's apply_boundary): a power-of-two stride, so the lines
 * fall in one of L1's sets and a few of L2's and evict each other, ~13 TSC
 * ticks a store here against ~1 along a row (costmodel.c, CONFLICT_*):
 * 16 B stored an iteration. */
NOI static void k_column(double (*g)[512], long reps)
{
	for (long r = 0; r < reps; r++)
		for (int i = 1; i < 511; i++) {
			g[i][0] = (double)r;
			g[i][511] = (double)i;
		}
	stores += 16 * 510 * (uint64_t)reps;
}

/* A read of 64 KiB from /dev/zero (the kernel clears it: a few us, most
 * of the kernel's time) and 64 stores of 8 B right after it returns, ~40
 * cycles of the program's own: 512 B stored an iteration.  A tick whose
 * time ran out in the call but that is raised on its way out (sysret.h)
 * stands for none of them. */
NOI static void k_syscalls(uint64_t *a, int fd, char *page, long reps)
{
	for (long r = 0; r < reps; r++) {
		ssize_t got = read(fd, page, 64 << 10);
		for (int i = 0; i < 64; i++)
			a[i] = (uint64_t)(got + r + i);
		__asm__ volatile("" : : "r"(a) : "memory");
	}
	stores += 512 * (uint64_t)reps;
}

int main(int argc, char **argv)
{
	const char *k = argc > 1 ? argv[1] : "";
	uint64_t out = 0;
	if (!strcmp(k, "scalar")) {
		uint64_t *a = malloc(8000);
		k_scalar(a, 1000, 600000);
		out = a[3];
	} else if (!strcmp(k, "scalar_big")) {
		uint64_t *a = malloc(8 << 20);
		k_scalar(a, 1 << 20, 500);
		out = a[3];
	} else if (!strcmp(k, "calls")) {
		uint64_t *a = malloc(8000);
		k_calls(a, 1000, 150000);
		out = a[3];
	} else if (!strcmp(k, "sum")) {
		uint64_t *a = calloc(1000, 8);
		k_sum(a, 1000, 600000, &out);
	} else if (!strcmp(k, "branchy")) {
		uint64_t *a = calloc(4096, 8);
		k_branchy(a, 4096, 6000);
		out = a[3];
	} else if (!strcmp(k, "pattern")) {
		long n = 4096;
		uint64_t *a = calloc((size_t)n, 8);
		uint8_t *b = malloc((size_t)n);
		srand(1);
		for (long i = 0; i < n; i++)
			b[i] = (uint8_t)(rand() & 1);
		k_pattern(a, b, n, 30000);
		out = a[3];
	} else if (!strcmp(k, "locked")) {
		uint64_t *a = malloc(8000), counter = 0;
		k_locked(a, &counter, 1000, 40000);
		out = a[3] + counter;
	} else if (!strcmp(k, "chase")) {
		long n = 1 << 23;
		uint64_t *nx = malloc((size_t)n * 8);
		srand(1);
		for (long i = 0; i < n; i++)
			nx[i] = (uint64_t)i;
		for (long i = n - 1; i > 0; i--) {
			long j = rand() % (i + 1);
			uint64_t t = nx[i];
			nx[i] = nx[j];
			nx[j] = t;
		}
		k_chase(nx, 20000000, &out);
	} else if (!strcmp(k, "horner")) {
		double *x = malloc(1000 * sizeof(double)), *y = malloc(1000 * sizeof(double));
		for (long i = 0; i < 1000; i++)
			x[i] = 0.001 * (double)i;
		k_horner(x, y, 1000, 80000);
		out = (uint64_t)(y[3] * 1e6);
	} else if (!strcmp(k, "column")) {
		double (*g)[512] = calloc(512, sizeof(*g));
		k_column(g, 40000);
		out = (uint64_t)g[3][0];
	} else if (!strcmp(k, "syscalls")) {
		uint64_t a[64];
		char *page = malloc(64 << 10);
		int fd = open("/dev/zero", O_RDONLY);
		if (fd < 0 || !page) {
			perror("weights: /dev/zero");
			return 2;
		}
		k_syscalls(a, fd, page, 100000);
		out = a[3];
	} else if (!strcmp(k, "stream")) {
		long n = 1 << 22;
		uint64_t *d = calloc((size_t)n, 8), *s = calloc((size_t)n, 8);
		k_stream(d, s, n, 60);
		out = d[5];
	} else {
		fprintf(stderr, "weights: unknown kernel '%s'\n", k);
		return 2;
	}
	printf("%s stores %llu loads %llu (%llu)\n", k, (unsigned long long)stores,
	       (unsigned long long)loads, (unsigned long long)(out & 1));
	return 0;
}
