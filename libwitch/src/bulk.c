/* bulk: byte-counted sampling of bulk memory operations (see bulk.h). */
#include "witch/bulk.h"
#include "witch/cost.h"
#include "witch/context.h"
#include "witch/export.h"
#include "witch/decode.h"
#include "witch/handler.h"
#include "witch/thread.h"

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <x86intrin.h>

/* The wrappers and what they call on the program's path live in a section
 * of their own: their frames are the program's call, not the runtime's
 * (context.h drops them from contexts). */
#define BULK_PATH CONTEXT_THROUGH
#define BULK_EXPORT WITCH_EXPORT BULK_PATH
#define BULK_PROGRAM_EXPORT WITCH_EXPORT CONTEXT_PROGRAM

typedef void *(*memset_fn)(void *, int, size_t);
typedef void *(*memcpy_fn)(void *, const void *, size_t);
typedef int (*memcmp_fn)(const void *, const void *, size_t);

static memset_fn real_memset;
static memcpy_fn real_memcpy, real_memmove, real_mempcpy;
static memcmp_fn real_memcmp;
static uint8_t bulk_kind; /* DECODE_STORE or DECODE_LOAD */

/* Before bulk_resolve (other libraries' constructors run first): plain loops
 * the compiler must not turn back into calls of these very functions. */
__attribute__((optimize("no-tree-loop-distribute-patterns"))) static void *
early_set(void *d, int c, size_t n)
{
	volatile unsigned char *p = d;
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)c;
	return d;
}

__attribute__((optimize("no-tree-loop-distribute-patterns"))) static void *
early_move(void *d, const void *s, size_t n)
{
	volatile unsigned char *p = d;
	const volatile unsigned char *q = s;
	if (p < q)
		for (size_t i = 0; i < n; i++)
			p[i] = q[i];
	else
		for (size_t i = n; i > 0; i--)
			p[i - 1] = q[i - 1];
	return d;
}

int bulk_resolve(void)
{
	memset_fn s = (memset_fn)dlsym(RTLD_NEXT, "memset");
	memcpy_fn c = (memcpy_fn)dlsym(RTLD_NEXT, "memcpy");
	memcpy_fn m = (memcpy_fn)dlsym(RTLD_NEXT, "memmove");
	memcpy_fn p = (memcpy_fn)dlsym(RTLD_NEXT, "mempcpy");
	memcmp_fn k = (memcmp_fn)dlsym(RTLD_NEXT, "memcmp");
	if (!s || !c || !m || !p || !k)
		return -ENOENT;
	real_memcmp = k;
	real_mempcpy = p;
	real_memmove = m;
	real_memcpy = c;
	__atomic_store_n(&real_memset, s, __ATOMIC_RELEASE);
	return 0;
}

int bulk_init(uint8_t sample_kind)
{
	if (!__atomic_load_n(&real_memset, __ATOMIC_ACQUIRE) && bulk_resolve() < 0)
		return -ENOENT;
	__atomic_store_n(&bulk_kind, sample_kind, __ATOMIC_RELEASE);
	return 0;
}

static int64_t next_period(struct bulk *b, struct rng *rng)
{
	uint64_t p = (uint64_t)b->period;
	b->drawn = b->period;
	return (int64_t)(p / 2 + (rng_next(rng) % p));
}

/* BULK_PERIOD bytes at 5 ms between ticks, in proportion; or what a
 * tick's pick stands for, within [1/BULK_PICK_MORE, 1] of that. */
#define BULK_PICK_MORE 16
#define BULK_PICK_MEAN 0.05 /* the running mean's step: ~20 picks */

static void bulk_period_now(struct bulk *b)
{
	double by_time = (double)BULK_PERIOD * b->tick_ns / BULK_PERIOD_TICK_NS;
	double p = by_time;
	if (b->pick_bytes > 0)
		p = b->pick_bytes > by_time			    ? by_time
		    : b->pick_bytes < by_time / BULK_PICK_MORE ? by_time / BULK_PICK_MORE
							    : b->pick_bytes;
	b->period = p < 4096 ? 4096 : p;
	/* The bytes left to the next sample scale with it, and the sample
	 * stands for the new period: a count drawn at the start rate's period
	 * (64 MiB at the default budget) was never reached in lz's run, while
	 * the period fell to a fifth of it.  (A tick inside bulk_count, which
	 * the program's thread runs, may have its rescale overwritten: one
	 * count then runs at the old period.) */
	if (b->drawn > 0 && b->left > 0 && b->drawn != b->period) {
		b->left = (int64_t)((double)b->left * b->period / b->drawn);
		b->drawn = b->period;
	}
}

