/* Unit test: bulk.c's own copies below 64 bytes, its memset, how a leaf
 * in them is named, and the counted calls' sampling period.
 *
 * Linked against the runtime's static library, this program's memcpy,
 * memmove, mempcpy and memset are bulk.c's wrappers, as a preloaded
 * library's are for a program.  Each row checks one of them at every size
 * 0-299 (every size class of the small path, and past it), before
 * bulk_resolve (memset, and copies from 64 bytes: byte loops) and after (the C library's
 * functions, uncounted below BULK_MIN_BYTES), source alignments 0-15 and
 * destinations -40..+40 bytes from the source (overlapping only where the
 * function allows it) against a byte loop: the bytes asked for, nothing
 * around them, and the return value.  Then a pc inside each copying
 * wrapper is named as the C library's function it does the work of
 * (context_leaf), and a pc outside the section as itself.
 */
#include "check.h"
#include "witch/bulk.h"
#include "witch/context.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

enum fn_kind { MOVE_APART, MOVE_OVERLAP, MOVE_END, SET };

#define BUF 1024
#define AT 300

/* What the call must leave: a plain loop through volatile bytes, which the
 * compiler cannot turn into a call of the functions under test. */
static void expect_move(volatile unsigned char *buf, size_t d, size_t s, size_t n)
{
	unsigned char tmp[BUF];
	for (size_t i = 0; i < n; i++)
		tmp[i] = buf[s + i];
	for (size_t i = 0; i < n; i++)
		buf[d + i] = tmp[i];
}

static void fill_pattern(volatile unsigned char *a, volatile unsigned char *b, size_t n)
{
	for (size_t i = 0; i < BUF; i++)
		a[i] = b[i] = (unsigned char)(i * 7 + n);
}

