/* html: one self-contained HTML page of a profile model; see html.h. */
#include "html.h"

#include "html_flame.h"
#include "html_out.h"
#include "json_out.h"
#include "wording.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Pairs the page leads with, each with both contexts and source lines. */
#define LEAD_PAIRS 3
/* Frames of each context shown there; the pair table has them all. */
#define LEAD_FRAMES 8

static const char page_css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\n"
	"h1{font-size:1.4em;margin:0 0 .4em;overflow-wrap:anywhere}h2{font-size:1.15em;margin:1.4em 0 .5em}\n"
	"h3{font-size:1.05em;margin:0 0 .3em}\n"
	"table{border-collapse:collapse}\n"
	"#answer{font-size:1.1em;margin:.2em 0 1em}\n"
	".lead{border:1px solid #d8d8d8;border-left:5px solid #d03030;border-radius:4px;"
	"padding:.6em .8em;margin:0 0 1em;background:#fffdfa}\n"
	".look{margin:.2em 0 .6em}\n"
	".sides{display:flex;flex-wrap:wrap;gap:.8em}\n"
	".side{flex:1 1 420px;min-width:0}\n"
	"pre.src{margin:.3em 0 0;padding:.3em 0;background:#f6f8fa;border:1px solid #e1e4e8;"
	"overflow-x:auto;font-size:12px;line-height:1.35;tab-size:4}\n"
	"pre.src span{display:block;padding:0 .5em;white-space:pre}\n"
	"pre.src span.mark{background:#ffe08a;font-weight:bold}\n"
	".nosrc{font-family:monospace;font-size:12px;color:#777;margin:.3em 0 0}\n"
	"#summary th{text-align:left;padding:1px 1.5em 1px 0;font-weight:600}\n"
	"#summary td{font-family:monospace}\n"
	"details{margin:1.4em 0}summary{font-size:1.15em;font-weight:600;cursor:pointer}\n"
	".hint{color:#666;font-size:.9em}\n"
	".scroll{overflow-x:auto}\n"
	"#pairs th,#pairs td,#objects th,#objects td{border:1px solid #ccc;padding:3px 6px;"
	"vertical-align:top}\n"
	"#pairs th,#objects th{background:#eee}\n"
	"#pairs td.num,#objects td.num{text-align:right;white-space:nowrap}\n"
	".oname{font-family:monospace;font-weight:bold;overflow-wrap:anywhere}\n"
	".objs{margin:.2em 0 .6em;font-size:.95em}\n"
	".what{font-weight:600}\n"
	"ol.frames{margin:0;padding-left:2.4em;font-family:monospace;font-size:12px;"
	"overflow-wrap:anywhere}\n"
	".fn{font-weight:bold}.tag{background:#ffe08a;border-radius:3px;padding:0 3px;"
	"margin-left:.4em;font-size:11px}\n"
	".loc{color:#0550ae}.mod{color:#777}.more{color:#777;font-size:12px;margin-left:2.4em}\n"
	"@media (max-width:600px){body{margin:.6em}.lead{padding:.5em}}\n";

static void summary_row(FILE *out, const char *id, const char *name)
{
	fprintf(out, "<tr id=\"sum-%s\"><th>%s</th><td>", id, name);
}

static void summary_num_row(FILE *out, const char *id, const char *name,
			    double v, bool is_bytes)
{
	fprintf(out, "<tr id=\"sum-%s\"", id);
	html_out_num_attr(out, "data-value", v);
	fprintf(out, "><th>%s</th><td>", name);
	if (is_bytes)
		witch_print_bytes(out, v);
	else
		json_out_num(out, v);
	fputs("</td></tr>\n", out);
}

static bool is_summary_stat(const char *name)
{
	return !strcmp(name, "samples") || !strcmp(name, "watchpoints_armed") ||
	       !strcmp(name, "traps");
}

