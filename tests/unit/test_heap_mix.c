/* Unit test of heap_mix.c: the live sampled small blocks' bytes by site,
 * and the draw that names an untracked block's site (heap_mix.h).
 *
 * Each row adds and removes bytes by site; then N draws with u spread
 * evenly over [0, 2^64) must name each site in proportion to its live
 * bytes: with u = i 2^64 / N, site s is drawn for the u that fall in its
 * stretch of the prefix sums, so its count is its share x N within one.
 * A row that leaves nothing live draws -ENOENT.  The mix is cleared
 * between rows by removing what the row added.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

#include "witch/heap_mix.h"
#include "witch/heap_sites.h"

#include "check.h"

#define DRAWS 4096
#define MAX_OPS 6

struct op {
	uint32_t site;
	int64_t bytes;
};

struct row {
	int line;
	struct op ops[MAX_OPS];
	/* live bytes by site after the ops, at most 4 sites, {0, 0} ends */
	struct op want[4];
};

static const struct row rows[] = {
	/* nothing live */
	{__LINE__, {{0}}, {{0}}},
	/* one site: every draw names it */
	{__LINE__, {{7, 4096}}, {{7, 4096}}},
	/* two sites at 3:1, as objects_mix's small blocks */
	{__LINE__, {{1, 3 * 16384}, {2, 16384}}, {{1, 3 * 16384}, {2, 16384}}},
	/* a freed block's bytes leave: 2 gives back half of its part */
	{__LINE__, {{1, 16384}, {2, 32768}, {2, -16384}}, {{1, 16384}, {2, 16384}}},
	/* the first and last sites of the tree, and one in the middle */
	{__LINE__, {{1, 1000}, {HEAP_SITES, 3000}, {HEAP_SITES / 2 + 1, 4000}},
	 {{1, 1000}, {HEAP_SITES, 3000}, {HEAP_SITES / 2 + 1, 4000}}},
	/* all freed: nothing to draw */
	{__LINE__, {{5, 4096}, {5, -4096}}, {{0}}},
	/* a free seen before its block's add (another thread's): nothing
	 * until the add */
	{__LINE__, {{4, -100}, {6, 200}}, {{6, 200}}},
	/* sites out of range are ignored */
	{__LINE__, {{0, 4096}, {HEAP_SITES + 1, 4096}, {3, 100}}, {{3, 100}}},
};

static void run(const struct row *r)
{
	for (int i = 0; i < MAX_OPS && r->ops[i].bytes; i++)
		heap_mix_add(r->ops[i].site, r->ops[i].bytes);
	int64_t total = 0;
	for (int k = 0; k < 4 && r->want[k].bytes; k++)
		total += r->want[k].bytes;
	CHECK(r->line, heap_mix_total() == total, "total %lld, want %lld",
	      (long long)heap_mix_total(), (long long)total);
	int count[4] = {0}, other = 0, failed = 0;
	for (int i = 0; i < DRAWS; i++) {
		uint64_t u = (uint64_t)i * (UINT64_MAX / DRAWS);
		uint32_t site;
		if (heap_mix_draw(u, &site) < 0) {
			failed++;
			continue;
		}
		int k = 0;
		while (k < 4 && r->want[k].bytes && r->want[k].site != site)
			k++;
		if (k < 4 && r->want[k].bytes)
			count[k]++;
		else
			other++;
	}
	CHECK(r->line, failed == (total ? 0 : DRAWS), "%d of %d draws failed", failed, DRAWS);
	CHECK(r->line, other == 0, "%d draws named a site with nothing live", other);
	for (int k = 0; k < 4 && r->want[k].bytes; k++) {
		double want = (double)r->want[k].bytes / (double)total * DRAWS;
		CHECK(r->line, count[k] >= want - 1 && count[k] <= want + 1,
		      "site %u drawn %d times, want %.1f", r->want[k].site, count[k], want);
	}
	for (int i = 0; i < MAX_OPS && r->ops[i].bytes; i++)
		heap_mix_add(r->ops[i].site, -r->ops[i].bytes);
}

/* Windows: an address is held when a noted block shares its 64 MiB. */
static void test_windows(void)
{
	const uint64_t w = 0x7f0000000000ull; /* 64 MiB-aligned */
	CHECK(__LINE__, !heap_mix_holds(w + 100), "held before any note");
	heap_mix_note_window(w + 4096);
	heap_mix_note_window(w + 8192); /* the same window again */
	CHECK(__LINE__, heap_mix_holds(w) && heap_mix_holds(w + (64u << 20) - 1),
	      "the noted window is not held whole");
	CHECK(__LINE__, !heap_mix_holds(w - 1) && !heap_mix_holds(w + (64u << 20)),
	      "a neighbouring window is held");
	/* A brk heap crossing into the next window: a block within
	 * HEAP_MIX_REACH of the end holds the next window too. */
	const uint64_t v = w + (4ull << 26); /* another 64 MiB window */
	heap_mix_note_window(v + (64u << 20) - (HEAP_MIX_REACH / 2));
	CHECK(__LINE__, heap_mix_holds(v + (64u << 20)) && heap_mix_holds(v + (128u << 20) - 1),
	      "the window a block's reach crosses into is not held");
	CHECK(__LINE__, !heap_mix_holds(v + (128u << 20)), "held two windows on");
}

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run(&rows[i]);
	test_windows();
	if (check_failures)
		fprintf(stderr, "test_heap_mix: %d failure(s)\n", check_failures);
	else
		printf("test_heap_mix: ok\n");
	return check_failures ? 1 : 0;
}
