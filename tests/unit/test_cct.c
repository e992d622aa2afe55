/* Unit test of the calling context tree (cct.h) and the context-pair table
 * (pairtab.h), both in arena memory.  Table rows carry __LINE__; check_failures
 * print it.  Exit status 0 on success.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "witch/arena.h"
#include "witch/cct.h"
#include "witch/pairtab.h"
#include "witch/rng.h"

#include "check.h"

#define MAXP 8

/* ------------------------------------------------------------------ */
/* cct: a script of inserts into one tree                               */

/* One insert: path pcs[0] = leaf .. pcs[n-1] = outermost caller.
 * want: the expected result -- a tag naming the node (rows with the same
 * tag must get the same id, different tags different ids), or -ENOMEM.
 * nodes: the expected t->n_nodes afterwards (root included), dropped: the
 * expected t->dropped afterwards. */
struct ins {
	int line;
	int n;
	uint64_t pcs[MAXP];
	int want; /* > 0: tag of the leaf node; -ENOMEM */
	uint32_t nodes;
	uint64_t dropped;
};

/* main(0x100) -> f(0x200) -> g(0x300) -> leaf 0x400, etc.  max_nodes 11:
 * the root and 10 more. */
#define SCRIPT_MAX_NODES 11
static const struct ins script[] = {
	/* a first path creates one node per frame */
	{__LINE__, 4, {0x400, 0x300, 0x200, 0x100}, 1, 5, 0},
	/* the same path again: the same leaf, nothing new */
	{__LINE__, 4, {0x400, 0x300, 0x200, 0x100}, 1, 5, 0},
	/* common callers main -> f -> g shared: one new node */
	{__LINE__, 4, {0x410, 0x300, 0x200, 0x100}, 2, 6, 0},
	/* common main -> f, then h: two new */
	{__LINE__, 4, {0x400, 0x310, 0x200, 0x100}, 3, 8, 0},
	/* a prefix of an existing path is the existing interior node g */
	{__LINE__, 3, {0x300, 0x200, 0x100}, 4, 8, 0},
	{__LINE__, 2, {0x200, 0x100}, 5, 8, 0},
	{__LINE__, 1, {0x100}, 6, 8, 0},
	/* the same pc under another parent is another node */
	{__LINE__, 1, {0x200}, 7, 9, 0},
	{__LINE__, 2, {0x100, 0x200}, 8, 10, 0},
	/* pc 0 is a pc like any other */
	{__LINE__, 2, {0, 0x100}, 9, 11, 0},
	/* n_nodes == max_nodes: full.  A new leaf under an existing node fails */
	{__LINE__, 4, {0x420, 0x300, 0x200, 0x100}, -ENOMEM, 11, 1},
	/* a new outermost caller fails at once */
	{__LINE__, 1, {0x999}, -ENOMEM, 11, 2},
	/* existing paths are still found when full, and not counted as drops */
	{__LINE__, 4, {0x410, 0x300, 0x200, 0x100}, 2, 11, 2},
	{__LINE__, 4, {0x400, 0x300, 0x200, 0x100}, 1, 11, 2},
	{__LINE__, 2, {0, 0x100}, 9, 11, 2},
	/* a path diverging deeper down still fails */
	{__LINE__, 5, {0x1, 0x400, 0x300, 0x200, 0x100}, -ENOMEM, 11, 3},
};

