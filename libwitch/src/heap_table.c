/* heap_table: the live tracked blocks, lock-free (see heap_table.h). */
#include "witch/heap_table.h"
#include "witch/lockguard.h"
#include "witch/firsttouch.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

/*
 * A block of n bytes lives at level L, the smallest with 4^L * 64 >= n
 * (n: its usable size, which free can ask the C library again), under
 * the one or two level-L granules it touches.  So a granule holds few
 * blocks (a level's blocks are more than a quarter of its granule) and
 * an interior address finds its block by one hash window per level.
 *
 * An entry is two words: key = generation(16) | start(48), start 0 free
 * and 1 being written; val = site(24) | mmap(1) | sampled(1) | size(38),
 * where a sampled block's size(38) is step(4) | points(10) | size(24)
 * (points: the sample bytes that fell in it, >= 1; step: its thread's
 * period then, heap.h).  Writers
 * claim a free slot by CAS (generation + 1), write val, publish key with
 * release; readers read key, val, key and keep the entry only when the
 * two keys agree. */
#define HT_LEVELS 22
#define HT_WINDOW 16
#define HT_START_MASK ((1ull << 48) - 1)
#define HT_GEN_ONE (1ull << 48)
#define HT_BUSY 1ull

struct ht_entry {
	uint64_t key;
	uint64_t val;
};

#define HT_FILTER_FULL 255 /* a saturated counter stays so */
uint8_t *heap_table_filter;
static struct ht_entry *ht_blocks;
static uint32_t ht_levels_used; /* bit L: level L ever held a block */

/* A young table's inserts take their pages for writing before reading
 * them (firsttouch.h: one fault a fresh page, not two; a short process
 * tracks a few blocks, each on fresh pages).  Past HT_YOUNG_INSERTS its
 * pages are mostly touched, and the locked instructions would cost a
 * tracked malloc+free pair ~10-20 ns (~75 -> ~100 ns, every block
 * tracked).  Racing threads may lose a count: a few more touches. */
#define HT_YOUNG_INSERTS 1024u
static unsigned ht_young_inserts;

static int ht_is_young(void)
{
	unsigned n = __atomic_load_n(&ht_young_inserts, __ATOMIC_RELAXED);
	if (n >= HT_YOUNG_INSERTS)
		return 0;
	__atomic_store_n(&ht_young_inserts, n + 1, __ATOMIC_RELAXED);
	return 1;
}

static inline unsigned ht_level(uint64_t n)
{
	if (n <= 64)
		return 0;
	unsigned bits = 64 - (unsigned)__builtin_clzll(n - 1); /* ceil(log2 n) */
	unsigned l = (bits - 5) / 2;
	return l < HT_LEVELS ? l : HT_LEVELS - 1;
}

static inline unsigned ht_shift(unsigned level)
{
	return 6 + 2 * level;
}

static inline uint32_t ht_slot(unsigned level, uint64_t gran)
{
	uint64_t h = (gran ^ ((uint64_t)level << 56)) * 0x9E3779B97F4A7C15ull;
	return (uint32_t)(h >> 40) & (HEAP_BLOCK_SLOTS - 1);
}

static inline struct ht_entry *ht_at(uint32_t idx, unsigned i)
{
	return &ht_blocks[(idx + i) & (HEAP_BLOCK_SLOTS - 1)];
}

/* Publish one entry under (level, granule).  A stale entry of the same
 * start (a free we did not see) is taken over, but only when `dedupe`:
 * a block's second entry must not replace its first. */
