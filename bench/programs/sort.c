/* sort: sorting 64-byte records two ways and checking that they agree.
 *
 * Why it is realistic: records shaped like log or ledger entries (a
 * timestamp-like key, an id, a group, an amount and a name) arrive nearly
 * in key order: most are a few positions late (jitter) and about 1% are
 * far out of place.  A stable bottom-up merge sort, as found in many
 * libraries, sorts one copy: insertion sort of runs of 8, then passes that
 * merge neighbouring runs into a scratch buffer and copy them back.  glibc's
 * qsort sorts another copy with the same comparator (called through a
 * pointer by both), and a verification pass checks the order and that both
 * results are identical.  SCALE multiplies the rounds; each round makes new
 * records from its own seed.
 *
 * Wasted operations by design (rough shares; the oracle measures them):
 *  - dead stores:
 *    * merge_sort_records clears its scratch buffer (memset) before the
 *      first pass; every byte is then written by merge_runs before any
 *      read.
 *    * generate_records zeroes each record before filling it; the fields
 *      are then written without a read in between.
 *    * glibc's qsort (2.36) sorts elements over 32 bytes through an array
 *      of pointers and then moves the records into place with 64-byte
 *      memcpy calls.  On a CPU with AVX-512 that memcpy stores the same 64
 *      bytes twice (two overlapping vectors; the first dead, the second
 *      silent), which can dominate both clients here.  The AVX2 memcpy
 *      that glibc picks without AVX-512 (as under Valgrind, which has no
 *      AVX-512) does not, so compare like with like.
 *    Without qsort's share, a small fraction of the stores.
 *  - silent stores:
 *    * sort_small_runs writes the current record back into its slot even
 *      when it did not move (the input is nearly sorted, so often).
 *    * merge_runs has no "runs already in order" shortcut: it still merges
 *      into the scratch buffer and copies back, so already-ordered runs are
 *      written back over themselves, and the scratch slots are rewritten
 *      with what the previous pass put there.  Mostly in the early passes.
 *    * generate_records' memset of the name tail (zeros over zeros).
 *    Probably the largest client here, a large fraction of the stores.
 *  - redundant loads:
 *    * compare_records is called in merge_runs on the record that lost the
 *      previous comparison again, reloading its key and id; the same in
 *      qsort (glibc's qsort is a merge sort too).
 *    * verify_sorted reloads each record compared in the previous step.
 *
 * Calling contexts: glibc's qsort is a recursive merge sort
 * (msort_with_tmp) with two recursive call sites, so every subarray it
 * sorts has a calling context of its own, some 2 x NRECORDS of them.  A
 * sampler sees few of them; a profiler that keeps every pair of contexts
 * gets millions of pairs (the oracle wrote 41 GB of JSON for SCALE 1).
 *
 * Usage: sort [SCALE]     (SCALE >= 1, default 1: about 0.5 s natively)
 *
 * Kernels are noinline, for stable calling contexts, and noclone: without
 * it GCC specialises some into name.constprop.0 clones, and reports would
 * not show the names used here.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define NRECORDS (1u << 16)     /* 4 MiB per copy, four copies */
#define SMALL_RUN 8             /* insertion-sorted before merging */
#define ROUNDS_PER_SCALE 40

struct record {
	uint64_t key;   /* timestamp-like; duplicates happen */
	uint32_t id;    /* unique: breaks ties, so the order is total */
	uint32_t group;
	double amount;
	char name[40];
};
_Static_assert(sizeof(struct record) == 64, "a record is one cache line");

typedef int (*record_cmp)(const struct record *, const struct record *);

/* Kept out of line: both sorts call it through a pointer, as a generic
 * sort library would. */
__attribute__((noinline, noclone)) static int
compare_records(const struct record *a, const struct record *b)
{
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return 0;
}

static int compare_records_qsort(const void *a, const void *b)
{
	return compare_records(a, b);
}

__attribute__((noinline, noclone)) static void
generate_records(struct record *recs, size_t n)
{
	static const char *const groups[] = {
		"north", "south", "east", "west", "central", "online", "retail",
		"wholesale",
	};
	uint64_t clock = 1700000000000ULL;
	for (size_t i = 0; i < n; i++) {
		struct record *r = &recs[i];
		memset(r, 0, sizeof *r); /* no stale bytes in padding or name */
		uint64_t x = bench_next();
		clock += 8;
		if (x % 100 == 0) /* a late arrival: far out of place */
			r->key = clock - (bench_next() % (8ULL * n));
		else              /* a few positions out of place at most */
			r->key = clock + (x >> 8) % 24;
		r->id = (uint32_t)i;
		r->group = (uint32_t)((x >> 40) % 8);
		r->amount = (double)((x >> 20) % 100000) / 100.0;
		snprintf(r->name, sizeof r->name, "%s-%06u", groups[r->group],
			 (unsigned)(x >> 44) % 1000000u);
	}
}

