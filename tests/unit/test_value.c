/* Unit test of the same-value decisions of SilentCraft and LoadCraft.
 *
 * Part 1, value_compare, table-driven (a row per case, __LINE__ kept):
 * two 8-byte images (old = remembered, now) of [BASE, BASE+8), the bytes
 * that overlap the deciding access, its element type and start, the
 * tolerance, and the verdict derived by hand in the row's comment.
 *
 * Part 2, the crafts on real memory (craft_read_location reads it through
 * process_vm_readv, as in the handler): the sequences of sample, own trap
 * and later traps the runtime feeds them, with mixed access sizes.  The
 * issue's case: a 4-byte store into an 8-byte watched location compares
 * only the 4 overlapping bytes.
 *
 * Part 3, on_traced, table-driven: an access the run ahead traced after a
 * sample decides it without a trap, from its kind (dead) or from the values
 * (silent: what the sample stored, with the traced store's bytes laid over
 * the overlap; load: what the sample loaded against what the next load
 * reads, the traced stores before it laid over the shadow, each CRAFT_KEEP).
 * A verdict needing what the program has not run yet is CRAFT_DROP.
 */
#include <stdint.h>
#include <string.h>

#include "witch/craft.h"
#include "witch/decode.h"
#include "witch/value.h"

#include "check.h"

#define BASE 0x1000u

/* Byte images: little-endian u64 or two f32 / one f64 spelled as values. */
union img {
	uint8_t b[8];
	uint64_t u;
	uint32_t u32[2];
	float f[2];
	double d;
};

struct row {
	int line;
	union img old, now;
	uint32_t ov_off, ov_len;  /* overlap: [BASE+ov_off, +ov_len) */
	uint8_t elem;
	int32_t access_off;       /* the deciding access starts at BASE+access_off */
	double tol;
	enum value_verdict want;
};

#define U(x) {.u = (x)}
#define F2(a, b) {.f = {(a), (b)}}
#define D(x) {.d = (x)}
#define INT DECODE_ELEM_INT
#define F32 DECODE_ELEM_F32
#define F64 DECODE_ELEM_F64

