/* heap: live heap blocks and their allocation sites (see heap.h). */
#include "witch/heap.h"
#include "witch/bulk.h"
#include "witch/context.h"
#include "witch/cost.h"
#include "witch/rawsys.h"
#include "witch/heap_mix.h"
#include "witch/heap_sites.h"
#include "witch/heap_table.h"
#include "witch/export.h"

#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <x86intrin.h>

#include "witch/heap_next.h"

/* This thread holds (heap_thread_hold): its allocations come from the
 * boot arena, off the program's heap, where there is room: the loader's,
 * when a tick's handler loads the decoder (deps.h), ~9.5 KiB in 19 calls,
 * would otherwise take chunks of the program's heap at a random point of
 * its run (realloc_copy's block, guarded, grew in place).  Read by every
 * allocation: one TLS load. */
static __thread int heap_hold_here __attribute__((tls_model("initial-exec")));

static inline void *held_alloc(size_t n, size_t align)
{
	return __builtin_expect(heap_hold_here, 0) ? heap_next_boot_alloc(n, align) : NULL;
}

/* The allocator the program would have called (heap_next.h): the C
 * library's, or one the program links (jemalloc). */
static inline void *next_malloc(size_t n)
{
	void *p = held_alloc(n, 16);
	if (p)
		return p;
	const struct heap_next_fns *f = heap_next();
	return f ? f->malloc(n) : heap_next_boot_alloc(n, 16);
}

static inline void next_free(void *p)
{
	const struct heap_next_fns *f;
	if (p && !heap_next_owns(p) && (f = heap_next()))
		f->free(p);
}

static inline void *next_calloc(size_t k, size_t n)
{
	size_t bytes;
	int overflows = __builtin_mul_overflow(k, n, &bytes);
	void *p = overflows ? NULL : held_alloc(bytes, 16);
	if (p)
		return p; /* (the boot arena is never reused: zeroed) */
	const struct heap_next_fns *f = heap_next();
	if (f)
		return f->calloc(k, n);
	return overflows ? NULL : heap_next_boot_alloc(bytes, 16);
}

static inline size_t next_usable_size(void *p);

static inline void *next_realloc(void *old, size_t n)
{
	const struct heap_next_fns *f = heap_next();
	/* (held: a block of the program's heap moves to the boot arena) */
	if (old && (heap_next_owns(old) || (heap_hold_here && f))) {
		size_t had = next_usable_size(old);
		void *p = next_malloc(n);
		if (p) {
			memcpy(p, old, had < n ? had : n);
			next_free(old); /* (a boot block's is nothing) */
		}
		return p;
	}
	return f ? f->realloc(old, n) : heap_next_boot_alloc(n, 16);
}

static inline void *next_memalign(size_t align, size_t n)
{
	void *p = held_alloc(n, align);
	if (p)
		return p;
	const struct heap_next_fns *f = heap_next();
	return f ? f->memalign(align, n) : heap_next_boot_alloc(n, align);
}

static inline void *next_aligned_alloc(size_t align, size_t n)
{
	void *p = held_alloc(n, align);
	if (p)
		return p;
	const struct heap_next_fns *f = heap_next();
	return f ? f->aligned_alloc(align, n) : heap_next_boot_alloc(n, align);
}

static inline int next_posix_memalign(void **out, size_t align, size_t n)
{
	const struct heap_next_fns *f = heap_next();
	if (f)
		return f->posix_memalign(out, align, n);
	*out = heap_next_boot_alloc(n, align);
	return *out ? 0 : ENOMEM;
}

static inline void *next_valloc(size_t n, int page_multiple)
{
	const struct heap_next_fns *f = heap_next();
	if (f)
		return page_multiple ? f->pvalloc(n) : f->valloc(n);
	return heap_next_boot_alloc(n, 4096);
}

static inline size_t next_usable_size(void *p)
{
	const struct heap_next_fns *f = heap_next();
	if (heap_next_owns(p))
		return heap_next_boot_size(p);
	return f ? f->usable_size(p) : 0;
}

static int heap_on; /* set once by heap_init */
static uint64_t heap_period = HEAP_SAMPLE_BYTES; /* a thread's at step 0 */
static double heap_budget;                        /* heap_set_budget's share; 0: fixed */
static double heap_credit_max;                    /* ... its credit's most */
static double heap_credit_start;                  /* ... and a thread's at its start */
static uint64_t heap_track_tsc;                   /* closed windows' tracking time */
static uint8_t heap_step_top;                     /* the largest step a thread took */
static uint64_t heap_text_lo, heap_text_hi;
static int heap_paused; /* heap_pause: the runtime's own allocations at exit and exec */
static void (*heap_growth_hook)(void); /* heap_set_growth_hook */

#define HEAP_RET() ((uint64_t)(uintptr_t)__builtin_return_address(0))
/* A tracked block that took longer than this, and 8x the thread's mean,
 * lost the CPU meanwhile (heap_count_time). */
