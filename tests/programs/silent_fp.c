/* silent_fp: exactly silent and approximately silent double stores.
 *
 *   a[], b[]: N = 1M doubles each (8 MiB each).  Per repetition r = 0..R-1:
 *     exact(a, SA, 1.0)   a[i] = (double)lcg_i(SA) * 1.0
 *     nudge(b, SB, f_r)   b[i] = (double)lcg_i(SB) * f_r,
 *                         f_r = 1.001 for odd r, 1.0 for even r
 *   (lcg_i(S): the high half of the i-th step of ka.h's LCG from seed S,
 *   the same fixed seeds in every repetition.)  At the end, once: the sum
 *   of a[] and b[] (loads only).
 *
 * SilentCraft definitions (a store is silent iff the next store to the same
 * bytes writes the same value; for doubles, also "approximately silent" if
 * |x - y| <= tol * max(|x|, |y|), tol = WITCH_FP_TOLERANCE, default 0.01):
 *   - exact's store to a[i] in repetition r: the next store to a[i] is
 *     exact's in r+1, the same double: silent, waste, not approximate,
 *     pair <exact, exact>.
 *   - nudge's store to b[i]: the next store is nudge's in r+1; one of the
 *     two is x = lcg_i(SB), the other x * 1.001 (x >= 1 except with
 *     probability 2^-32): relative difference 0.001/1.001 = 0.000999.
 *       tol 0.01:   <= tol: approximately silent: waste AND waste_approx,
 *                   pair <nudge, nudge>.
 *       tol 0.0001: > tol: different: use.
 *   - last repetition: no next store, no verdict; other stores negligible.
 *   Stores: R*N exact + R*N nudge, so
 *     tol 0.01:   fraction = 1.0; waste_approx / waste = 0.5 (nudge's);
 *                 shares exact:exact = 0.5, nudge:nudge = 0.5.
 *     tol 0.0001: fraction = 0.5; waste_approx = 0; top pair <exact, exact>,
 *                 share 1.0.
 *   (gcc compiles main's choice of f_r into a branch with a call of nudge
 *   on each side, so nudge's waste or use comes as two pairs with different
 *   call paths; the checks sum the pairs that match a function.)
 *
 * Sampling by CPU time: exact and nudge are the same loop body (one LCG
 * step per store, ka.h; the convert and multiply are off the LCG's latency
 * chain) over arrays of equal size, so equal time per store, equal samples
 * and the same single steps per sample; their watchpoints trap one
 * repetition later, at the same element, so reservoir survival and
 * proportional attribution (4.4.2) treat them alike.  The final sum has no
 * store and ~0.3% of the time.  Expected values +- 0.1.
 * Size: as in silent_refresh.c, a repetition (~2.4 ms, ~5 sampling periods
 * at WITCH_RATE=2000) short enough that many watchpoints trap.
 * Measured natively (--phase-times, 240 reps): exact 0.280 s, nudge
 * 0.280 s of CPU (1.11 ns per store each); the final sum 0.002 s.
 *
 * Build: -O2 -g -fno-inline -fno-tree-vectorize
 * -fno-tree-loop-distribute-patterns; one scalar 8-byte `movsd %xmm,(mem)`
 * store per element in exact and nudge (objdump: `movsd %xmm1,-0x8(%rdi)`),
 * so the trapping instruction's element type is double, which is what makes
 * the runtime apply the FP tolerance.
 *
 * Usage: silent_fp [REPS] [--phase-times]   default REPS = 240 (~0.6 s)
 */
#include "ka.h"

#define N (1u << 20)
#define SA 777u
#define SB 999u

static double *a, *b;

/* One body for both functions, so their time per store is the same; only
 * the factor the caller passes differs. */
#define STORE_LOOP(p, v, f)                                           \
	for (uint32_t i = 0; i < N; i++) {                            \
		KA_LCG(v);                                            \
		(p)[i] = (double)KA_HI(v) * (f);                      \
	}

KA_FN void exact(double *p, uint64_t v, double f) { STORE_LOOP(p, v, f) }
KA_FN void nudge(double *p, uint64_t v, double f) { STORE_LOOP(p, v, f) }

KA_FN double sum(const double *p)
{
	double s = 0;
	for (uint32_t i = 0; i < N; i++)
		s += p[i];
	return s;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 240);
	int times = ka_want_times(argc, argv);
	double t[3] = {0, 0, 0}, t0 = 0;

	a = ka_alloc((size_t)N * sizeof *a);
	b = ka_alloc((size_t)N * sizeof *b);
	for (long r = 0; r < reps; r++) {
		if (times) t0 = ka_now();
		exact(a, SA, 1.0);
		if (times) { t[0] += ka_now() - t0; t0 = ka_now(); }
		nudge(b, SB, (r & 1) ? 1.001 : 1.0);
		if (times) t[1] += ka_now() - t0;
	}
	if (times) t0 = ka_now();
	double s = sum(a) + 3 * sum(b);
	if (times) t[2] += ka_now() - t0;
	uint64_t bits;
	memcpy(&bits, &s, sizeof bits);
	printf("silent_fp reps=%ld n=%u checksum=%016llx\n", reps, N,
	       (unsigned long long)bits);
	if (times)
		fprintf(stderr, "cpu s: exact %.3f nudge %.3f sum %.3f\n",
			t[0], t[1], t[2]);
	return 0;
}