static const struct row rows[] = {
	/* integers: exact bytes of the overlap only */
	{__LINE__, U(0x1122334455667788), U(0x1122334455667788), 0, 8, INT, 0, 0.01, VALUE_SAME},
	{__LINE__, U(0x1122334455667788), U(0x1122334455667789), 0, 8, INT, 0, 0.01, VALUE_DIFFERENT},
	/* a 4-byte access to the high half: a changed low half does not count */
	{__LINE__, U(0x1122334455667788), U(0x11223344aaaaaaaa), 4, 4, INT, 4, 0.01, VALUE_SAME},
	{__LINE__, U(0x1122334455667788), U(0x11223345aaaaaaaa), 4, 4, INT, 4, 0.01, VALUE_DIFFERENT},
	/* one byte */
	{__LINE__, U(0x00000000000000ff), U(0xffffffffffffffff), 0, 1, INT, 0, 0.01, VALUE_SAME},
	/* an access starting 4 bytes before the location (overlap = its tail) */
	{__LINE__, U(0x1122334455667788), U(0x99223344aa667788), 0, 2, INT, -4, 0.01, VALUE_SAME},
	/* integers never get a tolerance: 1000 vs 1001 */
	{__LINE__, U(1000), U(1001), 0, 8, INT, 0, 0.5, VALUE_DIFFERENT},

	/* doubles: |a-b| <= tol * max(|a|,|b|) */
	{__LINE__, D(1.0), D(1.0), 0, 8, F64, 0, 0.01, VALUE_SAME},
	/* 0.1% change: within 1% */
	{__LINE__, D(100.0), D(100.1), 0, 8, F64, 0, 0.01, VALUE_APPROX},
	/* 0.1% change: not within 0.01% */
	{__LINE__, D(100.0), D(100.1), 0, 8, F64, 0, 0.0001, VALUE_DIFFERENT},
	/* 2% change at 1%: different */
	{__LINE__, D(100.0), D(102.0), 0, 8, F64, 0, 0.01, VALUE_DIFFERENT},
	/* exactly at the bound: |100-99| = 1 <= 0.01*100 */
	{__LINE__, D(100.0), D(99.0), 0, 8, F64, 0, 0.01, VALUE_APPROX},
	/* sign change is never close: |1-(-1)| = 2 > 0.01 */
	{__LINE__, D(1.0), D(-1.0), 0, 8, F64, 0, 0.01, VALUE_DIFFERENT},
	/* zero against zero of the other sign: bytes differ, |0-0| <= 0 */
	{__LINE__, D(0.0), D(-0.0), 0, 8, F64, 0, 0.01, VALUE_APPROX},
	/* NaN: bit-equal is the same, otherwise never close */
	{__LINE__, U(0x7ff8000000000000), U(0x7ff8000000000000), 0, 8, F64, 0, 0.01, VALUE_SAME},
	{__LINE__, U(0x7ff8000000000000), U(0x7ff8000000000001), 0, 8, F64, 0, 0.5, VALUE_DIFFERENT},
	{__LINE__, D(1.0), U(0x7ff8000000000000), 0, 8, F64, 0, 0.5, VALUE_DIFFERENT},
	/* tolerance 0: exact only */
	{__LINE__, D(100.0), D(100.0000001), 0, 8, F64, 0, 0.0, VALUE_DIFFERENT},

	/* floats: each element on its own */
	{__LINE__, F2(1.0f, 2.0f), F2(1.0f, 2.0f), 0, 8, F32, 0, 0.01, VALUE_SAME},
	{__LINE__, F2(1.0f, 2.0f), F2(1.001f, 2.0f), 0, 8, F32, 0, 0.01, VALUE_APPROX},
	{__LINE__, F2(1.0f, 2.0f), F2(1.001f, 2.5f), 0, 8, F32, 0, 0.01, VALUE_DIFFERENT},
	/* only the second float is touched: the first may differ */
	{__LINE__, F2(1.0f, 2.0f), F2(9.0f, 2.001f), 4, 4, F32, 4, 0.01, VALUE_APPROX},
	/* an 8-byte vector access (two floats) starting 4 bytes early: element
	 * [BASE-4, BASE) is outside the overlap, [BASE, BASE+4) inside */
	{__LINE__, F2(1.0f, 2.0f), F2(1.001f, 7.0f), 0, 4, F32, -4, 0.01, VALUE_APPROX},
	/* a float access 2 bytes into a double image: element [BASE+2, BASE+6)
	 * lies inside the image, compared as a float (reinterpreted bytes):
	 * identical bytes are the same whatever their meaning */
	{__LINE__, U(0x1122334455667788), U(0x1122334455667788), 2, 4, F32, 2, 0.01, VALUE_SAME},
	/* a double access starting 4 bytes before the image: its element sticks
	 * out, so the 4 overlapping bytes compare exactly, no tolerance */
	{__LINE__, D(100.0), D(100.1), 0, 4, F64, -4, 0.5, VALUE_DIFFERENT},
	{__LINE__, U(0x11223344aabbccdd), U(0x99999999aabbccdd), 0, 4, F64, -4, 0.5, VALUE_SAME},
};

static const char *verdict_name(enum value_verdict v)
{
	return v == VALUE_SAME ? "same" : v == VALUE_APPROX ? "approx" : "different";
}

static void test_rows(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct value_view v = {BASE, 8, r->old.b, r->now.b};
		enum value_verdict got = value_compare(&v, BASE + r->ov_off, r->ov_len, r->elem,
						       (uint64_t)((int64_t)BASE + r->access_off),
						       r->tol);
		CHECK(r->line, got == r->want, "verdict %s, want %s", verdict_name(got),
		      verdict_name(r->want));
	}
}

/* --- the crafts on real memory ------------------------------------------- */

static volatile union img loc; /* the watched location */

/* A watchpoint as sample_take leaves it: an 8-byte access at &loc. */
static void sampled(struct watchpoint *w, uint32_t len, uint8_t elem)
{
	memset(w, 0, sizeof(*w));
	w->addr = w->own.sample_addr = (uint64_t)(uintptr_t)&loc;
	w->len = w->own.sample_len = len;
	w->own.sample_elem = elem;
	w->own.pending_self = 1;
}

static struct craft_trap access_at(uint8_t kind, uint8_t elem, uint32_t off, uint32_t len,
				   const struct watchpoint *w)
{
	struct craft_trap t;
	memset(&t, 0, sizeof(t));
	t.kind = kind;
	t.elem = elem;
	t.addr = w->addr + off;
	t.len = len;
	t.overlap_addr = t.addr; /* the tests keep accesses inside the watched 8 bytes */
	t.overlap_len = len;
	t.tolerance = 0.01;
	return t;
}