#define HEAP_PREEMPTED_NS 200000.0
#define HEAP_TIME_EVERY 16u /* tracked blocks a timed one stands for */

/* A thread's sampling state, one TLS block (one TLS address on a fast
 * path).  The bytes to the next sample byte are fast + rest, fast being
 * at most the thread's period (>= 1): a block smaller than fast is small and has
 * no sample byte.  Kept as neg = -fast (mod 2^64), so that one addition's
 * carry tells (HEAP_SKIP); it starts at ~0 (fast 1, no draw yet). */
struct heap_thread {
	uint64_t neg;
	uint64_t rest;
	uint64_t rng;
	int busy;
	uint32_t pending_site; /* heap_pending_begin's, 0 when none */
	uint32_t tracked;      /* blocks added: every 16th calls the growth hook */
	uint8_t step;          /* the thread's period is heap_period << step */
	uint64_t window_tsc;   /* time spent tracking since the last budget check */
	uint64_t mean_tsc;     /* running mean of a tracked block's time */
	double window_cpu_ns;  /* the thread's CPU clock at that check */
	double debt_ns;        /* the credit's shortfall below its start (0: a new thread's) */
	uint8_t seen[256]; /* blocks by call site (its return address's low byte) */
	/* heap_window_block's: a block a window's malloc returned */
	uint64_t window_start, window_size;
	uint32_t window_site;
};
static __thread struct heap_thread heap_me
	__attribute__((tls_model("initial-exec"))) = {.neg = ~0ull};

/* A tracked malloc's frame, for the tick's window (heap_window_return):
 * heap_malloc_frame writes it as the program's call comes in, with the
 * program's registers, and heap_malloc_on closes it once the allocator has
 * returned.  The slots' offsets are the stub's. */
struct heap_frame {
	struct heap_frame_regs regs; /* 0: kept[6], 48: ip, 56: sp */
	uint64_t open;               /* 64 */
	uint64_t size;               /* 72: what the program asked for */
	uint64_t block;              /* 80: what the allocator returns, as a window ran it */
	uint32_t site;               /* 88: the block's, found ahead (heap_site_ahead), or 0 */
};
_Static_assert(offsetof(struct heap_frame, regs.ip) == 48 &&
		       offsetof(struct heap_frame, regs.sp) == 56 &&
		       offsetof(struct heap_frame, open) == 64 &&
		       offsetof(struct heap_frame, size) == 72 &&
		       offsetof(struct heap_frame, block) == 80 && offsetof(struct heap_frame, site) == 88,
	       "heap_malloc_frame's offsets");
__thread struct heap_frame heap_frame_tls
	__attribute__((visibility("hidden"), tls_model("initial-exec")));

/* ---- raw system calls (rawsys.h): mmap and friends are interposed here,
 * and libwitch's syscall() is too ---- */
static long heap_sys_ret(long r)
{
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r;
}

static void *heap_sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)heap_sys_ret(rawsys6(SYS_mmap, (long)addr, (long)len, prot, flags, fd, off));
}

int heap_lookup(uint64_t addr, uint32_t *site, uint64_t *start, uint64_t *size)
{
	uint64_t s, v;
	if (heap_table_find(addr, 0, &s, &v) < 0)
		return -ENOENT;
	*site = (uint32_t)(v >> HEAP_SITE_SHIFT);
	*start = s;
	*size = heap_table_val_size(v);
	return 0;
}

/* This thread's sampling period now (heap_set_budget moves its step). */
static inline uint64_t heap_thread_period(void)
{
	return heap_period << heap_me.step;
}

/* What a block adds to its site's live sampled bytes (heap_mix.h): k
 * period for one tracked by sampling (E = its size; the period its
 * thread had then), 0 for the others. */
static inline int64_t heap_mix_bytes(uint64_t bits)
{
	if (!(bits & HEAP_SAMPLED_BIT))
		return 0;
	uint64_t k = (bits >> HEAP_POINTS_SHIFT) & HEAP_POINTS_MAX;
	unsigned step = (unsigned)(bits >> HEAP_STEP_SHIFT) & HEAP_STEP_MAX;
	return (int64_t)(k * (heap_period << step));
}

/* Record a new block (span: the size its removal will compute). */
static inline void heap_add(void *p, uint64_t size, uint64_t span, uint64_t ret,
			    uint64_t cfa, uint64_t bits, uint32_t site)
{
	if (heap_me.busy || size == 0 || __atomic_load_n(&heap_paused, __ATOMIC_RELAXED))
		return;
	if (ret >= heap_text_lo && ret < heap_text_hi)
		return; /* the runtime's own */
	heap_me.busy = 1;
	if (site == 0)
		site = heap_sites_find(ret, cfa);
	int tracked = site != 0 && heap_table_insert((uint64_t)(uintptr_t)p, size, span, site, bits) == 0;
	heap_sites_count(tracked);
	if (tracked && size < heap_thread_period() && !(bits & HEAP_MMAP_BIT)) {
		heap_mix_note_window((uint64_t)(uintptr_t)p);
		heap_mix_add(site, heap_mix_bytes(bits));
	}
	heap_me.busy = 0;
}

