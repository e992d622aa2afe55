/* output: JSON writer for one client's pairs; see output.h. */
#include "output.h"

#include "callstack.h"
#include "frames.h"
#include "msort.h"

#include "pub_tool_clientstate.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vki.h"
#include "pub_tool_wordfm.h"

#define MAX_FRAMES 512

/* --- a buffered writer that remembers its first error ---------------------- */

struct writer {
	Int fd;
	Int err;
	UInt len;
	HChar buf[1 << 16];
};

static void w_flush(struct writer *w)
{
	UInt off = 0;
	while (off < w->len && !w->err) {
		Int n = VG_(write)(w->fd, w->buf + off, (Int)(w->len - off));
		if (n <= 0)
			w->err = n < 0 ? n : -VKI_EIO;
		else
			off += (UInt)n;
	}
	w->len = 0;
}

static void w_put(struct writer *w, const HChar *s, UInt n)
{
	if (w->len + n > sizeof(w->buf))
		w_flush(w);
	if (n > sizeof(w->buf)) {
		for (UInt i = 0; i < n; i++)
			w_put(w, s + i, 1);
		return;
	}
	VG_(memcpy)(w->buf + w->len, s, n);
	w->len += n;
}

static void w_printf(struct writer *w, const HChar *fmt, ...)
{
	HChar tmp[256];
	va_list ap;
	va_start(ap, fmt);
	UInt n = VG_(vsnprintf)(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	w_put(w, tmp, n < sizeof(tmp) ? n : sizeof(tmp) - 1);
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void w_string(struct writer *w, const HChar *s)
{
	w_put(w, "\"", 1);
	for (; *s; s++) {
		UChar c = (UChar)*s;
		if (c == '"' || c == '\\') {
			HChar e[2] = { '\\', (HChar)c };
			w_put(w, e, 2);
		} else if (c < 0x20) {
			w_printf(w, "\\u%04x", c);
		} else {
			w_put(w, s, 1);
		}
	}
	w_put(w, "\"", 1);
}

/* num/den with six decimals, in integers (no FP formatting in the core). */
static void w_ratio(struct writer *w, ULong num, ULong den)
{
	if (den == 0 || num == 0) {
		w_put(w, "0", 1);
		return;
	}
	ULong micro = (ULong)(((unsigned __int128)num * 1000000 + den / 2) / den);
	w_printf(w, "%llu.%06llu", micro / 1000000, micro % 1000000);
}

/* --- frames ------------------------------------------------------------------- */

/* The frames of one context pc (frames.h): inlined calls as frames of
 * their own, a caller shown at its call (return address - 1), as libwitch
 * records it and `witch report` names it. */
static void w_frames(struct writer *w, DiEpoch ep, Addr pc, Bool leaf, Bool first)
{
	static struct src_frame f[FRAMES_PER_PC];
	Addr at = frames_site(pc, leaf);
	Int n = frames_of_pc(ep, pc, leaf, f, FRAMES_PER_PC);
	DebugInfo *di = VG_(find_DebugInfo)(ep, at);
	Addr offset = di ? at - (Addr)VG_(DebugInfo_get_text_bias)(di) : at;

	for (Int i = 0; i < n; i++) {
		w_put(w, first && i == 0 ? "{" : ",{", first && i == 0 ? 1 : 2);
		w_put(w, "\"function\":", 11);
		w_string(w, f[i].fn);
		w_put(w, ",\"file\":", 8);
		w_string(w, f[i].file);
		w_printf(w, ",\"line\":%u,\"module\":", f[i].line);
		w_string(w, f[i].obj);
		w_printf(w, ",\"address\":\"0x%lx\",\"offset\":\"0x%lx\"%s}", at, offset,
			 f[i].inlined ? ",\"inlined\":true" : "");
	}
}

static void w_context(struct writer *w, DiEpoch ep, UInt ctx)
{
	static Addr pcs[MAX_FRAMES];
	Int n = context_frames(ctx, pcs, MAX_FRAMES);

	w_put(w, "[", 1);
	for (Int i = 0; i < n; i++)
		w_frames(w, ep, pcs[i], i == 0, i == 0);
	w_put(w, "]", 1);
}

/* --- pairs, merged at the output depth and sorted as witch report does ----- */

static Int by_waste(const void *a, const void *b)
{
	const struct pair_count *x = *(struct pair_count *const *)a;
	const struct pair_count *y = *(struct pair_count *const *)b;
	if (x->waste != y->waste)
		return x->waste > y->waste ? -1 : 1;
	if (x->use != y->use)
		return x->use > y->use ? -1 : 1;
	if (x->traps != y->traps)
		return x->traps > y->traps ? -1 : 1;
	return 0;
}

/* in's entries merged at depth frames (cut), largest waste first: *n of them.
 * keyed: in's watch side is a <context, object> key, merged over objects. */
static struct pair_count **cut_sorted(const struct pairs *in, UInt depth, Bool keyed,
				      struct pairs *cut, UInt *n)
{
	VG_(memset)(cut, 0, sizeof(*cut));
	for (UInt i = 0; i < in->cap; i++) {
		const struct pair_count *p = pairs_at(in, i);
		if (p->watch)
			pairs_add(cut,
				  context_cut(keyed ? objects_key_ctx(p->watch) : p->watch, depth),
				  context_cut(p->trap, depth), p->waste, p->use, p->approx, p->traps);
	}
	struct pair_count **order = VG_(malloc)("oracle.order", (cut->n + 1) * sizeof(*order));
	*n = 0;
	for (UInt i = 0; i < cut->cap; i++)
		if (pairs_at(cut, i)->watch)
			order[(*n)++] = pairs_at(cut, i);
	msort(order, *n, sizeof(*order), by_waste);
	return order;
}

static void cut_free(struct pairs *cut, struct pair_count **order)
{
	VG_(free)(order);
	if (cut->e)
		VG_(free)(cut->e);
}

/* --- objects ------------------------------------------------------------------ */

/* A pair's part on one object, at the output depth. */
struct triple {
	UInt watch, trap, obj;
	ULong waste, use;
};

static Int by_pair_obj(const void *a, const void *b)
{
	const struct triple *x = a, *y = b;
	if (x->watch != y->watch)
		return x->watch < y->watch ? -1 : 1;
	if (x->trap != y->trap)
		return x->trap < y->trap ? -1 : 1;
	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	return 0;
}

static Int by_triple_waste(const void *a, const void *b)
{
	const struct triple *x = *(struct triple *const *)a, *y = *(struct triple *const *)b;
	if (x->waste != y->waste)
		return x->waste > y->waste ? -1 : 1;
	if (x->use != y->use)
		return x->use > y->use ? -1 : 1;
	return x->obj < y->obj ? -1 : x->obj > y->obj;
}

/* in's entries as <cut watch, cut trap, object>, merged and sorted: *n. */
static struct triple *triples_of(const struct pairs *in, UInt depth, UInt *n)
{
	struct triple *t = VG_(malloc)("oracle.triples", (in->n + 1) * sizeof(*t));
	UInt k = 0;
	for (UInt i = 0; i < in->cap; i++) {
		const struct pair_count *p = pairs_at(in, i);
		if (!p->watch)
			continue;
		t[k++] = (struct triple){ context_cut(objects_key_ctx(p->watch), depth),
					  context_cut(p->trap, depth), objects_key_obj(p->watch),
					  p->waste, p->use };
	}
	msort(t, k, sizeof(*t), by_pair_obj);
	UInt m = 0;
	for (UInt i = 0; i < k; i++) {
		if (m && !by_pair_obj(&t[m - 1], &t[i])) {
			t[m - 1].waste += t[i].waste;
			t[m - 1].use += t[i].use;
		} else {
			t[m++] = t[i];
		}
	}
	*n = m;
	return t;
}

static void w_object_head(struct writer *w, UInt obj)
{
	const struct object *o = objects_get(obj);
	w_put(w, "{\"kind\":", 8);
	w_string(w, object_kind_name[o->kind]);
	w_put(w, ",\"name\":", 8);
	w_string(w, o->name);
}

/* A pair's "objects": its triples (watch, trap), largest waste first. */
static void w_pair_objects(struct writer *w, const struct triple *t, UInt nt,
			   const struct pair_count *p)
{
	UInt lo = 0, hi = nt;
	struct triple key = { p->watch, p->trap, 0, 0, 0 };
	while (lo < hi) { /* the first triple >= <watch, trap, 0> */
		UInt mid = lo + (hi - lo) / 2;
		if (by_pair_obj(&t[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	UInt end = lo;
	while (end < nt && t[end].watch == p->watch && t[end].trap == p->trap)
		end++;
	const struct triple **mine = VG_(malloc)("oracle.pair_objects",
						 (end - lo + 1) * sizeof(*mine));
	for (UInt i = lo; i < end; i++)
		mine[i - lo] = &t[i];
	msort(mine, end - lo, sizeof(*mine), by_triple_waste);
	w_put(w, ",\"objects\":[", 12);
	for (UInt i = 0; i < end - lo; i++) {
		if (i)
			w_put(w, ",", 1);
		w_object_head(w, mine[i]->obj);
		w_printf(w, ",\"waste\":%llu,\"use\":%llu}", mine[i]->waste, mine[i]->use);
	}
	w_put(w, "]", 1);
	VG_(free)(mine);
}

struct object_total {
	UInt obj;
	ULong waste, use, sampled;
};

static Int by_object_waste(const void *a, const void *b)
{
	const struct object_total *x = a, *y = b;
	if (x->waste != y->waste)
		return x->waste > y->waste ? -1 : 1;
	if (x->use != y->use)
		return x->use > y->use ? -1 : 1;
	if (x->sampled != y->sampled)
		return x->sampled > y->sampled ? -1 : 1;
	return x->obj < y->obj ? -1 : x->obj > y->obj;
}

/* The top-level "objects": every object with waste, use or sampled bytes,
 * by waste (the `top` largest). */
static void w_objects(struct writer *w, const struct output_client *c)
{
	UInt n = objects_count();
	struct object_total *o = VG_(calloc)("oracle.object_totals", n + 1, sizeof(*o));
	for (UInt i = 0; i < n; i++)
		o[i].obj = i;
	for (UInt i = 0; i < c->pairs->cap; i++) {
		const struct pair_count *p = pairs_at(c->pairs, i);
		UInt obj = p->watch ? objects_key_obj(p->watch) : 0;
		if (!p->watch || obj >= n)
			continue;
		o[obj].waste += p->waste;
		o[obj].use += p->use;
	}
	UInt m = 0;
	for (UInt i = 0; i < n; i++) {
		o[i].sampled = object_bytes_get(c->by_obj, i);
		if (o[i].waste || o[i].use || o[i].sampled)
			o[m++] = o[i];
	}
	msort(o, m, sizeof(*o), by_object_waste);
	if (c->top && m > c->top)
		m = c->top;

	DiEpoch ep = VG_(current_DiEpoch)();
	w_put(w, ",\n\"objects\":[", 13);
	for (UInt i = 0; i < m; i++) {
		const struct object *ob = objects_get(o[i].obj);
		w_put(w, i ? ",\n" : "\n", i ? 2 : 1);
		w_object_head(w, o[i].obj);
		w_put(w, ",\"alloc\":", 9);
		if (ob->kind == OBJ_HEAP)
			w_context(w, ep, ob->alloc_ctx);
		else
			w_put(w, "[]", 2);
		w_printf(w, ",\"size\":%llu,\"waste\":%llu,\"use\":%llu,\"share\":", ob->size,
			 o[i].waste, o[i].use);
		w_ratio(w, o[i].waste, c->pairs->waste);
		w_printf(w, ",\"sampled\":%llu}", o[i].sampled);
	}
	w_put(w, "]", 1);
	VG_(free)(o);
}

static void w_pairs(struct writer *w, const struct output_client *c)
{
	struct pairs cut;
	UInt n, nt;
	struct pair_count **order = cut_sorted(c->pairs, c->depth, True, &cut, &n);
	UInt written = c->top && c->top < n ? c->top : n;
	struct triple *t = triples_of(c->pairs, c->depth, &nt);

	DiEpoch ep = VG_(current_DiEpoch)();
	w_put(w, "\"pairs\":[", 9);
	for (UInt i = 0; i < written; i++) {
		const struct pair_count *p = order[i];
		w_printf(w, "%s\n{\"waste\":%llu,\"use\":%llu,\"share\":", i ? "," : "", p->waste,
			 p->use);
		w_ratio(w, p->waste, c->pairs->waste);
		w_printf(w, ",\"traps\":%llu,", p->traps);
		if (c->values)
			w_printf(w, "\"waste_approx\":%llu,", p->approx);
		w_put(w, "\"watch\":", 8);
		w_context(w, ep, p->watch);
		w_put(w, ",\"trap\":", 8);
		w_context(w, ep, p->trap);
		w_pair_objects(w, t, nt, p);
		w_put(w, "}", 1);
	}
	w_printf(w, "],\n\"pairs_total\":%u", n);
	VG_(free)(t);
	cut_free(&cut, order);
}

/* --- functions: waste and use by the watched context's leaf function ----- */

/* Every pair's bytes by the physical function of its watched leaf, the
 * FUNCTIONS_MAX largest by waste + use, and (exhaustive file) the bytes
 * the function accessed, decided or not: a sampler's weights by function
 * must add up to those (WITCH_WATCHPOINTS=0).  "pairs" lists the 1,000 largest
 * pairs only (python3: 35% of the decided bytes of 2.8 million pairs), so
 * this says where each function's waste is, whole, against a sampled
 * run's pairs summed alike (bench/accuracy.py). */
#define FUNCTIONS_MAX 300

struct function_total {
	HChar name[256];
	const HChar *module; /* Valgrind's path string, lives as its DebugInfo */
	ULong waste, use, bytes;
};

static Int by_function_bytes(const void *a, const void *b)
{
	const struct function_total *x = a, *y = b;
	ULong sx = x->waste + x->use, sy = y->waste + y->use;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return VG_(strcmp)(x->name, y->name);
}

static Word by_name_module(UWord a, UWord b)
{
	const struct function_total *x = (const void *)a, *y = (const void *)b;
	Int r = VG_(strcmp)(x->name, y->name);
	if (r)
		return r;
	return VG_(strcmp)(x->module ? x->module : "", y->module ? y->module : "");
}

static void w_functions(struct writer *w, const struct output_client *c)
{
	DiEpoch ep = VG_(current_DiEpoch)();
	/* leaf pc -> its function's total; name+module -> the total */
	WordFM *by_pc = VG_(newFM)(VG_(malloc), "oracle.fn_pc", VG_(free), NULL);
	WordFM *by_name = VG_(newFM)(VG_(malloc), "oracle.fn_name", VG_(free), by_name_module);
	UInt n = 0, cap = 1024;
	struct function_total **all = VG_(malloc)("oracle.fn_all", cap * sizeof(*all));
	/* Pass 0: the pairs (watch: a <context, object> key); pass 1: the bytes
	 * each context accessed (watch: a context), decided or not. */
	for (Int pass = 0; pass < 2; pass++) {
		const struct pairs *in = pass ? c->by_ctx : c->pairs;
		for (UInt i = 0; in && i < in->cap; i++) {
			const struct pair_count *p = pairs_at(in, i);
			Addr pc;
			if (!p->watch ||
			    context_frames(pass ? p->watch : objects_key_ctx(p->watch), &pc, 1) < 1)
				continue;
			UWord found;
			struct function_total *f;
			if (VG_(lookupFM)(by_pc, NULL, &found, pc)) {
				f = (struct function_total *)found;
			} else {
				struct function_total key;
				VG_(strcpy)(key.name, "??");
				frames_function(ep, pc, key.name, sizeof(key.name));
				DebugInfo *di = VG_(find_DebugInfo)(ep, pc);
				key.module = di ? VG_(DebugInfo_get_filename)(di) : NULL;
				if (VG_(lookupFM)(by_name, NULL, &found, (UWord)&key)) {
					f = (struct function_total *)found;
				} else {
					f = VG_(malloc)("oracle.fn", sizeof(*f));
					*f = key;
					f->waste = f->use = f->bytes = 0;
					VG_(addToFM)(by_name, (UWord)f, (UWord)f);
					if (n == cap) {
						cap *= 2;
						all = VG_(realloc)("oracle.fn_all", all,
								   cap * sizeof(*all));
					}
					all[n++] = f;
				}
				VG_(addToFM)(by_pc, pc, (UWord)f);
			}
			if (pass)
				f->bytes += p->waste;
			else {
				f->waste += p->waste;
				f->use += p->use;
			}
		}
	}
	struct function_total *flat = VG_(malloc)("oracle.fn_flat", (n + 1) * sizeof(*flat));
	for (UInt i = 0; i < n; i++)
		flat[i] = *all[i];
	msort(flat, n, sizeof(*flat), by_function_bytes);
	w_printf(w, ",\n\"functions\":[");
	for (UInt i = 0; i < n && i < FUNCTIONS_MAX; i++) {
		w_put(w, i ? ",\n{\"function\":" : "\n{\"function\":", i ? 14 : 13);
		w_string(w, flat[i].name);
		w_put(w, ",\"module\":", 10);
		w_string(w, flat[i].module ? flat[i].module : "");
		w_printf(w, ",\"waste\":%llu,\"use\":%llu", flat[i].waste, flat[i].use);
		if (c->by_ctx)
			w_printf(w, ",\"bytes\":%llu", flat[i].bytes);
		w_put(w, "}", 1);
	}
	w_printf(w, "],\"functions_total\":%u", n);
	for (UInt i = 0; i < n; i++)
		VG_(free)(all[i]);
	VG_(free)(all);
	VG_(free)(flat);
	VG_(deleteFM)(by_pc, NULL, NULL);
	VG_(deleteFM)(by_name, NULL, NULL);
}

/* The bytes each context accessed, largest first, in libwitch's "sampled"
 * form: what its samples' weights should add up to.  The 200 largest held
 * 73% of strings' stores and 19% of python3's loads, and a comparison by
 * function read the rest as the sampler's error (bench/sampled.py):
 * listed now until they hold all but 0.1% of the bytes (at most
 * SAMPLED_MAX; silent_refresh's loads: 4,729 contexts, 2,000 hold 99.65%,
 * the rest ld.so's), and "sampled_listed" says what the list holds.
 * Contexts are cut to their SAMPLED_DEPTH innermost frames: sort's
 * recursion made over 20,000 of its stores' full contexts, and a reader
 * keys a context by the function it is in and the first of its callers in
 * the program (libc's deepest: vfprintf's helpers, 6 frames below). */
#define SAMPLED_DEPTH 8
#define SAMPLED_MIN 200
#define SAMPLED_MAX 20000
#define SAMPLED_LEFT 1000 /* all but total / SAMPLED_LEFT */

static void w_sampled(struct writer *w, const struct output_client *c)
{
	struct pairs cut;
	UInt n;
	UInt depth = c->depth < SAMPLED_DEPTH ? c->depth : SAMPLED_DEPTH;
	struct pair_count **order = cut_sorted(c->by_ctx, depth, False, &cut, &n);
	ULong listed = 0, total = c->by_ctx->waste;
	UInt shown = 0;

	while (shown < n && shown < SAMPLED_MAX &&
	       (shown < SAMPLED_MIN || listed < total - total / SAMPLED_LEFT))
		listed += order[shown++]->waste;
	DiEpoch ep = VG_(current_DiEpoch)();
	w_printf(w, ",\n\"sampled_total\":%llu,\"sampled_listed\":%llu,\"sampled\":[",
		 total, listed);
	for (UInt i = 0; i < shown; i++) {
		w_printf(w, "%s\n{\"bytes\":%llu,\"share\":", i ? "," : "", order[i]->waste);
		w_ratio(w, order[i]->waste, c->by_ctx->waste);
		w_put(w, ",\"context\":", 11);
		w_context(w, ep, order[i]->watch);
		w_put(w, "}", 1);
	}
	w_put(w, "]", 1);
	cut_free(&cut, order);
}

static void w_document(struct writer *w, const struct output_client *c)
{
	const struct pairs *p = c->pairs;
	const struct access_totals *t = c->totals;

	w_printf(w, "{\"client\":\"%s\",\"sampler\":\"%s\",\"samples\":%llu,", c->name,
		 c->sim ? "count" : "oracle", c->sim ? c->sim->samples : 0);
	w_printf(w, "\"watchpoints_armed\":%llu,\"traps\":%llu,\"waste\":%llu,\"use\":%llu,",
		 c->sim ? c->sim->armed : 0, p->traps, p->waste, p->use);
	w_put(w, "\"fraction\":", 11);
	w_ratio(w, p->waste, p->waste + p->use);
	if (c->values) {
		w_printf(w, ",\"waste_approx\":%llu,\"tolerance\":", p->approx);
		w_put(w, c->tolerance, (UInt)VG_(strlen)(c->tolerance));
	}
	w_printf(w, ",\"profiles\":1,\"pids\":[%d],\"exe\":", VG_(getpid)());
	w_string(w, VG_(args_the_exename) ? VG_(args_the_exename) : "");
	w_printf(w, ",\"depth\":%u,\"stats\":{},\n", c->depth);
	if (c->sim)
		w_printf(w, "\"simulation\":{\"period\":%llu,\"seed\":%llu,\"watchpoints\":%d,"
			 "\"not_monitored\":%llu},\n", c->sim->period, c->sim->seed,
			 SIMULATE_WATCHPOINTS, c->sim->not_monitored);
	w_put(w, "\"oracle\":{", 10);
	w_printf(w, "\"bytes_stored\":%llu,\"bytes_loaded\":%llu,", t->bytes_stored,
		 t->bytes_loaded);
	w_printf(w, "\"stores\":%llu,\"loads\":%llu,", t->stores, t->loads);
	/* A simulated run's estimates may exceed the bytes decidable. */
	ULong decided = p->waste + p->use;
	w_printf(w, "\"undecided\":%llu,\"bytes_untracked\":%llu,",
		 c->sim || decided > c->decidable ? 0 : c->decidable - decided, t->bytes_untracked);
	w_printf(w, "\"shadow_mib\":%llu,\"wall_ms\":%llu},\n", c->shadow_bytes >> 20,
		 c->wall_ms);
	w_pairs(w, c);
	w_functions(w, c);
	w_objects(w, c);
	if (c->by_ctx)
		w_sampled(w, c);
	w_put(w, "}\n", 2);
}

Int output_write(const HChar *path, const struct output_client *c)
{
	HChar tmp[4200];
	VG_(snprintf)(tmp, sizeof(tmp), "%s.tmp.%d", path, VG_(getpid)());
	/* O_EXCL: never write through a symlink someone left at the temp name. */
	SysRes sr = VG_(open)(tmp, VKI_O_WRONLY | VKI_O_CREAT | VKI_O_EXCL, 0644);
	if (sr_isError(sr))
		return -(Int)sr_Err(sr);

	struct writer *w = VG_(malloc)("oracle.writer", sizeof(*w));
	w->fd = (Int)sr_Res(sr);
	w->err = 0;
	w->len = 0;
	w_document(w, c);
	w_flush(w);
	Int err = w->err;
	VG_(close)(w->fd);
	VG_(free)(w);
	if (err == 0 && VG_(rename)(tmp, path) != 0)
		err = -VKI_EIO;
	if (err)
		VG_(unlink)(tmp);
	return err;
}