static const char *craft_verdict_name(enum craft_verdict v)
{
	static const char *const names[] = {"keep", "waste", "use", "drop"};
	return names[v];
}

#define EXPECT(line, craft, w, t, want_v, want_approx)                                     \
	do {                                                                               \
		int approx_ = -1;                                                          \
		enum craft_verdict v_ = (craft)->on_trap((w), &(t), &approx_);             \
		CHECK(line, v_ == (want_v) && approx_ == (want_approx),                   \
		      "%s: verdict %s approx %d, want %s approx %d", (craft)->name,        \
		      craft_verdict_name(v_), approx_, craft_verdict_name(want_v), want_approx); \
	} while (0)

static void test_silent(void)
{
	const struct craft *c = craft_get(CONFIG_CLIENT_SILENT);
	struct watchpoint w;
	struct craft_trap t;

	CHECK(__LINE__, c == &craft_silent && c->watch_type == WATCHPOINT_W &&
			    c->sample_kind == DECODE_STORE, "silent craft table");

	/* 8-byte store of 0x1122334455667788; it runs, then its own trap. */
	loc.u = 0;
	sampled(&w, 8, INT);
	CHECK(__LINE__, c->on_sample(&w) == 0, "on_sample");
	loc.u = 0x1122334455667788;
	CHECK(__LINE__, c->on_self(&w) == 0 && w.own.value_len == 8, "on_self, value_len %u",
	      w.own.value_len);

	/* A 4-byte store of the same high half: silent, though the low half
	 * (not touched by this store, and unwatched by it) now differs. */
	loc.u32[0] = 0xdeadbeef;
	loc.u32[1] = 0x11223344;
	t = access_at(DECODE_STORE, INT, 4, 4, &w);
	EXPECT(__LINE__, c, &w, t, CRAFT_WASTE, 0);
	/* A 4-byte store of a different low half: not silent. */
	t = access_at(DECODE_STORE, INT, 0, 4, &w);
	EXPECT(__LINE__, c, &w, t, CRAFT_USE, 0);
	/* A 2-byte store over bytes 2..3 that still hold 0x5566: silent */
	loc.u = 0x1122334455667788;
	t = access_at(DECODE_STORE, INT, 2, 2, &w);
	EXPECT(__LINE__, c, &w, t, CRAFT_WASTE, 0);

	/* Doubles: 0.1% apart is approximately silent at 1%, not at 0.01% */
	loc.d = 100.0;
	sampled(&w, 8, F64);
	CHECK(__LINE__, c->on_sample(&w) == 0 && c->on_self(&w) == 0, "sample a double");
	loc.d = 100.1;
	t = access_at(DECODE_STORE, F64, 0, 8, &w);
	EXPECT(__LINE__, c, &w, t, CRAFT_WASTE, 1);
	t.tolerance = 0.0001;
	EXPECT(__LINE__, c, &w, t, CRAFT_USE, 0);
	/* ...and the same bits as an integer store: exact only */
	t = access_at(DECODE_STORE, INT, 0, 8, &w);
	EXPECT(__LINE__, c, &w, t, CRAFT_USE, 0);
	loc.d = 100.0;
	EXPECT(__LINE__, c, &w, t, CRAFT_WASTE, 0);
}