/* The site of a block tracked whatever its count (heap_period or more),
 * found before the allocator's call; 0 for any other. */
static uint32_t heap_site_ahead(uint64_t size, uint64_t ret, uint64_t cfa)
{
	if (size < heap_thread_period() || heap_me.busy ||
	    __atomic_load_n(&heap_paused, __ATOMIC_RELAXED) ||
	    (ret >= heap_text_lo && ret < heap_text_hi))
		return 0;
	heap_me.busy = 1;
	uint32_t site = heap_sites_find(ret, cfa);
	heap_me.busy = 0;
	return site;
}

/* A tracked calloc or realloc is under way in this thread: the C library
 * fills the block (calloc's zeroing, realloc's copy) before it is in the
 * table (heap_add_block, after the call), so what a sample finds nowhere
 * meanwhile is taken for it (heap_pending_site).  Only for blocks tracked
 * whatever their count (heap_period or more). */
static void heap_pending_begin(uint64_t size, uint64_t ret, uint64_t cfa)
{
	heap_me.pending_site = heap_site_ahead(size, ret, cfa);
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* set before the call's first store */
}

static void heap_pending_end(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	heap_me.pending_site = 0;
}

int heap_recording(void)
{
	return heap_me.busy;
}

int heap_thread_hold(void)
{
	int was = heap_me.busy | heap_hold_here << 1;
	heap_me.busy = 1;
	heap_hold_here = 1;
	return was;
}

void heap_thread_release(int held_before)
{
	heap_me.busy = held_before & 1;
	heap_hold_here = held_before >> 1 & 1;
}

int heap_pending_site(uint64_t addr, uint32_t *site)
{
	const struct heap_frame *f = &heap_frame_tls;
	if (f->open && f->site && f->block && addr - f->block < f->size) {
		*site = f->site;
		return 0;
	}
	if (heap_me.window_site && heap_me.window_start &&
	    addr - heap_me.window_start < heap_me.window_size) {
		*site = heap_me.window_site;
		return 0;
	}
	uint32_t s = heap_me.pending_site;
	if (s == 0)
		return -ENOENT;
	*site = s;
	return 0;
}

/* The next byte count between samples: uniform in [1, 2 period). */
static uint64_t heap_draw(void)
{
	uint64_t x = heap_me.rng ? heap_me.rng : (uint64_t)(uintptr_t)&heap_me * 0x9E3779B97F4A7C15ull;
	x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	heap_me.rng = x;
	return 1 + x % (2 * heap_thread_period());
}

/* A countdown from a random point of a gap (the smaller of two draws:
 * the residual of uniform gaps), so that it is stationary from here. */
static uint64_t heap_draw_residual(void)
{
	uint64_t a = heap_draw(), b = heap_draw();
	return a < b ? a : b;
}

/* Set the countdown to `left` bytes (fast: at most the period). */
static void heap_set_left(uint64_t left)
{
	uint64_t period = heap_thread_period();
	uint64_t fast = left < period ? left : period;
	heap_me.neg = -fast;
	heap_me.rest = left - fast;
}

/* Count a block of `size` bytes down: the sample bytes that fall in it
 * (0: none).  A thread's first gap starts at a random point of a gap (the
 * smaller of two draws: the residual of uniform gaps), so the countdown
 * is stationary from the start and a block of n bytes holds n / period
 * sample bytes on average, exactly. */
__attribute__((noinline)) static uint64_t heap_count_down(uint64_t size)
{
	uint64_t left = -heap_me.neg + heap_me.rest, k = 0;
	if (heap_me.rng == 0)
		left = heap_draw_residual();
	while (left <= size) {
		left += heap_draw();
		k++;
	}
	heap_set_left(left - size);
	return k;
}

/* The thread's period doubles or halves: the countdown starts again from
 * a residual gap of the new one, so each sample byte stands for the
 * period it was drawn with (a block's step says which). */
