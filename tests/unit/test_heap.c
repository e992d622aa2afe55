/* Unit test of heap (heap.h): the interposed allocators record live blocks
 * with their allocation sites.
 *
 * The test links the runtime's static library, so its own malloc, free,
 * mmap... are heap.c's.  It checks: blocks from two call sites get two
 * sites whose leaf is the call (within a few bytes before a marker taken
 * right after it) and whose next frame is the helper's caller; the
 * per-thread site cache tells apart the same call reached from two callers
 * and from two depths; interior lookups (first, middle, last byte; one past
 * the end is not the block); free, realloc and each allocator; anonymous
 * mmap, munmap (whole, head, tail, middle), mremap; file and MAP_STACK
 * mappings untracked; threads allocating and freeing while another looks
 * up (no torn answer); a fork child; the sampling of small blocks; the
 * period a budget moves (heap_set_budget), from a thread's start credit;
 * what the tick's window finds through a tracked malloc (test_window_frame).
 * Failures print __LINE__.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "check.h"
#include "witch/cost.h"
#include "witch/heap.h"
#include "witch/heap_mix.h"
#include "witch/heap_next.h"
#include "witch/heap_sites.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, optimize("no-optimize-sibling-calls")))
#define U(p) ((uint64_t)(uintptr_t)(p))

/* Where the code is right after the allocator's call returned. */
NOINLINE static uint64_t marker(void)
{
	return U(__builtin_return_address(0));
}

struct where {
	uint64_t after;  /* a return address just after the allocator's call */
	uint64_t caller; /* the helper's return address */
};

NOINLINE static void *alloc_a(size_t n, struct where *w)
{
	void *p = malloc(n);
	w->after = marker();
	w->caller = U(__builtin_return_address(0));
	return p;
}

NOINLINE static void *alloc_b(size_t n, struct where *w)
{
	void *p = malloc(n);
	w->after = marker();
	w->caller = U(__builtin_return_address(0));
	return p;
}

/* The site of p, and its path; 0 when untracked. */
static uint32_t site_of(void *p, uint64_t *pcs, int *n)
{
	uint32_t site;
	uint64_t start, size;
	if (heap_lookup(U(p), &site, &start, &size) < 0 || start != U(p))
		return 0;
	*n = heap_sites_path(site, pcs, HEAP_SITE_MAX_DEPTH);
	return site;
}

/* The leaf is the call just before `after`; the next frame is the call of
 * the helper. */
static void check_path(int line, void *p, const struct where *w)
{
	uint64_t pcs[HEAP_SITE_MAX_DEPTH];
	int n = 0;
	uint32_t site = site_of(p, pcs, &n);
	CHECK(line, site >= 1, "block %p untracked", p);
	if (site < 1)
		return;
	CHECK(line, n >= 2, "site %u has %d frames", site, n);
	CHECK(line, n >= 1 && pcs[0] < w->after && w->after - pcs[0] < 32,
	      "leaf %#llx is not the call before %#llx", (unsigned long long)pcs[0],
	      (unsigned long long)w->after);
	CHECK(line, n >= 2 && pcs[1] == w->caller - 1, "frame 1 %#llx, want %#llx",
	      (unsigned long long)pcs[1], (unsigned long long)(w->caller - 1));
}

static void test_two_sites(void)
{
	struct where wa, wb, wa2;
	void *a = alloc_a(40, &wa), *b = alloc_b(40, &wb), *a2 = alloc_a(40, &wa2);
	uint64_t pcs[HEAP_SITE_MAX_DEPTH];
	int n;
	check_path(__LINE__, a, &wa);
	check_path(__LINE__, b, &wb);
	check_path(__LINE__, a2, &wa2);
	uint32_t sa = site_of(a, pcs, &n), sb = site_of(b, pcs, &n), sa2 = site_of(a2, pcs, &n);
	CHECK(__LINE__, sa != sb, "two call sites, one site %u", sa);
	CHECK(__LINE__, wa.caller == wa2.caller || sa != sa2, "one context, two sites");
	free(a);
	free(b);
	free(a2);
}

/* The same call from two callers, and from two depths: different sites
 * (the thread's cache must not answer with the other's). */
NOINLINE static void *caller_one(struct where *w)
{
	return alloc_a(72, w);
}

NOINLINE static void *caller_two(struct where *w)
{
	return alloc_a(72, w);
}

NOINLINE static void *deep(int d, struct where *w)
{
	void *p = d ? deep(d - 1, w) : alloc_a(72, w);
	__asm__ volatile("" ::: "memory");
	return p;
}

static void test_cache(void)
{
	uint64_t pcs[HEAP_SITE_MAX_DEPTH];
	int n;
	for (int round = 0; round < 3; round++) { /* the second and third from the cache */
		struct where w1, w2, w3, w4;
		void *p1 = caller_one(&w1), *p2 = caller_two(&w2);
		void *p3 = deep(1, &w3), *p4 = deep(3, &w4);
		check_path(__LINE__, p1, &w1);
		check_path(__LINE__, p2, &w2);
		check_path(__LINE__, p3, &w3);
		uint32_t s1 = site_of(p1, pcs, &n), s2 = site_of(p2, pcs, &n);
		uint32_t s3 = site_of(p3, pcs, &n), s4 = site_of(p4, pcs, &n);
		CHECK(__LINE__, s1 && s2 && s1 != s2, "round %d: callers one and two: sites %u %u",
		      round, s1, s2);
		CHECK(__LINE__, s3 && s4 && s3 != s4, "round %d: depths 1 and 3: sites %u %u", round,
		      s3, s4);
		n = heap_sites_path(s4, pcs, HEAP_SITE_MAX_DEPTH);
		CHECK(__LINE__, n >= 6, "depth 3 path has %d frames", n);
		free(p1);
		free(p2);
		free(p3);
		free(p4);
	}
}

