/* dead_two_loops: half of all stores are dead (Witch listing 4.2, repeated).
 *
 *   for r in 1..R:
 *     fill(a)       a[i] = lcg   for all i < N    N = 16M ints = 64 MiB (> 32 MiB L3)
 *     overwrite(a)  a[i] = lcg   for all i < N
 *     total += sum(a)            loads every a[i]
 *
 * DeadSpy definitions (a store is dead iff the next access to the same bytes
 * is a store):
 *   - fill's store to a[i]: next access is overwrite's store to a[i] -> dead.
 *     Every one of them: waste, pair <fill, overwrite>.
 *   - overwrite's store to a[i]: next access is sum's load of a[i] -> used.
 *     Every one of them: use, pair <overwrite, sum>.
 *   - sum has no stores.  The only other stores are a handful per repetition
 *     (call/return-address pushes in main), negligible.
 *   Stores: R*N dead + R*N used => fraction = 0.5.
 *   Waste pairs: only <fill, overwrite> (share 1.0), which is the top pair.
 *
 * Sampling by CPU time: a store is sampled with probability proportional to
 * the time since the previous store.  fill and overwrite run the identical
 * loop (one LCG step, ~4 cycles of latency, per store; see ka.h) over the
 * same array, so they get equal time and equal samples: mu(fill) ~ mu(overwrite)
 * and, since every watchpoint from either trap (every later phase touches
 * every element), waste ~ use.  sum() runs ~10-20% of the time with no store
 * at all.  A tick landing there either exhausts the runtime's step budget
 * (sample dropped -> fraction 0.5) or, if carried forward, lands on the first
 * store after sum (main's `call fill` return-address push, a use) -> fraction
 * t_fill / (t_fill + t_over + t_sum) ~ 0.43.  Expected: 0.5 +- 0.1 either way.
 * Measured natively (--phase-times, 10 reps): fill 0.184 s, overwrite
 * 0.184 s, sum 0.058 s of CPU.
 *
 * Build: -O2 -g -fno-inline -fno-tree-vectorize
 * -fno-tree-loop-distribute-patterns (see CMakeLists.txt): one scalar 4-byte
 * `mov %reg,(mem)` store per element in fill and overwrite (checked with
 * objdump), one scalar load per element in sum.
 *
 * Usage: dead_two_loops [REPS] [--phase-times]     default REPS = 10 (~0.5 s)
 */
#include "ka.h"

#define N (16u << 20)

static uint32_t *a;

#include "dead_loops.h"

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 10);
	int times = ka_want_times(argc, argv);
	double t[3] = {0, 0, 0}, t0 = 0;
	uint64_t total = 0;

	a = ka_alloc((size_t)N * sizeof *a);
	for (long r = 0; r < reps; r++) {
		if (times) t0 = ka_now();
		fill(a, 2 * (uint64_t)r + 1);
		if (times) { t[0] += ka_now() - t0; t0 = ka_now(); }
		overwrite(a, 2 * (uint64_t)r + 2);
		if (times) { t[1] += ka_now() - t0; t0 = ka_now(); }
		total += sum(a);
		if (times) t[2] += ka_now() - t0;
	}
	printf("dead_two_loops reps=%ld n=%u checksum=%016llx\n", reps, N,
	       (unsigned long long)total);
	if (times)
		fprintf(stderr, "cpu s: fill %.3f overwrite %.3f sum %.3f\n",
			t[0], t[1], t[2]);
	return 0;
}
