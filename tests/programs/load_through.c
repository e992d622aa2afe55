/* load_through: loads whose next load comes a few instructions later with
 * a store between, and a counter's read-modify-write: the run ahead
 * decides both (sample.c: LoadCraft follows a store's bytes to the next
 * load, craft.h traced_through; a read-modify-write sample leaves what it
 * stored, which the next load reads back).
 *
 *   a[]: N = 256K 8-byte words; c: one 8-byte counter.  Per repetition,
 *   walk(a, &c): for i < N:
 *       v = first(a, i)          a load of a[i]                  (in first)
 *       put(a, i, v + (i & 1))   a store: the same value when i is even
 *       s += second(a, i)        a load of a[i]                  (in second)
 *       bump(&c)                 `addq $1, (c)`: a load and a store (in bump)
 *   first, second, put and bump are leaf functions called from walk.
 *
 * LoadSpy definitions (a load is redundant iff the previous load of its
 * bytes read the same value), each sampled load judged by the next load of
 * its bytes, the pair <the sampled load, that next load>:
 *   - first's load of a[i]: the next is second's; put stored between, the
 *     same value for even i (waste), another for odd (use): <first, second>.
 *   - second's load of a[i]: the next is first's in the next repetition,
 *     nothing stored between: waste, <second, first>.
 *   - bump's load of c: the next is the next bump's, which reads what this
 *     one stored, one more: use, <bump, bump>.
 *   Per element 8 + 8 + 8 = 24 bytes loaded, 4 + 8 = 12 of them waste:
 *   fraction 0.5; waste pairs <second, first> 8/12 = 0.667 (the top) and
 *   <first, second> 4/12 = 0.333.
 *
 * With the run-ahead alone (WITCH_WATCHPOINTS=window): first's verdicts
 * come a few instructions on, past put's store, whose value the run
 * ahead knows; bump's at the next bump, some 20 instructions on; second's
 * only a whole array later, out of reach.  Decided: 8 (first, 4 waste) +
 * 8 (bump, use) of the 24 bytes: fraction 4/16 = 0.25, the one waste pair
 * <first, second> (share 1.0), the verdicts covering 16/24 = 0.667.
 * Judged by the sample's loaded value alone (the old rule: no store
 * between, or none followed), bump read as waste: fraction 12/16.
 *
 * Build: as the other known-answer programs (-O2 -fno-inline, KA_FN).
 *
 * Usage: load_through [REPS]   default REPS = 300 (0.13-0.5 s on the VMs seen)
 */
#include "ka.h"

#define N (1u << 18)

KA_FN static uint64_t first(const uint64_t *a, uint64_t i)
{
	return ((const volatile uint64_t *)a)[i];
}

KA_FN static void put(uint64_t *a, uint64_t i, uint64_t v)
{
	((volatile uint64_t *)a)[i] = v;
}

KA_FN static uint64_t second(const uint64_t *a, uint64_t i)
{
	return ((const volatile uint64_t *)a)[i];
}

KA_FN static void bump(uint64_t *c)
{
	__asm__ volatile("addq $1, %0" : "+m"(*c));
}

KA_FN static uint64_t walk(uint64_t *a, uint64_t *c)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < N; i++) {
		uint64_t v = first(a, i);
		put(a, i, v + (i & 1));
		s += second(a, i);
		bump(c);
	}
	return s;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 300);
	uint64_t *a = ka_alloc(N * sizeof(uint64_t));
	uint64_t *c = ka_alloc(sizeof(uint64_t));
	uint64_t total = 0;
	for (long r = 0; r < reps; r++)
		total += walk(a, c);
	printf("load_through reps=%ld total=%016llx count=%llu\n", reps,
	       (unsigned long long)total, (unsigned long long)*c);
	return 0;
}