void bulk_set_period(struct bulk *b, uint64_t tick_ns)
{
	b->tick_ns = (double)tick_ns;
	bulk_period_now(b);
}

void bulk_note_pick(struct bulk *b, double bytes)
{
	if (!(bytes > 0))
		return;
	b->pick_bytes = b->pick_bytes > 0 ? b->pick_bytes + BULK_PICK_MEAN * (bytes - b->pick_bytes)
					  : bytes;
	bulk_period_now(b);
}

void bulk_thread_begin(struct bulk *b, struct rng *rng, uint64_t tick_ns)
{
	b->active = 0;
	b->enter_tsc = 0;
	b->excluded_tsc = 0;
	b->pick_bytes = 0;
	bulk_set_period(b, tick_ns);
	b->left = next_period(b, rng);
}

double bulk_take_excluded_ns(struct bulk *b)
{
	return cost_tsc_ns(__atomic_exchange_n(&b->excluded_tsc, 0, __ATOMIC_RELAXED));
}

/* A copy in 2 KiB pieces runs glibc's vector loop, a whole one from 2112
 * bytes its `rep movsb`: on the EPYC (bench/bulk_call_cost.c, ns a call,
 * whole / pieces) 16 KiB 121 / 80, 32 KiB 239 / 589, 64 KiB 625-645 /
 * 1199-1232, 256 KiB 2419-2539 / 3953-4927, 512 KiB 5849-6678 /
 * 10308-10510, 1 MiB (past L2 both ways) 22257-22692 / 23488-24088. */
#define PIECES_DEAR_MIN (32u << 10)
#define PIECES_DEAR_PS 9    /* a byte, from PIECES_DEAR_MIN up */
#define PIECES_L2_MIN (768u << 10) /* between 512 KiB, still dear, and 1 MiB */
#define PIECES_L2_PS 1      /* ... from PIECES_L2_MIN up (to COPY_CHUNK_MAX) */

uint64_t bulk_pieces_extra_ps(uint64_t n)
{
	return n >= PIECES_L2_MIN ? n * PIECES_L2_PS : n >= PIECES_DEAR_MIN ? n * PIECES_DEAR_PS : 0;
}

double bulk_take_pieces_ns(struct bulk *b)
{
	return (double)__atomic_exchange_n(&b->pieces_ps, 0, __ATOMIC_RELAXED) / 1e3;
}

void bulk_tick_skipped(struct bulk *b)
{
	if (b->active && b->enter_tsc)
		b->enter_tsc = __rdtsc();
}

/* A counted call of n bytes begins: the thread is in it until
 * bulk_call_end. */
static void bulk_call_begin(struct witch_thread *t, uint64_t n)
{
	t->bulk.enter_tsc = n >= BULK_TIMED_MIN ? __rdtsc() : 0;
	t->bulk.active = 1;
}

/* *sum += v in one instruction, unlocked: only the thread and its own
 * signal handlers touch the sum, and a signal comes between instructions.
 * (The locked add had been half of a timed call's cost in sort.) */
static inline void add_between_signals(uint64_t *sum, uint64_t v)
{
	__asm__ volatile("addq %1, %0" : "+m"(*sum) : "r"(v));
}

static void bulk_call_end(struct witch_thread *t)
{
	/* (a signal may take the sum between these two: it is one add) */
	if (t->bulk.enter_tsc)
		add_between_signals(&t->bulk.excluded_tsc, __rdtsc() - t->bulk.enter_tsc);
	t->bulk.active = 0;
}

/* Count n bytes: 0 when the count did not pass a period's end, else the
 * bytes the sample stands for (the periods it passed) with *pos the byte,
 * of the n, it passed. */
static double bulk_count(struct witch_thread *t, uint64_t n, uint64_t *pos)
{
	int64_t left = t->bulk.left - (int64_t)n;
	double weight = 0;
	if (left <= 0) {
		*pos = (uint64_t)(t->bulk.left - 1);
		while (left <= 0) {
			weight += t->bulk.drawn;
			left += next_period(&t->bulk, &t->rng);
		}
	}
	t->bulk.left = left;
	return weight;
}