static void test_load(void)
{
	const struct craft *c = craft_get(CONFIG_CLIENT_LOAD);
	struct watchpoint w;
	struct craft_trap t;

	CHECK(__LINE__, c == &craft_load && c->watch_type == WATCHPOINT_RW &&
			    c->sample_kind == DECODE_LOAD, "load craft table");

	/* An 8-byte load of 0x1122334455667788: remembered before it runs. */
	loc.u = 0x1122334455667788;
	sampled(&w, 8, INT);
	CHECK(__LINE__, c->on_sample(&w) == 0 && w.own.value_len == 8, "on_sample");
	CHECK(__LINE__, c->on_self(&w) == 0, "on_self");

	/* A store to the low half is no verdict. */
	loc.u32[0] = 0xdeadbeef;
	t = access_at(DECODE_STORE, INT, 0, 4, &w);
	EXPECT(__LINE__, c, &w, t, CRAFT_KEEP, 0);
	/* A 4-byte load of the high half: same value as first loaded -> redundant */
	t = access_at(DECODE_LOAD, INT, 4, 4, &w);
	EXPECT(__LINE__, c, &w, t, CRAFT_WASTE, 0);
	/* A 4-byte load of the low half: changed -> not redundant */
	t = access_at(DECODE_LOAD, INT, 0, 4, &w);
	EXPECT(__LINE__, c, &w, t, CRAFT_USE, 0);

	/* Changed and changed back before the next load: redundant (the value
	 * loaded is the value loaded before). */
	loc.u = 0x1122334455667788;
	sampled(&w, 8, INT);
	CHECK(__LINE__, c->on_sample(&w) == 0 && c->on_self(&w) == 0, "sample again");
	loc.u = 7;
	t = access_at(DECODE_STORE, INT, 0, 8, &w);
	EXPECT(__LINE__, c, &w, t, CRAFT_KEEP, 0);
	loc.u = 0x1122334455667788;
	EXPECT(__LINE__, c, &w, t, CRAFT_KEEP, 0);
	t = access_at(DECODE_LOAD, INT, 0, 8, &w);
	EXPECT(__LINE__, c, &w, t, CRAFT_WASTE, 0);

	/* A read-modify-write decides with what it loaded, which it has
	 * overwritten by the time it traps: the shadow kept at the last store.
	 * add [loc], 1 on 5: loads 5 (as remembered) -> redundant. */
	loc.u = 5;
	sampled(&w, 8, INT);
	CHECK(__LINE__, c->on_sample(&w) == 0 && c->on_self(&w) == 0, "sample 5");
	loc.u = 6; /* the rmw ran */
	t = access_at(DECODE_RMW, INT, 0, 8, &w);
	EXPECT(__LINE__, c, &w, t, CRAFT_WASTE, 0);
	/* store 9 (kept), then the rmw loads 9, stores 10 -> not redundant */
	loc.u = 9;
	t = access_at(DECODE_STORE, INT, 0, 8, &w);
	EXPECT(__LINE__, c, &w, t, CRAFT_KEEP, 0);
	loc.u = 10;
	t = access_at(DECODE_RMW, INT, 0, 8, &w);
	EXPECT(__LINE__, c, &w, t, CRAFT_USE, 0);

	/* Floats loaded as a pair, decided by one 4-byte float load. */
	loc.f[0] = 1.0f;
	loc.f[1] = 2.0f;
	sampled(&w, 8, F32);
	CHECK(__LINE__, c->on_sample(&w) == 0 && c->on_self(&w) == 0, "sample floats");
	loc.f[1] = 2.001f;
	t = access_at(DECODE_LOAD, F32, 4, 4, &w);
	EXPECT(__LINE__, c, &w, t, CRAFT_WASTE, 1);
	loc.f[1] = 3.0f;
	EXPECT(__LINE__, c, &w, t, CRAFT_USE, 0);
}

/* The location cannot be read (an unmapped page): the sample is refused,
 * never a fault. */
static void test_unreadable(void)
{
	struct watchpoint w;
	memset(&w, 0, sizeof(w));
	w.addr = w.own.sample_addr = 8; /* page 0 is never mapped */
	w.len = w.own.sample_len = 8;
	CHECK(__LINE__, craft_load.on_sample(&w) < 0, "load on_sample of page 0 accepted");
	CHECK(__LINE__, craft_silent.on_self(&w) < 0, "silent on_self of page 0 accepted");
}

/* Part 3: on_traced.  The sample: an 8-byte store (silent: of `stored`) or
 * load at BASE, watching [BASE + w_off, + w_len). */