/* Paths walked again from frame sizes (stepcache.h) must be libgcc's.
 * deep(d)'s path is alloc_a's call of malloc, deep's call of alloc_a, d
 * times deep's call of itself, then walk_from's call of deep and on: the
 * pieces libgcc found at depths 0 and 1.  Depths 2 to 13 find their
 * frames all known, so they are walked without libgcc (site_walked), once
 * a libgcc walk from further down (reach_low) has read the stack they lie
 * on: a walk reads only the stretch the thread's libgcc walks read. */
NOINLINE static void reach_low(void)
{
	volatile char pad[4096];
	struct where w;
	free(alloc_b(24, &w));
	__asm__ volatile("" : : "r"(pad) : "memory");
}

NOINLINE static void *walk_from(int d, struct where *w)
{
	void *p = deep(d, w);
	__asm__ volatile("" ::: "memory");
	return p;
}

static void test_walked_paths(void)
{
	uint64_t p0[HEAP_SITE_MAX_DEPTH], p1[HEAP_SITE_MAX_DEPTH], pd[HEAP_SITE_MAX_DEPTH];
	int n0 = 0, n1 = 0, nd = 0;
	struct heap_stats st;
	uint64_t walked = 0;
	reach_low();
	for (int d = 0; d <= 13; d++) { /* one call site of walk_from for all */
		struct where w;
		void *p = walk_from(d, &w);
		uint32_t site = site_of(p, d == 0 ? p0 : d == 1 ? p1 : pd, d == 0 ? &n0 : d == 1 ? &n1 : &nd);
		free(p);
		if (d == 1) {
			CHECK(__LINE__, site && n0 >= 4 && n1 == n0 + 1, "depths 0 and 1: %d and %d frames",
			      n0, n1);
			if (n0 < 4 || n1 != n0 + 1)
				return;
			heap_get_stats(&st);
			walked = st.site_walked;
		}
		if (d < 2)
			continue;
		int want_n = n0 + d < HEAP_SITE_MAX_DEPTH ? n0 + d : HEAP_SITE_MAX_DEPTH;
		CHECK(__LINE__, site && nd == want_n, "depth %d: %d frames, want %d", d, nd, want_n);
		for (int i = 0; site && i < nd && i < want_n; i++) {
			/* frame i of depth d, from the depth 0 and 1 paths */
			uint64_t want = i < 2 ? p0[i] : i < 2 + d ? p1[2] : p0[i - d];
			CHECK(__LINE__, pd[i] == want, "depth %d frame %d: %#llx, want %#llx", d, i,
			      (unsigned long long)pd[i], (unsigned long long)want);
		}
	}
	heap_get_stats(&st);
	CHECK(__LINE__, st.site_walked - walked >= 10, "%llu of 12 depths walked without libgcc",
	      (unsigned long long)(st.site_walked - walked));
}

/* One call site reached at 600 stack depths: 600 cache keys (return
 * address, CFA), more than a thread's first 256 entries hold.  The cache
 * grows (heap_sites.c: it doubles each time it has unwound twice its
 * entries, up to 2048), so by the eighth round nearly every find is a hit:
 * fewer than 150 of its 600 unwind, where a cache that kept 256 entries
 * would unwind nearly all 600 every round. */
#define GROW_DEPTHS 600
static void test_cache_grows(void)
{
	struct heap_stats st;
	uint64_t before = 0;
	for (int round = 0; round < 8; round++) {
		heap_get_stats(&st);
		before = st.site_unwinds;
		for (int d = 0; d < GROW_DEPTHS; d++) {
			struct where w;
			void *p = deep(d, &w);
			if (d == 2 || d == GROW_DEPTHS - 1)
				check_path(__LINE__, p, &w);
			free(p);
		}
	}
	heap_get_stats(&st);
	CHECK(__LINE__, st.site_unwinds - before < GROW_DEPTHS / 4,
	      "last round: %llu of %d finds unwound", (unsigned long long)(st.site_unwinds - before),
	      GROW_DEPTHS);
}

static void test_interior(void)
{
	static const struct {
		int line;
		size_t size;
	} rows[] = {
		{__LINE__, 1},	     {__LINE__, 24},	  {__LINE__, 100},     {__LINE__, 4000},
		{__LINE__, 4096},    {__LINE__, 70000},	  {__LINE__, 300000},  {__LINE__, 5 << 20},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t n = rows[i].size;
		struct where w;
		char *p = alloc_b(n, &w);
		check_path(rows[i].line, p, &w);
		uint64_t at[] = {U(p), U(p) + n / 2, U(p) + n - 1};
		for (int k = 0; k < 3; k++) {
			uint32_t site;
			uint64_t start = 0, size = 0;
			int rc = heap_lookup(at[k], &site, &start, &size);
			CHECK(rows[i].line, rc == 0 && start == U(p) && size == n && site >= 1,
			      "size %zu: lookup of +%llu: rc %d start %#llx size %llu", n,
			      (unsigned long long)(at[k] - U(p)), rc, (unsigned long long)start,
			      (unsigned long long)size);
		}
		uint32_t site;
		uint64_t start = 0, size = 0;
		int rc = heap_lookup(U(p) + n, &site, &start, &size);
		CHECK(rows[i].line, rc < 0 || start != U(p), "size %zu: one past the end is in it", n);
		free(p);
		rc = heap_lookup(U(p), &site, &start, &size);
		CHECK(rows[i].line, rc == -ENOENT, "size %zu: freed block still found (rc %d)", n, rc);
	}
}

/* One helper per allocator: the marker right after its call. */
#define ALLOC_HELPER(name, expr)                                  \
	NOINLINE static void *name(uint64_t *after)               \
	{                                                         \
		void *p = NULL;                                   \
		expr;                                             \
		*after = marker();                                \
		return p;                                         \
	}