/* The calling thread, when it counts calls now: profiled, not in a
 * handler or another counted call. */
static struct witch_thread *bulk_thread(void)
{
	struct witch_thread *t = thread_self();
	return t && t->active && !t->in_handler && !t->bulk.active ? t : NULL;
}

/* While a debug register is armed the CPU runs `rep movsb/stosb` without
 * its fast-string microcode, 16-60x slower (bench/dr_fast_string.c).  So
 * while one of the thread's is armed, such calls go in 2 KiB pieces, which
 * glibc runs with its vector loops (its rep thresholds here: movsb 0x840,
 * stosb 0x800).  glibc 2.36 copies with `rep movsb` up to its stop
 * threshold (on AMD the L2's size: 1 MiB here; copies of 2 MiB ran as fast
 * armed), but sets memory with `rep stosb` at any size: a 2 MiB memset took
 * 0.03 ms, 0.66-0.87 ms armed, 8 MiB 0.09 and 2.5 ms (stencil's
 * per-scenario 2 MiB memset: 19% at a 5% budget).  So memset goes in pieces
 * at every size; a 2 MiB one in 2 KiB pieces runs as fast as glibc's single
 * call unarmed.  Pieces are not free where nothing is armed: a 64-256 KiB
 * memmove in pieces took 1.9-2.0x glibc's `rep movsb` (sort: 20.5% of its
 * time natively in memmove, 22.2% profiled with nothing armed), so a call
 * goes whole when no register of the thread is armed as it begins.  Nothing
 * arms one during the call but a sample of the call's own (re-checked
 * after it): a tick inside a counted call is skipped (handler.c). */
#define CHUNK 2048
#define COPY_CHUNK_MAX (1u << 20)

/* A counted call's sample, taken when the call returns (bulk_leave). */
struct bulk_sample {
	uint64_t fn, addr;
	double weight; /* 0: none */
};

/* Whether the call may access the byte at pos of its n twice: the C
 * library's vector code stores (and loads) a piece's unaligned head and
 * tail over its aligned loop's first and last vectors, so the first and
 * last BULK_EDGE bytes of each piece it is handed may be accessed twice.
 * piece: the bytes of each (CHUNK when chunked, else n); 0: anywhere (an
 * overlapping move). */
#define BULK_EDGE 256 /* four 64-byte vectors (the AVX-512 copy's tail) */
static int bulk_twice(uint64_t pos, uint64_t n, uint64_t piece)
{
	if (piece == 0)
		return 1;
	uint64_t off = pos % piece, left = n - (pos - off);
	return off < BULK_EDGE || off + BULK_EDGE >= (left < piece ? left : piece);
}

/* Whether the calling thread's call of n bytes goes in pieces of CHUNK
 * now (see CHUNK): CHUNK < n < below (the call's kind goes whole from
 * below up), it is profiled and one of its debug registers is armed.
 * t: the thread when known, else NULL (looked up). */
static int bulk_in_pieces(struct witch_thread *t, size_t n, size_t below)
{
	if (n <= CHUNK || n >= below)
		return 0;
	if (!t && !(t = thread_self()))
		return 0;
	return t->active && watchpoint_set_armed(&t->wps) != 0;
}

/* Count n bytes at addr; returns the thread to mark active, or NULL when
 * this call is not counted.  When the count passes a period's end, the
 * byte it passed is sampled: after the call (bulk_leave), its own access
 * done, so the watchpoint waits for the next one with no trap on the call's
 * own; or now, where the call may access it twice (bulk_twice: the second
 * access decides, as a PMU would see it), and its own access traps first.
 * below: bulk_in_pieces's, for the answer in *pieces; overlap: it is a
 * move whose ranges meet. */
static struct witch_thread *bulk_enter(const void *addr, size_t n, void *fn, size_t below,
				       int overlap, struct bulk_sample *s, int *pieces)
{
	s->weight = 0;
	*pieces = 0;
	if (n < BULK_MIN_BYTES || !__atomic_load_n(&bulk_kind, __ATOMIC_RELAXED))
		return NULL; /* (not counting: a runtime that did not start, the PMU's) */
	struct witch_thread *t = bulk_thread();
	uint64_t pos;
	double weight;
	if (!t)
		return NULL;
	*pieces = bulk_in_pieces(t, n, below);
	if ((weight = bulk_count(t, n, &pos)) > 0) {
		s->fn = (uint64_t)(uintptr_t)fn;
		s->addr = (uint64_t)(uintptr_t)addr + pos;
		if (bulk_twice(pos, n, overlap ? 0 : *pieces ? CHUNK : n)) {
			handler_sample_call(s->fn, s->addr, bulk_kind, weight, 0);
			/* armed now, the call must not meet it whole: its byte
			 * is accessed twice in pieces too (the sample stands) */
			*pieces = bulk_in_pieces(t, n, below);
		} else {
			s->weight = weight;
		}
	}
	bulk_call_begin(t, n);
	return t;
}