static void test_cct_script(void)
{
	struct arena a;
	struct cct t;
	int64_t tag_id[32] = {0};
	CHECK(__LINE__, arena_init(&a, 1 << 20) == 0, "arena_init");
	CHECK(__LINE__, cct_init(&t, &a, SCRIPT_MAX_NODES) == 0, "cct_init");
	CHECK(__LINE__, t.n_nodes == 1 && t.dropped == 0, "fresh tree: n_nodes %u dropped %llu",
	      t.n_nodes, (unsigned long long)t.dropped);

	for (size_t i = 0; i < sizeof(script) / sizeof(script[0]); i++) {
		const struct ins *r = &script[i];
		int64_t id = cct_insert_path(&t, r->pcs, r->n);
		if (r->want < 0) {
			CHECK(r->line, id == r->want, "insert returned %lld, want %d", (long long)id,
			      r->want);
		} else {
			CHECK(r->line, id > 0 && id < t.n_nodes, "insert returned %lld, want a node id",
			      (long long)id);
			if (tag_id[r->want] == 0) {
				for (int tag = 1; tag < 32; tag++)
					CHECK(r->line, tag == r->want || tag_id[tag] != id,
					      "new path got the id %lld of tag %d", (long long)id, tag);
				tag_id[r->want] = id;
			} else {
				CHECK(r->line, id == tag_id[r->want], "insert returned %lld, want %lld",
				      (long long)id, (long long)tag_id[r->want]);
			}
			/* cct_path gives the path back, leaf first */
			if (id > 0) {
				uint64_t got[MAXP + 2];
				int n = cct_path(&t, (uint32_t)id, got, MAXP + 2);
				CHECK(r->line, n == r->n, "cct_path length %d, want %d", n, r->n);
				for (int k = 0; k < n && k < r->n; k++)
					CHECK(r->line, got[k] == r->pcs[k], "cct_path[%d] 0x%llx, want 0x%llx",
					      k, (unsigned long long)got[k], (unsigned long long)r->pcs[k]);
				/* the leaf node's own fields */
				struct cct_node *nd = cct_node(&t, (uint32_t)id);
				CHECK(r->line, nd->pc == r->pcs[0], "leaf pc 0x%llx, want 0x%llx",
				      (unsigned long long)nd->pc, (unsigned long long)r->pcs[0]);
			}
		}
		CHECK(r->line, t.n_nodes == r->nodes, "n_nodes %u, want %u", t.n_nodes, r->nodes);
		CHECK(r->line, t.dropped == r->dropped, "dropped %llu, want %llu",
		      (unsigned long long)t.dropped, (unsigned long long)r->dropped);
	}

	/* prefix sharing, seen from the nodes: the leaves 0x400 and 0x410 of
	 * main -> f -> g have the same parent, g, which is tag 4's node */
	uint32_t g = (uint32_t)tag_id[4], f = (uint32_t)tag_id[5], m = (uint32_t)tag_id[6];
	CHECK(__LINE__, cct_node(&t, (uint32_t)tag_id[1])->parent == g, "parent of 0x400 not g");
	CHECK(__LINE__, cct_node(&t, (uint32_t)tag_id[2])->parent == g, "parent of 0x410 not g");
	CHECK(__LINE__, cct_node(&t, g)->parent == f, "parent of g not f");
	CHECK(__LINE__, cct_node(&t, f)->parent == m, "parent of f not main");
	CHECK(__LINE__, cct_node(&t, m)->parent == 0, "parent of main not the root");
	/* new nodes start with zero metrics */
	for (uint32_t id = 1; id < t.n_nodes; id++) {
		struct cct_node *nd = cct_node(&t, id);
		CHECK(__LINE__, nd->mu == 0 && nd->eta == 0, "node %u: mu %g eta %g", id, nd->mu,
		      nd->eta);
	}

	/* cct_path truncates at max (leaf first) and the root has no path */
	{
		uint64_t got[4] = {0xdead, 0xdead, 0xdead, 0xdead};
		int n = cct_path(&t, (uint32_t)tag_id[1], got, 2);
		CHECK(__LINE__, n == 2 && got[0] == 0x400 && got[1] == 0x300 && got[2] == 0xdead,
		      "cct_path max 2: n %d [0x%llx 0x%llx 0x%llx]", n, (unsigned long long)got[0],
		      (unsigned long long)got[1], (unsigned long long)got[2]);
		n = cct_path(&t, 0, got, 4);
		CHECK(__LINE__, n == 0, "cct_path of the root: %d, want 0", n);
	}
	arena_destroy(&a);
}

