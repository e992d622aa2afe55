/* no_dead: every store is read before the same bytes are stored again.
 *
 *   a[], b[]: 4M ints each (16 MiB);  c[]: 1M ints (4 MiB).  Per repetition:
 *     produce(a, b): for each i: a[i] = lcg + b[i]      (load b[i], store a[i])
 *     consume(b, a): for each i: b[i] = lcg + a[i]      (load a[i], store b[i])
 *     prefix(c):     for i >= 1: c[i] = c[i-1] + lcg    (prefix sum through memory)
 *                    then returns c[M-1] (one final load)
 *
 * DeadSpy definitions (a store is dead iff the next access to the same bytes
 * is a store):
 *   - produce's store to a[i]: next access is consume's load of a[i] -> used.
 *   - consume's store to b[i]: next access is the next repetition's produce
 *     load of b[i] -> used (last repetition: never accessed again, neither).
 *   - prefix's store to c[i], i < M-1: next access is the load of c[i] in
 *     iteration i+1 -> used; c[M-1]: next access is the final load -> used.
 *   - call/prologue pushes are popped/returned through -> used.
 *   Dead stores: none.  Expected fraction 0 (check: below 0.05; the only
 *   possible dead stores are a few in libc start-up/exit code, which run for
 *   microseconds and get essentially no samples).
 *
 * Sampling by CPU time: prefix's stores are slower (store-to-load forwarding
 * is on its dependency chain) than produce's/consume's, so it gets more
 * samples per store; the answer (0) does not depend on the weights.  No loop
 * is store-free, so no tick lands far from a store.  Measured natively
 * (--phase-times, 40 reps): produce 0.186 s, consume 0.185 s, prefix 0.054 s.
 *
 * Build: -O2 -g -fno-inline -fno-tree-vectorize
 * -fno-tree-loop-distribute-patterns; one scalar 4-byte load and store per
 * element, checked with objdump.
 *
 * Usage: no_dead [REPS] [--phase-times]     default REPS = 40 (~0.5 s)
 */
#include "ka.h"

#define N (4u << 20)
#define M (1u << 20)

static uint32_t *a, *b;
static uint32_t c[M];

KA_FN uint64_t produce(uint32_t *dst, const uint32_t *src, uint64_t v)
{
	for (uint32_t i = 0; i < N; i++) {
		uint32_t in = KA_LOAD(src, i);
		KA_LCG(v);
		dst[i] = KA_HI(v) + in;
	}
	return v;
}

KA_FN uint64_t consume(uint32_t *dst, const uint32_t *src, uint64_t v)
{
	for (uint32_t i = 0; i < N; i++) {
		uint32_t in = KA_LOAD(src, i);
		KA_LCG(v);
		dst[i] = KA_HI(v) ^ in;
	}
	return v;
}

KA_FN uint64_t prefix(uint32_t *p, uint64_t v)
{
	for (uint32_t i = 1; i < M; i++) {
		KA_LCG(v);
		p[i] = KA_LOAD(p, i - 1) + KA_HI(v);
	}
	return v + KA_LOAD(p, M - 1);
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 40);
	int times = ka_want_times(argc, argv);
	double t[3] = {0, 0, 0}, t0 = 0;
	uint64_t v = 1;

	a = ka_alloc((size_t)N * sizeof *a);
	b = ka_alloc((size_t)N * sizeof *b);
	for (long r = 0; r < reps; r++) {
		if (times) t0 = ka_now();
		v = produce(a, b, v);
		if (times) { t[0] += ka_now() - t0; t0 = ka_now(); }
		v = consume(b, a, v);
		if (times) { t[1] += ka_now() - t0; t0 = ka_now(); }
		v = prefix(c, v);
		if (times) t[2] += ka_now() - t0;
	}
	printf("no_dead reps=%ld checksum=%016llx\n", reps, (unsigned long long)v);
	if (times)
		fprintf(stderr, "cpu s: produce %.3f consume %.3f prefix %.3f\n",
			t[0], t[1], t[2]);
	return 0;
}