static int ht_put(unsigned level, uint64_t gran, uint64_t start, uint64_t val, int dedupe)
{
	uint32_t idx = ht_slot(level, gran);
	int rc = -ENOSPC;
	for (unsigned i = 0; i < HT_WINDOW; i++) {
		struct ht_entry *e = ht_at(idx, i);
		uint64_t k = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
		uint64_t s = k & HT_START_MASK;
		if (s != 0 && !(dedupe && s == start))
			continue;
		uint64_t busy = ((k & ~HT_START_MASK) + HT_GEN_ONE) | HT_BUSY;
		if (!__atomic_compare_exchange_n(&e->key, &k, busy, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&e->val, val, __ATOMIC_RELAXED);
		__atomic_store_n(&e->key, (busy & ~HT_START_MASK) | start, __ATOMIC_RELEASE);
		rc = 0;
		break;
	}
	return rc;
}

/* Take the entry of `start` off (level, granule); its val, or 0. */
static uint64_t ht_take(unsigned level, uint64_t gran, uint64_t start)
{
	uint32_t idx = ht_slot(level, gran);
	for (unsigned i = 0; i < HT_WINDOW; i++) {
		struct ht_entry *e = ht_at(idx, i);
		uint64_t k = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
		if ((k & HT_START_MASK) != start)
			continue;
		uint64_t v = __atomic_load_n(&e->val, __ATOMIC_ACQUIRE);
		if (__atomic_compare_exchange_n(&e->key, &k, k & ~HT_START_MASK, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			return v;
	}
	return 0;
}

static void ht_filter_add(uint64_t start, int d)
{
	uint8_t *f = heap_table_filter_of(start);
	uint8_t c = __atomic_load_n(f, __ATOMIC_RELAXED);
	do {
		if (c == HT_FILTER_FULL || (d < 0 && c == 0))
			return;
	} while (!__atomic_compare_exchange_n(f, &c, (uint8_t)(c + d), 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

/* Record [start, start + size) with its site under the level of `span`
 * (>= size: what a later removal can compute).  0 or -ENOSPC. */
int heap_table_insert(uint64_t start, uint64_t size, uint64_t span, uint32_t site, uint64_t bits)
{
	if (start <= HT_BUSY || start > HT_START_MASK || size == 0 || size > HEAP_SIZE_MASK)
		return -EINVAL;
	unsigned level = ht_level(span);
	unsigned sh = ht_shift(level);
	uint64_t g0 = start >> sh, g1 = (start + size - 1) >> sh;
	uint64_t val = ((uint64_t)site << HEAP_SITE_SHIFT) | bits | size;
	uint32_t bit = 1u << level;
	if (!(__atomic_load_n(&ht_levels_used, __ATOMIC_RELAXED) & bit))
		__atomic_or_fetch(&ht_levels_used, bit, __ATOMIC_SEQ_CST);
	if (ht_is_young()) {
		firsttouch_for_write(heap_table_filter_of(start));
		firsttouch_for_write(ht_at(ht_slot(level, g0), 0));
		if (g1 != g0)
			firsttouch_for_write(ht_at(ht_slot(level, g1), 0));
	}
	ht_filter_add(start, 1); /* first: a find that skips by it never misses the entry */
	if (ht_put(level, g0, start, val, 1) < 0) {
		ht_filter_add(start, -1);
		return -ENOSPC;
	}
	if (g1 != g0 && ht_put(level, g1, start, val, 0) < 0) {
		ht_take(level, g0, start);
		ht_filter_add(start, -1);
		return -ENOSPC;
	}
	return 0;
}

/* Remove the block at start recorded under the level of `span`; its val
 * or 0. */
uint64_t heap_table_remove(uint64_t start, uint64_t span)
{
	if (start <= HT_BUSY || start > HT_START_MASK)
		return 0;
	unsigned level = ht_level(span ? span : 1);
	unsigned sh = ht_shift(level);
	uint64_t v = ht_take(level, start >> sh, start);
	if (v) {
		uint64_t size = heap_table_val_size(v);
		if (((start + size - 1) >> sh) != (start >> sh))
			ht_take(level, (start + size - 1) >> sh, start);
		ht_filter_add(start, -1);
	}
	return v;
}

/* Levels whose blocks are at most this big are skipped where the filter
 * says no tracked block starts in the KiBs before addr they could start
 * in: its counters are by address, so that is one or two lines of it,
 * where a level's hash window is four lines of the table.  A sample in an
 * untracked block (most of a program's small ones) asked every level's
 * window: objects_small at 2000/s, `perf record -e task-clock`, two runs
 * each: heap_table_find 2.1-3.1% of the samples -> 1.0% (emulate_insn
 * 4.2-5.1% in both). */
#define HT_FILTER_REACH_MAX (64u << 10)

/* No tracked block starts in (addr - reach, addr]: the filter's counters
 * for those KiBs are all 0. */
static int ht_none_starts_before(uint64_t addr, uint64_t reach)
{
	uint64_t lo = addr >= reach ? (addr - reach + 1) >> HEAP_FILTER_GRAIN : 0;
	for (uint64_t k = lo; k <= addr >> HEAP_FILTER_GRAIN; k++)
		if (__atomic_load_n(heap_table_filter_of(k << HEAP_FILTER_GRAIN), __ATOMIC_RELAXED))
			return 0;
	return 1;
}

/* The entry holding addr, among mmap regions only when `maps_only`. */
int heap_table_find(uint64_t addr, int maps_only, uint64_t *start, uint64_t *val)
{
	uint32_t levels = __atomic_load_n(&ht_levels_used, __ATOMIC_ACQUIRE);
	if (!ht_blocks)
		return -ENOENT;
	while (levels) {
		unsigned level = (unsigned)__builtin_ctz(levels);
		levels &= levels - 1;
		uint64_t reach = 64ull << (2 * level); /* the level's largest block */
		if (reach <= HT_FILTER_REACH_MAX && ht_none_starts_before(addr, reach))
			continue;
		uint32_t idx = ht_slot(level, addr >> ht_shift(level));
		for (unsigned i = 0; i < HT_WINDOW; i++) {
			struct ht_entry *e = ht_at(idx, i);
			uint64_t k = __atomic_load_n(&e->key, __ATOMIC_ACQUIRE);
			uint64_t s = k & HT_START_MASK;
			if (s <= HT_BUSY || addr < s)
				continue;
			uint64_t v = __atomic_load_n(&e->val, __ATOMIC_ACQUIRE);
			if (__atomic_load_n(&e->key, __ATOMIC_ACQUIRE) != k)
				continue; /* rewritten meanwhile */
			if (addr - s >= heap_table_val_size(v) || (maps_only && !(v & HEAP_MMAP_BIT)))
				continue;
			*start = s;
			*val = v;
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- setup, fork ---- */
static uint64_t ht_reserved;

static void *ht_map(size_t bytes)
{
	void *p = lockguard_map(bytes, MAP_NORESERVE);
	if (p == MAP_FAILED)
		return NULL;
	ht_reserved += bytes;
	return p;
}

int heap_table_init(void)
{
	if (ht_blocks)
		return 0;
	struct ht_entry *blocks = ht_map(sizeof(struct ht_entry) * HEAP_BLOCK_SLOTS);
	heap_table_filter = ht_map(1u << HEAP_FILTER_BITS);
	if (!blocks || !heap_table_filter)
		return -ENOMEM;
	__atomic_store_n(&ht_blocks, blocks, __ATOMIC_RELEASE);
	return 0;
}

uint64_t heap_table_reserved(void)
{
	return ht_reserved;
}

/* Lock-free: nothing to hold across fork. */
void heap_table_prefork(void)
{
}

void heap_table_postfork_parent(void)
{
}

/* A slot the parent's other threads were writing as it forked stays busy
 * (HT_BUSY) in the child: puts and finds pass over it, so it costs its
 * window one slot of HT_WINDOW, and the child reads none of the table.
 * Freeing such slots took a count of puts under way, two locked
 * instructions on one line all threads share in each insert
 * (bench/results/heap_cost.md, stop 68); a full scan took 0.35-1 ms a fork
 * child (each page's first touch 6-15 us on these VMs). */
void heap_table_postfork_child(void)
{
}