static void heap_set_step(unsigned step)
{
	/* Over its budget a thread records call sites' first blocks no more
	 * (heap_add_block): they are most of what a short process records. */
	if (step > 0 && heap_me.step == 0) /* (a loop: memset is the program's, bulk.h) */
		for (size_t i = 0; i < sizeof(heap_me.seen); i++)
			heap_me.seen[i] = HEAP_FIRST_BLOCKS;
	heap_me.step = (uint8_t)step;
	if (heap_me.rng != 0) /* else the first count down draws it */
		heap_set_left(heap_draw_residual());
	uint8_t top = __atomic_load_n(&heap_step_top, __ATOMIC_RELAXED);
	while (step > top && !__atomic_compare_exchange_n(&heap_step_top, &top, (uint8_t)step, 1,
							 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* A timed block's time (the TSC: wall time), standing for that many
 * tracked blocks' (heap_add_block).  One far above the
 * thread's mean lost the CPU meanwhile, and counts at the mean (as the
 * handlers' runs do, cost.h): on a loaded machine cc1's tracking read
 * 90-150 ms for ~25 otherwise. */
static void heap_count_time(uint64_t tsc, uint64_t stands_for)
{
	uint64_t mean = heap_me.mean_tsc;
	if (mean != 0 && tsc > 8 * mean && cost_tsc_ns(tsc) > HEAP_PREEMPTED_NS) {
		tsc = mean;
	} else {
		mean = mean ? mean - mean / 16 + tsc / 16 : tsc;
		heap_me.mean_tsc = mean;
	}
	heap_me.window_tsc += tsc * stands_for;
}

/* Every HEAP_BUDGET_BLOCKS tracked blocks of a thread (more often at
 * first, heap_add_block): the thread's
 * credit gains the budget's share of its CPU time since the last check
 * and loses what tracking took (a token bucket of heap_credit_max,
 * heap_credit_start at the start, so that a burst of allocations is not
 * what sets the period).  In debt, its period doubles; with half the
 * bucket back, it halves.  Without a budget, only the time is kept. */
__attribute__((noinline, cold)) static void heap_budget_check(void)
{
	uint64_t tsc = heap_me.window_tsc;
	heap_me.window_tsc = 0;
	__atomic_add_fetch(&heap_track_tsc, tsc, __ATOMIC_RELAXED);
	if (heap_budget <= 0 || heap_period == 0)
		return;
	double cpu = cost_thread_cpu_ns(), took = cpu - heap_me.window_cpu_ns;
	heap_me.window_cpu_ns = cpu;
	if (took < 0) /* a fork's child: its clock started again */
		took = 0;
	/* Kept as the shortfall below the start, so a thread's zeroed TLS
	 * starts there; the bucket holds start - debt, at most credit_max. */
	double debt = heap_me.debt_ns + cost_tsc_ns(tsc) - heap_budget * took;
	double full = heap_credit_start - heap_credit_max;
	heap_me.debt_ns = debt > full ? debt : full;
	if (debt > heap_credit_start && heap_me.step < HEAP_STEP_LIMIT &&
	    (heap_period << (heap_me.step + 1u)) <= HEAP_PERIOD_MAX)
		heap_set_step(heap_me.step + 1u);
	else if (debt < heap_credit_start - heap_credit_max / 2 && heap_me.step > 0)
		heap_set_step(heap_me.step - 1u);
}

/* The common case, decided before the C library is called: a block past
 * its call site's first ones (per thread) and smaller than the fast
 * countdown (so small, with no sample byte) is counted down, untracked.
 * The countdown is taken first (an addition whose carry decides): when
 * HEAP_SKIP says no, the caller's slow path gives it back (heap_unskip)
 * before deciding again. */
static inline int heap_skip_bytes(uint64_t n)
{
	return !__builtin_expect(__builtin_add_overflow(heap_me.neg, n, &heap_me.neg), 0);
}

static inline int heap_skip_site(uint8_t ret_low)
{
	return __builtin_expect(heap_me.seen[ret_low] >= HEAP_FIRST_BLOCKS, 1);
}

/* In an interposer (its return address). */
#define HEAP_SKIP(n) (heap_skip_bytes(n) && heap_skip_site((uint8_t)HEAP_RET()))

static inline void heap_unskip(uint64_t n)
{
	heap_me.neg -= n;
}

/* Blocks of heap_period bytes and more are all recorded, and so are the
 * first HEAP_FIRST_BLOCKS of each call site (by return address, per
 * thread: a site that allocates rarely is seen whole); past those, small
 * ones in which sample bytes, one every heap_period bytes on average,
 * fall: k of them with E[k] = size / period, so k period summed over a
 * site's live sampled blocks estimates its live small bytes (heap_mix.h).
 * HEAP_SKIP has decided the common case before. */
static inline void heap_add_block(void *p, uint64_t size, uint64_t ret, uint64_t cfa,
				  uint32_t site)
{
	uint64_t bits = 0;
	/* (busy: the runtime's own allocation, in a recording or a hold) */
	if (!p || heap_me.busy)
		return;
	if (size < heap_thread_period()) {
		uint8_t *seen = &heap_me.seen[(uint8_t)ret];
		if (*seen < HEAP_FIRST_BLOCKS) {
			++*seen;
		} else {
			uint64_t k = heap_count_down(size);
			if (k == 0)
				return;
			k = k < HEAP_POINTS_MAX ? k : HEAP_POINTS_MAX;
			bits = HEAP_SAMPLED_BIT | k << HEAP_POINTS_SHIFT |
			       (uint64_t)heap_me.step << HEAP_STEP_SHIFT;
		}
	}
	/* One block in HEAP_TIME_EVERY is timed and stands for that many: a
	 * TSC read is ~10 ns on this VM, and alloc_churn (every block tracked,
	 * ~30 ns a repetition natively) spent 70% of its time in the runtime
	 * with two a block. */
	uint32_t n = ++heap_me.tracked;
	/* A thread's first blocks are timed each: they are its dearest (cold
	 * unwinds, fresh table pages: ~120 us each in sed or grep here), and
	 * its start credit is spent on them; the budget looks after each of
	 * the first HEAP_BUDGET_BLOCKS_EARLY, then every that many. */
	int early = n <= HEAP_BUDGET_BLOCKS;
	int timed = early || (n & (HEAP_TIME_EVERY - 1)) == HEAP_TIME_EVERY / 2;
	uint64_t t0 = timed ? __rdtsc() : 0;
	heap_add(p, size, next_usable_size(p), ret, cfa, bits, site);
	if (timed)
		heap_count_time(__rdtsc() - t0, early ? 1 : HEAP_TIME_EVERY);
	if ((n & 15) == 0 && heap_growth_hook) {
		t0 = __rdtsc();
		heap_growth_hook();
		heap_me.window_tsc += __rdtsc() - t0;
	}
	if (n <= HEAP_BUDGET_BLOCKS_EARLY ||
	    n % (early ? HEAP_BUDGET_BLOCKS_EARLY : HEAP_BUDGET_BLOCKS) == 0)
		heap_budget_check();
}

/* Off the table, if it is there; *span: the usable size it was under. */
static inline uint64_t heap_remove_block(void *p, uint64_t *span)
{
	*span = 0;
	if (!p || !heap_table_may_hold(p))
		return 0;
	*span = next_usable_size(p);
	uint64_t v = heap_table_remove((uint64_t)(uintptr_t)p, *span);
	if (v & HEAP_SAMPLED_BIT)
		heap_mix_add((uint32_t)(v >> HEAP_SITE_SHIFT), -heap_mix_bytes(v));
	return v;
}

/* munmap's rule (heap.h, Mappings): the region holding addr and
 * those that follow it without a gap lose [addr, addr + len); a region cut
 * at its head keeps its tail, one cut after its start keeps its head only. */
static void heap_unmap(uint64_t addr, uint64_t len)
{
	uint64_t end = addr + len, at = addr, s, v;
	for (int i = 0; i < 64 && at < end && heap_table_find(at, 1, &s, &v) == 0; i++) {
		uint64_t size = heap_table_val_size(v), rend = s + size;
		uint32_t site = (uint32_t)(v >> HEAP_SITE_SHIFT);
		if (!heap_table_remove(s, size))
			break;
		if (s < addr)
			heap_table_insert(s, addr - s, addr - s, site, HEAP_MMAP_BIT);
		else if (rend > end)
			heap_table_insert(end, rend - end, rend - end, site, HEAP_MMAP_BIT);
		at = rend;
	}
}

int heap_window_call(uint64_t pc, uint64_t *real)
{
	const struct heap_next_fns *f = __atomic_load_n(&heap_next_table, __ATOMIC_ACQUIRE);
	if (!f || !__atomic_load_n(&heap_on, __ATOMIC_RELAXED))
		return -ENOENT;
	if (pc == (uint64_t)(uintptr_t)malloc) {
		*real = (uint64_t)(uintptr_t)f->malloc;
		return HEAP_WINDOW_ALLOCATES;
	}
	if (pc == (uint64_t)(uintptr_t)free) {
		*real = (uint64_t)(uintptr_t)f->free;
		return 0;
	}
	return -ENOENT;
}

uint32_t heap_window_site(uint64_t n, uint64_t ret, uint64_t cfa,
			  const struct heap_stack_overlay *ov)
{
	/* (busy: the handler interrupted this thread's own site lookup) */
	if (!__atomic_load_n(&heap_on, __ATOMIC_RELAXED) || heap_me.busy ||
	    n < heap_thread_period() || __atomic_load_n(&heap_paused, __ATOMIC_RELAXED) ||
	    (ret >= heap_text_lo && ret < heap_text_hi))
		return 0;
	return heap_sites_peek(ret, cfa, ov);
}

void heap_window_block(uint64_t start, uint64_t size, uint32_t site)
{
	heap_me.window_start = start;
	heap_me.window_size = size;
	heap_me.window_site = site;
}

/* ---- the interposers ----
 * Each exported one is a few branches and a tail call (no frame of its
 * own): off, or on for a block HEAP_SKIP leaves untracked (and a free the
 * filter has not seen), to the C library; else to its heap_*_on, which so
 * sees the program's return address and stack pointer as its own
 * caller's. */
#define HEAP_ON() __builtin_expect(__atomic_load_n(&heap_on, __ATOMIC_RELAXED), 1)
#define HEAP_CFA() ((uint64_t)(uintptr_t)__builtin_frame_address(0) + 16)
#define HEAP_ENTRY WITCH_EXPORT __attribute__((optimize("omit-frame-pointer")))
/* Through them the program's call reaches the C library, whose work for it
 * (malloc's and free's own stores and loads) is the program's. */
#define HEAP_ON_PATH CONTEXT_THROUGH


void *heap_malloc_frame(size_t n) __attribute__((visibility("hidden")));
HEAP_ON_PATH __attribute__((visibility("hidden"))) void *heap_malloc_on(size_t n);

/* Entered by malloc's tail call, so its registers and stack are still the
 * program's call's: it notes them and goes on to heap_malloc_on.  In
 * assembly, because no C function can read the registers it keeps before
 * its prologue moves them. */
__asm__(".text\n"
	".type heap_malloc_frame, @function\n"
	"heap_malloc_frame:\n"
	".cfi_startproc\n"
	"movq heap_frame_tls@gottpoff(%rip), %r11\n"
	"movq %rbx, %fs:0(%r11)\n"
	"movq %rbp, %fs:8(%r11)\n"
	"movq %r12, %fs:16(%r11)\n"
	"movq %r13, %fs:24(%r11)\n"
	"movq %r14, %fs:32(%r11)\n"
	"movq %r15, %fs:40(%r11)\n"
	"movq (%rsp), %rax\n"
	"movq %rax, %fs:48(%r11)\n"
	"leaq 8(%rsp), %rax\n"
	"movq %rax, %fs:56(%r11)\n"
	"movq %rdi, %fs:72(%r11)\n"
	"movq $0, %fs:80(%r11)\n"
	"movl $0, %fs:88(%r11)\n"
	"movq $1, %fs:64(%r11)\n"
	"jmp heap_malloc_on\n"
	".cfi_endproc\n"
	".size heap_malloc_frame, .-heap_malloc_frame\n");

HEAP_ON_PATH void *heap_malloc_on(size_t n)
{
	heap_unskip(n);
	/* Found before the call, so that a window running on past its return
	 * finds the block (heap_pending_site); found once all the same. */
	uint32_t site = heap_site_ahead(n, HEAP_RET(), HEAP_CFA());
	heap_frame_tls.site = site;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	void *p = next_malloc(n);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	heap_frame_tls.open = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	heap_add_block(p, n, HEAP_RET(), HEAP_CFA(), site);
	return p;
}

HEAP_ENTRY void *malloc(size_t n)
{
	if (!HEAP_ON() || HEAP_SKIP(n))
		return next_malloc(n);
	return heap_malloc_frame(n);
}

int heap_window_return(uint64_t sp, uint64_t result, struct heap_frame_regs *out)
{
	struct heap_frame *f = &heap_frame_tls;
	/* sp lies in heap_malloc_on's frame: below the program's, by its
	 * pushes and alignment (32 bytes in this build) */
	if (!f->open || sp >= f->regs.sp || f->regs.sp - sp > 256 ||
	    (f->regs.ip >= heap_text_lo && f->regs.ip < heap_text_hi))
		return -ENOENT; /* (the stub called, not jumped to: not the program's registers) */
	f->block = result;
	*out = f->regs;
	return 0;
}

HEAP_ON_PATH static void heap_free_on(void *p)
{
	uint64_t span;
	heap_remove_block(p, &span);
	next_free(p);
}

HEAP_ENTRY void free(void *p)
{
	if (!HEAP_ON() || !p || !heap_table_may_hold(p))
		return next_free(p);
	return heap_free_on(p);
}

HEAP_ON_PATH static void *heap_calloc_on(size_t k, size_t n)
{
	heap_unskip((uint64_t)k * n);
	heap_pending_begin((uint64_t)k * n, HEAP_RET(), HEAP_CFA());
	/* The clearing is counted by its bytes, not weighed by ticks
	 * (bulk.h): a memory-bound memset ran 4-6x slower than the cost
	 * model's rate, and its ticks stood for that much more. */
	struct witch_thread *fill = bulk_libc_begin((uint64_t)k * n);
	void *p = next_calloc(k, n);
	heap_pending_end();
	heap_add_block(p, (uint64_t)k * n, HEAP_RET(), HEAP_CFA(), 0);
	bulk_fill_end(fill, p, (uint64_t)k * n); /* its sample finds the block */
	return p;
}

HEAP_ENTRY void *calloc(size_t k, size_t n)
{
	size_t bytes;
	if (!HEAP_ON() || __builtin_mul_overflow(k, n, &bytes) || HEAP_SKIP(bytes))
		return next_calloc(k, n); /* (an overflow: no block) */
	return heap_calloc_on(k, n);
}

/* The bytes a realloc may copy from old to a new block of n: its usable
 * bytes, up to n; 0 where moving it copies nothing (glibc remaps a block
 * it mmapped: the chunk header's IS_MMAPPED bit). */
static uint64_t heap_realloc_copyable(void *old, size_t n)
{
	const struct heap_next_fns *f = heap_next();
	if (!old || !f || heap_next_owns(old))
		return 0;
	if (f->glibc && (((const size_t *)old)[-1] & 2))
		return 0;
	uint64_t had = f->usable_size(old);
	return had < n ? had : n;
}

/* Removed before the call (the address may be handed out again at once),
 * put back when the call fails.  A move's copy, inside the C library, is
 * counted by its bytes (bulk.h), not weighed by the ticks that land in it:
 * at tens of bytes a cycle (16-60x slower with a debug register armed),
 * its ticks stood for 2.4x its bytes in realloc_copy. */
__attribute__((always_inline)) static inline void *heap_realloc_body(void *old, size_t n,
									 uint64_t ret, uint64_t cfa)
{
	uint64_t ospan, copyable = heap_realloc_copyable(old, n);
	uint64_t v = heap_remove_block(old, &ospan);
	heap_pending_begin(n, ret, cfa);
	struct witch_thread *copy = bulk_libc_begin(copyable);
	void *p = next_realloc(old, n);
	heap_pending_end();
	if (p)
		heap_add_block(p, n, ret, cfa, 0);
	else if (v && n != 0 &&
		 heap_table_insert((uint64_t)(uintptr_t)old, heap_table_val_size(v), ospan,
				   (uint32_t)(v >> HEAP_SITE_SHIFT), heap_table_val_bits(v)) == 0)
		heap_mix_add((uint32_t)(v >> HEAP_SITE_SHIFT), heap_mix_bytes(v));
	bulk_copy_end(copy, p, p && p != old ? copyable : 0); /* its sample finds the block */
	return p;
}

HEAP_ON_PATH static void *heap_realloc_on(void *old, size_t n)
{
	heap_unskip(n);
	return heap_realloc_body(old, n, HEAP_RET(), HEAP_CFA());
}

HEAP_ENTRY void *realloc(void *old, size_t n)
{
	if (!HEAP_ON() || (HEAP_SKIP(n) && (!old || !heap_table_may_hold(old))))
		return next_realloc(old, n);
	return heap_realloc_on(old, n);
}

HEAP_ON_PATH static void *heap_reallocarray_on(void *old, size_t k, size_t n)
{
	size_t bytes;
	if (__builtin_mul_overflow(k, n, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	if (!HEAP_ON())
		return next_realloc(old, bytes);
	return heap_realloc_body(old, bytes, HEAP_RET(), HEAP_CFA());
}

HEAP_ENTRY void *reallocarray(void *old, size_t k, size_t n)
{
	return heap_reallocarray_on(old, k, n);
}

HEAP_ON_PATH static void *heap_memalign_on(size_t align, size_t n)
{
	void *p = next_memalign(align, n);
	heap_add_block(p, n, HEAP_RET(), HEAP_CFA(), 0);
	return p;
}

HEAP_ENTRY void *memalign(size_t align, size_t n)
{
	if (!HEAP_ON())
		return next_memalign(align, n);
	return heap_memalign_on(align, n);
}

HEAP_ON_PATH static void *heap_aligned_alloc_on(size_t align, size_t n)
{
	void *p = next_aligned_alloc(align, n);
	heap_add_block(p, n, HEAP_RET(), HEAP_CFA(), 0);
	return p;
}

HEAP_ENTRY void *aligned_alloc(size_t align, size_t n)
{
	if (!HEAP_ON())
		return next_aligned_alloc(align, n);
	return heap_aligned_alloc_on(align, n);
}

HEAP_ON_PATH static int heap_posix_memalign_on(void **out, size_t align, size_t n)
{
	void *p = NULL;
	int rc = next_posix_memalign(&p, align, n);
	if (rc != 0)
		return rc;
	if (HEAP_ON())
		heap_add_block(p, n, HEAP_RET(), HEAP_CFA(), 0);
	*out = p;
	return 0;
}

HEAP_ENTRY int posix_memalign(void **out, size_t align, size_t n)
{
	return heap_posix_memalign_on(out, align, n);
}

HEAP_ON_PATH static void *heap_valloc_on(size_t n, int page_multiple)
{
	void *p = next_valloc(n, page_multiple);
	heap_add_block(p, n, HEAP_RET(), HEAP_CFA(), 0);
	return p;
}

HEAP_ENTRY void *valloc(size_t n)
{
	if (!HEAP_ON())
		return next_valloc(n, 0);
	return heap_valloc_on(n, 0);
}

HEAP_ENTRY void *pvalloc(size_t n)
{
	if (!HEAP_ON())
		return next_valloc(n, 1);
	return heap_valloc_on(n, 1);
}

/* Anonymous mappings other than stacks are heap; any mapping placed with
 * MAP_FIXED first unmaps what it replaces. */
HEAP_ON_PATH static void *heap_mmap_on(void *addr, size_t len, int prot, int flags, int fd,
				       off_t off)
{
	void *p = heap_sys_mmap(addr, len, prot, flags, fd, off);
	if (p == MAP_FAILED)
		return p;
	if (flags & MAP_FIXED)
		heap_unmap((uint64_t)(uintptr_t)p, len);
	if ((flags & MAP_ANONYMOUS) && !(flags & MAP_STACK))
		heap_add(p, len, len, HEAP_RET(), HEAP_CFA(), HEAP_MMAP_BIT, 0);
	return p;
}

HEAP_ENTRY void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (!HEAP_ON())
		return heap_sys_mmap(addr, len, prot, flags, fd, off);
	return heap_mmap_on(addr, len, prot, flags, fd, off);
}

HEAP_ENTRY void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (!HEAP_ON())
		return heap_sys_mmap(addr, len, prot, flags, fd, off);
	return heap_mmap_on(addr, len, prot, flags, fd, off);
}

HEAP_ENTRY int munmap(void *addr, size_t len)
{
	if (HEAP_ON())
		heap_unmap((uint64_t)(uintptr_t)addr, len);
	return (int)heap_sys_ret(rawsys6(SYS_munmap, (long)addr, (long)len, 0, 0, 0, 0));
}

/* The region keeps its site wherever it lands. */
HEAP_ENTRY void *mremap(void *old, size_t olen, size_t nlen, int flags, ...)
{
	void *want = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	uint64_t s = 0, v = 0, o = (uint64_t)(uintptr_t)old;
	int had = HEAP_ON() && heap_table_find(o, 1, &s, &v) == 0 && s == o &&
		  heap_table_remove(s, heap_table_val_size(v)) != 0;
	void *p = (void *)heap_sys_ret(
		rawsys6(SYS_mremap, (long)old, (long)olen, (long)nlen, flags, (long)want, 0));
	if (!had)
		return p;
	uint32_t site = (uint32_t)(v >> HEAP_SITE_SHIFT);
	if (p == MAP_FAILED)
		heap_table_insert(s, heap_table_val_size(v), heap_table_val_size(v), site, HEAP_MMAP_BIT);
	else
		heap_table_insert((uint64_t)(uintptr_t)p, nlen, nlen, site, HEAP_MMAP_BIT);
	return p;
}

/* ---- setup, stats, fork ---- */
int heap_init(void)
{
	if (__atomic_load_n(&heap_on, __ATOMIC_ACQUIRE))
		return 0;
	int rc = heap_sites_init();
	if (rc < 0)
		return rc;
	rc = heap_table_init();
	if (rc < 0)
		return rc;
	__atomic_store_n(&heap_on, 1, __ATOMIC_RELEASE);
	return 0;
}

uint64_t heap_sample_bytes(void)
{
	return heap_period;
}

uint64_t heap_thread_sample_bytes(void)
{
	return heap_thread_period();
}

void heap_set_budget(double share, double start_ns, double credit_ns)
{
	heap_budget = share > 0 ? share : 0;
	heap_credit_max = credit_ns > 0 ? credit_ns : 0;
	heap_credit_start = start_ns < 0 ? 0 : start_ns < heap_credit_max ? start_ns : heap_credit_max;
}

void heap_set_sample_bytes(uint64_t bytes)
{
	heap_period = bytes < HEAP_PERIOD_MAX ? bytes : HEAP_PERIOD_MAX;
}

void heap_set_growth_hook(void (*every_16_blocks)(void))
{
	heap_growth_hook = every_16_blocks;
}

void heap_pause(int paused)
{
	__atomic_store_n(&heap_paused, paused, __ATOMIC_RELAXED);
}

void heap_set_runtime_text(uint64_t lo, uint64_t hi)
{
	heap_text_lo = lo;
	heap_text_hi = hi;
}

void heap_get_stats(struct heap_stats *st)
{
	struct heap_sites_stats ss;
	heap_sites_get_stats(&ss);
	memset(st, 0, sizeof(*st));
	st->blocks_tracked = ss.tracked;
	st->blocks_untracked = ss.untracked;
	st->sites = ss.sites;
	st->sites_dropped = ss.dropped;
	st->site_unwinds = ss.unwinds;
	st->site_walked = ss.walked;
	st->site_ns = ss.slow_ns;
	st->track_ns = cost_tsc_ns(__atomic_load_n(&heap_track_tsc, __ATOMIC_RELAXED) +
				   heap_me.window_tsc); /* and the caller's open window */
	st->sample_bytes_max = heap_period << __atomic_load_n(&heap_step_top, __ATOMIC_RELAXED);
	st->bytes_reserved = heap_table_reserved() + ss.bytes_reserved;
}

/* Lock-free: nothing to hold across fork. */
void heap_prefork(void)
{
}

void heap_postfork_parent(void)
{
}

/* Nothing of its own to reset: the table's and the sites' hooks
 * (heap_table.h, heap_sites.h) see to what the parent's threads held. */
void heap_postfork_child(void)
{
}