/* ------------------------------------------------------------------ */
/* cct: many random paths against a plain model                          */

static void test_cct_random(void)
{
	enum { MAXN = 20000, PATHS = 4000 };
	static uint64_t paths[PATHS][MAXP];
	static int plen[PATHS];
	static int64_t ids[PATHS];
	struct arena a;
	struct cct t;
	struct rng rng;
	rng_seed(&rng, 77);
	CHECK(__LINE__, arena_init(&a, 16 << 20) == 0, "arena_init");
	CHECK(__LINE__, cct_init(&t, &a, MAXN) == 0, "cct_init");

	/* few distinct pcs per level so that prefixes are shared a lot */
	for (int i = 0; i < PATHS; i++) {
		plen[i] = 1 + (int)rng_below(&rng, MAXP);
		for (int k = 0; k < plen[i]; k++)
			paths[i][plen[i] - 1 - k] = 0x1000 * (uint64_t)(k + 1) + rng_below(&rng, 5);
		ids[i] = cct_insert_path(&t, paths[i], plen[i]);
		CHECK(__LINE__, ids[i] > 0, "path %d: insert %lld", i, (long long)ids[i]);
	}
	/* every id gives its path back; equal paths share ids, others do not */
	for (int i = 0; i < PATHS; i++) {
		uint64_t got[MAXP + 1];
		int n = cct_path(&t, (uint32_t)ids[i], got, MAXP + 1);
		int same = n == plen[i] && memcmp(got, paths[i], sizeof(got[0]) * (size_t)n) == 0;
		CHECK(__LINE__, same, "path %d: cct_path differs (n %d, want %d)", i, n, plen[i]);
		int64_t again = cct_insert_path(&t, paths[i], plen[i]);
		CHECK(__LINE__, again == ids[i], "path %d: reinsert %lld, want %lld", i,
		      (long long)again, (long long)ids[i]);
	}
	/* node count: the number of distinct prefixes (outermost first) */
	uint32_t distinct = 0;
	for (int i = 0; i < PATHS; i++)
		for (int d = 1; d <= plen[i]; d++) {
			/* prefix of length d: paths[i][plen-d .. plen-1]; count it
			 * at its first occurrence only */
			int seen = 0;
			for (int j = 0; j < i && !seen; j++)
				if (plen[j] >= d &&
				    memcmp(&paths[j][plen[j] - d], &paths[i][plen[i] - d],
					   sizeof(uint64_t) * (size_t)d) == 0)
					seen = 1;
			distinct += !seen;
		}
	CHECK(__LINE__, t.n_nodes == distinct + 1, "n_nodes %u, want %u distinct prefixes + root",
	      t.n_nodes, distinct);
	CHECK(__LINE__, t.dropped == 0, "dropped %llu", (unsigned long long)t.dropped);
	/* the hash grew with the tree: at least two buckets a node */
	CHECK(__LINE__, t.n_nodes > 1024 && t.bucket_mask + 1 >= 2 * t.n_nodes,
	      "%u nodes in %u buckets", t.n_nodes, t.bucket_mask + 1);
	arena_destroy(&a);
}

/* cct_init fails with -ENOMEM when the arena is too small; a tree whose
 * hash finds no room to grow keeps its buckets and stays right. */