static int same(const volatile unsigned char *a, const volatile unsigned char *b)
{
	for (size_t i = 0; i < BUF; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

typedef void *(*move_fn)(void *, const void *, size_t);
typedef void *(*set_fn)(void *, int, size_t);

/* Called through volatile pointers: the compiler would otherwise expand the
 * calls itself, knowing what these functions do, and never call them. */
static move_fn volatile call_memcpy = memcpy, call_memmove = memmove, call_mempcpy = mempcpy;
static set_fn volatile call_memset = memset;

static void check_row(int line, const char *name, enum fn_kind kind)
{
	static unsigned char got[BUF], want[BUF];
	for (size_t n = 0; n < 300; n++) {
		for (int so = 0; so < 16; so++) {
			for (int off = -40; off <= 40; off++) {
				int apart = off >= (int)n || -off >= (int)n;
				if (kind != SET && kind != MOVE_OVERLAP && !apart)
					continue;
				if (kind == SET && off != 0)
					continue;
				size_t s = AT + (size_t)so, d = (size_t)((long)s + off);
				fill_pattern(got, want, n);
				void *r, *r_want = got + d;
				switch (kind) {
				case MOVE_APART:
					r = call_memcpy(got + d, got + s, n);
					expect_move(want, d, s, n);
					break;
				case MOVE_OVERLAP:
					r = call_memmove(got + d, got + s, n);
					expect_move(want, d, s, n);
					break;
				case MOVE_END:
					r = call_mempcpy(got + d, got + s, n);
					r_want = got + d + n;
					expect_move(want, d, s, n);
					break;
				case SET:
				default:
					r = call_memset(got + d, 0xa5 ^ (int)n, n);
					for (size_t i = 0; i < n; i++)
						((volatile unsigned char *)want)[d + i] = (unsigned char)(0xa5 ^ n);
					break;
				}
				CHECK(line, same(got, want), "%s: n %zu, source +%d, destination %+d: bytes differ",
				      name, n, so, off);
				CHECK(line, r == r_want, "%s: n %zu: returned %p, not %p", name, n, r, r_want);
			}
		}
	}
}

static const struct {
	int line;
	const char *name;
	enum fn_kind kind;
} rows[] = {
	{__LINE__, "memcpy", MOVE_APART},
	{__LINE__, "memmove", MOVE_OVERLAP},
	{__LINE__, "mempcpy", MOVE_END},
	{__LINE__, "memset", SET},
};

/* A pc a few bytes into each copying wrapper is named as the same pc as
 * far into the C library's function; memset's wrapper, which passes every
 * call on, is outside the section. */
static void check_leaves(void)
{
	static const struct {
		int line;
		const char *name;
		const void *wrapper;
		int in_section;
	} leaves[] = {
		{__LINE__, "memcpy", (const void *)memcpy, 1},
		{__LINE__, "memmove", (const void *)memmove, 1},
		{__LINE__, "mempcpy", (const void *)mempcpy, 1},
		{__LINE__, "memset", (const void *)memset, 0},
	};
	context_set_runtime_text(0, 0);
	CHECK(__LINE__, bulk_resolve() == 0, "bulk_resolve failed");
	for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
		uint64_t pc = (uint64_t)(uintptr_t)leaves[i].wrapper + 4;
		uint64_t libc = (uint64_t)(uintptr_t)dlsym(RTLD_NEXT, leaves[i].name);
		uint64_t want = leaves[i].in_section ? libc + 4 : pc;
		CHECK(leaves[i].line, context_pc_program(pc) == leaves[i].in_section,
		      "%s: +4 %s the program's section", leaves[i].name,
		      leaves[i].in_section ? "not in" : "in");
		CHECK(leaves[i].line, libc != 0 && context_leaf(pc) == want,
		      "%s: leaf %#lx, not %#lx", leaves[i].name, (unsigned long)context_leaf(pc),
		      (unsigned long)want);
	}
	uint64_t outside = (uint64_t)(uintptr_t)check_leaves;
	CHECK(__LINE__, !context_pc_program(outside) && context_leaf(outside) == outside,
	      "a pc outside the section was renamed");
}

/* The counted calls' sampling period (bulk_note_pick): a tick's pick's
 * weight, within [1/16, 1] of the period by time (32 MiB at 5 ms between
 * ticks), and the count to the next sample scaled with it.  A period that
 * stayed at the start's (by time) fails the first rows; one without the
 * bounds the last two; a count left as drawn the rescale check. */
static void check_period(void)
{
	static const struct {
		int line;
		double tick_ns, pick_bytes, want;
	} cases[] = {
		{__LINE__, 5e6, 0, 32 << 20},		   /* no pick yet: by time */
		{__LINE__, 5e6, 8 << 20, 8 << 20},	   /* a pick's weight */
		{__LINE__, 10e6, 8 << 20, 8 << 20},	   /* whatever the interval */
		{__LINE__, 5e6, 100 << 20, 32 << 20},	   /* never above by time */
		{__LINE__, 5e6, 1 << 20, 2 << 20},	   /* never below 1/16 of it */
		{__LINE__, 500e3, 1 << 20, 1 << 20},	   /* 2000/s: 3.2 MiB by time */
		{__LINE__, 500e3, 64 << 10, (32 << 20) / 10 / 16},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct bulk b;
		struct rng r;
		rng_seed(&r, 7 + i);
		bulk_thread_begin(&b, &r, (uint64_t)cases[i].tick_ns);
		int64_t left0 = b.left;
		double period0 = b.period;
		for (int k = 0; cases[i].pick_bytes > 0 && k < 400; k++)
			bulk_note_pick(&b, cases[i].pick_bytes); /* the running mean settles */
		double want = cases[i].want;
		CHECK(cases[i].line, b.period > want * 0.99 && b.period < want * 1.01,
		      "period %.0f, want %.0f", b.period, want);
		double scaled = (double)left0 * b.period / period0;
		CHECK(cases[i].line, (double)b.left > scaled - 2 && (double)b.left < scaled + 2,
		      "left %ld, want %.0f (drawn %ld at %.0f)", (long)b.left, scaled, (long)left0,
		      period0);
		CHECK(cases[i].line, b.drawn == b.period, "a sample would stand for %.0f, not %.0f",
		      b.drawn, b.period);
	}
}

/* What a copy in pieces is priced at over a whole one (bulk_pieces_extra_ps,
 * from bench/bulk_call_cost.c on the EPYC): nothing below 32 KiB, where
 * glibc's vector loop is as fast or faster (16 KiB: 80 ns in pieces, 121
 * whole); 9 ps a byte from 32 KiB (32 KiB: +350 ns, 256 KiB: +2,400); 1
 * from 768 KiB, where both go at memory's pace (1 MiB: +1,100-1,300).
 * And a tick takes the sum once (bulk_take_pieces_ns). */
static void check_pieces_price(void)
{
	static const struct {
		int line;
		uint64_t n, ps;
	} cases[] = {
		{__LINE__, 2048, 0},
		{__LINE__, 16384, 0},
		{__LINE__, 32767, 0},
		{__LINE__, 32768, 32768 * 9},
		{__LINE__, 262144, 262144 * 9},
		{__LINE__, (768u << 10) - 1, ((768u << 10) - 1) * 9},
		{__LINE__, 768u << 10, 768u << 10},
		{__LINE__, 1u << 20, 1u << 20},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(cases[i].line, bulk_pieces_extra_ps(cases[i].n) == cases[i].ps,
		      "%llu bytes priced %llu ps, want %llu", (unsigned long long)cases[i].n,
		      (unsigned long long)bulk_pieces_extra_ps(cases[i].n),
		      (unsigned long long)cases[i].ps);
	struct bulk b = {.pieces_ps = 4718592};
	double first = bulk_take_pieces_ns(&b), second = bulk_take_pieces_ns(&b);
	CHECK(__LINE__, first == 4718.592 && second == 0, "took %g ns then %g, want 4718.592 then 0",
	      first, second);
}

int main(void)
{
	check_period();
	check_pieces_price();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check_row(rows[i].line, rows[i].name, rows[i].kind);
	check_leaves(); /* (resolves the C library's functions) */
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check_row(rows[i].line, rows[i].name, rows[i].kind);
	return check_failures != 0;
}