static void page_summary(FILE *out, const struct witch_profile *p,
			 const struct witch_totals *t)
{
	bool others = false;

	fputs("<table id=\"summary\">\n", out);
	summary_row(out, "profiles", "profiles");
	fprintf(out, "%zu", p->nfiles);
	witch_print_pids(out, p);
	fputs("</td></tr>\n", out);
	if (p->exe) {
		summary_row(out, "program", "program");
		html_out_text(out, p->exe);
		fputs("</td></tr>\n", out);
	}
	summary_row(out, "client", "client");
	html_out_text(out, witch_client_name(p->client));
	fprintf(out, " (%s)</td></tr>\n", witch_client_what(p->client));
	summary_row(out, "sampler", "sampler");
	html_out_text(out, p->sampler);
	if (p->has_period && !p->period_mixed)
		fprintf(out, " (period %" PRIu64 ")", p->period);
	else if (p->period_mixed)
		fputs(" (periods differ between profiles)", out);
	fputs("</td></tr>\n", out);
	if (strcmp(p->verdicts, "traps")) {
		summary_row(out, "verdicts", "verdicts");
		html_out_text(out, witch_verdicts_what(p->verdicts));
		fputs("</td></tr>\n", out);
	}
	summary_num_row(out, "samples", "samples",
			witch_profile_stat(p, "samples"), false);
	double overhead, rate;
	if (witch_overhead_of(p, &overhead, &rate) == 0) {
		summary_row(out, "overhead", "profiler's cost (its estimate)");
		fprintf(out, "%.1f%% of the program's CPU time, %.0f ticks per CPU-second</td></tr>\n",
			overhead * 100, rate);
	}
	summary_num_row(out, "watchpoints", "watchpoints armed",
			witch_profile_stat(p, "watchpoints_armed"), false);
	summary_num_row(out, "traps", "traps", witch_profile_stat(p, "traps"),
			false);
	summary_num_row(out, "waste", "waste", t->waste, true);
	if (t->has_waste_approx)
		summary_num_row(out, "waste-approx", "approximate part of waste",
				t->waste_approx, true);
	summary_num_row(out, "use", "use", t->use, true);
	fprintf(out, "<tr id=\"sum-fraction\"");
	html_out_num_attr(out, "data-value", witch_fraction(t->waste, t->use));
	fprintf(out, "><th>fraction</th><td>%.4f (waste / (waste + use))</td></tr>\n",
		witch_fraction(t->waste, t->use));
	if (p->has_tolerance && !p->tolerance_mixed) {
		summary_row(out, "tolerance", "FP tolerance");
		fprintf(out, "%g%% (floating point this close counts as the same value)</td></tr>\n",
			p->tolerance * 100);
	}
	for (size_t i = 0; i < p->nstats; i++) {
		if (is_summary_stat(p->stats[i].name))
			continue;
		if (!others)
			summary_row(out, "others", "other counters");
		fputs(others ? ", " : "", out);
		html_out_text(out, p->stats[i].name);
		fputc(' ', out);
		json_out_num(out, p->stats[i].value);
		others = true;
	}
	if (others)
		fputs("</td></tr>\n", out);
	fputs("</table>\n", out);
}

/* One calling context, leaf first as the text report lists it; the first
 * max frames (0: all), and a line saying how many more the table has. */
static void page_frames(FILE *out, const struct witch_path *pb, size_t max)
{
	size_t n = max && pb->n > max ? max : pb->n;

	fputs("<ol class=\"frames\" start=\"0\">\n", out);
	for (size_t i = 0; i < n; i++) {
		const struct witch_frame *f = pb->frames[i];

		fprintf(out, "<li class=\"frame%s\" data-function=\"",
			f->inlined ? " inlined" : "");
		html_out_text(out, f->function);
		fputs("\" data-file=\"", out);
		html_out_text(out, f->file);
		fprintf(out, "\" data-line=\"%u\"><span class=\"fn\">", f->line);
		html_out_text(out, f->function);
		fputs("</span>", out);
		if (f->inlined)
			fputs("<span class=\"tag\">inlined</span>", out);
		fputs(" at <span class=\"loc\">", out);
		html_out_text(out, f->file);
		if (f->line)
			fprintf(out, ":%u", f->line);
		fputs("</span> <span class=\"mod\">in ", out);
		html_out_text(out, f->module);
		fprintf(out, " [0x%" PRIx64 "]</span></li>\n", f->address);
	}
	fputs("</ol>", out);
	if (n < pb->n)
		fprintf(out, "<div class=\"more\">and %zu outer frame%s (all pairs, below)</div>",
			pb->n - n, pb->n - n > 1 ? "s" : "");
}

