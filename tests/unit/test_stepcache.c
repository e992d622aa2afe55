/* Unit test of stepcache.c: walking a stack again from frame sizes a
 * libgcc walk found (stepcache.h).
 *
 * A fake stack (an array) holds return addresses at chosen slots.  The
 * cache first learns walks (their return addresses and where each was
 * read); then each row lays out a stack and walks it: the frames must be
 * those laid out, or the walk must fail (0) where it cannot be sure: a
 * value read that no walk showed, a frame whose size differed between two
 * walks, a frame with no known size before the last, a read past the
 * stack stretch [lo, hi], a start outside it.  A frame libgcc's walk ended
 * at ends the walk.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "witch/stepcache.h"

#include "check.h"

#define WORDS 64
#define MAXF 6

static uint64_t stack[WORDS];
#define AT(w) ((uint64_t)(uintptr_t)&stack[w])

/* What the cache learns first: three walks (slots as stack word indexes). */
struct walk {
	uint64_t ras[MAXF];
	int words[MAXF];
	int n, ended;
};

static const struct walk taught[] = {
	/* main path: a -> b -> c -> d, d ends (its caller is the outermost) */
	{{0xa00, 0xb00, 0xc00, 0xd00}, {0, 4, 10, 12}, 4, 1},
	/* another leaf into b: e's frame is 2 words */
	{{0xe00, 0xb00, 0xc00, 0xd00}, {20, 22, 28, 30}, 4, 1},
	/* f seen with two sizes (it allocas): never walked */
	{{0xf00, 0xb00}, {40, 43}, 2, 0},
	{{0xf00, 0xb00}, {40, 45}, 2, 0},
	/* g: the last of a walk cut short, its size unknown */
	{{0x100, 0x200}, {50, 51}, 2, 0},
};

struct row {
	int line;
	uint64_t ras[MAXF]; /* laid out from word `first` by the sizes below */
	int words[MAXF];
	int n_laid;
	int lo, hi;         /* the stretch, as word indexes */
	int max;
	int want;           /* frames the walk must return (their ras are ras[0..want)) */
};

static const struct row rows[] = {
	/* the learned path again, elsewhere on the stack: all four, d ends it */
	{__LINE__, {0xa00, 0xb00, 0xc00, 0xd00}, {30, 34, 40, 42}, 4, 30, 42, 16, 4},
	/* a new combination: e's frame, then b's path */
	{__LINE__, {0xe00, 0xb00, 0xc00, 0xd00}, {5, 7, 13, 15}, 4, 5, 15, 16, 4},
	/* max frames: the last needs no size */
	{__LINE__, {0xa00, 0xb00, 0xc00, 0xd00}, {30, 34, 40, 42}, 4, 30, 42, 2, 2},
	/* a read past hi */
	{__LINE__, {0xa00, 0xb00, 0xc00, 0xd00}, {30, 34, 40, 42}, 4, 30, 41, 16, 0},
	/* the start below lo: not the stack the walks read */
	{__LINE__, {0xa00, 0xb00, 0xc00, 0xd00}, {30, 34, 40, 42}, 4, 31, 42, 16, 0},
	/* a value no walk showed where b's return address should be */
	{__LINE__, {0xa00, 0x999, 0xc00, 0xd00}, {30, 34, 40, 42}, 4, 30, 42, 16, 0},
	/* a frame that varied, laid out as its last size said */
	{__LINE__, {0xf00, 0xb00, 0xc00, 0xd00}, {20, 25, 31, 33}, 4, 20, 33, 16, 0},
	/* a frame of unknown size before the last */
	{__LINE__, {0x200, 0xb00}, {10, 12}, 2, 10, 12, 16, 0},
	/* ... which may be the last */
	{__LINE__, {0x200, 0xb00}, {10, 12}, 2, 10, 12, 1, 1},
	/* an unknown start */
	{__LINE__, {0x777, 0xb00}, {10, 12}, 2, 10, 12, 16, 0},
};

/* Two return addresses the cache's hash (stepcache.c's) puts in one slot
 * of a direct-mapped table: both stay known (a set has two ways), so a
 * path through both is walked again; direct-mapped, each evicted the
 * other.  Each is taught as a one-frame walk that ended, then walked. */