static void test_cct_small_arena(void)
{
	struct arena a;
	struct cct t;
	CHECK(__LINE__, arena_init(&a, 4096) == 0, "arena_init");
	int rc = cct_init(&t, &a, 1000);
	CHECK(__LINE__, rc == -ENOMEM, "cct_init in a 4 KiB arena: %d, want -ENOMEM", rc);
	arena_destroy(&a);

	enum { N = 3000 };
	size_t need = sizeof(struct cct_node) * N + 4096 + 64;
	CHECK(__LINE__, arena_init(&a, need) == 0, "arena_init");
	CHECK(__LINE__, cct_init(&t, &a, N) == 0, "cct_init");
	int64_t ids[N - 1];
	for (uint64_t i = 0; i < N - 1; i++) {
		uint64_t pc = 0x1000 + i;
		ids[i] = cct_insert_path(&t, &pc, 1);
	}
	CHECK(__LINE__, t.bucket_mask + 1 == 1024, "buckets %u: the arena had no room", t.bucket_mask + 1);
	int wrong = 0;
	for (uint64_t i = 0; i < N - 1; i++) {
		uint64_t pc = 0x1000 + i;
		wrong += ids[i] != (int64_t)(i + 1) || cct_insert_path(&t, &pc, 1) != ids[i];
	}
	CHECK(__LINE__, wrong == 0 && t.n_nodes == N, "%d ids wrong, %u nodes", wrong, t.n_nodes);
	arena_destroy(&a);
}

/* ------------------------------------------------------------------ */
/* pairtab                                                               */

enum op { ADD, MERGE };

struct pair_row {
	int line;
	enum op op;
	uint32_t watch, trap;
	double waste, use, approx; /* ADD: amounts; MERGE: from's amounts */
	uint64_t from_traps;       /* MERGE only */
	int rc;                    /* 0 or -ENOMEM */
	/* the pair's totals afterwards (when rc == 0) */
	double t_waste, t_use, t_approx;
	uint64_t t_traps;
	uint32_t entries; /* n_entries afterwards (entry 0 included) */
	uint64_t dropped;
};

/* max_pairs 5: entry 0 and four pairs */
#define PAIR_MAX 5
static const struct pair_row pair_rows[] = {
	{__LINE__, ADD, 1, 2, 8, 0, 8, 0, 0, 8, 0, 8, 1, 2, 0},
	{__LINE__, ADD, 1, 2, 16, 0, 4, 0, 0, 24, 0, 12, 2, 2, 0},
	{__LINE__, ADD, 1, 2, 0, 3, 0, 0, 0, 24, 3, 12, 3, 2, 0},
	/* <watch, trap> is ordered: <2, 1> is another pair */
	{__LINE__, ADD, 2, 1, 0, 5, 0, 0, 0, 0, 5, 0, 1, 3, 0},
	/* a watch context with several trap contexts */
	{__LINE__, ADD, 1, 3, 1.5, 0, 1, 0, 0, 1.5, 0, 1, 1, 4, 0},
	/* merge adds another table's entry, traps included */
	{__LINE__, MERGE, 1, 2, 100, 10, 50, 7, 0, 124, 13, 62, 10, 4, 0},
	{__LINE__, MERGE, 7, 7, 2, 4, 6, 3, 0, 2, 4, 6, 3, 5, 0},
	/* full: a new pair is refused and counted, by add and by merge */
	{__LINE__, ADD, 9, 9, 1, 1, 1, 0, -ENOMEM, 0, 0, 0, 0, 5, 1},
	{__LINE__, MERGE, 9, 8, 1, 1, 1, 1, -ENOMEM, 0, 0, 0, 0, 5, 2},
	{__LINE__, ADD, 2, 2, 1, 1, 1, 0, -ENOMEM, 0, 0, 0, 0, 5, 3},
	/* existing pairs still accumulate when full */
	{__LINE__, ADD, 2, 1, 0, 1, 0, 0, 0, 0, 6, 0, 2, 5, 3},
	{__LINE__, MERGE, 7, 7, 1, 1, 1, 1, 0, 3, 5, 7, 4, 5, 3},
	{__LINE__, ADD, 1, 2, 1, 0, 1, 0, 0, 125, 13, 63, 11, 5, 3},
};

static const struct pair_entry *pair_find(const struct pairtab *p, uint32_t w, uint32_t t,
					  int *count)
{
	const struct pair_entry *found = NULL;
	*count = 0;
	for (uint32_t i = 1; i < p->n_entries; i++)
		if (p->entries[i].watch == w && p->entries[i].trap == t) {
			found = &p->entries[i];
			(*count)++;
		}
	return found;
}