static int page_pairs(FILE *out, const struct witch_profile *p,
		      struct witch_symbolizer *sym, const struct witch_totals *t,
		      const uint32_t *order, size_t n)
{
	struct witch_path pb = { 0 };
	int rc = 0;

	if (!p->npairs) {
		fputs("<p id=\"no-pairs\">no pairs: ", out);
		html_out_text(out, witch_no_pairs_why(p->verdicts));
		fputs("</p>\n", out);
		return 0;
	}
	if (n == p->npairs)
		fprintf(out, "<p>%zu pair%s by waste.</p>\n", n, n > 1 ? "s" : "");
	else
		fprintf(out, "<p>top %zu of %zu pairs by waste.</p>\n", n, p->npairs);
	fputs("<div class=\"scroll\"><table id=\"pairs\">\n<thead><tr><th>#</th><th>share</th><th>waste</th>"
	      "<th>use</th><th>traps</th><th>watched access (C_watch)</th>"
	      "<th>trapping access (C_trap)</th></tr></thead>\n<tbody>\n", out);
	for (size_t k = 0; k < n; k++) {
		const struct witch_pair *q = &p->pairs[order[k]];
		double s = witch_share(q->waste, t->waste);
		bool wasted = q->waste > 0;

		fprintf(out, "<tr class=\"pair\" data-rank=\"%zu\"", k + 1);
		html_out_num_attr(out, "data-share", s);
		html_out_num_attr(out, "data-waste", q->waste);
		html_out_num_attr(out, "data-use", q->use);
		fprintf(out, " data-traps=\"%" PRIu64 "\">\n", q->traps);
		fprintf(out, "<td class=\"num\">%zu</td><td class=\"num\">%.2f%%</td>"
			"<td class=\"num\">", k + 1, 100 * s);
		witch_print_bytes(out, q->waste);
		if (q->has_waste_approx) {
			fputs("<br>approximate ", out);
			witch_print_bytes(out, q->waste_approx);
		}
		fputs("</td><td class=\"num\">", out);
		witch_print_bytes(out, q->use);
		fprintf(out, "</td><td class=\"num\">%" PRIu64 "</td>\n", q->traps);

		fprintf(out, "<td class=\"ctx watch\"><div class=\"what\">%s</div>",
			witch_watch_words(p->client, wasted));
		if ((rc = witch_path_collect(sym, p, q->watch, &pb)))
			goto out;
		page_frames(out, &pb, 0);
		fprintf(out, "</td>\n<td class=\"ctx trap\"><div class=\"what\">%s</div>",
			witch_trap_words(p->client, wasted));
		if ((rc = witch_path_collect(sym, p, q->trap, &pb)))
			goto out;
		page_frames(out, &pb, 0);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table></div>\n", out);
out:
	witch_path_free(&pb);
	return rc;
}

/*
 * The source lines around a context's leaf frame, the line itself marked
 * as in the text report (">"): <pre class="src" data-file data-line> with
 * one <span data-line=N> per line, or one line saying why there is none.
 */
static int page_source(FILE *out, struct witch_source *src, const struct witch_path *pb)
{
	const struct witch_frame *f = pb->frames[0];
	struct witch_source_excerpt ex;
	int rc;

	if (!f->line || !strcmp(f->file, "??")) {
		fputs("<p class=\"nosrc\">no source line for ", out);
		html_out_text(out, f->function);
		fputs("</p>\n", out);
		return 0;
	}
	rc = witch_source_excerpt(src, f->file, f->line, WITCH_SOURCE_CONTEXT, &ex);
	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		fputs("<p class=\"nosrc\">", out);
		html_out_text(out, f->file);
		fprintf(out, ":%u: %s</p>\n", f->line, rc == -ERANGE ?
			"the source file has no such line (another version of it?)" :
			"source file not found");
		return 0;
	}
	fputs("<pre class=\"src\" data-file=\"", out);
	html_out_text(out, f->file);
	fprintf(out, "\" data-line=\"%u\">", f->line);
	for (size_t i = 0; i < ex.n; i++) {
		unsigned ln = ex.first + (unsigned)i;
		bool mark = ln == ex.mark;

		fprintf(out, "<span%s data-line=\"%u\">%c %5u  ", mark ? " class=\"mark\"" : "",
			ln, mark ? '>' : ' ', ln);
		html_out_text(out, ex.lines[i]);
		fputs("</span>", out);
	}
	fputs("</pre>\n", out);
	return 0;
}