static void bulk_leave(struct witch_thread *t, const struct bulk_sample *s)
{
	if (!t)
		return;
	bulk_call_end(t); /* a sample is a handler run of its own */
	if (s->weight > 0)
		handler_sample_call(s->fn, s->addr, bulk_kind, s->weight, 1);
}

struct witch_thread *bulk_libc_begin(uint64_t most)
{
	if (most < BULK_FILL_MIN || bulk_kind != DECODE_STORE || !real_memset)
		return NULL;
	struct witch_thread *t = bulk_thread();
	if (t)
		bulk_call_begin(t, most);
	return t;
}

uint64_t bulk_resident_bytes(const void *block, uint64_t bytes, uint64_t k,
			     uint64_t *at_resident_byte)
{
	enum { PAGE = 4096, CHUNK_PAGES = 1024 };
	unsigned char vec[CHUNK_PAGES];
	uint64_t lo = (uint64_t)(uintptr_t)block, hi = lo + bytes, total = 0;
	for (uint64_t page = lo & ~(uint64_t)(PAGE - 1); page < hi;) {
		uint64_t n = (hi - page + PAGE - 1) / PAGE;
		n = n < CHUNK_PAGES ? n : CHUNK_PAGES;
		if (mincore((void *)(uintptr_t)page, n * PAGE, vec) != 0)
			return 0;
		for (uint64_t i = 0; i < n; i++, page += PAGE) {
			if (!(vec[i] & 1))
				continue;
			uint64_t s = page > lo ? page : lo, e = page + PAGE < hi ? page + PAGE : hi;
			if (at_resident_byte && k >= total && k < total + (e - s))
				*at_resident_byte = s + (k - total);
			total += e - s;
		}
	}
	return total;
}

void bulk_fill_end(struct witch_thread *t, const void *block, uint64_t bytes)
{
	if (!t)
		return;
	uint64_t stored = block ? bulk_resident_bytes(block, bytes, 0, NULL) : 0, pos, at = 0;
	double weight = stored > 0 ? bulk_count(t, stored, &pos) : 0;
	bulk_call_end(t); /* a sample is a handler run of its own */
	/* The stored byte the count passed: after the clearing, so the
	 * sample's own store has run (its value is there to read). */
	if (weight > 0 && bulk_resident_bytes(block, bytes, pos, &at) > 0 && at)
		handler_sample_call((uint64_t)(uintptr_t)real_memset, at, bulk_kind, weight, 1);
}

void bulk_copy_end(struct witch_thread *t, const void *dst, uint64_t copied)
{
	uint64_t pos = 0;
	if (!t)
		return;
	double weight = copied > 0 ? bulk_count(t, copied, &pos) : 0;
	bulk_call_end(t);
	if (weight > 0)
		handler_sample_call((uint64_t)(uintptr_t)real_memcpy, (uint64_t)(uintptr_t)dst + pos,
				    bulk_kind, weight, 1);
}


BULK_PATH static void move_chunked(memcpy_fn fn, char *d, const char *s, size_t n)
{
	if (d <= s || d >= s + n) {
		for (size_t off = 0; off < n; off += CHUNK)
			fn(d + off, s + off, n - off < CHUNK ? n - off : CHUNK);
		return;
	}
	for (size_t end = n; end > 0;) { /* overlapping, d above s: from the end */
		size_t c = end < CHUNK ? end : CHUNK;
		end -= c;
		fn(d + end, s + end, c);
	}
}

/* Most counted calls take no sample, go whole and are too short to time:
 * for them the count and the mark are all (sort makes ~2 million a run).
 * The full path (bulk_enter) had added 6.6 ns to a 512-byte memmove that
 * glibc makes in 2.8 (bench/memmove_call_cost.c).  Counts n bytes and marks
 * the thread inside the call, to be ended by bulk_fast_end; NULL when the
 * call takes the full path, whose own rules it follows: pieces where
 * bulk_in_pieces says so, a sample where the count passes its period. */
