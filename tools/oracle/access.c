/* access: shadow-state decisions for the three clients; see access.h. */
#include "access.h"

#include "insn_class.h"
#include "shadow.h"

#include "pub_tool_libcbase.h"

struct pairs access_dead, access_silent, access_load_pairs;
struct access_totals access_totals;
double access_tolerance = 0.01;

/* Accesses are handled in segments of at most this many bytes (anything
 * wider than an AVX-512 register is an xsave area or the like). */
#define SEG 64

/* --- comparing values (libwitch's value.c rule) ---------------------------- */

static double fp_abs(double x)
{
	return x < 0 ? -x : x;
}

static double fp_at(const UChar *p, UInt size)
{
	if (size == 4) {
		float f;
		VG_(memcpy)(&f, p, 4);
		return f;
	}
	double d;
	VG_(memcpy)(&d, p, 8);
	return d;
}

static Bool fp_close(double a, double b)
{
	if (a != a || b != b)
		return False;
	double scale = fp_abs(a) > fp_abs(b) ? fp_abs(a) : fp_abs(b);
	return fp_abs(a - b) <= access_tolerance * scale;
}

Bool access_fp_close(const UChar *a, const UChar *b, UInt size)
{
	return fp_close(fp_at(a, size), fp_at(b, size));
}

enum judgement { DIFFERENT, SAME, APPROX };

/* Bytes [lo, hi) of an access; FP elements are aligned to its start, and an
 * element only partly inside the run must match exactly. */
static enum judgement judge(const UChar *was, const UChar *is, UInt lo, UInt hi, UInt cls)
{
	UInt size = (cls & INSN_ELEM_MASK) == INSN_ELEM_F32 ? 4 :
		    (cls & INSN_ELEM_MASK) == INSN_ELEM_F64 ? 8 : 0;
	if (size == 0)
		return VG_(memcmp)(was + lo, is + lo, hi - lo) == 0 ? SAME : DIFFERENT;
	enum judgement j = SAME;
	for (UInt e = lo / size * size; e < hi; e += size) {
		if (e >= lo && e + size <= hi) {
			if (VG_(memcmp)(was + e, is + e, size) == 0)
				continue;
			if (!fp_close(fp_at(was + e, size), fp_at(is + e, size)))
				return DIFFERENT;
			j = APPROX;
		} else {
			UInt a = e > lo ? e : lo, b = e + size < hi ? e + size : hi;
			if (VG_(memcmp)(was + a, is + a, b - a) != 0)
				return DIFFERENT;
		}
	}
	return j;
}

/* --- runs of bytes with the same previous context --------------------------- */

/* Dead-store decisions of a segment: bytes i with open[i] set, by prev[i]
 * (the earlier store's key). */
static void decide_dead(const UInt *prev, const Bool *open, UInt n, UInt ctx, Bool kill)
{
	for (UInt i = 0; i < n;) {
		if (!open[i]) {
			i++;
			continue;
		}
		UInt j = i + 1;
		while (j < n && open[j] && prev[j] == prev[i])
			j++;
		pairs_add(&access_dead, prev[i], ctx, kill ? j - i : 0, kill ? 0 : j - i, 0, 1);
		i = j;
	}
}

/* Value decisions of a segment for silent or load: each run of judged
 * bytes with one previous context is one value. */
static void decide_value(struct pairs *p, const UInt *prev, const Bool *judged,
			 const UChar *was, const UChar *is, UInt n, UInt cls, UInt ctx)
{
	for (UInt i = 0; i < n;) {
		if (!judged[i]) {
			i++;
			continue;
		}
		UInt j = i + 1;
		while (j < n && judged[j] && prev[j] == prev[i])
			j++;
		enum judgement v = judge(was, is, i, j, cls);
		ULong len = j - i;
		pairs_add(p, prev[i], ctx, v != DIFFERENT ? len : 0, v == DIFFERENT ? len : 0,
			  v == APPROX ? len : 0, 1);
		i = j;
	}
}