/* A context's access as "function (file:line)", and ", inlined in
 * caller" when it is an inlined call, for the sentence of a pair. */
static void page_where(FILE *out, const struct witch_path *pb)
{
	const struct witch_frame *f = pb->frames[0];
	const char *slash = strrchr(f->file, '/');
	const char *in = witch_path_function(pb);

	fputs("<b>", out);
	html_out_text(out, f->function);
	fputs("</b>", out);
	if (f->line) {
		fputs(" (", out);
		html_out_text(out, slash ? slash + 1 : f->file);
		fprintf(out, ":%u)", f->line);
	}
	if (in != f->function) {
		fputs(", inlined in <b>", out);
		html_out_text(out, in);
		fputs("</b>", out);
	}
}

/* What a pair with waste asks the reader to look at, per client. */
static void page_look(FILE *out, enum witch_client c, const struct witch_path *w,
		      const struct witch_path *t)
{
	fputs("<p class=\"look\">", out);
	switch (c) {
	case WITCH_CLIENT_DEAD:
		fputs("Look at ", out);
		page_where(out, w);
		fputs(": what it stores is overwritten by ", out);
		page_where(out, t);
		fputs(" before anything reads it. Drop the first store, or the second "
		      "if it is the redundant one.", out);
		break;
	case WITCH_CLIENT_SILENT:
		fputs("Look at ", out);
		page_where(out, t);
		fputs(": it stores the value that ", out);
		page_where(out, w);
		fputs(" already stored there. Skip the store when the value has not changed.",
		      out);
		break;
	case WITCH_CLIENT_LOAD:
		fputs("Look at ", out);
		page_where(out, t);
		fputs(": it loads the value that ", out);
		page_where(out, w);
		fputs(" loaded from the same place before. Keep the value in a local "
		      "instead of loading it again.", out);
		break;
	}
	fputs("</p>\n", out);
}

/* One side of a lead pair: heading, the context leaf first, its source. */
static int page_side(FILE *out, const struct witch_view *v, const char *cls,
		     const char *what, uint32_t node, struct witch_path *pb)
{
	int rc = witch_path_collect(v->sym, v->p, node, pb);

	if (rc)
		return rc;
	fprintf(out, "<div class=\"side %s\"><div class=\"what\">%s</div>\n", cls, what);
	page_frames(out, pb, LEAD_FRAMES);
	if (v->src && (rc = page_source(out, v->src, pb)))
		return rc;
	fputs("</div>\n", out);
	return 0;
}

/*
 * The objects by waste (#objects): rank, share, waste, use, sampled bytes,
 * size, kind, and the name, with a heap object's allocation context leaf
 * first.  Nothing for profiles without object records.
 */