static inline __attribute__((always_inline)) struct witch_thread *bulk_fast_begin(size_t n)
{
	if (n < BULK_MIN_BYTES || n >= BULK_TIMED_MIN || !__atomic_load_n(&bulk_kind, __ATOMIC_RELAXED))
		return NULL;
	struct witch_thread *t = bulk_thread();
	if (!t)
		return NULL;
	int64_t left = t->bulk.left - (int64_t)n;
	if (left <= 0 || bulk_in_pieces(t, n, SIZE_MAX))
		return NULL; /* (a sample, or pieces) */
	t->bulk.left = left;
	t->bulk.enter_tsc = 0;
	t->bulk.active = 1;
	return t;
}

static inline __attribute__((always_inline)) void bulk_fast_end(struct witch_thread *t)
{
	t->bulk.active = 0;
}

/* (Apart, so that the fast path's frame stays small.) */
__attribute__((noinline)) BULK_PATH static void *do_move_full(memcpy_fn fn, void *d,
							      const void *s, size_t n)
{
	const void *counted = bulk_kind == DECODE_LOAD ? s : d;
	uintptr_t dv = (uintptr_t)d, sv = (uintptr_t)s;
	struct bulk_sample sample;
	int pieces;
	struct witch_thread *t = bulk_enter(counted, n, (void *)fn, COPY_CHUNK_MAX,
					    dv < sv + n && sv < dv + n, &sample, &pieces);
	if (pieces) {
		move_chunked(real_memmove, d, s, n);
		__atomic_fetch_add(&t->bulk.pieces_ps, bulk_pieces_extra_ps(n), __ATOMIC_RELAXED);
	} else {
		fn(d, s, n);
	}
	bulk_leave(t, &sample);
	return d;
}

static inline __attribute__((always_inline)) void *do_move(memcpy_fn fn, void *d, const void *s,
							  size_t n)
{
	struct witch_thread *fast = bulk_fast_begin(n);
	if (!fast)
		return do_move_full(fn, d, s, n);
	fn(d, s, n);
	bulk_fast_end(fast);
	return d;
}

/* The wrappers sit on every memcpy and memset the program makes, most of
 * them a few bytes long: below BULK_MIN_BYTES, nothing is counted or
 * chunked: they do the work themselves (small_move) or go straight on
 * (a tail call).  Going
 * through the whole path instead cost lz, which copies a few bytes at a
 * time, 5-7% of its time at any sampling rate. */
__attribute__((noinline)) BULK_PATH static void *do_set_full(memset_fn fn, void *d, int c,
							     size_t n)
{
	struct bulk_sample sample = {0};
	int pieces = 0;
	struct witch_thread *t =
		bulk_kind == DECODE_STORE ? bulk_enter(d, n, (void *)fn, SIZE_MAX, 0, &sample, &pieces) : NULL;
	if (bulk_kind != DECODE_STORE) /* not counted: in pieces all the same while armed */
		pieces = bulk_in_pieces(NULL, n, SIZE_MAX);
	if (pieces) {
		for (size_t off = 0; off < n; off += CHUNK)
			fn((char *)d + off, c, n - off < CHUNK ? n - off : CHUNK);
	} else {
		fn(d, c, n);
	}
	bulk_leave(t, &sample);
	return d;
}

__attribute__((noinline)) BULK_PATH static void *do_set(memset_fn fn, void *d, int c, size_t n)
{
	struct witch_thread *fast = bulk_kind == DECODE_STORE ? bulk_fast_begin(n) : NULL;
	if (!fast)
		return do_set_full(fn, d, c, n);
	fn(d, c, n);
	bulk_fast_end(fast);
	return d;
}