/* Straight insertion sort of each SMALL_RUN-record run. */
__attribute__((noinline, noclone)) static void
sort_small_runs(struct record *a, size_t n, record_cmp cmp)
{
	for (size_t lo = 0; lo < n; lo += SMALL_RUN) {
		size_t hi = lo + SMALL_RUN < n ? lo + SMALL_RUN : n;
		for (size_t i = lo + 1; i < hi; i++) {
			struct record x = a[i];
			size_t j = i;
			while (j > lo && cmp(&x, &a[j - 1]) < 0) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = x; /* also when it did not move */
		}
	}
}

/* Merges a[lo,mid) and a[mid,hi) through tmp and copies the result back. */
__attribute__((noinline, noclone)) static void
merge_runs(struct record *a, struct record *tmp, size_t lo, size_t mid,
	   size_t hi, record_cmp cmp)
{
	size_t i = lo, j = mid, k = lo;
	while (i < mid && j < hi) {
		if (cmp(&a[j], &a[i]) < 0)
			tmp[k++] = a[j++];
		else
			tmp[k++] = a[i++]; /* ties take the left run: stable */
	}
	while (i < mid)
		tmp[k++] = a[i++];
	while (j < hi)
		tmp[k++] = a[j++];
	memcpy(a + lo, tmp + lo, (hi - lo) * sizeof *a);
}

__attribute__((noinline, noclone)) static void
merge_sort_records(struct record *a, struct record *tmp, size_t n,
		   record_cmp cmp)
{
	memset(tmp, 0, n * sizeof *tmp); /* a clean scratch buffer */
	sort_small_runs(a, n, cmp);
	for (size_t width = SMALL_RUN; width < n; width *= 2) {
		for (size_t lo = 0; lo + width < n; lo += 2 * width) {
			size_t mid = lo + width;
			size_t hi = mid + width < n ? mid + width : n;
			merge_runs(a, tmp, lo, mid, hi, cmp);
		}
	}
}

/* Checks the order and that both sorts agree; returns a checksum, or 0 if
 * something is wrong. */
__attribute__((noinline, noclone)) static uint64_t
verify_sorted(const struct record *a, const struct record *b, size_t n)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && compare_records(&a[i - 1], &a[i]) >= 0)
			return 0;
		if (memcmp(&a[i], &b[i], sizeof a[i]) != 0)
			return 0;
		sum = sum * 31 + a[i].id + (uint64_t)(a[i].amount * 100.0) +
		      (unsigned char)a[i].name[0];
	}
	return sum | 1;
}

int main(int argc, char **argv)
{
	long scale = bench_parse_scale("sort", argc, argv);
	long rounds = scale * ROUNDS_PER_SCALE;
	struct record *input = malloc(NRECORDS * sizeof *input);
	struct record *merged = malloc(NRECORDS * sizeof *merged);
	struct record *scratch = malloc(NRECORDS * sizeof *scratch);
	struct record *quick = malloc(NRECORDS * sizeof *quick);
	if (!input || !merged || !scratch || !quick) {
		fprintf(stderr, "sort: out of memory\n");
		return 1;
	}

	uint64_t checksum = 0;
	for (long round = 0; round < rounds; round++) {
		bench_seed(77 + (uint64_t)round);
		generate_records(input, NRECORDS);

		memcpy(merged, input, NRECORDS * sizeof *input);
		merge_sort_records(merged, scratch, NRECORDS, compare_records);

		memcpy(quick, input, NRECORDS * sizeof *input);
		qsort(quick, NRECORDS, sizeof *quick, compare_records_qsort);

		uint64_t sum = verify_sorted(merged, quick, NRECORDS);
		if (sum == 0) {
			fprintf(stderr, "sort: round %ld: results differ or are "
				"out of order\n", round);
			return 1;
		}
		checksum = checksum * 1000003 ^ sum;
	}
	printf("sort: rounds=%ld records=%u checksum=%016llx\n", rounds,
	       NRECORDS, (unsigned long long)checksum);
	free(quick);
	free(scratch);
	free(merged);
	free(input);
	return 0;
}
