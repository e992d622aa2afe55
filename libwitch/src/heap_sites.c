/* heap_sites: allocation sites, found by unwinding and cached per thread
 * (see heap_sites.h). */
#include "witch/heap_sites.h"
#include "witch/lockguard.h"
#include "witch/cost.h"
#include "witch/densetab.h"
#include "witch/peek.h"
#include "witch/stepcache.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>
#include <x86intrin.h>

/* ---- the site table: insert-only, records by site id, hash-indexed (densetab.h) ---- */

struct hs_site {
	uint64_t hash; /* hs_path_hash of the path */
	uint32_t n;
	uint32_t pad;
	uint64_t pcs[HEAP_SITE_MAX_DEPTH];
};

/* ---- per-thread site caches ----
 * (return address, CFA of the interposer) -> site, valid while the return
 * addresses in the cached path's stack slots hash as they did: the same
 * callers at the same depths.  4-way sets, one 64-byte line an entry.
 * A cache is 1, 2, 4 or 8 chunks of 64 sets from a shared pool: a thread
 * starts with one and doubles when it has unwound twice its capacity
 * since it last grew (gcc's cc1 has ~3,800 sites; 256 entries missed 54%
 * of its finds), while the pool keeps HS_CHUNKS_KEEP free for new threads. */
#define HS_SETS 64
#define HS_WAYS 4
#define HS_CHUNK_ENTRIES (HS_SETS * HS_WAYS)
#define HS_MAX_CHUNKS 8
#define HS_CHUNKS_KEEP (HEAP_CACHE_CHUNKS / 2)
#define HS_RETIRED ((struct hs_cache *)1)

struct hs_centry {
	uint64_t ret, cfa;
	uint64_t check; /* hash of the slots' return addresses */
	uint32_t site;
	uint8_t n; /* frames; n - 1 slots checked */
	uint8_t pad[3];
	uint16_t off[HEAP_SITE_MAX_DEPTH - 1]; /* (slot - cfa) / 8 */
	uint16_t pad2;
};

/* A line or two of its own: threads' caches side by side shared lines,
 * one's counts bouncing the other's set_shift on every malloc
 * (bench/heap_cost.c all 1000000 2: ~150 of its 330 ns a pair). */
struct hs_cache {
	_Alignas(64) uint32_t used;
	uint32_t victim;                      /* the way the next insert replaces */
	uint64_t tracked, untracked, dropped; /* this slot's threads' counts */
	uint64_t unwinds;                     /* ... finds that unwound (cache misses) */
	uint64_t walked;                      /* ... of which stepcache walked */
	uint64_t slow_tsc;                    /* TSC ticks those finds took */
	uint64_t stack_lo, stack_hi;          /* the slots libgcc read here span this */
	uint64_t grow_at;                     /* unwinds at which it doubles */
	uint32_t set_shift;                   /* 64 - log2(sets) */
	uint32_t nchunks;
	uint16_t chunk[HS_MAX_CHUNKS];        /* pool chunks, in set order */
};

static int hs_ready; /* set once by heap_sites_init */
static struct hs_site *hs_sites; /* by site: hs_sites[site - 1] */
static struct densetab hs_index;
static struct hs_cache *hs_caches;
/* Caches ever taken: the first this many (taken in order, lowest free
 * first); the stats read no further (the rest: untouched pages, a fault
 * each to read at exit). */
static uint32_t hs_caches_reached;
static struct hs_centry *hs_pool; /* HEAP_CACHE_CHUNKS chunks of HS_CHUNK_ENTRIES */
static uint64_t hs_pool_taken[HEAP_CACHE_CHUNKS / 64]; /* a bit a chunk */
static uint64_t hs_pool_written[HEAP_CACHE_CHUNKS / 64]; /* ... ever taken (else still zero) */
static uint32_t hs_pool_free = HEAP_CACHE_CHUNKS;
static pthread_key_t hs_key;
static uint64_t hs_reserved;
/* Counts of threads without a cache. */
static uint64_t hs_g_tracked, hs_g_untracked, hs_g_dropped, hs_g_unwinds, hs_g_slow_tsc;