static void test_pairtab(void)
{
	struct arena a;
	struct pairtab p;
	CHECK(__LINE__, arena_init(&a, 1 << 20) == 0, "arena_init");
	CHECK(__LINE__, pairtab_init(&p, &a, PAIR_MAX) == 0, "pairtab_init");
	CHECK(__LINE__, p.n_entries == 1 && p.dropped == 0, "fresh table: n_entries %u",
	      p.n_entries);

	for (size_t i = 0; i < sizeof(pair_rows) / sizeof(pair_rows[0]); i++) {
		const struct pair_row *r = &pair_rows[i];
		int rc;
		if (r->op == ADD) {
			rc = pairtab_add(&p, r->watch, r->trap, 0, r->waste, r->use, r->approx);
		} else {
			struct pair_entry from;
			memset(&from, 0, sizeof(from));
			from.watch = 1000; /* ignored: the pair is named by the arguments */
			from.trap = 1001;
			from.waste = r->waste;
			from.use = r->use;
			from.waste_approx = r->approx;
			from.traps = r->from_traps;
			rc = pairtab_merge(&p, r->watch, r->trap, &from);
		}
		CHECK(r->line, rc == r->rc, "%s <%u,%u>: rc %d, want %d", r->op == ADD ? "add" : "merge",
		      r->watch, r->trap, rc, r->rc);
		int count;
		const struct pair_entry *e = pair_find(&p, r->watch, r->trap, &count);
		if (r->rc == 0) {
			CHECK(r->line, count == 1, "<%u,%u> appears %d times", r->watch, r->trap, count);
			if (e) {
				CHECK(r->line,
				      e->waste == r->t_waste && e->use == r->t_use &&
					      e->waste_approx == r->t_approx && e->traps == r->t_traps,
				      "<%u,%u>: waste %g use %g approx %g traps %llu, want %g %g %g %llu",
				      r->watch, r->trap, e->waste, e->use, e->waste_approx,
				      (unsigned long long)e->traps, r->t_waste, r->t_use, r->t_approx,
				      (unsigned long long)r->t_traps);
			}
		} else {
			CHECK(r->line, count == 0, "refused <%u,%u> is in the table", r->watch, r->trap);
		}
		CHECK(r->line, p.n_entries == r->entries, "n_entries %u, want %u", p.n_entries,
		      r->entries);
		CHECK(r->line, p.dropped == r->dropped, "dropped %llu, want %llu",
		      (unsigned long long)p.dropped, (unsigned long long)r->dropped);
	}
	arena_destroy(&a);
}

/* A pair is split by object: the same <watch, trap> on two objects is two
 * entries; a merge keeps the entry's object. */
static void test_pairtab_objects(void)
{
	struct arena a;
	struct pairtab p, q;
	CHECK(__LINE__, arena_init(&a, 1 << 20) == 0, "arena_init");
	CHECK(__LINE__, pairtab_init(&p, &a, 8) == 0 && pairtab_init(&q, &a, 8) == 0, "init");
	CHECK(__LINE__, pairtab_add(&p, 5, 6, 1, 10, 0, 0) == 0, "add obj 1");
	CHECK(__LINE__, pairtab_add(&p, 5, 6, 2, 3, 1, 0) == 0, "add obj 2");
	CHECK(__LINE__, pairtab_add_share(&p, 5, 6, 1, 4, 0, 0) == 0, "obj 1's share of a trap");
	CHECK(__LINE__, p.n_entries == 3, "n_entries %u, want 3 (two objects)", p.n_entries);
	const struct pair_entry *e1 = &p.entries[1], *e2 = &p.entries[2];
	/* a share adds amounts, not a trap (the trap was counted once) */
	CHECK(__LINE__, e1->object == 1 && e1->waste == 14 && e1->traps == 1,
	      "obj 1: object %u waste %g traps %llu", e1->object, e1->waste,
	      (unsigned long long)e1->traps);
	CHECK(__LINE__, e2->object == 2 && e2->waste == 3 && e2->use == 1, "obj 2: object %u waste %g",
	      e2->object, e2->waste);
	CHECK(__LINE__, pairtab_merge(&q, 7, 8, e2) == 0 && pairtab_merge(&q, 7, 8, e1) == 0, "merge");
	CHECK(__LINE__, q.n_entries == 3 && q.entries[1].object == 2 && q.entries[2].object == 1,
	      "merged: %u entries, objects %u %u", q.n_entries, q.entries[1].object,
	      q.entries[2].object);
	CHECK(__LINE__, q.entries[1].waste == 3 && q.entries[1].use == 1 && q.entries[2].waste == 14,
	      "merged amounts %g %g %g, want 3 1 14", q.entries[1].waste, q.entries[1].use,
	      q.entries[2].waste);
	arena_destroy(&a);
}