static int page_objects(FILE *out, const struct witch_view *v)
{
	const struct witch_objects *o = v->objects;
	struct witch_path pb = { 0 };
	int rc = 0;

	if (!o->n)
		return 0;
	fprintf(out, "<h2 id=\"all-objects\">Objects</h2>\n<p class=\"hint\">The data the waste "
		"fell on: %zu object%s by waste (a heap object is its allocation site).</p>\n",
		o->n, o->n > 1 ? "s" : "");
	fputs("<div class=\"scroll\"><table id=\"objects\">\n<thead><tr><th>#</th><th>share</th>"
	      "<th>waste</th><th>use</th><th>sampled</th><th>size</th><th>kind</th>"
	      "<th>object</th></tr></thead>\n<tbody>\n", out);
	for (size_t k = 0; k < o->n; k++) {
		const struct witch_object_row *r = &o->rows[k];
		double s = witch_share(r->waste, v->t.waste);

		fprintf(out, "<tr class=\"object\" data-rank=\"%zu\" data-kind=\"%s\"", k + 1,
			witch_object_kind_name(r->kind));
		html_out_num_attr(out, "data-share", s);
		html_out_num_attr(out, "data-waste", r->waste);
		html_out_num_attr(out, "data-use", r->use);
		html_out_num_attr(out, "data-size", (double)r->size);
		html_out_num_attr(out, "data-sampled", r->sampled);
		fprintf(out, ">\n<td class=\"num\">%zu</td><td class=\"num\">%.2f%%</td>"
			"<td class=\"num\">", k + 1, 100 * s);
		witch_print_bytes(out, r->waste);
		fputs("</td><td class=\"num\">", out);
		witch_print_bytes(out, r->use);
		fputs("</td><td class=\"num\">", out);
		witch_print_bytes(out, r->sampled);
		fputs("</td><td class=\"num\">", out);
		if (r->kind != WITCH_OBJECT_STACK && r->kind != WITCH_OBJECT_UNKNOWN)
			witch_print_bytes(out, (double)r->size);
		fprintf(out, "</td><td>%s</td>\n<td><div class=\"oname\">",
			witch_object_kind_name(r->kind));
		html_out_text(out, r->name);
		fputs("</div>", out);
		if (r->alloc) {
			if ((rc = witch_path_collect(v->sym, v->p, r->alloc, &pb)))
				break;
			fputs("<div class=\"what\">allocated at</div>", out);
			page_frames(out, &pb, 0);
		}
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table></div>\n", out);
	witch_path_free(&pb);
	return rc;
}

/* A lead pair's objects, one line: where its waste fell. */
static void page_pair_objects(FILE *out, const struct witch_view *v, uint32_t pair,
			      double waste)
{
	const struct witch_objects *o = v->objects;
	size_t first, end;

	if (!o->n || (first = o->pair_first[pair]) == (end = o->pair_first[pair + 1]))
		return;
	fputs("<p class=\"objs\">On ", out);
	for (size_t i = first; i < end && i < first + LEAD_PAIRS; i++) {
		fputs(i > first ? ", <span class=\"oname\">" : "<span class=\"oname\">", out);
		html_out_text(out, o->rows[o->parts[i].row].name);
		fprintf(out, "</span> (%.0f%%)", 100 * witch_share(o->parts[i].waste, waste));
	}
	if (end - first > LEAD_PAIRS)
		fprintf(out, " and %zu more object%s", end - first - LEAD_PAIRS,
			end - first - LEAD_PAIRS > 1 ? "s" : "");
	fputs(".</p>\n", out);
}

/*
 * The answer first: one sentence with the fraction and the top pair's
 * share, then the LEAD_PAIRS pairs with the most waste, each with its
 * share, what to look at, both contexts and their source lines.
 */
static int page_lead(FILE *out, const struct witch_view *v)
{
	const struct witch_profile *p = v->p;
	struct witch_path w = { 0 }, t = { 0 };
	size_t n = 0;
	int rc = 0;

	int window = !strcmp(p->verdicts, "window");
	fprintf(out, "<p id=\"answer\"><b>%.1f%%</b> of the %s accesses were %s (",
		100 * witch_fraction(v->t.waste, v->t.use),
		window ? "sampled and run-ahead-decided" : "sampled", witch_client_what(p->client));
	witch_print_bytes(out, v->t.waste);
	fputs(" of ", out);
	witch_print_bytes(out, v->t.waste + v->t.use);
	fputs(").", out);
	if (window && v->t.sampled > 0)
		fprintf(out, " Without watchpoint traps the run-ahead decided %.1f%% of the "
			"sampled bytes, the near part.",
			100 * (v->t.waste + v->t.use) / v->t.sampled);
	if (v->shown && p->pairs[v->order[0]].waste > 0)
		fprintf(out, " The top pair holds <b>%.2f%%</b> of the waste.",
			100 * witch_share(p->pairs[v->order[0]].waste, v->t.waste));
	fputs("</p>\n", out);
	fputs("<section id=\"top\">\n", out);
	for (size_t k = 0; k < v->shown && n < LEAD_PAIRS; k++) {
		const struct witch_pair *q = &p->pairs[v->order[k]];
		double s = witch_share(q->waste, v->t.waste);

		if (!(q->waste > 0))
			break;	/* sorted: the rest have no waste either */
		if ((rc = witch_path_collect(v->sym, p, q->watch, &w)) ||
		    (rc = witch_path_collect(v->sym, p, q->trap, &t)))
			goto out;
		fprintf(out, "<div class=\"lead\" data-rank=\"%zu\"", k + 1);
		html_out_num_attr(out, "data-share", s);
		html_out_num_attr(out, "data-waste", q->waste);
		fprintf(out, ">\n<h3>#%zu: %.2f%% of the waste, ", k + 1, 100 * s);
		witch_print_bytes(out, q->waste);
		fputs("</h3>\n", out);
		page_look(out, p->client, &w, &t);
		page_pair_objects(out, v, v->order[k], q->waste);
		fputs("<div class=\"sides\">\n", out);
		if ((rc = page_side(out, v, "watch", witch_watch_words(p->client, true), q->watch, &w)) ||
		    (rc = page_side(out, v, "trap", witch_trap_words(p->client, true), q->trap, &t)))
			goto out;
		fputs("</div></div>\n", out);
		n++;
	}
	if (!n)
		fputs("<p id=\"no-lead\">No pair has waste: nothing to look at.</p>\n", out);
	fputs("</section>\n", out);
out:
	witch_path_free(&w);
	witch_path_free(&t);
	return rc;
}

int witch_html_write(FILE *out, const struct witch_view *v)
{
	const struct witch_profile *p = v->p;
	const char *prog = p->exe;
	char *json = NULL;
	size_t json_len = 0;
	int rc;

	/* The stacks first, into memory: they go inside <script> and need
	 * one more escaping pass on the way out. */
	if ((rc = html_flame_data(v, &json, &json_len)))
		return rc;

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"witch report --format html\">\n"
	      "<title>witch report: ", out);
	fputs(witch_client_what(p->client), out);
	if (prog) {
		const char *slash = strrchr(prog, '/');

		fputs(" in ", out);
		html_out_text(out, slash ? slash + 1 : prog);
	}
	fprintf(out, "</title>\n<style>\n%s%s</style>\n</head>\n<body>\n", page_css,
		html_flame_css);
	fprintf(out, "<h1>witch report: %s", witch_client_what(p->client));
	if (prog) {
		const char *slash = strrchr(prog, '/');

		fputs(" in ", out);
		html_out_text(out, slash ? slash + 1 : prog);
	}
	fputs("</h1>\n", out);
	if ((rc = page_lead(out, v)) || (rc = page_objects(out, v)))
		goto out;
	html_flame_write(out, v, json, json_len);
	fputs("<h2 id=\"all-pairs\">All pairs</h2>\n", out);
	if ((rc = page_pairs(out, p, v->sym, &v->t, v->order, v->shown)))
		goto out;
	fputs("<details id=\"counters\">\n<summary>Counters and settings</summary>\n", out);
	page_summary(out, p, &v->t);
	fputs("</details>\n</body>\n</html>\n", out);
out:
	free(json);
	return rc;
}
