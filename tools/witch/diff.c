/*
 * diff: compare two profiles pair by pair; see diff.h.
 *
 * JSON schema:
 *   {"client":"dead|silent|load",
 *    "base":SIDE, "new":SIDE, "fraction_change":F,       new - base
 *    "counts":{"grew":N, "shrank":N, "appeared":N, "vanished":N, "unchanged":N},
 *    "pairs":[{"status":"grew|shrank|appeared|vanished|unchanged",
 *              "waste_change":B,                           new - base waste
 *              "base":METRICS|null, "new":METRICS|null,    null: absent there
 *              "watch":[FRAME...], "trap":[FRAME...]}],    frames leaf first
 *    "object_counts":{"grew":N, ...},                    as counts, for objects
 *    "objects":[{"status":"...", "waste_change":B,       objects (object_view.h)
 *                "kind":K, "name":"...",                  matched by kind and name;
 *                "base":OBJ|null, "new":OBJ|null}]}       [] when neither has any
 *   SIDE = {"profile":"PATH", "waste":B, "use":B, "fraction":F, "pairs":N}
 *   METRICS = {"waste":B, "use":B, "share":S, "traps":N}   S = waste / that profile's waste
 *   OBJ = {"waste":B, "use":B, "share":S}
 *   FRAME = {"function":"...", ["raw":"...",] "file":"...", "line":N, "module":"...", ["inlined":true]}
 *   (function and raw as in witch report --json: json_report.h)
 */
#include "diff.h"

#include "index_table.h"
#include "json_out.h"
#include "cli.h"
#include "object_view.h"
#include "summary.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TEXT_TOP 10

enum { BASE, NEW };

struct side {
	const char *path;
	struct witch_profile p;
	struct witch_symbolizer *sym;
	struct witch_totals t;
	struct witch_objects objs;
};

struct metrics {
	bool present;
	double waste, use;
	uint64_t traps;
};

enum status { GREW, SHRANK, APPEARED, VANISHED, UNCHANGED, NSTATUS };

static const char *const status_names[NSTATUS] = {
	"grew", "shrank", "appeared", "vanished", "unchanged",
};

struct entry {
	char *key;
	struct metrics m[2];
	int side;		/* where the frames shown come from */
	uint32_t pair;		/* a pair of that side with this key */
	enum status status;
};

/* An object of either side, matched by kind and name. */
struct obj_entry {
	enum witch_object_kind kind;
	const char *name;	/* a side's row name */
	struct metrics m[2];
	enum status status;
};

struct diff {
	struct side s[2];
	struct entry *e;
	size_t n, cap;
	struct index_table ix;	/* hash(key) -> entry */
	struct obj_entry *o;
	size_t no, capo;
	struct index_table oix;	/* hash(kind, name) -> object entry */
	struct witch_path watch, trap;	/* scratch */
};

/* The key of one path: its frames, one per line. */
static void key_path(FILE *k, const struct witch_path *path)
{
	for (size_t i = 0; i < path->n; i++) {
		const struct witch_frame *f = path->frames[i];

		/* Names cannot hold '\n' from DWARF in practice, and the
		 * key only has to be equal for equal frames. */
		/* Unknown frames of one module are one frame, as shown. */
		if (f->unknown)
			fprintf(k, "%s\t%s\n", f->function, f->module);
		else
			fprintf(k, "%s\t%s\t%u\t%d\n", f->function, f->file,
				f->line, f->inlined);
	}
}