static __thread struct hs_cache *hs_tcache __attribute__((tls_model("initial-exec")));

/* ---- the site table ---- */
static uint64_t hs_path_hash(const uint64_t *pcs, int n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)n;
	for (int i = 0; i < n; i++) {
		h ^= pcs[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h;
}

struct hs_path {
	uint64_t hash;
	const uint64_t *pcs;
	int n;
};

static int hs_site_matches(uint32_t site, const void *arg)
{
	const struct hs_path *p = arg;
	const struct hs_site *s = &hs_sites[site - 1];
	return s->hash == p->hash && s->n == (uint32_t)p->n &&
	       memcmp(s->pcs, p->pcs, (size_t)p->n * sizeof(*p->pcs)) == 0;
}

static void hs_site_fill(uint32_t site, const void *arg)
{
	const struct hs_path *p = arg;
	struct hs_site *s = &hs_sites[site - 1];
	s->hash = p->hash;
	s->n = (uint32_t)p->n;
	memcpy(s->pcs, p->pcs, (size_t)p->n * sizeof(*p->pcs));
}

/* The site of a path, interned; 0 when the table has no room. */
static uint32_t hs_intern(const uint64_t *pcs, int n)
{
	struct hs_path p = {.hash = hs_path_hash(pcs, n), .pcs = pcs, .n = n};
	return densetab_intern(&hs_index, p.hash, hs_site_matches, hs_site_fill, &p);
}

int heap_sites_path(uint32_t site, uint64_t *pcs, int max)
{
	if (!hs_sites || max < 1 || !densetab_is_live(&hs_index, site))
		return -ENOENT;
	const struct hs_site *s = &hs_sites[site - 1];
	int n = (int)s->n < max ? (int)s->n : max;
	for (int i = 0; i < n; i++)
		pcs[i] = s->pcs[i];
	return n;
}

/* ---- the unwind, once per (call site, callers, depth, thread) ----
 * libgcc's unwinder, linked into the runtime from libgcc_eh.a and hidden
 * (CMakeLists.txt), not libunwind's exports of the same names: it finds a
 * frame's FDE through the C library's _dl_find_object, with no lock, and
 * a C program no longer loads libgcc_s.so for it (an open, five maps and
 * ~6 page faults a process). */
struct hs_walk {
	uint64_t ret; /* the interposer's return address */
	int skipped, found, n, signal_frame;
	uint64_t pcs[HEAP_SITE_MAX_DEPTH];
	uint64_t slot[HEAP_SITE_MAX_DEPTH]; /* where each frame's pc + 1 was read */
};

static _Unwind_Reason_Code hs_walk_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct hs_walk *w = arg;
	int before = 0;
	uint64_t ip = _Unwind_GetIPInfo(ctx, &before);
	if (!w->found && ip != w->ret)
		return ++w->skipped < 8 ? _URC_NO_REASON : _URC_END_OF_STACK;
	w->found = 1;
	if (ip == 0)
		return _URC_END_OF_STACK;
	w->pcs[w->n] = before ? ip : ip - 1;
	/* libgcc's "CFA" of a frame is its callee's: the stack pointer at
	 * the call, just above the return address the call pushed. */
	w->slot[w->n] = _Unwind_GetCFA(ctx) - 8;
	w->signal_frame |= before;
	return ++w->n < HEAP_SITE_MAX_DEPTH ? _URC_NO_REASON : _URC_END_OF_STACK;
}

/* The i-th slot's part of the check: the return address times an odd
 * 32-bit constant of its own (a bijection, so one changed slot always
 * shows; one multiply by an immediate a frame on a cache hit). */
#define HS_MUL(i) ((uint64_t)(0x27d4eb2fu + 0x20000u * (unsigned)(i)))

static uint64_t hs_check_part(unsigned i, uint64_t v)
{
	return v * HS_MUL(i);
}

/* The check of a cached entry against the stack now: n - 1 slots from
 * the interposer's CFA, unrolled (a jump into the sum). */