/* Below SMALL_MAX bytes the copying wrappers copy themselves rather than
 * pass the call on: passing it on was a load of the C library's function
 * and a second indirect jump on each of the program's calls, most of them
 * a few bytes long (lz: 43 million in 3 s, 0.8% of its samples in perf;
 * python3 and sqlite3 make 7-9 million).  They store as glibc's vector
 * code stores, byte for byte: a profiler of stores must not add any, nor
 * leave any out.  glibc (AVX2, EVEX and AVX-512 alike, below 64 bytes)
 * stores the first and the last 4, 8, 16 or 32 bytes, the largest that
 * fits: a size of exactly 4, 8, 16 or 32 stores every byte twice, the
 * second store silent and the first dead.  A first version stored 16
 * and 32 bytes once (8- and 16-byte halves): copy_sizes' 16 and 32 bytes
 * read 0 silent for 0.5 (known_answer.copy_sizes).  32-byte pieces are
 * two 16-byte vectors here (the same bytes in the same order); 1-3 bytes,
 * one byte, or two then one.  Every load comes before any store, so a move whose
 * ranges meet is right too.  A call of 0-64 bytes took 2.5-3.3 ns, glibc's
 * 2.5-3.5 and through the jump 3.0-4.4.  From 64 bytes the variants part
 * (AVX-512 stores 64 bytes twice, AVX2 once) and 16-byte vectors lose to
 * glibc's (65-128: 3.9 ns for 2.3), so those calls go on to it,
 * uncounted.  memset always goes on: glibc's AVX-512 and EVEX memsets fill
 * a short buffer with one masked store (each byte once), its AVX2 one
 * with two overlapping stores, and only the C library's own choice stores
 * as the program does.  This code lives in a section that is the
 * program's, not the runtime's (context.h CONTEXT_PROGRAM): ticks and
 * traps there are the program's accesses, named as the C library's
 * function (bulk_program_leaf). */
#define SMALL_MAX 64 /* (calls below it) */
#define V16_LOAD(p) _mm_loadu_si128((const __m128i *)(const void *)(p))
#define V16_STORE(p, v) _mm_storeu_si128((__m128i *)(void *)(p), (v))

static inline __attribute__((always_inline)) void small_move(unsigned char *d,
							      const unsigned char *s, size_t n)
{
	if (n < 16) {
		if (n >= 8) {
			uint64_t a, b;
			__builtin_memcpy(&a, s, 8);
			__builtin_memcpy(&b, s + n - 8, 8);
			__builtin_memcpy(d, &a, 8);
			__builtin_memcpy(d + n - 8, &b, 8);
		} else if (n >= 4) {
			uint32_t a, b;
			__builtin_memcpy(&a, s, 4);
			__builtin_memcpy(&b, s + n - 4, 4);
			__builtin_memcpy(d, &a, 4);
			__builtin_memcpy(d + n - 4, &b, 4);
		} else if (n >= 2) { /* as glibc: 2 bytes and 1 */
			uint16_t a;
			unsigned char b = s[n - 1];
			__builtin_memcpy(&a, s, 2);
			__builtin_memcpy(d, &a, 2);
			d[n - 1] = b;
		} else if (n == 1) {
			d[0] = s[0];
		}
	} else if (n < 32) {
		__m128i a = V16_LOAD(s), b = V16_LOAD(s + n - 16);
		V16_STORE(d, a);
		V16_STORE(d + n - 16, b);
	} else { /* 32-63: glibc's two 32-byte stores, as 16-byte halves */
		__m128i a0 = V16_LOAD(s), a1 = V16_LOAD(s + 16);
		__m128i b0 = V16_LOAD(s + n - 32), b1 = V16_LOAD(s + n - 16);
		V16_STORE(d, a0);
		V16_STORE(d + 16, a1);
		V16_STORE(d + n - 32, b0);
		V16_STORE(d + n - 16, b1);
	}
}

/* Copies from SMALL_MAX on, and every memset: the runtime's path (the C
 * library's function below BULK_MIN_BYTES, else counted), apart from the
 * wrappers' own section so that a tick there is the runtime's time and
 * its load of the function a runtime access, not the program's.
 * real: the C library's function for this call below BULK_MIN_BYTES (its
 * result, mempcpy's too); end: return the end of d's bytes, not d. */
BULK_PATH static void *move_on(memcpy_fn *real, void *d, const void *s, size_t n, int end)
{
	memcpy_fn fn = __atomic_load_n(real, __ATOMIC_ACQUIRE);
	if (fn && n < BULK_MIN_BYTES)
		return fn(d, s, n);
	char *r = __atomic_load_n(&real_memset, __ATOMIC_ACQUIRE)
			  ? do_move(real == &real_memmove ? real_memmove : real_memcpy, d, s, n)
			  : early_move(d, s, n);
	return end ? r + n : r;
}