static void test_same_set(void)
{
	const uint64_t ra1 = 0x401000;
	uint64_t h1 = (ra1 * 0x9e3779b97f4a7c15ull) >> 51, ra2 = ra1;
	do
		ra2 += 0x10;
	while (((ra2 * 0x9e3779b97f4a7c15ull) >> 51) != h1);
	uint64_t ras[2] = {ra1, ra2};
	for (int i = 0; i < 2; i++) {
		uint64_t pc = ras[i] - 1, slot = AT(8);
		stepcache_learn(&pc, &slot, 1, 1);
	}
	for (int i = 0; i < 2; i++) {
		uint64_t pcs[2], slots[2];
		memset(stack, 0, sizeof(stack));
		stack[8] = ras[i];
		int n = stepcache_walk(ras[i], AT(8) + 8, AT(0), AT(WORDS - 1), pcs, slots, 2);
		CHECK(__LINE__, n == 1 && pcs[0] == ras[i] - 1, "%#llx (one slot with %#llx): walked %d",
		      (unsigned long long)ras[i], (unsigned long long)ras[1 - i], n);
	}
}

/* One return address taught as a one-frame walk that ended, then walked:
 * 1 if the walk found it. */
static int teach_and_walk(uint64_t ra)
{
	uint64_t pc = ra - 1, slot = AT(8), pcs[2], slots[2];
	stepcache_learn(&pc, &slot, 1, 1);
	memset(stack, 0, sizeof(stack));
	stack[8] = ra;
	return stepcache_walk(ra, AT(8) + 8, AT(0), AT(WORDS - 1), pcs, slots, 2) == 1 &&
	       pcs[0] == ra - 1;
}

/* The table's first page alone until 256 return addresses were learned
 * (a short process's walks touch one page), all 64 KiB from the next
 * learn on; a return address learned either side is walked at once. */
static void test_growth(void)
{
	stepcache_reset();
	CHECK(__LINE__, stepcache_span() == 4096, "a fresh cache spans %zu bytes, want 4096",
	      stepcache_span());
	for (unsigned i = 0; i < 255; i++) {
		uint64_t ra = 0x500000 + 0x10 * (uint64_t)i;
		CHECK(__LINE__, teach_and_walk(ra), "learned %u, %#llx not walked", i,
		      (unsigned long long)ra);
	}
	CHECK(__LINE__, stepcache_span() == 4096, "255 learned: spans %zu bytes, want 4096",
	      stepcache_span());
	CHECK(__LINE__, teach_and_walk(0x600000), "the 256th not walked");
	CHECK(__LINE__, stepcache_span() == 4096, "256 learned: spans %zu bytes, want 4096",
	      stepcache_span());
	CHECK(__LINE__, teach_and_walk(0x600010), "the 257th, the first on the whole table, not walked");
	CHECK(__LINE__, stepcache_span() == 65536, "257 learned: spans %zu bytes, want 65536",
	      stepcache_span());
	/* Learned again, the same address takes no new slot's count. */
	stepcache_reset();
	for (unsigned i = 0; i < 300; i++)
		teach_and_walk(0x500000);
	CHECK(__LINE__, stepcache_span() == 4096, "one address learned 300 times: spans %zu, want 4096",
	      stepcache_span());
	stepcache_reset();
}

int main(void)
{
	test_growth();
	stepcache_reset();
	for (size_t i = 0; i < sizeof(taught) / sizeof(taught[0]); i++) {
		uint64_t pcs[MAXF], slots[MAXF];
		for (int f = 0; f < taught[i].n; f++) {
			pcs[f] = taught[i].ras[f] - 1;
			slots[f] = AT(taught[i].words[f]);
		}
		stepcache_learn(pcs, slots, taught[i].n, taught[i].ended);
	}
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct row *row = &rows[r];
		uint64_t pcs[16], slots[16];
		memset(stack, 0, sizeof(stack));
		for (int f = 0; f < row->n_laid; f++)
			stack[row->words[f]] = row->ras[f];
		uint64_t cfa = AT(row->words[0]) + 8;
		int n = stepcache_walk(row->ras[0], cfa, AT(row->lo), AT(row->hi), pcs, slots, row->max);
		CHECK(row->line, n == row->want, "walked %d frames, want %d", n, row->want);
		for (int f = 0; f < n && f < row->want; f++)
			CHECK(row->line, pcs[f] == row->ras[f] - 1 && slots[f] == AT(row->words[f]),
			      "frame %d: pc %#llx at word %ld, want %#llx at word %d", f,
			      (unsigned long long)pcs[f], (long)((slots[f] - AT(0)) / 8),
			      (unsigned long long)(row->ras[f] - 1), row->words[f]);
	}
	test_same_set();
	if (check_failures)
		fprintf(stderr, "test_stepcache: %d failures\n", check_failures);
	return check_failures != 0;
}
