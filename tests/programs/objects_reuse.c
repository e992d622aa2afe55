/* objects_reuse: one piece of memory, two heap objects one after the other
 * (data-centric attribution: the object is the block live when the watched
 * access was made, docs/objects.md "at sample time: the block live then").
 *
 *   n = 16 Ki ints (64 KiB, below glibc's mmap threshold, fixed by mallopt);
 *   V = the lcg values of repetition r (seed 2r+1), V[i] at element i.
 *   Per repetition:
 *     p = alloc_a()                 site A: "heap from alloc_a (objects_reuse.c:L)"
 *     fill_a_lo     p[0, n/2)    = V     A's stores
 *     fill_a_hi     p[n/2, n)    = V
 *     sum_a         loads p[n/2, n)
 *     free(p); q = alloc_b()        site B: "heap from alloc_b (objects_reuse.c:L)"
 *                                   q == p, checked: exit 66 if not
 *     fill_b_lo     q[0, n/4)    = V     B's stores: the values A stored
 *     fill_b_hi     q[n/4, n)    = V
 *     refill_b      q[0, n/4)    = V     the same values again
 *     sum_b_lo      loads q[0, n/4)
 *     sum_b_hi      loads q[n/4, n)
 *     sum_b2        loads q[0, n/4) again
 *     free(q)
 *   Nothing is allocated between free(p) and alloc_b(): glibc hands the same
 *   chunk back (it went back to the top chunk; M_TRIM_THRESHOLD keeps the
 *   top from being trimmed and refaulted every repetition), and so does
 *   Valgrind's allocator under witch-oracle.
 *
 * The object of a decision is the watched (earlier) access's, at the time it
 * was made: A's stores and loads stay A's after the free, when B's accesses
 * decide them.  Every function's accesses get one verdict per client, so
 * proportional attribution (Witch 4.4.2: a trap takes its context's whole
 * weight) has no early verdict to over-credit.
 *
 * dead (a store whose next access is a store):
 *   fill_a_lo  next: fill_b_lo/hi's store   waste n/2, object A
 *   fill_a_hi  next: sum_a's load           use
 *   fill_b_lo  next: refill_b's store       waste n/4, object B
 *   fill_b_hi  next: sum_b_hi's load        use
 *   refill_b   next: sum_b_lo's load        use
 *   Waste 3n/4 of 9n/4 stored: fraction 1/3; waste shares
 *       heap from alloc_a 0.667, heap from alloc_b 0.333
 * silent (the next store to the same bytes writes the same value):
 *   fill_a_lo/hi  next: B's stores, the same V        waste n,   object A
 *   fill_b_lo     next: refill_b, the same V          waste n/4, object B
 *   fill_b_hi, refill_b  next: repetition r+1's fill_a, other values: use
 *   Fraction 5/9 (R reps: 1.25R / (2.25R - 1)); waste shares
 *       heap from alloc_a 0.8, heap from alloc_b 0.2
 * load (the next load of the same bytes reads the same value):
 *   sum_a     next: sum_b_hi, the same V             waste n/2, object A
 *   sum_b_lo  next: sum_b2, the same V               waste n/4, object B
 *   sum_b_hi, sum_b2  next: repetition r+1's loads, other values: use
 *   Fraction 3/7 (0.4286); waste shares
 *       heap from alloc_a 0.667, heap from alloc_b 0.333
 * The allocator's own bookkeeping (chunk headers, outside the blocks), the
 * calls' stack traffic and the start-up's accesses are a few hundred bytes
 * per repetition against 36n: below 0.01 of any share.
 *
 * Sampling by CPU time: every store loop has the same shape (one LCG step,
 * ~4 cycles, per 4-byte store, ka.h), and every load loop, so samples
 * split like the bytes.  The lcg state at element n/4 or n/2 is computed by
 * jumping (lcg_at), outside the loops.
 *
 * Usage: objects_reuse [REPS]     default REPS = 8000 (~0.5 s, as dead_two_loops)
 * Exit 66: the second allocation did not get the first's address (the
 * answer above would not hold).
 */
#include <malloc.h>

#include "ka.h"

#define N (16u << 10)

/* The store loops: one LCG step per element from state v (ka.h). */
#define STORE_FN(name)                                              \
	KA_FN void name(uint32_t *p, uint32_t n, uint64_t v)        \
	{                                                           \
		for (uint32_t i = 0; i < n; i++) {                  \
			KA_LCG(v);                                  \
			p[i] = KA_HI(v);                            \
		}                                                   \
	}
#define SUM_FN(name)                                                \
	KA_FN uint64_t name(const uint32_t *p, uint32_t n)          \
	{                                                           \
		uint64_t s = 0;                                     \
		for (uint32_t i = 0; i < n; i++)                    \
			s += KA_LOAD(p, i);                         \
		return s;                                           \
	}

STORE_FN(fill_a_lo)
STORE_FN(fill_a_hi)
STORE_FN(fill_b_lo)
STORE_FN(fill_b_hi)
STORE_FN(refill_b)
SUM_FN(sum_a)
SUM_FN(sum_b_lo)
SUM_FN(sum_b_hi)
SUM_FN(sum_b2)

/* The lcg state after k steps from v (the affine map squared up): element
 * k's stores continue the sequence element 0's started. */
static uint64_t lcg_at(uint64_t v, uint64_t k)
{
	uint64_t a = KA_LCG_A, c = KA_LCG_C, ra = 1, rc = 0;
	for (; k; k >>= 1) {
		if (k & 1) {
			ra *= a;
			rc = rc * a + c;
		}
		c *= a + 1;
		a *= a;
	}
	return ra * v + rc;
}

/* The two allocation sites. */
KA_FN uint32_t *alloc_a(void)
{
	uint32_t *p = malloc(N * sizeof(uint32_t));
	KA_NO_TAIL(p);
	return p;
}

KA_FN uint32_t *alloc_b(void)
{
	uint32_t *p = malloc(N * sizeof(uint32_t));
	KA_NO_TAIL(p);
	return p;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 8000);
	uint64_t total = 0;

	/* A fixed mmap threshold (no dynamic raise) and no trimming: the
	 * chunk goes back to the top and comes back at the same address. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	for (long r = 0; r < reps; r++) {
		uint64_t seed = 2 * (uint64_t)r + 1;
		uint64_t at_quarter = lcg_at(seed, N / 4), at_half = lcg_at(seed, N / 2);
		uint32_t *p = alloc_a();
		if (!p)
			return 2;
		fill_a_lo(p, N / 2, seed);
		fill_a_hi(p + N / 2, N / 2, at_half);
		total += sum_a(p + N / 2, N / 2);
		uintptr_t was = (uintptr_t)p;
		free(p);
		uint32_t *q = alloc_b();
		if ((uintptr_t)q != was) {
			fprintf(stderr, "objects_reuse: the second block is at %#lx, the first was at %#lx\n",
				(unsigned long)(uintptr_t)q, (unsigned long)was);
			return 66;
		}
		fill_b_lo(q, N / 4, seed);
		fill_b_hi(q + N / 4, 3 * N / 4, at_quarter);
		refill_b(q, N / 4, seed);
		total += sum_b_lo(q, N / 4);
		total += sum_b_hi(q + N / 4, 3 * N / 4);
		total += sum_b2(q, N / 4);
		free(q);
	}
	printf("objects_reuse reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	return 0;
}
