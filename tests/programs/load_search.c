/* load_search: half of all loads are redundant (a search of a constant table).
 *
 *   t[], d[]: N = 1M ints each (4 MiB each).  Once: init(t):
 *   t[i] = lcg_i(ST) & 0x7fffffff.  Per repetition r = 0..R-1:
 *     search(t, ST, KEY)  for i < N: if ((t[i] ^ lcg_i(ST)) == KEY) return i
 *     rewrite(d, S_r)     d[i] = lcg_i(S_r)       S_r = 2r+1  (stores only)
 *     total += scan(d)    s += d[i] ^ lcg_i(SD)   (SD fixed)
 *   (lcg_i(S): the high half of the i-th step of ka.h's LCG from seed S.)
 *   t[i] ^ lcg_i(ST) is 0 or 0x80000000, never KEY = 1: every search loads
 *   all N elements and returns N.
 *
 * LoadCraft definitions (a load is redundant iff the next load of the same
 * bytes reads the value it read; stores in between are not verdicts):
 *   - search's load of t[i] in repetition r: nothing stores to t[] after
 *     init; the next load of t[i] is search's in r+1, the same value:
 *     waste, pair <search, search>.
 *   - scan's load of d[i] in r: next comes rewrite's store to d[i] in r+1
 *     (a trap, no verdict), then scan's load in r+1, which reads the new
 *     lcg_i(S_{r+1}) != lcg_i(S_r) (equal with probability ~2^-32): use,
 *     pair <scan, scan>.  So scan's watchpoints decide only in scan.
 *   - rewrite and init have no loads; the last repetition's loads have no
 *     next load.  Other loads (ret, pops in main) are a handful.
 *   Loads: R*N search (waste) + R*N scan (use) => fraction = 0.5; the only
 *   waste pair is <search, search> (share 1.0), the top pair; every pair
 *   watched in scan has its trap in scan.
 *
 * Sampling by CPU time: the sampler takes the next load after each tick.
 * search and scan have one LCG step (~4 cycles of latency, ka.h) on the
 * loop-carried chain per element and one 4-byte load off it, so equal time
 * per load and equal samples.  rewrite (a third of the time) has no loads:
 * the load client skips its ticks, so they count for neither.  Watchpoints
 * of both search and scan decide one repetition later, at the same element,
 * so reservoir survival and proportional attribution (4.4.2) treat them
 * alike.  Expected 0.5 +- 0.1.
 * Under the profiler: a tick that lands after the load must single-step
 * round the loop to it, and gcc lays the two loops out differently, so
 * search needs ~6.7 steps per sample and scan ~4.8 (WITCH_VERBOSE=2).
 * Steps run on the thread's CPU clock; the runtime restarts the sampling
 * interval when stepping ends so they do not pull the next tick earlier
 * (before it did, search got ~53% of the samples and the fraction read
 * 0.52-0.55; now 0.51-0.53).
 * Size: as in silent_refresh.c, a repetition (~3.4 ms, ~5 load samples at
 * WITCH_RATE=2000) short enough that many watchpoints decide; with 8M
 * elements a run had ~25 deciding traps and one run of eleven gave 0.32.
 * Measured natively (--phase-times, 160 reps): search 0.203 s, rewrite
 * 0.184 s, scan 0.199 s of CPU (1.21 and 1.19 ns per load); init 0.001 s.
 *
 * Build: -O2 -g -fno-inline -fno-tree-vectorize
 * -fno-tree-loop-distribute-patterns; KA_LOAD gives one scalar 4-byte
 * `mov (mem),%reg` load per element in search and scan (`mov (%rdx),%eax`,
 * `mov (%rdi),%eax`; never folded into another instruction; gcc peels
 * search's first iteration, whose load is a copy of its own), one scalar
 * store per element in rewrite and init, and no other memory access in
 * these loops (objdump).
 *
 * Usage: load_search [REPS] [--phase-times]   default REPS = 160 (~0.6 s)
 */
#include "ka.h"

#define N (1u << 20)
#define ST 4242u
#define SD 31337u
#define KEY 1u

static uint32_t *t, *d;

#include "load_kernels.h"

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 160);
	int times = ka_want_times(argc, argv);
	double tm[4] = {0, 0, 0, 0}, t0 = 0;
	uint64_t total = 0;

	t = ka_alloc((size_t)N * sizeof *t);
	d = ka_alloc((size_t)N * sizeof *d);
	if (times) t0 = ka_now();
	init(t, ST);
	if (times) tm[3] += ka_now() - t0;
	for (long r = 0; r < reps; r++) {
		if (times) t0 = ka_now();
		total += search(t, ST, KEY);
		if (times) { tm[0] += ka_now() - t0; t0 = ka_now(); }
		rewrite(d, 2 * (uint64_t)r + 1);
		if (times) { tm[1] += ka_now() - t0; t0 = ka_now(); }
		total += scan(d, SD);
		if (times) tm[2] += ka_now() - t0;
	}
	printf("load_search reps=%ld n=%u checksum=%016llx\n", reps, N,
	       (unsigned long long)total);
	if (times)
		fprintf(stderr, "cpu s: search %.3f rewrite %.3f scan %.3f init %.3f\n",
			tm[0], tm[1], tm[2], tm[3]);
	return 0;
}
