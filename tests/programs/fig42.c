/* fig42: dead writes to a[], b[] and x in ratio 3:2:1 (Witch, Figure 4.2).
 *
 *   U = 1M (2^20) elements; s[] is a 1024-int scratch array.  Per repetition:
 *     dead_a(a); kill_a(a); use_a(a)      a[] has 3U ints (12 MiB)
 *     dead_b(b); kill_b(b); use_b(b)      b[] has 2U ints ( 8 MiB)
 *     1024 x { dead_x(x); kill_x(x); use_x(x) }
 *                                         x[] has 1024 ints (4 KiB, in L1)
 *   dead_F(p): for each i: p[i] = lcg                         (store only)
 *   kill_F(p): for each i: p[i] = lcg                         (store only)
 *   use_F(p):  for each i: s[i%1024] = lcg + p[i] + s[i%1024] (2 loads, 1 store)
 *
 * DeadSpy definitions (a store is dead iff the next access to the same bytes
 * is a store):
 *   - dead_F's store to p[i]: next access is kill_F's store -> dead.
 *     Waste, pair <dead_F, kill_F>: 3U (a), 2U (b), 1U (x) per repetition.
 *   - kill_F's store to p[i]: next access is use_F's load -> used.
 *     Use, pair <kill_F, use_F>: 6U per repetition.
 *   - use_F's store to s[j]: next access is the load of s[j] 1024 elements
 *     later (in the same use_F, or the next use_* call) -> used.
 *     Use, pairs <use_F, use_F'>: 6U per repetition.
 *   So: stores 6U dead + 12U used, fraction = 6/18 = 0.333; waste shares
 *   <dead_a,kill_a> 3/6 = 0.50, <dead_b,kill_b> 2/6 = 0.33,
 *   <dead_x,kill_x> 1/6 = 0.17; top pair <dead_a, kill_a>.
 *
 * Why use_F stores (to s[]) instead of just summing: a store-free loop gets
 * CPU time but no store; where its ticks go (dropped after the runtime's
 * step budget, or carried to the next store) would change the weights.  And
 * why a use right after each kill: proportional attribution (4.4.2) credits
 * a context's samples at its next trap, so samples taken after a context's
 * last trap are never credited.  If kill_a's stores were only read in the
 * next repetition, kill_a's watchpoints would have to survive the b and x
 * phases (~60 samples of reservoir replacement) and its uncredited tail
 * would inflate the fraction (0.51-0.59 measured with such a layout, and far
 * worse with one debug register).  Here every watchpoint traps within one
 * phase.
 *
 * Sampling by CPU time: every loop has the same latency chain per store,
 * three dependent LCG steps (ka.h; use_F's loads are off the chain), so time
 * per store is equal in all nine functions whether the array is in L1 (x)
 * or not (a, b), and samples split like the stores.  The interesting part is the monitoring density
 * (4.4.2): a watchpoint on x traps within microseconds (dense), one on a[]
 * waits up to ~3.5 ms for kill_a to reach it (sparse: 4 debug registers for
 * ~7 samples per phase).  Without proportional attribution x's pair would
 * dominate; with mu - eta the shares come out 0.50/0.33/0.17 (+-0.1).
 * Measured natively (--phase-times, 8 reps): a 0.249 s, b 0.166 s, x
 * 0.083 s of CPU (3:2:1); dead_a, kill_a, use_a 0.084, 0.083, 0.084 s.
 *
 * Build: -O2 -g -fno-inline -fno-tree-vectorize
 * -fno-tree-loop-distribute-patterns; one scalar 4-byte store per element
 * (and two 4-byte loads in use_F), checked with objdump.
 *
 * Usage: fig42 [REPS] [--phase-times]     default REPS = 8 (~0.5 s)
 */
#include "ka.h"

#define U (1u << 20)
#define NA (3 * U)
#define NB (2 * U)
#define XLEN 1024u
#define XCHUNKS (U / XLEN)
#define SLEN 1024u

static uint32_t *a, *b;
static uint32_t x[XLEN];
static uint32_t s[SLEN];

/* Three dependent LCG steps (~12 cycles) per store: long enough that the
 * latency chain, not the loop's instruction count, sets the time per store
 * in both loop shapes (with one step, use loops ran 15-25% slower per store
 * than store loops: 2 loads and more instructions per iteration). */
#define STEP3(v) do { KA_LCG_OPAQUE(v); KA_LCG_OPAQUE(v); KA_LCG_OPAQUE(v); } while (0)

/* The loop bodies; the functions differ only in name and length, and noipa
 * (KA_FN) keeps them apart.  n is a multiple of SLEN. */
#define STORE_LOOP(p, n, v)                                   \
	for (uint32_t i = 0; i < (n); i++) {                  \
		STEP3(v);                                     \
		(p)[i] = KA_HI(v);                            \
	}
#define USE_LOOP(p, n, v)                                     \
	for (uint32_t b = 0; b < (n); b += SLEN)              \
		for (uint32_t j = 0; j < SLEN; j++) {         \
			uint32_t in = KA_LOAD(p, b + j);      \
			uint32_t acc = KA_LOAD(s, j);         \
			STEP3(v);                             \
			s[j] = KA_HI(v) + in + acc;           \
		}

KA_FN uint64_t dead_a(uint32_t *p, uint64_t v) { STORE_LOOP(p, NA, v) return v; }
KA_FN uint64_t kill_a(uint32_t *p, uint64_t v) { STORE_LOOP(p, NA, v) return v; }
KA_FN uint64_t use_a(const uint32_t *p, uint64_t v) { USE_LOOP(p, NA, v) return v; }
KA_FN uint64_t dead_b(uint32_t *p, uint64_t v) { STORE_LOOP(p, NB, v) return v; }
KA_FN uint64_t kill_b(uint32_t *p, uint64_t v) { STORE_LOOP(p, NB, v) return v; }
KA_FN uint64_t use_b(const uint32_t *p, uint64_t v) { USE_LOOP(p, NB, v) return v; }
KA_FN uint64_t dead_x(uint32_t *p, uint64_t v) { STORE_LOOP(p, XLEN, v) return v; }
KA_FN uint64_t kill_x(uint32_t *p, uint64_t v) { STORE_LOOP(p, XLEN, v) return v; }
KA_FN uint64_t use_x(const uint32_t *p, uint64_t v) { USE_LOOP(p, XLEN, v) return v; }

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 8);
	int times = ka_want_times(argc, argv);
	double t[3] = {0, 0, 0}, t0 = 0;
	uint64_t v = 1;

	a = ka_alloc((size_t)NA * sizeof *a);
	b = ka_alloc((size_t)NB * sizeof *b);
	for (long r = 0; r < reps; r++) {
		if (times) t0 = ka_now();
		v = dead_a(a, v);
		v = kill_a(a, v);
		v = use_a(a, v);
		if (times) { t[0] += ka_now() - t0; t0 = ka_now(); }
		v = dead_b(b, v);
		v = kill_b(b, v);
		v = use_b(b, v);
		if (times) { t[1] += ka_now() - t0; t0 = ka_now(); }
		for (uint32_t c = 0; c < XCHUNKS; c++) {
			v = dead_x(x, v);
			v = kill_x(x, v);
			v = use_x(x, v);
		}
		if (times) t[2] += ka_now() - t0;
	}
	printf("fig42 reps=%ld checksum=%016llx\n", reps, (unsigned long long)v);
	if (times)
		fprintf(stderr, "cpu s: a %.3f b %.3f x %.3f (expect 3:2:1)\n",
			t[0], t[1], t[2]);
	return 0;
}
