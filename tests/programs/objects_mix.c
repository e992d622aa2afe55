/* objects_mix: the same code wastes on three objects in known proportions
 * (data-centric attribution, docs/objects.md).
 *
 *   U = 64 Ki ints.  Three objects:
 *     frames  5U ints (1.25 MiB), malloc'd in alloc_frames -> "heap from alloc_frames (objects_mix.c:L)"
 *     index   3U ints (768 KiB), malloc'd in alloc_index  -> "heap from alloc_index (objects_mix.c:L)"
 *     table   2U ints (512 KiB), a static array (.bss)    -> "table"
 *   Per repetition r, for each object X (frames, index, table) in turn:
 *     fill(X)     X[i] = lcg from seed 2r+1       (store only)
 *     refill(X)   X[i] = lcg from seed 2r+1       (the same values again)
 *     sum(X)      loads every X[i]
 *     sum(X)      loads every X[i] again
 *   fill, refill and sum are one function each, called on all three objects
 *   (through one_object, from three lines of main): the pairs' leaves are
 *   the same for all three, the objects list tells them apart.
 *
 * dead (DeadSpy: a store whose next access is a store):
 *   fill's store to X[i] is next stored by refill: waste, pair <fill, refill>,
 *   object X (the watched store's).  refill's store is next loaded by sum:
 *   use.  Per repetition waste 4 n_X bytes per object, use as much: fraction
 *   0.5; waste shares n_X / 10U:
 *       frames 0.5, index 0.3, table 0.2
 * silent (the next store to the same bytes writes the same value):
 *   refill writes what fill wrote: waste, pair <fill, refill>, object X.
 *   fill writes seed 2r+1's values over repetition r-1's: use (the first
 *   repetition's fill has no earlier store: undecided).  Fraction 0.5 (R
 *   reps: R / (2R - 1)); waste shares 0.5 / 0.3 / 0.2.
 * load (the next load of the same bytes reads the same value):
 *   the second sum reads what the first read: waste, pair <sum, sum>,
 *   object X.  The first sum reads the new repetition's values: use (the
 *   first repetition's: undecided).  Fraction 0.5 (R reps: R / (2R - 1));
 *   waste shares 0.5 / 0.3 / 0.2.
 * Each function's accesses get one verdict per client, so proportional
 * attribution (Witch 4.4.2) credits them without bias; the uses decide a
 * repetition later, so a run's last uncredited samples lean its fraction
 * up (by count at 24 repetitions: silent 0.55-0.64, load 0.67-0.71), not
 * its waste shares.
 * The other accesses (libc start-up, printf, a few return-address pushes)
 * are a few KiB against 10U x 16 bytes per repetition: below 0.001.
 *
 * Sampling by CPU time: every store loop is the same function (one LCG step,
 * ~4 cycles, per 4-byte store, ka.h) and every load loop too, whatever the
 * object, so time per byte is the same for all three and the samples split
 * like the bytes.  Pages are faulted in before the first repetition
 * (MADV_POPULATE_WRITE, no user store) so the first fill is not slower on
 * the heap blocks than later ones.
 *
 * Build: KA_FLAGS (tests/programs/CMakeLists.txt): one scalar 4-byte store
 * per element in fill and refill, one 4-byte load per element in sum.
 *
 * Usage: objects_mix [REPS]     default REPS = 224 (~0.5 s, as dead_two_loops)
 */
#include "ka.h"
#include "objects_kernels.h"

#define U (64u << 10)
#define N_FRAMES (5 * U)
#define N_INDEX (3 * U)
#define N_TABLE (2 * U)

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

uint32_t table[N_TABLE];


/* Fault the pages in without a user store (best effort: an old kernel
 * without MADV_POPULATE_WRITE only costs the first fill some time). */
static void prefault(void *p, size_t bytes)
{
	uintptr_t lo = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
}

/* The two allocation sites: each its own call of malloc. */
KA_FN uint32_t *alloc_frames(void)
{
	uint32_t *p = malloc((size_t)N_FRAMES * sizeof(uint32_t));
	KA_NO_TAIL(p);
	return p;
}

KA_FN uint32_t *alloc_index(void)
{
	uint32_t *p = malloc((size_t)N_INDEX * sizeof(uint32_t));
	KA_NO_TAIL(p);
	return p;
}

KA_FN uint64_t one_object(uint32_t *p, uint32_t n, uint64_t seed)
{
	fill(p, n, seed);
	refill(p, n, seed);
	return sum(p, n) + sum(p, n);
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 224);
	uint32_t *frames = alloc_frames(), *index = alloc_index();
	uint64_t total = 0;

	if (!frames || !index) {
		fprintf(stderr, "objects_mix: out of memory\n");
		return 2;
	}
	prefault(frames, (size_t)N_FRAMES * sizeof(uint32_t));
	prefault(index, (size_t)N_INDEX * sizeof(uint32_t));
	prefault(table, sizeof(table));
	for (long r = 0; r < reps; r++) {
		uint64_t seed = 2 * (uint64_t)r + 1;
		total += one_object(frames, N_FRAMES, seed);
		total += one_object(index, N_INDEX, seed);
		total += one_object(table, N_TABLE, seed);
	}
	printf("objects_mix reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	free(index);
	free(frames);
	return 0;
}