/* many pairs against a plain model: sums per pair survive hash chaining */
static void test_pairtab_random(void)
{
	enum { W = 40, T = 40, OPS = 50000 };
	static double waste[W][T], use[W][T];
	static uint64_t traps[W][T];
	struct arena a;
	struct pairtab p;
	struct rng rng;
	rng_seed(&rng, 99);
	CHECK(__LINE__, arena_init(&a, 4 << 20) == 0, "arena_init");
	CHECK(__LINE__, pairtab_init(&p, &a, W * T + 1) == 0, "pairtab_init");
	for (int i = 0; i < OPS; i++) {
		uint32_t w = rng_below(&rng, W), t = rng_below(&rng, T);
		double x = (double)rng_below(&rng, 64), y = (double)rng_below(&rng, 64);
		int rc = pairtab_add(&p, w * 977 + 1, t * 131071 + 1, 0, x, y, x);
		CHECK(__LINE__, rc == 0, "add %d: rc %d", i, rc);
		waste[w][t] += x;
		use[w][t] += y;
		traps[w][t]++;
	}
	int pairs = 0;
	for (int w = 0; w < W; w++)
		for (int t = 0; t < T; t++) {
			if (!traps[w][t])
				continue;
			pairs++;
			int count;
			const struct pair_entry *e =
				pair_find(&p, (uint32_t)w * 977 + 1, (uint32_t)t * 131071 + 1, &count);
			CHECK(__LINE__, count == 1 && e && e->waste == waste[w][t] &&
					    e->use == use[w][t] && e->waste_approx == waste[w][t] &&
					    e->traps == traps[w][t],
			      "pair <%d,%d>: count %d", w, t, count);
		}
	CHECK(__LINE__, p.n_entries == (uint32_t)pairs + 1, "n_entries %u, want %d", p.n_entries,
	      pairs + 1);
	CHECK(__LINE__, p.dropped == 0, "dropped %llu", (unsigned long long)p.dropped);
	arena_destroy(&a);
}

/* pairtab_clear zeroes only the buckets its entries hang from: after a
 * clear every bucket must be empty as after init (a stale one would chain
 * a new pair to a freed entry), and pairs added again start from zero. */
static void test_pairtab_clear(void)
{
	struct arena a;
	struct pairtab p;
	CHECK(__LINE__, arena_init(&a, 1 << 20) == 0, "arena_init");
	CHECK(__LINE__, pairtab_init(&p, &a, 512) == 0, "pairtab_init");
	for (int round = 0; round < 3; round++) {
		for (uint32_t i = 0; i < 300; i++)
			CHECK(__LINE__, pairtab_add(&p, i * 7 + 1, i % 13 + 1, i % 3, 1.0, 2.0, 0) == 0,
			      "round %d add %u", round, i);
		int count;
		const struct pair_entry *e = pair_find(&p, 8, 2, &count);
		CHECK(__LINE__, count == 1 && e && e->waste == 1.0 && e->traps == 1,
		      "round %d: pair <8,2> count %d waste %g", round, count, e ? e->waste : -1);
		pairtab_clear(&p);
		CHECK(__LINE__, p.n_entries == 1 && p.dropped == 0, "round %d: n_entries %u", round,
		      p.n_entries);
		uint32_t stale = 0;
		for (uint32_t b = 0; b <= p.bucket_mask; b++)
			stale += p.buckets[b] != 0;
		CHECK(__LINE__, stale == 0, "round %d: %u buckets left set", round, stale);
	}
	arena_destroy(&a);
}