ALLOC_HELPER(do_malloc, p = malloc(33))
ALLOC_HELPER(do_calloc, p = calloc(3, 40))
ALLOC_HELPER(do_aligned_alloc, p = aligned_alloc(64, 256))
ALLOC_HELPER(do_posix_memalign, if (posix_memalign(&p, 4096, 1000) != 0) p = NULL)
ALLOC_HELPER(do_memalign, p = memalign(128, 77))
ALLOC_HELPER(do_valloc, p = valloc(5000))
ALLOC_HELPER(do_pvalloc, p = pvalloc(4096))
ALLOC_HELPER(do_reallocarray, p = reallocarray(NULL, 7, 13))
ALLOC_HELPER(do_mmap, p = mmap(NULL, 8 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
ALLOC_HELPER(do_realloc_big, p = realloc(*(void **)after, 1 << 20))

static void test_realloc(void)
{
	struct where w;
	char *p = alloc_a(1234, &w);
	void *blocker = malloc(1234); /* p cannot grow in place */
	uint64_t after = U(p);
	char *q = do_realloc_big(&after);
	uint32_t site;
	uint64_t start, size, pcs[HEAP_SITE_MAX_DEPTH];
	CHECK(__LINE__, q != p, "realloc did not move: %p %p %p", (void *)p, blocker, (void *)q);
	free(blocker);
	CHECK(__LINE__, heap_lookup(U(q) + 1000, &site, &start, &size) == 0 && start == U(q) &&
				size == 1 << 20,
	      "the moved block is not found whole");
	int n = heap_sites_path(site, pcs, HEAP_SITE_MAX_DEPTH);
	CHECK(__LINE__, n >= 1 && pcs[0] < after && after - pcs[0] < 32,
	      "realloc's block is not from the realloc call");
	CHECK(__LINE__, heap_lookup(U(p), &site, &start, &size) < 0 || start != U(p),
	      "the old block is still found");
	char *r = realloc(q, 50);
	CHECK(__LINE__, heap_lookup(U(r) + 49, &site, &start, &size) == 0 && start == U(r) && size == 50,
	      "shrunk block");
	CHECK(__LINE__, heap_lookup(U(r) + 50, &site, &start, &size) < 0 || start != U(r),
	      "shrunk block still as long");
	free(r);
	CHECK(__LINE__, heap_lookup(U(r), &site, &start, &size) == -ENOENT, "freed after realloc");
}

static void test_allocators(void)
{
	static const struct {
		int line;
		void *(*fn)(uint64_t *);
		size_t size, align;
	} rows[] = {
		{__LINE__, do_calloc, 3 * 40, 0},	   {__LINE__, do_aligned_alloc, 256, 64},
		{__LINE__, do_posix_memalign, 1000, 4096}, {__LINE__, do_memalign, 77, 128},
		{__LINE__, do_valloc, 5000, 4096},	   {__LINE__, do_pvalloc, 4096, 4096},
		{__LINE__, do_reallocarray, 7 * 13, 0},	   {__LINE__, do_malloc, 33, 0},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t after;
		size_t n = rows[i].size;
		void *p = rows[i].fn(&after);
		uint32_t site;
		uint64_t start = 0, size = 0, pcs[HEAP_SITE_MAX_DEPTH];
		int rc = heap_lookup(U(p) + n - 1, &site, &start, &size);
		CHECK(rows[i].line, rc == 0 && start == U(p) && size == n, "not tracked: rc %d size %llu",
		      rc, (unsigned long long)size);
		CHECK(rows[i].line, !rows[i].align || U(p) % rows[i].align == 0, "misaligned %p", p);
		int k = rc == 0 ? heap_sites_path(site, pcs, HEAP_SITE_MAX_DEPTH) : 0;
		CHECK(rows[i].line, k >= 1 && pcs[0] < after && after - pcs[0] < 48,
		      "leaf %#llx is not the call before %#llx", (unsigned long long)pcs[0],
		      (unsigned long long)after);
		CHECK(rows[i].line, malloc_usable_size(p) >= n, "malloc_usable_size");
		free(p);
		CHECK(rows[i].line, heap_lookup(U(p), &site, &start, &size) == -ENOENT, "not freed");
	}
	void *p;
	CHECK(__LINE__, posix_memalign(&p, 3, 8) == EINVAL, "posix_memalign(3) accepted");
	errno = 0;
	size_t volatile half = SIZE_MAX / 2;
	CHECK(__LINE__, reallocarray(NULL, half, 3) == NULL && errno == ENOMEM,
	      "reallocarray overflow");
}

static int found(uint64_t addr, uint64_t *start, uint64_t *size)
{
	uint32_t site;
	return heap_lookup(addr, &site, start, size) == 0;
}

static void test_mmap(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t s, z;
	uint64_t after;
	char *m = do_mmap(&after);
	uint32_t site;
	uint64_t pcs[HEAP_SITE_MAX_DEPTH];
	CHECK(__LINE__, heap_lookup(U(m) + 5 * pg, &site, &s, &z) == 0 && s == U(m) &&
				z == (uint64_t)(8 * pg),
	      "anonymous mmap untracked");
	int n = heap_sites_path(site, pcs, HEAP_SITE_MAX_DEPTH);
	CHECK(__LINE__, n >= 1 && pcs[0] < after && after - pcs[0] < 48, "mmap's leaf");
	/* Head: the tail stays. */
	munmap(m, 2 * pg);
	CHECK(__LINE__, !found(U(m), &s, &z), "unmapped head still found");
	CHECK(__LINE__, found(U(m) + 3 * pg, &s, &z) && s == U(m) + 2 * pg && z == (uint64_t)(6 * pg),
	      "head cut: rest is [2, 8) pages");
	/* Tail: the head stays. */
	munmap(m + 6 * pg, 2 * pg);
	CHECK(__LINE__, !found(U(m) + 7 * pg, &s, &z), "unmapped tail still found");
	CHECK(__LINE__, found(U(m) + 5 * pg, &s, &z) && s == U(m) + 2 * pg && z == (uint64_t)(4 * pg),
	      "tail cut: rest is [2, 6) pages");
	/* Middle: the head stays, the part after the hole is let go. */
	munmap(m + 3 * pg, pg);
	CHECK(__LINE__, found(U(m) + 2 * pg, &s, &z) && s == U(m) + 2 * pg && z == (uint64_t)pg,
	      "middle cut: head is [2, 3) pages");
	CHECK(__LINE__, !found(U(m) + 3 * pg, &s, &z) && !found(U(m) + 4 * pg, &s, &z),
	      "middle cut: the hole and after untracked");
	munmap(m + 2 * pg, 4 * pg);
	CHECK(__LINE__, !found(U(m) + 2 * pg, &s, &z), "whole unmap");

	/* mremap keeps the site. */
	char *r = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint32_t rsite;
	CHECK(__LINE__, heap_lookup(U(r), &rsite, &s, &z) == 0, "second mmap");
	char *r2 = mremap(r, 4 * pg, 64 * pg, MREMAP_MAYMOVE);
	CHECK(__LINE__, r2 != MAP_FAILED && heap_lookup(U(r2) + 63 * pg, &site, &s, &z) == 0 &&
				s == U(r2) && z == (uint64_t)(64 * pg) && site == rsite,
	      "mremap: not tracked with its site");
	CHECK(__LINE__, r2 == r || !found(U(r), &s, &z), "mremap: old place still found");
	munmap(r2, 64 * pg);
	CHECK(__LINE__, !found(U(r2), &s, &z), "after munmap of the mremapped region");

	/* Not heap: file mappings, stacks. */
	int fd = open("/proc/self/exe", O_RDONLY);
	char *f = fd >= 0 ? mmap(NULL, pg, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	CHECK(__LINE__, f != MAP_FAILED && !found(U(f), &s, &z), "file mapping tracked");
	if (f != MAP_FAILED)
		munmap(f, pg);
	if (fd >= 0)
		close(fd);
	char *st = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	CHECK(__LINE__, st != MAP_FAILED && !found(U(st), &s, &z), "MAP_STACK mapping tracked");
	munmap(st, 4 * pg);
	/* A fixed mapping over a tracked one replaces it. */
	char *x = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fd = open("/proc/self/exe", O_RDONLY);
	CHECK(__LINE__, mmap(x, pg, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == x, "MAP_FIXED");
	CHECK(__LINE__, !found(U(x), &s, &z), "file mapped over a tracked region: still heap");
	close(fd);
	munmap(x, 4 * pg);
}

/* ---- threads: writers allocate and free, a reader looks up ----
 * Writer i allocates only through writer_alloc_i, sizes = i (mod 4), so a
 * block's site and its size name the same writer: a torn entry shows. */
#define WRITERS 4
#define LIVE 64
static uint64_t volatile shared[WRITERS][LIVE]; /* a block's address, or 0 */
static int stop;

#define WRITER_ALLOC(i)                                                             \
	NOINLINE static void *writer_alloc_##i(size_t n)                               \
	{                                                                              \
		void *p = malloc(n);                                                   \
		__asm__ volatile("" ::: "memory");                                     \
		return p;                                                              \
	}
WRITER_ALLOC(0)
WRITER_ALLOC(1)
WRITER_ALLOC(2)
WRITER_ALLOC(3)
static void *(*const writer_alloc[WRITERS])(size_t) = {writer_alloc_0, writer_alloc_1,
						       writer_alloc_2, writer_alloc_3};

static uint64_t writer_leaf[WRITERS];

static void *writer(void *arg)
{
	int i = (int)(intptr_t)arg;
	uint64_t x = 88172645463325252ull + (uint64_t)i;
	void *mine[LIVE] = {0};
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		int k = (int)(x % LIVE);
		if (mine[k]) {
			__atomic_store_n(&shared[i][k], 0, __ATOMIC_RELAXED);
			free(mine[k]);
		}
		size_t n = (size_t)((x >> 8) % 3000) * WRITERS + (size_t)i + WRITERS;
		mine[k] = writer_alloc[i](n);
		__atomic_store_n(&shared[i][k], U(mine[k]), __ATOMIC_RELAXED);
	}
	for (int k = 0; k < LIVE; k++)
		free(mine[k]);
	return NULL;
}

static void test_threads(void)
{
	pthread_t t[WRITERS];
	for (int i = 0; i < WRITERS; i++) {
		void *p = writer_alloc[i](WRITERS + i);
		uint32_t site;
		uint64_t s, z;
		CHECK(__LINE__, heap_lookup(U(p), &site, &s, &z) == 0 &&
					heap_sites_path(site, &writer_leaf[i], 1) == 1,
		      "writer %d site", i);
		free(p);
	}
	for (int i = 0; i < WRITERS; i++)
		pthread_create(&t[i], NULL, writer, (void *)(intptr_t)i);
	/* Each writer has a block out before the reader starts: on a busy
	 * machine they may start after its 2M lookups are done (0 found, once
	 * under ctest -j2).  At most 2 s. */
	for (int i = 0, waited = 0; i < WRITERS && waited < 2000;) {
		int any = 0;
		for (int k = 0; k < LIVE; k++)
			any |= __atomic_load_n(&shared[i][k], __ATOMIC_RELAXED) != 0;
		if (any)
			i++;
		else
			usleep(1000), waited++;
	}
	uint64_t x = 1234567, hits = 0, torn = 0;
	for (long it = 0; it < 2000000; it++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t base = shared[x % WRITERS][(x >> 8) % LIVE];
		if (!base)
			continue;
		uint64_t addr = base + (x >> 20) % 12000;
		uint32_t site;
		uint64_t s, z;
		if (heap_lookup(addr, &site, &s, &z) < 0)
			continue;
		hits++;
		int w = -1;
		uint64_t leaf = 0;
		if (heap_sites_path(site, &leaf, 1) == 1)
			for (int i = 0; i < WRITERS; i++)
				if (writer_leaf[i] == leaf)
					w = i;
		if (w < 0 || z % WRITERS != (uint64_t)w || addr < s || addr - s >= z || s % 16 != 0) {
			if (torn++ < 5)
				FAIL(__LINE__, "torn: addr %#llx start %#llx size %llu site %u (writer %d)",
				     (unsigned long long)addr, (unsigned long long)s,
				     (unsigned long long)z, site, w);
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(t[i], NULL);
	CHECK(__LINE__, hits > 1000, "the reader found only %llu blocks", (unsigned long long)hits);
	printf("threads: %llu lookups found a block, %llu torn\n", (unsigned long long)hits,
	       (unsigned long long)torn);
}

/* The child of a fork (taken while other threads allocate) keeps its
 * parent's blocks and tracks its own. */
static void test_fork(void)
{
	struct where w;
	void *keep = alloc_a(500, &w);
	__atomic_store_n(&stop, 0, __ATOMIC_RELAXED);
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, writer, (void *)(intptr_t)i);
	usleep(20000);
	heap_prefork();
	pid_t pid = fork();
	if (pid == 0) {
		heap_postfork_child();
		int bad = 0;
		uint64_t s, z;
		bad |= !found(U(keep) + 499, &s, &z) || s != U(keep);
		for (int i = 0; i < 20000; i++) {
			struct where w2;
			void *p = alloc_b(16 + (size_t)(i % 500), &w2);
			bad |= !found(U(p), &s, &z) || s != U(p);
			free(p);
			bad |= found(U(p), &s, &z) && s == U(p);
		}
		_exit(bad ? 1 : 0);
	}
	heap_postfork_parent();
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	int status = 0;
	CHECK(__LINE__, pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
				WEXITSTATUS(status) == 0,
	      "fork child: status %#x", status);
	free(keep);
}

/* Sampled small blocks: about size / period of them tracked, each adding
 * k period (k >= 1 sample bytes in it) to its site's live bytes in the mix
 * (heap_mix.h), so that the mix estimates the small bytes live; the
 * site's first ones tracked whole and not in the mix; the large all
 * tracked; every tracked one removed by its free, and its part of the mix
 * with it. */
static void test_sampling(void)
{
	enum { SMALL = 20000 };
	static void *small[SMALL];
	uint64_t s, z;
	uint32_t site = 0, any;
	heap_set_sample_bytes(4096);
	int64_t mix0 = heap_mix_total();
	int tracked = 0, big = 0, first = 0, windows = 0;
	for (int i = 0; i < SMALL; i++) {
		small[i] = malloc(64);
		if (heap_lookup(U(small[i]) + 63, &site, &s, &z) < 0 || s != U(small[i]))
			continue;
		tracked++;
		first += i < HEAP_FIRST_BLOCKS;
		windows += heap_mix_holds(U(small[i]));
	}
	int64_t mix = heap_mix_total() - mix0;
	for (int i = 0; i < 50; i++) {
		void *p = malloc(8192 + (size_t)i);
		big += found(U(p), &s, &z);
		free(p);
	}
	/* The site's first ones, then ~20000 * 64 / 4096 = 312 (sd ~ 17):
	 * within 5 sd. */
	enum { FIRST = HEAP_FIRST_BLOCKS, REST = SMALL - HEAP_FIRST_BLOCKS };
	CHECK(__LINE__, tracked > FIRST + 225 && tracked < FIRST + 400, "%d of %d 64-byte blocks tracked",
	      tracked, SMALL);
	CHECK(__LINE__, first == FIRST, "%d of the site's first %d blocks tracked", first, FIRST);
	CHECK(__LINE__, windows == tracked, "%d of %d tracked blocks in a noted window", windows,
	      tracked);
	/* REST x 64 bytes live, estimated with sd ~ 4096 x 17 ~ 72,000: within 5 sd. */
	CHECK(__LINE__, mix > (int64_t)REST * 64 - 360000 && mix < (int64_t)REST * 64 + 360000,
	      "the mix holds %lld bytes for %d", (long long)mix, REST * 64);
	CHECK(__LINE__, mix % 4096 == 0, "the mix holds %lld, not k x 4096", (long long)mix);
	/* One site had small blocks since mix0: draws name it (or a site of an
	 * earlier test whose sampled blocks live on, none here: mix0 == 0). */
	CHECK(__LINE__, mix0 == 0, "sampled blocks live before the test: %lld bytes", (long long)mix0);
	CHECK(__LINE__, heap_mix_draw(0, &any) == 0 && any == site && heap_mix_draw(~0ull, &any) == 0 &&
				any == site,
	      "a draw named site %u, want %u", any, site);
	CHECK(__LINE__, big == 50, "%d of 50 large blocks tracked", big);
	CHECK(__LINE__, heap_sample_bytes() == 4096, "period");
	int left = 0;
	for (int i = 0; i < SMALL; i++) {
		uint64_t a = U(small[i]);
		free(small[i]);
		left += found(a, &s, &z) && s == a;
	}
	CHECK(__LINE__, left == 0, "%d sampled blocks still found after free", left);
	CHECK(__LINE__, heap_mix_total() == mix0 && heap_mix_draw(0, &any) == -ENOENT,
	      "the mix holds %lld after every free, want %lld", (long long)heap_mix_total(),
	      (long long)mix0);
	heap_set_sample_bytes(0);
	printf("sampling: %d of %d 64-byte blocks tracked at 4096, the mix %lld bytes for %d\n",
	       tracked, SMALL, (long long)mix, REST * 64);
}

/* Under a budget each HEAP_BUDGET_BLOCKS tracked blocks move the thread's
 * period: a share no tracking fits (1e-12 of the CPU time, no credit)
 * doubles it each time up to HEAP_STEP_LIMIT steps, one it always fits
 * (4: four times the CPU time) halves it back once the debt is paid and
 * half the credit (1 ms) is back.  The
 * live blocks sampled on the way each keep the period they were drawn
 * with: the mix estimates their bytes (below), and their frees take out of
 * it exactly what they put in, whatever the period is at the free. */
static void test_budget(void)
{
	enum { N = 40000, SIZE = 1024 };
	static void *live[N];
	const uint64_t base = 4096, top = base << HEAP_STEP_LIMIT;
	struct heap_stats st;
	heap_set_sample_bytes(base);
	heap_set_budget(1e-12, 0, 0);
	int64_t mix0 = heap_mix_total();
	int steps_seen = 0;
	uint64_t last = heap_thread_sample_bytes();
	for (int i = 0; i < N; i++) {
		live[i] = malloc(SIZE);
		uint64_t now = heap_thread_sample_bytes();
		steps_seen += now != last;
		CHECK(__LINE__, now == last || now == 2 * last, "period %llu -> %llu: not doubled",
		      (unsigned long long)last, (unsigned long long)now);
		last = now;
	}
	CHECK(__LINE__, last == top && steps_seen == (int)HEAP_STEP_LIMIT,
	      "period %llu after %d steps, want %llu after %u", (unsigned long long)last, steps_seen,
	      (unsigned long long)top, HEAP_STEP_LIMIT);
	/* N x 1 KiB live (the first HEAP_FIRST_BLOCKS of the call site, tracked
	 * whole and outside the mix, at most 4 KiB off).  Each block's k
	 * period has variance <= SIZE x period, so the estimate's sd is at
	 * most sqrt(40 MB x 256 KiB) ~ 3.3 MB (8%): within 0.5-1.5 of the
	 * truth is 6 sd. */
	int64_t mix = heap_mix_total() - mix0, want = (int64_t)N * SIZE;
	CHECK(__LINE__, mix > want / 2 && mix < want + want / 2, "the mix holds %lld for %lld live",
	      (long long)mix, (long long)want);
	CHECK(__LINE__, mix % (int64_t)base == 0, "the mix holds %lld, not a sum of k x period",
	      (long long)mix);
	/* Back down: a share always met halves the period each window. */
	heap_set_budget(4.0, 1e6, 1e6);
	for (int i = 0; i < 20 * N && heap_thread_sample_bytes() > base; i++) {
		void *volatile p = malloc(SIZE); /* (a malloc freed at once is optimized out) */
		free(p);
	}
	CHECK(__LINE__, heap_thread_sample_bytes() == base, "period %llu under a share always met",
	      (unsigned long long)heap_thread_sample_bytes());
	for (int i = 0; i < N; i++)
		free(live[i]);
	CHECK(__LINE__, heap_mix_total() == mix0, "the mix holds %lld after every free, want %lld",
	      (long long)heap_mix_total(), (long long)mix0);
	heap_get_stats(&st);
	CHECK(__LINE__, st.sample_bytes_max == top && st.track_ns > 0,
	      "stats: largest period %llu (want %llu), tracking %.0f ns",
	      (unsigned long long)st.sample_bytes_max, (unsigned long long)top, st.track_ns);
	heap_set_budget(0, 0, 0);
	heap_set_sample_bytes(0);
	printf("budget: %d steps up to %llu, the mix %lld bytes for %lld\n", steps_seen,
	       (unsigned long long)top, (long long)mix, (long long)want);
}

/* A thread's budget starts at its start credit, checked after each of
 * its first HEAP_BUDGET_BLOCKS_EARLY tracked blocks: with none (start 0,
 * a share no tracking fits) its first tracked block doubles the period,
 * and from then on a new call site's first blocks are not recorded whole
 * (a 16-byte one is tracked only by its sample bytes: 4 of them at a
 * 2 MiB period, ~3e-5); with a start credit of 1 s the period stays and
 * the new site's first HEAP_FIRST_BLOCKS are all tracked.  Each case runs
 * in a thread of its own: a new thread's state is where the budget
 * starts. */
struct budget_start_case {
	int line;
	double start_ns;
	uint64_t want_period; /* after one tracked block, base 1 MiB */
	int want_first;       /* of the new site's HEAP_FIRST_BLOCKS, tracked */
};

NOINLINE static void *alloc_new_site(size_t n)
{
	return malloc(n);
}

static void *budget_start_thread(void *arg)
{
	const struct budget_start_case *c = arg;
	void *first[HEAP_FIRST_BLOCKS];
	uint64_t s, z;
	void *volatile big = malloc(1u << 20); /* at the period: tracked (volatile: kept) */
	uint64_t period = heap_thread_sample_bytes();
	int tracked = 0;
	for (int i = 0; i < HEAP_FIRST_BLOCKS; i++) {
		first[i] = alloc_new_site(16);
		tracked += found(U(first[i]), &s, &z);
	}
	CHECK(c->line, period == c->want_period && tracked == c->want_first,
	      "start credit %.0f ns: period %llu after one block (want %llu), %d of the new "
	      "site's first %d tracked (want %d)", c->start_ns, (unsigned long long)period,
	      (unsigned long long)c->want_period, tracked, HEAP_FIRST_BLOCKS, c->want_first);
	free(big);
	for (int i = 0; i < HEAP_FIRST_BLOCKS; i++)
		free(first[i]);
	return NULL;
}

static void test_budget_start(void)
{
	static const struct budget_start_case cases[] = {
		{__LINE__, 0, 2u << 20, 0},
		{__LINE__, 1e9, 1u << 20, HEAP_FIRST_BLOCKS},
	};
	heap_set_sample_bytes(1u << 20);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pthread_t th;
		heap_set_budget(1e-12, cases[i].start_ns, 5e9);
		if (pthread_create(&th, NULL, budget_start_thread, (void *)&cases[i]) != 0) {
			CHECK(cases[i].line, 0, "pthread_create");
			continue;
		}
		pthread_join(th, NULL);
	}
	heap_set_budget(0, 0, 0);
	heap_set_sample_bytes(0);
}

/* The tick's window through a tracked malloc (heap_window_call,
 * heap_window_return, heap_pending_site, heap_window_site,
 * heap_window_block).  test_call_malloc_regs calls
 * malloc with known values in the registers a callee keeps; the allocator
 * the interposer calls is fake_malloc, which asks what a window that ran it
 * to its return would continue with: those values, the return address
 * right after the call and the stack pointer there; the block it returns
 * is the site's while the call is open, and nothing after. */
void *test_call_malloc_regs(size_t n, uint64_t *out);
__asm__(".text\n"
	".type test_call_malloc_regs, @function\n"
	"test_call_malloc_regs:\n"
	".cfi_startproc\n"
	"push %rbx\n.cfi_adjust_cfa_offset 8\n.cfi_offset %rbx, -16\n"
	"push %rbp\n.cfi_adjust_cfa_offset 8\n.cfi_offset %rbp, -24\n"
	"push %r12\n.cfi_adjust_cfa_offset 8\n.cfi_offset %r12, -32\n"
	"push %r13\n.cfi_adjust_cfa_offset 8\n.cfi_offset %r13, -40\n"
	"push %r14\n.cfi_adjust_cfa_offset 8\n.cfi_offset %r14, -48\n"
	"push %r15\n.cfi_adjust_cfa_offset 8\n.cfi_offset %r15, -56\n"
	"push %rsi\n.cfi_adjust_cfa_offset 8\n"
	"movabs $0x1111111111111111, %rbx\n"
	"movabs $0x2222222222222222, %rbp\n"
	"movabs $0x3333333333333333, %r12\n"
	"movabs $0x4444444444444444, %r13\n"
	"movabs $0x5555555555555555, %r14\n"
	"movabs $0x6666666666666666, %r15\n"
	"call malloc@PLT\n"
	"1:\n"
	"mov %rsp, %rcx\n"
	"mov 56(%rsp), %r8\n"
	"pop %rsi\n.cfi_adjust_cfa_offset -8\n"
	"lea 1b(%rip), %rdx\n"
	"mov %rdx, 0(%rsi)\n"
	"mov %rcx, 8(%rsi)\n"
	"mov %r8, 16(%rsi)\n"
	"pop %r15\n.cfi_adjust_cfa_offset -8\n"
	"pop %r14\n.cfi_adjust_cfa_offset -8\n"
	"pop %r13\n.cfi_adjust_cfa_offset -8\n"
	"pop %r12\n.cfi_adjust_cfa_offset -8\n"
	"pop %rbp\n.cfi_adjust_cfa_offset -8\n"
	"pop %rbx\n.cfi_adjust_cfa_offset -8\n"
	"ret\n"
	".cfi_endproc\n"
	".size test_call_malloc_regs, .-test_call_malloc_regs\n");

static const struct heap_next_fns *window_next; /* the allocator's own */
static struct {
	int rc, rc_outside, rc_low, in_block, past_block;
	uint32_t site;
	struct heap_frame_regs regs;
	void *p;
} window_seen;

NOINLINE static void *fake_malloc(size_t n)
{
	/* where the interposer's ret leaves its stack: this frame's CFA */
	uint64_t sp = U(__builtin_frame_address(0)) + 16;
	void *p = window_next->malloc(n);
	struct heap_frame_regs r;
	uint32_t site = 0, other;
	window_seen.p = p;
	window_seen.rc_low = heap_window_return(sp - 4096, U(p), &r);
	window_seen.rc_outside = heap_pending_site(U(p), &other) == 0; /* before the window ran it */
	window_seen.rc = heap_window_return(sp, U(p), &window_seen.regs);
	window_seen.in_block = heap_pending_site(U(p) + n - 1, &site) == 0;
	window_seen.site = site;
	window_seen.past_block = heap_pending_site(U(p) + n, &other) == 0;
	return p;
}

static void test_window_frame(void)
{
	static struct heap_next_fns fake;
	const size_t n = 64 << 10;
	uint64_t out[3]; /* the call's return address and stack pointer; the helper's return address */
	uint64_t real;
	window_next = __atomic_load_n(&heap_next_table, __ATOMIC_ACQUIRE);
	if (!window_next) {
		FAIL(__LINE__, "no allocator resolved after heap_init");
		return;
	}
	fake = *window_next;
	fake.malloc = fake_malloc;
	__atomic_store_n(&heap_next_table, &fake, __ATOMIC_RELEASE);
	CHECK(__LINE__, heap_window_call(U(malloc), &real) == HEAP_WINDOW_ALLOCATES && real == U(fake_malloc),
	      "malloc's interposer does not pass the window on to the allocator's malloc");
	CHECK(__LINE__, heap_window_call(U(free), &real) == 0 && real == U(window_next->free),
	      "free's interposer does not pass the window on to the allocator's free");
	CHECK(__LINE__, heap_window_call(U(calloc), &real) == -ENOENT,
	      "calloc's interposer is passed (its clearing is counted by bytes)");
	memset(&window_seen, 0, sizeof(window_seen));
	void *p = test_call_malloc_regs(n, out);
	__atomic_store_n(&heap_next_table, window_next, __ATOMIC_RELEASE);

	static const uint64_t want[6] = {0x1111111111111111ull, 0x2222222222222222ull,
					 0x3333333333333333ull, 0x4444444444444444ull,
					 0x5555555555555555ull, 0x6666666666666666ull};
	CHECK(__LINE__, p == window_seen.p && window_seen.rc == 0,
	      "inside the tracked malloc: heap_window_return %d", window_seen.rc);
	for (int i = 0; i < 6; i++)
		CHECK(__LINE__, window_seen.regs.kept[i] == want[i],
		      "kept register %d: %llx, the program's %llx", i,
		      (unsigned long long)window_seen.regs.kept[i], (unsigned long long)want[i]);
	CHECK(__LINE__, window_seen.regs.ip == out[0] && window_seen.regs.sp == out[1],
	      "returns to %llx sp %llx; the call returned to %llx sp %llx",
	      (unsigned long long)window_seen.regs.ip, (unsigned long long)window_seen.regs.sp,
	      (unsigned long long)out[0], (unsigned long long)out[1]);
	CHECK(__LINE__, window_seen.rc_low == -ENOENT, "a stack pointer far below the frame is taken");
	CHECK(__LINE__, !window_seen.rc_outside, "the block is found before a window ran malloc");
	uint32_t site = 0;
	uint64_t s, z;
	CHECK(__LINE__, heap_lookup(U(p), &site, &s, &z) == 0 && window_seen.in_block &&
				window_seen.site == site && !window_seen.past_block,
	      "pending site %u (in %d, past %d), tracked as %u", window_seen.site,
	      window_seen.in_block, window_seen.past_block, site);
	struct heap_frame_regs r;
	CHECK(__LINE__, heap_window_return(out[1] - 32, U(p), &r) == -ENOENT &&
				heap_pending_site(U(p), &site) == -ENOENT,
	      "the frame is still open after malloc returned");

	/* A window passing the same call at its entry (the call's return
	 * address out[0], the caller's stack pointer after it out[1]) finds
	 * its site in the cache, which checks the callers' return addresses
	 * on the stack.  test_call_malloc_regs's own (out[2], above its 7
	 * pushes) has been overwritten by the calls since it returned, as a
	 * frame a window emulated the call of is not yet written: the
	 * overlay, the window's emulated calls, has it. */
	uint64_t own_slot = out[1] + 56, wrong = out[2] + 1;
	struct heap_stack_overlay right = {.n = 1, .slot = &own_slot, .val = &out[2]};
	struct heap_stack_overlay bad = {.n = 1, .slot = &own_slot, .val = &wrong};
	CHECK(__LINE__, heap_window_site(n, out[0], out[1], &right) == site,
	      "the call's site is not found ahead: %u for %u",
	      heap_window_site(n, out[0], out[1], &right), site);
	CHECK(__LINE__, heap_window_site(n, out[0], out[1], &bad) == 0 &&
				heap_window_site(n, out[0], out[1], NULL) == 0,
	      "a caller's return address other than the cached one is taken");
	CHECK(__LINE__, heap_window_site(n, out[0] + 1, out[1], &right) == 0 &&
				heap_window_site(n, out[0], out[1] + 16, &right) == 0,
	      "another call or stack depth is taken for the cached one");
	heap_set_sample_bytes(4096);
	CHECK(__LINE__, heap_window_site(1000, out[0], out[1], NULL) == 0,
	      "a block below the period (tracked by chance) has a site ahead");
	heap_set_sample_bytes(0);
	/* The block the window's call returned is the site's until the next. */
	heap_window_block(U(p), n, site);
	uint32_t got = 0;
	CHECK(__LINE__, heap_pending_site(U(p) + n - 1, &got) == 0 && got == site &&
				heap_pending_site(U(p) + n, &got) == -ENOENT &&
				heap_pending_site(U(p) - 1, &got) == -ENOENT,
	      "the window's block: last byte %u, one past and one before taken", got);
	heap_window_block(0, 0, 0);
	CHECK(__LINE__, heap_pending_site(U(p), &got) == -ENOENT, "the window's block stays");
	free(p);
}

int main(void)
{
	void *early = malloc(64);
	struct heap_stats st;
	heap_set_sample_bytes(0); /* every block, but in test_sampling and test_budget */
	int rc = cost_init(0); /* the TSC rate, for the tracking time */
	if (rc == 0)
		rc = heap_init();
	if (rc < 0) {
		fprintf(stderr, "cost_init or heap_init: %s\n", strerror(-rc));
		return 1;
	}
	uint32_t site;
	uint64_t s, z;
	CHECK(__LINE__, heap_lookup(U(early), &site, &s, &z) == -ENOENT,
	      "a block from before heap_init is tracked");
	free(early);
	CHECK(__LINE__, heap_sites_path(0, &s, 1) == -ENOENT && heap_sites_path(HEAP_SITES + 1, &s, 1) == -ENOENT,
	      "bad sites have paths");
	test_two_sites();
	test_cache();
	test_walked_paths();
	test_cache_grows();
	test_interior();
	test_realloc();
	test_allocators();
	test_mmap();
	test_threads();
	test_fork();
	test_sampling();
	test_budget();
	test_budget_start();
	test_window_frame();
	heap_get_stats(&st);
	CHECK(__LINE__, st.blocks_tracked > 1000 && st.sites >= 10 && st.bytes_reserved > 0 &&
				st.bytes_reserved < (4u << 20),
	      "stats: tracked %llu sites %llu reserved %llu", (unsigned long long)st.blocks_tracked,
	      (unsigned long long)st.sites, (unsigned long long)st.bytes_reserved);
	printf("stats: tracked %llu untracked %llu sites %llu dropped %llu reserved %llu\n",
	       (unsigned long long)st.blocks_tracked, (unsigned long long)st.blocks_untracked,
	       (unsigned long long)st.sites, (unsigned long long)st.sites_dropped,
	       (unsigned long long)st.bytes_reserved);
	if (check_failures)
		fprintf(stderr, "%d failures\n", check_failures);
	return check_failures != 0;
}