#define HS_SLOT(i) (((const uint64_t *)(uintptr_t)cfa)[ce->off[i]] * HS_MUL(i))

static inline uint64_t hs_check_now(const struct hs_centry *ce, uint64_t cfa)
{
	uint64_t h = 0;
	_Static_assert(HEAP_SITE_MAX_DEPTH == 16, "one case a slot");
	switch (ce->n) {
	case 16: h ^= HS_SLOT(14); /* fall through */
	case 15: h ^= HS_SLOT(13); /* fall through */
	case 14: h ^= HS_SLOT(12); /* fall through */
	case 13: h ^= HS_SLOT(11); /* fall through */
	case 12: h ^= HS_SLOT(10); /* fall through */
	case 11: h ^= HS_SLOT(9); /* fall through */
	case 10: h ^= HS_SLOT(8); /* fall through */
	case 9: h ^= HS_SLOT(7); /* fall through */
	case 8: h ^= HS_SLOT(6); /* fall through */
	case 7: h ^= HS_SLOT(5); /* fall through */
	case 6: h ^= HS_SLOT(4); /* fall through */
	case 5: h ^= HS_SLOT(3); /* fall through */
	case 4: h ^= HS_SLOT(2); /* fall through */
	case 3: h ^= HS_SLOT(1); /* fall through */
	case 2: h ^= HS_SLOT(0); /* fall through */
	default: break;
	}
	return h;
}

/* ---- the per-thread caches ---- */
/* A free chunk of the pool, zeroed, or -1.  One never taken is the
 * mapping's zero pages: clearing it faulted in 16 KiB (4 faults) of every
 * process that tracked a block, for nothing. */