BULK_EXPORT void *memset(void *d, int c, size_t n)
{
	memset_fn fn = __atomic_load_n(&real_memset, __ATOMIC_ACQUIRE);
	if (fn && n < BULK_MIN_BYTES)
		return fn(d, c, n);
	if (!fn)
		return early_set(d, c, n);
	return do_set(fn, d, c, n);
}

BULK_PROGRAM_EXPORT void *memcpy(void *d, const void *s, size_t n)
{
	if (n < SMALL_MAX) {
		small_move(d, s, n);
		return d;
	}
	return move_on(&real_memcpy, d, s, n, 0);
}

/* This library's memcpy under a name no one else defines: the program's
 * calls may find another first (sanguard.h). */
extern __typeof__(memcpy) bulk_memcpy_here
	__attribute__((alias("memcpy"), copy(memcpy), visibility("hidden")));

const void *bulk_own_memcpy(void)
{
	return (const void *)bulk_memcpy_here;
}

BULK_PROGRAM_EXPORT void *memmove(void *d, const void *s, size_t n)
{
	if (n < SMALL_MAX) {
		small_move(d, s, n);
		return d;
	}
	return move_on(&real_memmove, d, s, n, 0);
}

BULK_PROGRAM_EXPORT void *mempcpy(void *d, const void *s, size_t n)
{
	if (n < SMALL_MAX) {
		small_move(d, s, n);
		return (char *)d + n;
	}
	return move_on(&real_mempcpy, d, s, n, 1);
}

uint64_t bulk_program_leaf(uint64_t pc)
{
	/* The section holds these three: pc is in the one whose entry is the
	 * last at or below it. */
	const struct {
		const void *entry;
		uint64_t real;
	} fns[] = {
		{(const void *)memcpy, (uint64_t)(uintptr_t)real_memcpy},
		{(const void *)memmove, (uint64_t)(uintptr_t)real_memmove},
		{(const void *)mempcpy, (uint64_t)(uintptr_t)real_mempcpy},
	};
	uint64_t best = 0, real = 0;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		uint64_t e = (uint64_t)(uintptr_t)fns[i].entry;
		if (e <= pc && e > best) {
			best = e;
			real = fns[i].real;
		}
	}
	/* As far into the C library's function as into the wrapper: each of
	 * the wrapper's stores a context of its own, as each of glibc's
	 * instructions is (one leaf for all four stores of a 32-byte copy gave
	 * that context's whole weight to whichever trapped first, 4.4.2:
	 * copy_sizes' 32 bytes read 0.57-0.63 silent for 0.5). */
	return real ? real + (pc - best) : pc;
}

int bulk_window_call(uint64_t pc, const uint64_t *gpr, struct bulk_call *c)
{
	/* The wrappers the window models: what each passes on to, for
	 * which client it counts (0: both), and what it returns. */
	enum { RET_DEST, RET_END, RET_UNKNOWN };
	const struct {
		const void *entry;
		const void *real;
		uint8_t counted_for;
		int returns;
		int copies; /* copies calls below SMALL_MAX bytes itself */
	} wrappers[] = {
		{(const void *)memset, (const void *)real_memset, DECODE_STORE, RET_DEST, 0},
		{(const void *)memcpy, (const void *)real_memcpy, 0, RET_DEST, 1},
		{(const void *)memmove, (const void *)real_memmove, 0, RET_DEST, 1},
		{(const void *)mempcpy, (const void *)real_mempcpy, 0, RET_END, 1},
		{(const void *)memcmp, (const void *)real_memcmp, DECODE_LOAD, RET_UNKNOWN, 0},
		{(const void *)bcmp, (const void *)real_memcmp, DECODE_LOAD, RET_UNKNOWN, 0},
	};
	uint64_t d = gpr[DECODE_RDI], n = gpr[DECODE_RDX];

	if (!__atomic_load_n(&bulk_kind, __ATOMIC_ACQUIRE))
		return -ENOENT;
	for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++) {
		if (pc != (uint64_t)(uintptr_t)wrappers[i].entry)
			continue;
		/* Below SMALL_MAX bytes the wrapper copies itself: the window
		 * runs the wrapper's own code, whose pcs are the ones that will
		 * access (a pick in the C library's code, which never runs,
		 * waited for its own access in vain: python3 under SilentCraft
		 * took 174,718 traps on its other accesses, 2.6x its time).  Up
		 * to BULK_MIN_BYTES it calls the C library's function and
		 * nothing counts the bytes: the window runs that function.  From
		 * there on the wrapper counts them (memset's where stores are
		 * sampled, memcmp's where loads are). */
		if (n < SMALL_MAX && wrappers[i].copies)
			return -ENOENT;
		int counted = n >= BULK_MIN_BYTES &&
			      (!wrappers[i].counted_for || wrappers[i].counted_for == bulk_kind);
		if (counted && wrappers[i].returns == RET_UNKNOWN)
			return -ENOENT; /* its result is not known here: the window ends */
		c->bytes = n;
		c->real = counted ? 0 : (uint64_t)(uintptr_t)wrappers[i].real;
		c->result = wrappers[i].returns == RET_END ? d + n : d;
		return 0;
	}
	return -ENOENT;
}