static int pair_key(struct diff *d, int side, const struct witch_pair *q,
		    char **key)
{
	struct side *s = &d->s[side];
	size_t len;
	FILE *k;
	int rc;

	if ((rc = witch_path_collect(s->sym, &s->p, q->watch, &d->watch)) ||
	    (rc = witch_path_collect(s->sym, &s->p, q->trap, &d->trap)))
		return rc;
	*key = NULL;
	k = open_memstream(key, &len);
	if (!k)
		return -ENOMEM;
	key_path(k, &d->watch);
	fputs("|\n", k);	/* no frame line is "|": watch/trap boundary */
	key_path(k, &d->trap);
	if (ferror(k)) {
		fclose(k);
		free(*key);
		*key = NULL;
		return -ENOMEM;
	}
	if (fclose(k)) {
		free(*key);
		*key = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int add_side(struct diff *d, int side)
{
	const struct witch_profile *p = &d->s[side].p;

	for (size_t i = 0; i < p->npairs; i++) {
		const struct witch_pair *q = &p->pairs[i];
		struct index_probe pr;
		struct entry *e = NULL;
		uint32_t idx;
		uint64_t h;
		char *key;
		int rc = pair_key(d, side, q, &key);

		if (rc)
			return rc;
		h = index_hash_str(0, key);
		index_table_probe_start(&d->ix, h, &pr);
		while (index_table_probe_next(&d->ix, &pr, &idx)) {
			if (!strcmp(d->e[idx].key, key)) {
				e = &d->e[idx];
				free(key);
				break;
			}
		}
		if (!e) {
			if (d->n == d->cap) {
				size_t ncap = d->cap ? d->cap * 2 : 64;
				struct entry *ne = realloc(d->e, ncap * sizeof(*ne));

				if (!ne) {
					free(key);
					return -ENOMEM;
				}
				d->e = ne;
				d->cap = ncap;
			}
			if ((rc = index_table_insert(&d->ix, h, (uint32_t)d->n))) {
				free(key);
				return rc;
			}
			e = &d->e[d->n++];
			memset(e, 0, sizeof(*e));
			e->key = key;
			e->side = side;
			e->pair = (uint32_t)i;
		}
		/* NEW's frames are shown when a pair is in both: it is the
		 * code as it is now. */
		if (side == NEW && e->side != NEW) {
			e->side = NEW;
			e->pair = (uint32_t)i;
		}
		e->m[side].present = true;
		e->m[side].waste += q->waste;
		e->m[side].use += q->use;
		e->m[side].traps += q->traps;
	}
	return 0;
}

/* The objects of one side into the object entries, by kind and name. */
static int add_side_objects(struct diff *d, int side)
{
	struct side *s = &d->s[side];
	int rc = witch_objects_build(&s->p, s->sym, &s->objs);

	for (size_t i = 0; i < s->objs.n && !rc; i++) {
		const struct witch_object_row *r = &s->objs.rows[i];
		uint64_t h = index_hash_str(index_hash_u64(r->kind), r->name);
		struct obj_entry *e = NULL;
		struct index_probe pr;
		uint32_t idx;

		index_table_probe_start(&d->oix, h, &pr);
		while (!e && index_table_probe_next(&d->oix, &pr, &idx))
			if (d->o[idx].kind == r->kind && !strcmp(d->o[idx].name, r->name))
				e = &d->o[idx];
		if (!e) {
			if (d->no == d->capo) {
				size_t ncap = d->capo ? d->capo * 2 : 32;
				struct obj_entry *ne = realloc(d->o, ncap * sizeof(*ne));

				if (!ne)
					return -ENOMEM;
				d->o = ne;
				d->capo = ncap;
			}
			if ((rc = index_table_insert(&d->oix, h, (uint32_t)d->no)))
				return rc;
			e = &d->o[d->no++];
			memset(e, 0, sizeof(*e));
			e->kind = r->kind;
			e->name = r->name;
		}
		e->m[side].present = true;
		e->m[side].waste += r->waste;
		e->m[side].use += r->use;
	}
	return rc;
}

static double change(const struct entry *e)
{
	return e->m[NEW].waste - e->m[BASE].waste;
}

static double obj_change(const struct obj_entry *e)
{
	return e->m[NEW].waste - e->m[BASE].waste;
}

static int cmp_obj_entries(const void *a, const void *b)
{
	const struct obj_entry *x = a, *y = b;
	double cx = fabs(obj_change(x)), cy = fabs(obj_change(y));

	if (cx != cy)
		return cx > cy ? -1 : 1;
	if (x->m[NEW].waste != y->m[NEW].waste)
		return x->m[NEW].waste > y->m[NEW].waste ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_entries(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	double cx = fabs(change(x)), cy = fabs(change(y));

	if (cx != cy)
		return cx > cy ? -1 : 1;
	if (x->m[NEW].waste != y->m[NEW].waste)
		return x->m[NEW].waste > y->m[NEW].waste ? -1 : 1;
	return strcmp(x->key, y->key);
}

static enum status classify_metrics(const struct metrics *m)
{
	if (!m[BASE].present)
		return APPEARED;
	if (!m[NEW].present)
		return VANISHED;
	if (m[NEW].waste > m[BASE].waste)
		return GREW;
	if (m[NEW].waste < m[BASE].waste)
		return SHRANK;
	return UNCHANGED;
}

static void classify(struct entry *e)
{
	e->status = classify_metrics(e->m);
}

/* ---- output ---- */

static void text_path(FILE *out, const struct witch_path *path)
{
	for (size_t i = 0; i < path->n; i++) {
		const struct witch_frame *f = path->frames[i];

		fprintf(out, "      #%-2zu %s%s at %s", i, f->function,
			f->inlined ? " (inlined)" : "", f->file);
		if (f->line)
			fprintf(out, ":%u", f->line);
		if (f->unknown)
			fprintf(out, " in %s+0x%" PRIx64, f->module, f->offset);
		fputc('\n', out);
	}
}

static int entry_paths(struct diff *d, const struct entry *e)
{
	struct side *s = &d->s[e->side];
	const struct witch_pair *q = &s->p.pairs[e->pair];
	int rc = witch_path_collect(s->sym, &s->p, q->watch, &d->watch);

	return rc ? rc : witch_path_collect(s->sym, &s->p, q->trap, &d->trap);
}

/* The objects part of the text diff, after the pairs. */
static void text_objects(FILE *out, const struct diff *d, size_t shown)
{
	if (!d->no)
		return;
	if (shown < d->no)
		fprintf(out, "\ntop %zu of %zu objects by waste change:\n", shown, d->no);
	else
		fprintf(out, "\nobjects by waste change:\n");
	for (size_t k = 0; k < shown; k++) {
		const struct obj_entry *e = &d->o[k];

		fprintf(out, "\n#%zu  %s  waste %.0f -> %.0f bytes (%+.0f)  share %.2f%% -> %.2f%%  %s  %s\n",
			k + 1, status_names[e->status], e->m[BASE].waste, e->m[NEW].waste,
			obj_change(e), 100 * witch_share(e->m[BASE].waste, d->s[BASE].t.waste),
			100 * witch_share(e->m[NEW].waste, d->s[NEW].t.waste),
			witch_object_kind_name(e->kind), e->name);
	}
}

static int text_diff(FILE *out, struct diff *d, size_t shown,
		     const size_t *counts, size_t oshown, const size_t *ocounts)
{
	double fb = witch_fraction(d->s[BASE].t.waste, d->s[BASE].t.use);
	double fn = witch_fraction(d->s[NEW].t.waste, d->s[NEW].t.use);
	const char *marker = witch_marker_frame(d->s[NEW].p.client);
	int rc;

	for (int i = 0; i < 2; i++)
		fprintf(out, "%-10s%s: fraction %.4f, waste %.0f bytes, use %.0f bytes, %zu pairs\n",
			i == BASE ? "base:" : "new:", d->s[i].path,
			witch_fraction(d->s[i].t.waste, d->s[i].t.use),
			d->s[i].t.waste, d->s[i].t.use, d->s[i].p.npairs);
	fprintf(out, "%-10s%.4f -> %.4f (%+.4f)\n", "fraction:", fb, fn, fn - fb);
	fprintf(out, "%-10s", "pairs:");
	for (int k = 0; k < NSTATUS; k++)
		fprintf(out, "%s%zu %s", k ? ", " : "", counts[k], status_names[k]);
	fputc('\n', out);
	if (d->no) {
		fprintf(out, "%-10s", "objects:");
		for (int k = 0; k < NSTATUS; k++)
			fprintf(out, "%s%zu %s", k ? ", " : "", ocounts[k], status_names[k]);
		fputc('\n', out);
	}
	if (shown < d->n)
		fprintf(out, "\ntop %zu of %zu pairs by waste change:\n", shown, d->n);
	for (size_t k = 0; k < shown; k++) {
		const struct entry *e = &d->e[k];

		fprintf(out, "\n#%zu  %s  waste %.0f -> %.0f bytes (%+.0f)  share %.2f%% -> %.2f%%  traps %" PRIu64 " -> %" PRIu64 "\n",
			k + 1, status_names[e->status], e->m[BASE].waste,
			e->m[NEW].waste, change(e),
			100 * witch_share(e->m[BASE].waste, d->s[BASE].t.waste),
			100 * witch_share(e->m[NEW].waste, d->s[NEW].t.waste),
			e->m[BASE].traps, e->m[NEW].traps);
		if ((rc = entry_paths(d, e)))
			return rc;
		fputs("    watch\n", out);
		text_path(out, &d->watch);
		fprintf(out, "    %s\n", marker);
		text_path(out, &d->trap);
	}
	text_objects(out, d, oshown);
	return 0;
}

static void json_path(FILE *out, const struct witch_path *path)
{
	fputc('[', out);
	for (size_t i = 0; i < path->n; i++) {
		const struct witch_frame *f = path->frames[i];

		fputs(i ? ", {\"function\":" : "{\"function\":", out);
		json_out_str(out, f->function);
		if (f->raw) {
			fputs(", \"raw\":", out);
			json_out_str(out, f->raw);
		}
		fputs(", \"file\":", out);
		json_out_str(out, f->file);
		fprintf(out, ", \"line\":%u, \"module\":", f->line);
		json_out_str(out, f->module);
		if (f->inlined)
			fputs(", \"inlined\":true", out);
		fputc('}', out);
	}
	fputc(']', out);
}

/* A side's metrics, or null; traps: pairs count them, objects do not. */
static void json_metrics(FILE *out, const struct metrics *m, double total, bool traps)
{
	if (!m->present) {
		fputs("null", out);
		return;
	}
	fputs("{\"waste\":", out);
	json_out_num(out, m->waste);
	fputs(", \"use\":", out);
	json_out_num(out, m->use);
	fputs(", \"share\":", out);
	json_out_num(out, witch_share(m->waste, total));
	if (traps)
		fprintf(out, ", \"traps\":%" PRIu64, m->traps);
	fputc('}', out);
}

static void json_objects(FILE *out, const struct diff *d, size_t shown, const size_t *ocounts)
{
	fputs(",\n \"object_counts\":{", out);
	for (int k = 0; k < NSTATUS; k++)
		fprintf(out, "%s\"%s\":%zu", k ? ", " : "", status_names[k], ocounts[k]);
	fputs("},\n \"objects\":[", out);
	for (size_t k = 0; k < shown; k++) {
		const struct obj_entry *e = &d->o[k];

		fprintf(out, "%s{\"status\":\"%s\", \"waste_change\":", k ? ",\n  " : "\n  ",
			status_names[e->status]);
		json_out_num(out, obj_change(e));
		fprintf(out, ", \"kind\":\"%s\", \"name\":", witch_object_kind_name(e->kind));
		json_out_str(out, e->name);
		fputs(",\n   \"base\":", out);
		json_metrics(out, &e->m[BASE], d->s[BASE].t.waste, false);
		fputs(", \"new\":", out);
		json_metrics(out, &e->m[NEW], d->s[NEW].t.waste, false);
		fputc('}', out);
	}
	fputc(']', out);
}

static int json_diff(FILE *out, struct diff *d, size_t shown,
		     const size_t *counts, size_t oshown, const size_t *ocounts)
{
	double f[2];
	int rc;

	fputs("{\"client\":", out);
	json_out_str(out, witch_client_name(d->s[NEW].p.client));
	for (int i = 0; i < 2; i++) {
		const struct side *s = &d->s[i];

		f[i] = witch_fraction(s->t.waste, s->t.use);
		fputs(i == BASE ? ",\n \"base\":{\"profile\":" : ",\n \"new\":{\"profile\":", out);
		json_out_str(out, s->path);
		fputs(", \"waste\":", out);
		json_out_num(out, s->t.waste);
		fputs(", \"use\":", out);
		json_out_num(out, s->t.use);
		fputs(", \"fraction\":", out);
		json_out_num(out, f[i]);
		fprintf(out, ", \"pairs\":%zu}", s->p.npairs);
	}
	fputs(",\n \"fraction_change\":", out);
	json_out_num(out, f[NEW] - f[BASE]);
	fputs(",\n \"counts\":{", out);
	for (int k = 0; k < NSTATUS; k++)
		fprintf(out, "%s\"%s\":%zu", k ? ", " : "", status_names[k], counts[k]);
	fputs("},\n \"pairs\":[", out);
	for (size_t k = 0; k < shown; k++) {
		const struct entry *e = &d->e[k];

		if ((rc = entry_paths(d, e)))
			return rc;
		fprintf(out, "%s{\"status\":\"%s\", \"waste_change\":",
			k ? ",\n  " : "\n  ", status_names[e->status]);
		json_out_num(out, change(e));
		fputs(",\n   \"base\":", out);
		json_metrics(out, &e->m[BASE], d->s[BASE].t.waste, true);
		fputs(", \"new\":", out);
		json_metrics(out, &e->m[NEW], d->s[NEW].t.waste, true);
		fputs(",\n   \"watch\":", out);
		json_path(out, &d->watch);
		fputs(",\n   \"trap\":", out);
		json_path(out, &d->trap);
		fputc('}', out);
	}
	fputc(']', out);
	json_objects(out, d, oshown, ocounts);
	fputs("}\n", out);
	return 0;
}

/* ---- entry point ---- */

static const char diff_usage[] = "Usage: witch diff [--json] [--top N] BASE NEW\n";


static void diff_free(struct diff *d)
{
	for (int i = 0; i < 2; i++) {
		witch_objects_free(&d->s[i].objs);
		witch_symbolizer_free(d->s[i].sym);
		witch_profile_free(&d->s[i].p);
	}
	free(d->o);
	index_table_free(&d->oix);
	for (size_t i = 0; i < d->n; i++)
		free(d->e[i].key);
	free(d->e);
	index_table_free(&d->ix);
	witch_path_free(&d->watch);
	witch_path_free(&d->trap);
}

int witch_diff_main(int argc, char **argv)
{
	struct diff d = { 0 };
	const char *files[2];
	size_t nfiles = 0, top = 0, shown, oshown, counts[NSTATUS] = { 0 };
	size_t ocounts[NSTATUS] = { 0 };
	bool json = false, top_set = false, opts_done = false;
	struct witch_cli c = {.cmd = "diff", .usage = diff_usage, .argc = argc, .argv = argv};
	int rc, status = 0;

	for (c.i = 1; c.i < argc; c.i++) {
		const char *a = argv[c.i];

		if (opts_done || a[0] != '-' || !strcmp(a, "-")) {
			if (nfiles == 2)
				return witch_cli_usage_error(&c, "one BASE and one NEW profile, not '%s' too", a);
			files[nfiles++] = a;
		} else if (!strcmp(a, "--")) {
			opts_done = true;
		} else if (!strcmp(a, "--json")) {
			json = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(diff_usage, stdout);
			fputs("Compares two profiles pair by pair (matched by function, file and\n"
			      "line of both contexts): which pairs grew, shrank, appeared or\n"
			      "vanished, with both fractions; and object by object (matched by\n"
			      "kind and name). See docs/report-formats.md.\n",
			      stdout);
			return 0;
		} else if ((rc = witch_cli_top(&c, &top))) {
			if (rc < 0)
				return 2;
			top_set = true;
		} else {
			return witch_cli_usage_error(&c, "unknown option '%s'", a);
		}
	}
	if (nfiles != 2)
		return witch_cli_usage_error(&c, "%s", "needs two profiles, BASE and NEW");

	index_table_init(&d.ix);
	index_table_init(&d.oix);
	for (int i = 0; i < 2; i++) {
		char *one[1] = { (char *)files[i] };

		d.s[i].path = files[i];
		witch_profile_init(&d.s[i].p);
		if (witch_load_profiles(&d.s[i].p, one, 1)) {
			status = 2;
			goto out;
		}
		witch_totals_of(&d.s[i].p, &d.s[i].t);
	}
	if (d.s[BASE].p.client != d.s[NEW].p.client) {
		fprintf(stderr,
			"witch: diff: %s is a '%s' profile and %s a '%s' one; compare profiles of one client\n",
			files[BASE], witch_client_name(d.s[BASE].p.client),
			files[NEW], witch_client_name(d.s[NEW].p.client));
		status = 2;
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		if ((rc = witch_symbolizer_new(&d.s[i].p, &d.s[i].sym)) ||
		    (rc = add_side(&d, i)) || (rc = add_side_objects(&d, i)))
			goto fail;
	}
	for (size_t i = 0; i < d.no; i++) {
		d.o[i].status = classify_metrics(d.o[i].m);
		ocounts[d.o[i].status]++;
	}
	qsort(d.o, d.no, sizeof(*d.o), cmp_obj_entries);
	for (size_t i = 0; i < d.n; i++) {
		classify(&d.e[i]);
		counts[d.e[i].status]++;
	}
	qsort(d.e, d.n, sizeof(*d.e), cmp_entries);
	shown = top_set ? top : (json ? 0 : DEFAULT_TEXT_TOP);
	if (shown == 0 || shown > d.n)
		shown = d.n;
	/* --top N limits the objects listed as it limits the pairs. */
	oshown = top_set ? top : (json ? 0 : DEFAULT_TEXT_TOP);
	if (oshown == 0 || oshown > d.no)
		oshown = d.no;
	rc = json ? json_diff(stdout, &d, shown, counts, oshown, ocounts) :
		    text_diff(stdout, &d, shown, counts, oshown, ocounts);
	if (rc)
		goto fail;
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "witch: cannot write the diff: %s\n",
			strerror(errno ? errno : EIO));
		status = 1;
	}
	goto out;
fail:
	fprintf(stderr, "witch: cannot build the diff: %s\n", strerror(-rc));
	status = 1;
out:
	diff_free(&d);
	return status;
}