static int hs_chunk_take(void)
{
	for (unsigned w = 0; w < HEAP_CACHE_CHUNKS / 64; w++) {
		uint64_t bits = __atomic_load_n(&hs_pool_taken[w], __ATOMIC_RELAXED);
		while (~bits) {
			int b = __builtin_ctzll(~bits);
			if (__atomic_compare_exchange_n(&hs_pool_taken[w], &bits, bits | 1ull << b, 0,
							__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
				__atomic_sub_fetch(&hs_pool_free, 1, __ATOMIC_RELAXED);
				int i = (int)(w * 64 + (unsigned)b);
				if (__atomic_fetch_or(&hs_pool_written[w], 1ull << b, __ATOMIC_RELAXED) &
				    1ull << b)
					memset(&hs_pool[(size_t)i * HS_CHUNK_ENTRIES], 0,
					       sizeof(struct hs_centry) * HS_CHUNK_ENTRIES);
				return i;
			}
		}
	}
	return -1;
}

static void hs_chunk_put(uint16_t i)
{
	__atomic_and_fetch(&hs_pool_taken[i / 64], ~(1ull << (i % 64)), __ATOMIC_RELEASE);
	__atomic_add_fetch(&hs_pool_free, 1, __ATOMIC_RELAXED);
}

static void hs_chunks_give_back(struct hs_cache *c)
{
	for (uint32_t i = 0; i < c->nchunks; i++)
		hs_chunk_put(c->chunk[i]);
	c->nchunks = 0;
}

static void hs_cache_release(void *arg)
{
	struct hs_cache *c = arg;
	hs_tcache = HS_RETIRED; /* frees after this go uncached */
	if (c && c != HS_RETIRED) {
		hs_chunks_give_back(c);
		__atomic_store_n(&c->used, 0, __ATOMIC_RELEASE);
	}
}

static void hs_cache_shape(struct hs_cache *c)
{
	c->set_shift = 64 - 6 - (uint32_t)__builtin_ctz(c->nchunks);
	c->grow_at = c->unwinds + 2u * HS_CHUNK_ENTRIES * c->nchunks;
}

static struct hs_cache *hs_cache_get(void)
{
	struct hs_cache *c = hs_tcache;
	if (c)
		return c == HS_RETIRED ? NULL : c;
	for (unsigned i = 0; i < HEAP_CACHES; i++) {
		uint32_t free_ = 0;
		c = &hs_caches[i];
		if (__atomic_load_n(&c->used, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&c->used, &free_, 1, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			int chunk = hs_chunk_take();
			if (chunk < 0) {
				__atomic_store_n(&c->used, 0, __ATOMIC_RELEASE);
				break;
			}
			uint32_t reached = __atomic_load_n(&hs_caches_reached, __ATOMIC_RELAXED);
			while (reached < i + 1 &&
			       !__atomic_compare_exchange_n(&hs_caches_reached, &reached, i + 1, 1,
							    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
				;
			c->chunk[0] = (uint16_t)chunk;
			c->nchunks = 1;
			c->stack_lo = c->stack_hi = 0; /* another thread's stack */
			hs_cache_shape(c);
			hs_tcache = c;
			pthread_setspecific(hs_key, c);
			return c;
		}
	}
	hs_tcache = HS_RETIRED;
	return NULL;
}

/* Twice the chunks, when the pool can spare them.  Entries stay where they
 * are: under the new shape a lookup may miss them (and unwind once more),
 * and an entry is only taken when its return address, CFA and check all
 * match, wherever it lies. */
static void hs_cache_grow(struct hs_cache *c)
{
	uint32_t n = c->nchunks;
	if (n >= HS_MAX_CHUNKS || __atomic_load_n(&hs_pool_free, __ATOMIC_RELAXED) < HS_CHUNKS_KEEP + n) {
		c->grow_at = UINT64_MAX;
		return;
	}
	for (uint32_t i = n; i < 2 * n; i++) {
		int chunk = hs_chunk_take();
		if (chunk < 0) {
			/* Lost a race for the last ones: give back what this
			 * round took, stay as it was. */
			for (uint32_t j = n; j < i; j++)
				hs_chunk_put(c->chunk[j]);
			c->grow_at = UINT64_MAX;
			return;
		}
		c->chunk[i] = (uint16_t)chunk;
	}
	c->nchunks = 2 * n;
	hs_cache_shape(c);
}

static inline struct hs_centry *hs_set_of(const struct hs_cache *c, uint64_t ret, uint64_t cfa)
{
	uint64_t set = ((ret ^ (cfa << 7)) * 0x9E3779B97F4A7C15ull) >> c->set_shift;
	return &hs_pool[(size_t)c->chunk[set / HS_SETS] * HS_CHUNK_ENTRIES + (set % HS_SETS) * HS_WAYS];
}

void heap_sites_count(int tracked)
{
	struct hs_cache *c = hs_tcache;
	if (c && c != HS_RETIRED) {
		if (tracked)
			c->tracked++;
		else
			c->untracked++;
		return;
	}
	__atomic_add_fetch(tracked ? &hs_g_tracked : &hs_g_untracked, 1, __ATOMIC_RELAXED);
}

static void hs_count_dropped(void)
{
	struct hs_cache *c = hs_tcache;
	if (c && c != HS_RETIRED)
		c->dropped++;
	else
		__atomic_add_fetch(&hs_g_dropped, 1, __ATOMIC_RELAXED);
}

/* Its slots are found again from the interposer's CFA: no signal frame
 * between, no stack switch (so they may be cached and learned from). */
static int hs_walk_from(const struct hs_walk *w, uint64_t cfa)
{
	return w->n > 0 && !w->signal_frame && w->slot[0] + 8 == cfa;
}

/* The path from the interposer's frame: walked again from frame sizes
 * libgcc found before (stepcache.h), else unwound by libgcc, which then
 * teaches the step cache. */
static void hs_unwind(struct hs_cache *c, uint64_t ret, uint64_t cfa, struct hs_walk *w)
{
	if (c && (w->n = stepcache_walk(ret, cfa, c->stack_lo, c->stack_hi, w->pcs, w->slot,
					HEAP_SITE_MAX_DEPTH)) > 0) {
		c->walked++;
		return;
	}
	_Unwind_Backtrace(hs_walk_frame, w);
	if (!c || !hs_walk_from(w, cfa))
		return;
	stepcache_learn(w->pcs, w->slot, w->n, w->n < HEAP_SITE_MAX_DEPTH);
	/* The stack the walks may read: one mapping from the lowest slot to
	 * the highest, extended only by walks that overlap it (a walk on
	 * another stack, a coroutine's, leaves it as it was). */
	uint64_t lo = w->slot[0], hi = w->slot[w->n - 1];
	if (c->stack_hi == 0) {
		c->stack_lo = lo;
		c->stack_hi = hi;
	} else if (lo <= c->stack_hi && hi >= c->stack_lo) {
		c->stack_lo = lo < c->stack_lo ? lo : c->stack_lo;
		c->stack_hi = hi > c->stack_hi ? hi : c->stack_hi;
	}
}

/* A cache miss (or no cache): unwind, intern, cache. */
static uint32_t hs_find_unwound(struct hs_cache *c, uint64_t ret, uint64_t cfa)
{
	struct hs_walk w = {.ret = ret};
	hs_unwind(c, ret, cfa, &w);
	if (w.n == 0) { /* no unwind: the call site alone */
		w.pcs[0] = ret - 1;
		w.n = 1;
	}
	uint32_t site = hs_intern(w.pcs, w.n);
	if (site == 0) {
		hs_count_dropped();
		return 0;
	}
	if (!c || !hs_walk_from(&w, cfa))
		return site; /* not cached */
	struct hs_centry e = {.ret = ret, .cfa = cfa, .site = site, .n = (uint8_t)w.n};
	for (int i = 1; i < w.n; i++) {
		uint64_t off = (w.slot[i] - cfa) / 8;
		if (w.slot[i] < cfa || (w.slot[i] - cfa) % 8 || off > UINT16_MAX)
			return site;
		e.off[i - 1] = (uint16_t)off;
		e.check ^= hs_check_part((unsigned)i - 1, w.pcs[i] + 1);
	}
	hs_set_of(c, ret, cfa)[c->victim++ % HS_WAYS] = e;
	if (c->unwinds >= c->grow_at)
		hs_cache_grow(c);
	return site;
}

/* A cache miss (or no cache): unwind, intern, cache; its time is counted
 * (the runtime's own cost, heap_sites_get_stats). */
__attribute__((noinline)) static uint32_t hs_find_slow(uint64_t ret, uint64_t cfa)
{
	uint64_t t0 = __rdtsc();
	struct hs_cache *c = hs_cache_get();
	if (c)
		c->unwinds++;
	else
		__atomic_add_fetch(&hs_g_unwinds, 1, __ATOMIC_RELAXED);
	uint32_t site = hs_find_unwound(c, ret, cfa);
	uint64_t spent = __rdtsc() - t0;
	if (c)
		c->slow_tsc += spent;
	else
		__atomic_add_fetch(&hs_g_slow_tsc, spent, __ATOMIC_RELAXED);
	return site;
}

/* hs_check_now, for heap_sites_peek: its slots through the overlay,
 * else read safely; -1 where one cannot be read. */
static int hs_check_peek(const struct hs_centry *ce, uint64_t cfa,
			 const struct heap_stack_overlay *ov, uint64_t *h)
{
	*h = 0;
	for (unsigned i = 0; i + 1 < ce->n; i++) {
		uint64_t at = cfa + 8u * ce->off[i], v;
		int j = 0;
		while (ov && j < ov->n && ov->slot[j] != at)
			j++;
		if (ov && j < ov->n)
			v = ov->val[j];
		else if (peek_read(at, &v, sizeof(v)) < 0)
			return -1;
		*h ^= hs_check_part(i, v);
	}
	return 0;
}

uint32_t heap_sites_peek(uint64_t ret, uint64_t cfa, const struct heap_stack_overlay *ov)
{
	struct hs_cache *c = hs_tcache;
	uint64_t h;
	if (!c || c == HS_RETIRED)
		return 0;
	const struct hs_centry *ce = hs_set_of(c, ret, cfa);
	for (unsigned w = 0; w < HS_WAYS; w++, ce++)
		if (ce->ret == ret && ce->cfa == cfa && hs_check_peek(ce, cfa, ov, &h) == 0 &&
		    h == ce->check)
			return ce->site;
	return 0;
}

uint32_t heap_sites_find(uint64_t ret, uint64_t cfa)
{
	struct hs_cache *c = hs_tcache;
	if (c && c != HS_RETIRED) {
		const struct hs_centry *ce = hs_set_of(c, ret, cfa);
		for (unsigned w = 0; w < HS_WAYS; w++, ce++)
			if (ce->ret == ret && ce->cfa == cfa && hs_check_now(ce, cfa) == ce->check)
				return ce->site;
	}
	return hs_find_slow(ret, cfa);
}

/* ---- setup, stats, fork ---- */
static void *hs_map(size_t bytes)
{
	void *p = lockguard_map(bytes, MAP_NORESERVE);
	if (p == MAP_FAILED)
		return NULL;
	hs_reserved += bytes;
	return p;
}

int heap_sites_init(void)
{
	if (__atomic_load_n(&hs_ready, __ATOMIC_ACQUIRE))
		return 0;
	int rc = pthread_key_create(&hs_key, hs_cache_release);
	if (rc != 0)
		return -rc;
	hs_sites = hs_map(sizeof(struct hs_site) * HEAP_SITES);
	hs_caches = hs_map(sizeof(struct hs_cache) * HEAP_CACHES);
	hs_pool = hs_map(sizeof(struct hs_centry) * HS_CHUNK_ENTRIES * HEAP_CACHE_CHUNKS);
	if (!hs_sites || !hs_caches || !hs_pool)
		return -ENOMEM;
	rc = densetab_init(&hs_index, HEAP_SITES, 2 * HEAP_SITES);
	if (rc < 0)
		return rc;
	__atomic_store_n(&hs_ready, 1, __ATOMIC_RELEASE);
	return 0;
}

void heap_sites_get_stats(struct heap_sites_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->tracked = __atomic_load_n(&hs_g_tracked, __ATOMIC_RELAXED);
	st->untracked = __atomic_load_n(&hs_g_untracked, __ATOMIC_RELAXED);
	st->dropped = __atomic_load_n(&hs_g_dropped, __ATOMIC_RELAXED);
	st->unwinds = __atomic_load_n(&hs_g_unwinds, __ATOMIC_RELAXED);
	uint64_t slow_tsc = __atomic_load_n(&hs_g_slow_tsc, __ATOMIC_RELAXED);
	uint32_t reached = __atomic_load_n(&hs_caches_reached, __ATOMIC_RELAXED);
	for (unsigned i = 0; hs_caches && i < reached; i++) {
		const struct hs_cache *c = &hs_caches[i];
		st->tracked += __atomic_load_n(&c->tracked, __ATOMIC_RELAXED);
		st->untracked += __atomic_load_n(&c->untracked, __ATOMIC_RELAXED);
		st->dropped += __atomic_load_n(&c->dropped, __ATOMIC_RELAXED);
		st->unwinds += __atomic_load_n(&c->unwinds, __ATOMIC_RELAXED);
		st->walked += __atomic_load_n(&c->walked, __ATOMIC_RELAXED);
		slow_tsc += __atomic_load_n(&c->slow_tsc, __ATOMIC_RELAXED);
	}
	st->sites = densetab_taken(&hs_index);
	st->slow_ns = cost_tsc_ns(slow_tsc);
	st->bytes_reserved = hs_reserved;
}

/* Lock-free: nothing to hold across fork. */
void heap_sites_prefork(void)
{
}

void heap_sites_postfork_parent(void)
{
}

/* The parent's other threads are gone: their caches go back to the pool
 * (a site one of them was adding is a hole, densetab.h). */
void heap_sites_postfork_child(void)
{
	if (!__atomic_load_n(&hs_ready, __ATOMIC_ACQUIRE))
		return;
	uint32_t reached = __atomic_load_n(&hs_caches_reached, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < reached; i++)
		if (&hs_caches[i] != hs_tcache && hs_caches[i].used) {
			hs_chunks_give_back(&hs_caches[i]);
			hs_caches[i].used = 0;
		}
}