/* The buckets start at one page (1024) and double once the pairs pass
 * half of them (pairtab.c), re-linking every pair: after each row's adds
 * every pair is found once with its sums, and the buckets are the row's.
 * An arena without room to grow keeps the old buckets, their chains
 * longer, and loses no pair.  Arena sizes: entries take 48 bytes a pair
 * of max (4,096: 192 KiB), the first buckets 4 KiB, a doubling 8, 16, 32
 * KiB; so 200 KiB has room for none, 1 MiB for all. */
static const struct {
	int line;
	uint32_t pairs;
	size_t arena;
	uint32_t want_buckets;
} pairtab_grow_rows[] = {
	{__LINE__, 1, 1 << 20, 1024},
	{__LINE__, 511, 1 << 20, 1024},   /* 2 x (511 + entry 0) is not past 1024 */
	{__LINE__, 512, 1 << 20, 2048},
	{__LINE__, 1500, 1 << 20, 4096},
	{__LINE__, 4000, 1 << 20, 8192},
	{__LINE__, 4000, 200 << 10, 1024}, /* no room: chains of ~4 */
};

static void test_pairtab_grow(void)
{
	for (size_t r = 0; r < sizeof(pairtab_grow_rows) / sizeof(pairtab_grow_rows[0]); r++) {
		int line = pairtab_grow_rows[r].line;
		uint32_t n = pairtab_grow_rows[r].pairs;
		struct arena a;
		struct pairtab p;
		CHECK(line, arena_init(&a, pairtab_grow_rows[r].arena) == 0, "arena_init");
		CHECK(line, pairtab_init(&p, &a, 4096) == 0, "pairtab_init");
		for (int pass = 0; pass < 2; pass++)
			for (uint32_t i = 0; i < n; i++)
				CHECK(line, pairtab_add(&p, i + 1, i * 31 + 7, i & 3, 1.0, 0.5, 0) == 0,
				      "add %u", i);
		CHECK(line, p.bucket_mask + 1 == pairtab_grow_rows[r].want_buckets,
		      "%u pairs: %u buckets, want %u", n, p.bucket_mask + 1,
		      pairtab_grow_rows[r].want_buckets);
		CHECK(line, p.n_entries == n + 1, "%u pairs: n_entries %u", n, p.n_entries);
		uint32_t bad = 0;
		for (uint32_t i = 0; i < n; i++) {
			int count;
			const struct pair_entry *e = pair_find(&p, i + 1, i * 31 + 7, &count);
			bad += !(count == 1 && e && e->object == (i & 3) && e->waste == 2.0 &&
				 e->traps == 2);
		}
		CHECK(line, bad == 0, "%u pairs: %u not found once with their sums", n, bad);
		/* Each pair hangs from exactly one bucket chain. */
		uint32_t linked = 0;
		for (uint32_t b = 0; b <= p.bucket_mask; b++)
			for (uint32_t id = p.buckets[b]; id && linked <= n; id = p.entries[id].hash_next)
				linked++;
		CHECK(line, linked == n, "%u pairs: %u linked from the buckets", n, linked);
		arena_destroy(&a);
	}
}

int main(void)
{
	test_cct_script();
	test_cct_random();
	test_cct_small_arena();
	test_pairtab();
	test_pairtab_objects();
	test_pairtab_random();
	test_pairtab_clear();
	test_pairtab_grow();
	if (check_failures) {
		fprintf(stderr, "test_cct: %d failure(s)\n", check_failures);
		return 1;
	}
	printf("test_cct: all passed\n");
	return 0;
}