static const struct {
	int line;
	const struct craft *cr;
	uint64_t stored;          /* what the sample stored (silent) or loaded (load) */
	uint32_t w_off, w_len;    /* the watched word */
	uint8_t kind, elem;       /* the traced access */
	int32_t a_off;
	uint32_t a_len;
	int known;
	uint64_t value;           /* what it stores */
	enum craft_verdict want;
	int want_approx;
} traced[] = {
	/* dead: by kind */
	{__LINE__, &craft_dead, 0, 0, 8, DECODE_STORE, DECODE_ELEM_INT, 0, 8, 0, 0, CRAFT_WASTE, 0},
	{__LINE__, &craft_dead, 0, 0, 8, DECODE_LOAD, DECODE_ELEM_INT, 0, 8, 0, 0, CRAFT_USE, 0},
	{__LINE__, &craft_dead, 0, 0, 8, DECODE_RMW, DECODE_ELEM_INT, 4, 4, 0, 0, CRAFT_USE, 0},
	/* load: a load (or an RMW's load) with nothing stored between reads what
	 * the sample read; a store is passed (its bytes kept), or, its value
	 * unknown, the program's to tell */
	{__LINE__, &craft_load, 5, 0, 8, DECODE_LOAD, DECODE_ELEM_INT, 0, 4, 0, 0, CRAFT_WASTE, 0},
	{__LINE__, &craft_load, 5, 0, 8, DECODE_RMW, DECODE_ELEM_INT, 0, 8, 0, 0, CRAFT_WASTE, 0},
	{__LINE__, &craft_load, 5, 0, 8, DECODE_STORE, DECODE_ELEM_INT, 0, 8, 1, 7, CRAFT_KEEP, 0},
	{__LINE__, &craft_load, 5, 0, 8, DECODE_STORE, DECODE_ELEM_INT, 0, 8, 0, 7, CRAFT_DROP, 0},
	/* silent: the same value is waste, another use, unknown the program's */
	{__LINE__, &craft_silent, 0x1122334455667788ull, 0, 8, DECODE_STORE, DECODE_ELEM_INT, 0, 8, 1,
	 0x1122334455667788ull, CRAFT_WASTE, 0},
	{__LINE__, &craft_silent, 0x1122334455667788ull, 0, 8, DECODE_STORE, DECODE_ELEM_INT, 0, 8, 1,
	 0x1122334455667789ull, CRAFT_USE, 0},
	{__LINE__, &craft_silent, 0x1122334455667788ull, 0, 8, DECODE_STORE, DECODE_ELEM_INT, 0, 8, 0,
	 0x1122334455667788ull, CRAFT_DROP, 0},
	/* 4 bytes into the watched word's upper half: their old bytes 0x11223344 */
	{__LINE__, &craft_silent, 0x1122334455667788ull, 0, 8, DECODE_STORE, DECODE_ELEM_INT, 4, 4, 1,
	 0x11223344u, CRAFT_WASTE, 0},
	{__LINE__, &craft_silent, 0x1122334455667788ull, 0, 8, DECODE_STORE, DECODE_ELEM_INT, 4, 4, 1,
	 0x55667788u, CRAFT_USE, 0},
	/* a store starting below the sample: only its overlap counts (its bytes
	 * at BASE and BASE+1, 0x88 0x77 as the sample left them; or not) */
	{__LINE__, &craft_silent, 0x1122334455667788ull, 0, 8, DECODE_STORE, DECODE_ELEM_INT, -2, 4, 1,
	 0x7788ffffu, CRAFT_WASTE, 0},
	{__LINE__, &craft_silent, 0x1122334455667788ull, 0, 8, DECODE_STORE, DECODE_ELEM_INT, -2, 4, 1,
	 0x5566ffffu, CRAFT_USE, 0},
	/* a double within the FP tolerance: approximately silent */
	{__LINE__, &craft_silent, 0x3ff0000000000000ull /* 1.0 */, 0, 8, DECODE_STORE,
	 DECODE_ELEM_F64, 0, 8, 1, 0x3ff0000000000001ull, CRAFT_WASTE, 1},
};

static void test_traced(void)
{
	for (size_t i = 0; i < sizeof(traced) / sizeof(traced[0]); i++) {
		struct watchpoint w;
		memset(&w, 0, sizeof(w));
		w.addr = BASE + traced[i].w_off;
		w.len = traced[i].w_len;
		w.own.sample_addr = BASE;
		w.own.sample_len = 8;
		w.own.sample_elem = traced[i].elem;
		if (traced[i].cr != &craft_dead)
			CHECK(traced[i].line, traced[i].cr->on_self_value(&w, (const uint8_t *)&traced[i].stored) == 0,
			      "on_self_value");
		uint64_t a = BASE + (uint64_t)(int64_t)traced[i].a_off;
		uint64_t lo = a > w.addr ? a : w.addr;
		uint64_t hi = a + traced[i].a_len < w.addr + w.len ? a + traced[i].a_len : w.addr + w.len;
		struct craft_trap t = {.kind = traced[i].kind, .elem = traced[i].elem, .addr = a,
				       .len = traced[i].a_len, .overlap_addr = lo,
				       .overlap_len = (uint32_t)(hi - lo), .tolerance = 0.01,
				       .value_known = traced[i].known, .value = traced[i].value};
		int approx = -1;
		enum craft_verdict v = traced[i].cr->on_traced(&w, &t, &approx);
		CHECK(traced[i].line,
		      v == traced[i].want &&
			      (v == CRAFT_DROP || v == CRAFT_KEEP || approx == traced[i].want_approx),
		      "%s on_traced: verdict %d approx %d, want %d approx %d", traced[i].cr->name, (int)v,
		      approx, (int)traced[i].want, traced[i].want_approx);
	}
}