/* --- the accesses ------------------------------------------------------------ */

/* The chunk holding byte i of the segment at a, that byte's index k in it,
 * and where the segment's bytes in that chunk end (a segment crosses a
 * chunk boundary at most once).  Untracked bytes are counted and left
 * undecided; NULL then. */
static struct shadow_chunk *segment_span(Addr a, UInt i, UInt n, UInt *k, UInt *end,
					 Bool *open, Bool *judged)
{
	struct shadow_chunk *ch = shadow_chunk_of(a + i);
	*k = SHADOW_INDEX(a + i);
	*end = i + (SHADOW_CHUNK - *k) < n ? i + (SHADOW_CHUNK - *k) : n;
	if (ch == NULL) {
		access_totals.bytes_untracked += *end - i;
		for (; i < *end; i++)
			open[i] = judged[i] = False;
	}
	return ch;
}

static void load_segment(Addr a, UInt n, UInt cls, UInt ctx, UInt key)
{
	UInt sprev[SEG], lprev[SEG];
	Bool open[SEG], judged[SEG];
	UChar was[SEG], is[SEG];
	UChar stack = (cls & INSN_STACK) ? SH_LOAD_STACK : 0;

	VG_(memcpy)(is, (const void *)a, n);
	for (UInt i = 0, k, end; i < n; i = end) {
		struct shadow_chunk *ch = segment_span(a, i, n, &k, &end, open, judged);
		for (; ch && i < end; i++, k++) {
			UChar f = ch->flags[k];
			open[i] = (f & SH_DEAD_OPEN) != 0;
			judged[i] = (f & (SH_LOADED | SH_LOAD_STACK)) == SH_LOADED;
			sprev[i] = ch->sctx[k];
			lprev[i] = ch->lctx[k];
			was[i] = ch->lval[k];
			ch->flags[k] = (UChar)((f & ~(SH_DEAD_OPEN | SH_LOAD_STACK)) | SH_LOADED | stack);
			ch->lctx[k] = key;
			ch->lval[k] = is[i];
		}
	}
	decide_dead(sprev, open, n, ctx, False);
	decide_value(&access_load_pairs, lprev, judged, was, is, n, cls, ctx);
}

static void store_segment(Addr a, UInt n, UInt cls, UInt ctx, UInt key, const UChar *old,
			  const UChar *now)
{
	UInt sprev[SEG];
	Bool open[SEG], judged[SEG];
	UChar stack = (cls & INSN_STACK) ? SH_STORE_STACK : 0;

	for (UInt i = 0, k, end; i < n; i = end) {
		struct shadow_chunk *ch = segment_span(a, i, n, &k, &end, open, judged);
		for (; ch && i < end; i++, k++) {
			UChar f = ch->flags[k];
			open[i] = (f & SH_DEAD_OPEN) != 0;
			judged[i] = (f & (SH_STORED | SH_STORE_STACK)) == SH_STORED;
			sprev[i] = ch->sctx[k];
			ch->flags[k] = (UChar)((f & ~SH_STORE_STACK) | SH_DEAD_OPEN | SH_STORED | stack);
			ch->sctx[k] = key;
		}
	}
	decide_dead(sprev, open, n, ctx, True);
	decide_value(&access_silent, sprev, judged, old, now, n, cls, ctx);
}

void access_load(Addr a, UInt n, UInt cls, UInt ctx, UInt key)
{
	access_totals.loads++;
	access_totals.bytes_loaded += n;
	for (UInt off = 0; off < n; off += SEG)
		load_segment(a + off, n - off < SEG ? n - off : SEG, cls, ctx, key);
}

void access_store(Addr a, UInt n, UInt cls, UInt ctx, UInt key, const UChar *old,
		  const UChar *now)
{
	access_totals.stores++;
	access_totals.bytes_stored += n;
	for (UInt off = 0; off < n; off += SEG)
		store_segment(a + off, n - off < SEG ? n - off : SEG, cls, ctx, key, old + off,
			      now + off);
}