/* memcmp reads both buffers up to the first difference, all of them when
 * equal: for the load client, a call of BULK_MIN_BYTES or more is counted
 * by those bytes (two streams of k each), sampled after the call (the
 * loads have run).  lz's 64 KiB verify compares were weighed 2-5x their
 * share by ticks.  Where they differ, k is found again by a word scan
 * (the C library's returns only the sign): at most the call's own work. */
static size_t first_difference(const unsigned char *a, const unsigned char *b, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;
		__builtin_memcpy(&x, a + i, 8); /* one unaligned load each */
		__builtin_memcpy(&y, b + i, 8);
		if (x != y)
			break;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i < n ? i + 1 : n;
}

BULK_PATH static int compare_counted(const void *a, const void *b, size_t n)
{
	struct witch_thread *t = bulk_thread();
	uint64_t pos;
	if (!t)
		return real_memcmp(a, b, n);
	bulk_call_begin(t, n);
	int rc = real_memcmp(a, b, n);
	size_t k = rc == 0 ? n : first_difference(a, b, n);
	double weight = bulk_count(t, 2 * (uint64_t)k, &pos);
	bulk_call_end(t);
	if (weight > 0) { /* pos: in a's k bytes, then b's */
		uint64_t at = pos < k ? (uint64_t)(uintptr_t)a + pos : (uint64_t)(uintptr_t)b + (pos - k);
		handler_sample_call((uint64_t)(uintptr_t)real_memcmp, at, bulk_kind, weight, 1);
	}
	return rc;
}

BULK_EXPORT int memcmp(const void *a, const void *b, size_t n)
{
	memcmp_fn fn = __atomic_load_n(&real_memcmp, __ATOMIC_ACQUIRE);
	if (fn && (n < BULK_MIN_BYTES || bulk_kind != DECODE_LOAD))
		return fn(a, b, n);
	if (!fn) { /* before bulk_resolve */
		const unsigned char *x = a, *y = b;
		for (size_t i = 0; i < n; i++)
			if (x[i] != y[i])
				return x[i] < y[i] ? -1 : 1;
		return 0;
	}
	return compare_counted(a, b, n);
}

BULK_EXPORT int bcmp(const void *a, const void *b, size_t n)
{
	return memcmp(a, b, n);
}

BULK_EXPORT void bzero(void *d, size_t n)
{
	memset(d, 0, n);
}

/* _FORTIFY_SOURCE: the object size check is the C library's (a call that
 * would overflow goes there and aborts as without the profiler). */
typedef void *(*memcpy_chk_fn)(void *, const void *, size_t, size_t);
typedef void *(*memset_chk_fn)(void *, int, size_t, size_t);

#define CHK_MOVE(name, plain)                                                          \
	BULK_EXPORT void *name(void *d, const void *s, size_t n, size_t dlen)          \
	{                                                                               \
		if (n > dlen) {                                                         \
			memcpy_chk_fn chk = (memcpy_chk_fn)dlsym(RTLD_NEXT, #name);     \
			return chk(d, s, n, dlen);                                      \
		}                                                                       \
		return plain(d, s, n);                                                  \
	}
CHK_MOVE(__memcpy_chk, memcpy)
CHK_MOVE(__memmove_chk, memmove)
CHK_MOVE(__mempcpy_chk, mempcpy)

BULK_EXPORT void *__memset_chk(void *d, int c, size_t n, size_t dlen)
{
	if (n > dlen) {
		memset_chk_fn chk = (memset_chk_fn)dlsym(RTLD_NEXT, "__memset_chk");
		return chk(d, c, n, dlen);
	}
	return memset(d, c, n);
}