/* LoadCraft followed through the traced stores (sample.c): the sample
 * loaded 0x1122334455667788 at BASE, watching all 8 bytes; each row's
 * accesses come in order, all but the last CRAFT_KEEP, the last deciding. */
#define LOADED 0x1122334455667788ull
static const struct {
	int line;
	int n;
	struct {
		uint8_t kind;
		int32_t off;
		uint32_t len;
		int known;
		uint64_t value;
	} acc[3];
	enum craft_verdict want;
} load_seq[] = {
	/* the same value stored back: the next load is redundant */
	{__LINE__, 2, {{DECODE_STORE, 0, 8, 1, LOADED}, {DECODE_LOAD, 0, 8, 0, 0}}, CRAFT_WASTE},
	/* another value: used */
	{__LINE__, 2, {{DECODE_STORE, 0, 8, 1, LOADED + 1}, {DECODE_LOAD, 0, 8, 0, 0}}, CRAFT_USE},
	/* changed and changed back: LoadSpy compares values */
	{__LINE__, 3,
	 {{DECODE_STORE, 0, 8, 1, 7}, {DECODE_STORE, 0, 8, 1, LOADED}, {DECODE_LOAD, 0, 8, 0, 0}},
	 CRAFT_WASTE},
	/* 4 bytes over the upper half, as they were */
	{__LINE__, 2, {{DECODE_STORE, 4, 4, 1, 0x11223344u}, {DECODE_LOAD, 0, 8, 0, 0}}, CRAFT_WASTE},
	/* the lower half changed, the load reads the upper half only */
	{__LINE__, 2, {{DECODE_STORE, 0, 4, 1, 0}, {DECODE_LOAD, 4, 4, 0, 0}}, CRAFT_WASTE},
	{__LINE__, 2, {{DECODE_STORE, 0, 4, 1, 0}, {DECODE_LOAD, 0, 4, 0, 0}}, CRAFT_USE},
	/* a read-modify-write after a store loads the stored bytes */
	{__LINE__, 2, {{DECODE_STORE, 0, 8, 1, 9}, {DECODE_RMW, 0, 8, 0, 0}}, CRAFT_USE},
	/* a store whose bytes the run ahead does not know */
	{__LINE__, 2, {{DECODE_STORE, 0, 8, 1, LOADED}, {DECODE_STORE, 2, 2, 0, 0}}, CRAFT_DROP},
};

static void test_traced_load(void)
{
	for (size_t i = 0; i < sizeof(load_seq) / sizeof(load_seq[0]); i++) {
		struct watchpoint w;
		memset(&w, 0, sizeof(w));
		w.addr = w.own.sample_addr = BASE;
		w.len = w.own.sample_len = 8;
		uint64_t loaded = LOADED;
		CHECK(load_seq[i].line, craft_load.on_self_value(&w, (const uint8_t *)&loaded) == 0,
		      "on_self_value");
		enum craft_verdict v = CRAFT_KEEP;
		for (int k = 0; k < load_seq[i].n; k++) {
			uint64_t a = BASE + (uint64_t)(int64_t)load_seq[i].acc[k].off;
			uint32_t len = load_seq[i].acc[k].len;
			struct craft_trap t = {.kind = load_seq[i].acc[k].kind,
					       .elem = DECODE_ELEM_INT, .addr = a, .len = len,
					       .overlap_addr = a, .overlap_len = len,
					       .value_known = load_seq[i].acc[k].known,
					       .value = load_seq[i].acc[k].value};
			int approx = -1;
			v = craft_load.on_traced(&w, &t, &approx);
			if (k + 1 < load_seq[i].n && v != CRAFT_KEEP)
				break;
		}
		CHECK(load_seq[i].line, v == load_seq[i].want, "load sequence: verdict %d, want %d",
		      (int)v, (int)load_seq[i].want);
	}
}

int main(void)
{
	test_rows();
	test_traced();
	test_traced_load();
	test_silent();
	test_load();
	test_unreadable();
	if (check_failures)
		return 1;
	printf("test_value: %zu compare rows, %zu traced rows, %zu traced load sequences and the "
	       "silent/load crafts passed\n",
	       sizeof(rows) / sizeof(rows[0]), sizeof(traced) / sizeof(traced[0]),
	       sizeof(load_seq) / sizeof(load_seq[0]));
	return 0;
}
