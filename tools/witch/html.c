/* html: one self-contained HTML page of a profile model; see html.h. */
#include "html.h"

#include "index_table.h"
#include "json_out.h"
#include "wording.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---- escaping ---- */


/*
 * s as HTML text or a quoted attribute value. Names and paths come from
 * files and DWARF and may hold any bytes: markup characters become
 * entities, and bytes that are not UTF-8 (the page says it is) or control
 * characters (which HTML does not allow) become U+FFFD.
 */
static void html_text(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n;

		switch (*p) {
		case '&':
			fputs("&amp;", out);
			p++;
			continue;
		case '<':
			fputs("&lt;", out);
			p++;
			continue;
		case '>':
			fputs("&gt;", out);
			p++;
			continue;
		case '"':
			fputs("&quot;", out);
			p++;
			continue;
		case '\'':
			fputs("&#39;", out);
			p++;
			continue;
		}
		if ((*p < 0x20 && *p != '\t' && *p != '\n') || *p == 0x7f) {
			fputs("&#xfffd;", out);
			p++;
			continue;
		}
		n = json_out_utf8_len(p);
		if (!n) {
			fputs("&#xfffd;", out);
			p++;
			continue;
		}
		fwrite(p, 1, n, out);
		p += n;
	}
}

/* A number as the JSON report writes it, for data-* attributes. */
static void html_num_attr(FILE *out, const char *name, double v)
{
	fprintf(out, " %s=\"", name);
	json_out_num(out, v);
	fputc('"', out);
}

/*
 * Copies JSON text into a <script> element. json_out_str already made it
 * valid UTF-8 JSON; '<', '>' and '&' can only occur inside its strings,
 * where \u escapes mean the same, and without them no "</script>" or
 * "<!--" inside a name can end or confuse the element.
 */
static void script_json(FILE *out, const char *json, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		switch (json[i]) {
		case '<':
			fputs("\\u003c", out);
			break;
		case '>':
			fputs("\\u003e", out);
			break;
		case '&':
			fputs("\\u0026", out);
			break;
		default:
			fputc(json[i], out);
		}
	}
}

/* ---- flame graph data ---- */

/* Distinct frame labels, so each pair's stack is a list of small ints. */
struct name_set {
	struct name_entry {
		char *label;
		bool inlined;
	} *v;
	size_t n, cap;
	struct index_table index;
};

static void name_set_free(struct name_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].label);
	free(s->v);
	index_table_free(&s->index);
	memset(s, 0, sizeof(*s));
}

/* The label a frame has in the flame graph: as in the folded format, the
 * function as symbolize named it ("[unknown in MODULE]" for no name). */
static char *frame_label(const struct witch_frame *f)
{
	return strdup(f->function);
}

/* Index of the frame's label in s, added if new: 0 or -ENOMEM. */
static int name_set_add(struct name_set *s, const struct witch_frame *f,
			uint32_t *idx)
{
	char *label = frame_label(f);
	struct index_probe pr;
	uint64_t h;
	uint32_t i;
	int rc;

	if (!label)
		return -ENOMEM;
	h = index_hash_str(f->inlined, label);
	index_table_probe_start(&s->index, h, &pr);
	while (index_table_probe_next(&s->index, &pr, &i)) {
		if (s->v[i].inlined == f->inlined && !strcmp(s->v[i].label, label)) {
			free(label);
			*idx = i;
			return 0;
		}
	}
	if (s->n == UINT32_MAX)
		goto nomem;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct name_entry *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			goto nomem;
		s->v = v;
		s->cap = cap;
	}
	if ((rc = index_table_insert(&s->index, h, (uint32_t)s->n))) {
		free(label);
		return rc;
	}
	s->v[s->n].label = label;
	s->v[s->n].inlined = f->inlined;
	*idx = (uint32_t)s->n++;
	return 0;
nomem:
	free(label);
	return -ENOMEM;
}

/* The label indices of a path, root first (paths are leaf first). */
static int stack_json(FILE *js, struct name_set *names,
		      const struct witch_path *path)
{
	fputc('[', js);
	for (size_t i = path->n; i-- > 0;) {
		uint32_t idx;
		int rc = name_set_add(names, path->frames[i], &idx);

		if (rc)
			return rc;
		fprintf(js, "%s%" PRIu32, i + 1 == path->n ? "" : ",", idx);
	}
	fputc(']', js);
	return 0;
}

/*
 * The JSON the page's script draws the flame graph from:
 *   {"marker":M, "total":TOTAL_WASTE, "names":[{"f":LABEL,"i":0|1}...],
 *    "stacks":[{"r":RANK, "v":WASTE, "w":[NAME...], "t":[NAME...]}...]}
 * w and t are the C_watch and C_trap frames root first; pairs without
 * waste have no width and are left out.
 */
static int flame_json(FILE *js, const struct witch_profile *p,
		      struct witch_symbolizer *sym, const struct witch_totals *t,
		      const uint32_t *order, size_t n)
{
	struct witch_path watch = { 0 }, trap = { 0 };
	struct name_set names = { 0 };
	bool first = true;
	int rc = 0;

	fputs("{\"marker\":", js);
	json_out_str(js, witch_marker_frame(p->client));
	fputs(",\"total\":", js);
	json_out_num(js, t->waste);
	fputs(",\n\"stacks\":[", js);
	for (size_t k = 0; k < n; k++) {
		const struct witch_pair *q = &p->pairs[order[k]];

		if (!(q->waste > 0))
			continue;
		if ((rc = witch_path_collect(sym, p, q->watch, &watch)) ||
		    (rc = witch_path_collect(sym, p, q->trap, &trap)))
			goto out;
		fprintf(js, "%s{\"r\":%zu,\"v\":", first ? "\n" : ",\n", k + 1);
		json_out_num(js, q->waste);
		fputs(",\"w\":", js);
		if ((rc = stack_json(js, &names, &watch)))
			goto out;
		fputs(",\"t\":", js);
		if ((rc = stack_json(js, &names, &trap)))
			goto out;
		fputc('}', js);
		first = false;
	}
	fputs("],\n\"names\":[", js);
	for (size_t i = 0; i < names.n; i++) {
		fputs(i ? ",\n{\"f\":" : "\n{\"f\":", js);
		json_out_str(js, names.v[i].label);
		fprintf(js, ",\"i\":%d}", names.v[i].inlined ? 1 : 0);
	}
	fputs("]}", js);
out:
	name_set_free(&names);
	witch_path_free(&watch);
	witch_path_free(&trap);
	return rc;
}

/* ---- page ---- */

static const char page_css[] =
	"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\n"
	"h1{font-size:1.4em;margin:0 0 .6em}h2{font-size:1.15em;margin:1.4em 0 .5em}\n"
	"table{border-collapse:collapse}\n"
	"#summary th{text-align:left;padding:1px 1.5em 1px 0;font-weight:600}\n"
	"#summary td{font-family:monospace}\n"
	"#flame{position:relative;width:100%;min-height:18px;background:#fafafa;"
	"border:1px solid #ddd}\n"
	".fr{position:absolute;height:17px;box-sizing:border-box;border:1px solid #fff;"
	"padding:0 3px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;"
	"font:12px/15px monospace;cursor:pointer}\n"
	".fr:hover{border-color:#333}\n"
	".fr-root{background:#c8c8c8}.fr-m{background:#d03030;color:#fff;font-weight:bold}\n"
	".fr-i{font-style:italic;border-style:dashed}.fr-focus{outline:2px solid #333}\n"
	"#flame-info{font-family:monospace;min-height:1.4em;margin:.3em 0}\n"
	".hint{color:#666;font-size:.9em}\n"
	"#pairs th,#pairs td{border:1px solid #ccc;padding:3px 6px;vertical-align:top}\n"
	"#pairs th{background:#eee}#pairs td.num{text-align:right;white-space:nowrap}\n"
	".what{font-weight:600}\n"
	"ol.frames{margin:0;padding-left:2.4em;font-family:monospace;font-size:12px}\n"
	".fn{font-weight:bold}.tag{background:#ffe08a;border-radius:3px;padding:0 3px;"
	"margin-left:.4em;font-size:11px}\n"
	".loc{color:#0550ae}.mod{color:#777}\n";

/*
 * Draws the flame graph from the JSON in #witch-data: a tree of the
 * root-first stacks, children widest first, root at the bottom. Frames are
 * absolutely positioned divs with left/width in percent of the focused
 * frame, so the graph follows the window width without a resize handler.
 * Text goes in with textContent only, never as markup.
 */
static const char page_js[] =
	"(function () {\n"
	"\"use strict\";\n"
	"var data = JSON.parse(document.getElementById(\"witch-data\").textContent);\n"
	"var box = document.getElementById(\"flame\");\n"
	"var info = document.getElementById(\"flame-info\");\n"
	"var ROW = 18, UNITS = [\"KiB\", \"MiB\", \"GiB\", \"TiB\", \"PiB\"];\n"
	"function bytes(v) {\n"
	"  var s = (v >= 100 || v === Math.floor(v)) ? v.toFixed(0) : v.toFixed(2);\n"
	"  var h = v, u = -1;\n"
	"  while (h >= 1024 && u < 4) { h /= 1024; u++; }\n"
	"  return s + \" bytes\" + (u >= 0 ? \" (\" + h.toFixed(1) + \" \" + UNITS[u] + \")\" : \"\");\n"
	"}\n"
	"function share(v) {\n"
	"  return (data.total > 0 ? 100 * v / data.total : 0).toFixed(2) + \"%\";\n"
	"}\n"
	"function mk(name, kind, inl, parent) {\n"
	"  return { name: name, kind: kind, inl: inl, v: 0, kids: [], byKey: new Map(),\n"
	"           parent: parent, depth: parent ? parent.depth + 1 : 0, x0: 0 };\n"
	"}\n"
	"var root = mk(\"all\", \"root\", false, null), maxDepth = 0;\n"
	"data.stacks.forEach(function (s) {\n"
	"  var path = s.w.map(function (i) { return [\"w\", i]; });\n"
	"  path.push([\"m\", -1]);\n"
	"  s.t.forEach(function (i) { path.push([\"t\", i]); });\n"
	"  var n = root;\n"
	"  n.v += s.v;\n"
	"  path.forEach(function (p) {\n"
	"    var key = p[0] + p[1], c = n.byKey.get(key);\n"
	"    if (!c) {\n"
	"      var nm = p[1] < 0 ? { f: data.marker, i: 0 } : data.names[p[1]];\n"
	"      c = mk(nm.f, p[0], nm.i === 1, n);\n"
	"      n.byKey.set(key, c);\n"
	"      n.kids.push(c);\n"
	"    }\n"
	"    c.v += s.v;\n"
	"    n = c;\n"
	"    if (n.depth > maxDepth) maxDepth = n.depth;\n"
	"  });\n"
	"});\n"
	"root.name = \"all (\" + data.stacks.length + \" pair\" + (data.stacks.length === 1 ? \"\" : \"s\") + \")\";\n"
	"(function place(n) {\n"
	"  var x = n.x0;\n"
	"  n.kids.sort(function (a, b) { return b.v - a.v || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0); });\n"
	"  n.kids.forEach(function (c) { c.x0 = x; x += c.v; place(c); });\n"
	"})(root);\n"
	"function label(n) { return n.name + (n.inl ? \" (inlined)\" : \"\"); }\n"
	"function describe(n) { return label(n) + \": \" + bytes(n.v) + \", \" + share(n.v) + \" of waste\"; }\n"
	"function hue(s) {\n"
	"  var h = 0;\n"
	"  for (var i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0;\n"
	"  return h;\n"
	"}\n"
	"var focus = root;\n"
	"function draw(n, left, width) {\n"
	"  if (width < 0.02) return false;\n"
	"  var d = document.createElement(\"div\");\n"
	"  d.className = \"fr fr-\" + n.kind + (n.inl ? \" fr-i\" : \"\") + (n === focus ? \" fr-focus\" : \"\");\n"
	"  d.style.left = left + \"%\";\n"
	"  d.style.width = width + \"%\";\n"
	"  d.style.bottom = n.depth * ROW + \"px\";\n"
	"  if (n.kind === \"w\") d.style.background = \"hsl(\" + (15 + hue(n.name) % 40) + \",85%,62%)\";\n"
	"  if (n.kind === \"t\") d.style.background = \"hsl(\" + (190 + hue(n.name) % 40) + \",60%,68%)\";\n"
	"  d.textContent = label(n);\n"
	"  d.title = describe(n);\n"
	"  d.setAttribute(\"data-name\", label(n));\n"
	"  d.setAttribute(\"data-waste\", String(n.v));\n"
	"  d.setAttribute(\"data-depth\", String(n.depth));\n"
	"  d.witchNode = n;\n"
	"  box.appendChild(d);\n"
	"  return true;\n"
	"}\n"
	"function render() {\n"
	"  box.textContent = \"\";\n"
	"  box.style.height = (maxDepth + 1) * ROW + \"px\";\n"
	"  for (var a = focus; a; a = a.parent) draw(a, 0, 100);\n"
	"  (function kids(n) {\n"
	"    n.kids.forEach(function (c) {\n"
	"      if (draw(c, (c.x0 - focus.x0) / focus.v * 100, c.v / focus.v * 100)) kids(c);\n"
	"    });\n"
	"  })(focus);\n"
	"}\n"
	"if (!data.stacks.length) {\n"
	"  info.textContent = \"no pairs with waste: nothing to draw\";\n"
	"  return;\n"
	"}\n"
	"box.addEventListener(\"click\", function (e) {\n"
	"  var n = e.target.witchNode;\n"
	"  if (!n) return;\n"
	"  focus = n;\n"
	"  render();\n"
	"  info.textContent = describe(n);\n"
	"});\n"
	"box.addEventListener(\"mouseover\", function (e) {\n"
	"  if (e.target.witchNode) info.textContent = describe(e.target.witchNode);\n"
	"});\n"
	"render();\n"
	"info.textContent = describe(root);\n"
	"})();\n";

static void summary_row(FILE *out, const char *id, const char *name)
{
	fprintf(out, "<tr id=\"sum-%s\"><th>%s</th><td>", id, name);
}

static void summary_num_row(FILE *out, const char *id, const char *name,
			    double v, bool is_bytes)
{
	fprintf(out, "<tr id=\"sum-%s\"", id);
	html_num_attr(out, "data-value", v);
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
		html_text(out, p->exe);
		fputs("</td></tr>\n", out);
	}
	summary_row(out, "client", "client");
	html_text(out, witch_client_name(p->client));
	fprintf(out, " (%s)</td></tr>\n", witch_client_what(p->client));
	summary_row(out, "sampler", "sampler");
	html_text(out, p->sampler);
	if (p->has_period && !p->period_mixed)
		fprintf(out, " (period %" PRIu64 ")", p->period);
	else if (p->period_mixed)
		fputs(" (periods differ between profiles)", out);
	fputs("</td></tr>\n", out);
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
	html_num_attr(out, "data-value", witch_fraction(t->waste, t->use));
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
		html_text(out, p->stats[i].name);
		fputc(' ', out);
		json_out_num(out, p->stats[i].value);
		others = true;
	}
	if (others)
		fputs("</td></tr>\n", out);
	fputs("</table>\n", out);
}

/* One calling context, leaf first as the text report lists it. */
static void page_frames(FILE *out, const struct witch_path *pb)
{
	fputs("<ol class=\"frames\" start=\"0\">\n", out);
	for (size_t i = 0; i < pb->n; i++) {
		const struct witch_frame *f = pb->frames[i];

		fprintf(out, "<li class=\"frame%s\" data-function=\"",
			f->inlined ? " inlined" : "");
		html_text(out, f->function);
		fputs("\" data-file=\"", out);
		html_text(out, f->file);
		fprintf(out, "\" data-line=\"%u\"><span class=\"fn\">", f->line);
		html_text(out, f->function);
		fputs("</span>", out);
		if (f->inlined)
			fputs("<span class=\"tag\">inlined</span>", out);
		fputs(" at <span class=\"loc\">", out);
		html_text(out, f->file);
		if (f->line)
			fprintf(out, ":%u", f->line);
		fputs("</span> <span class=\"mod\">in ", out);
		html_text(out, f->module);
		fprintf(out, " [0x%" PRIx64 "]</span></li>\n", f->address);
	}
	fputs("</ol>", out);
}

static int page_pairs(FILE *out, const struct witch_profile *p,
		      struct witch_symbolizer *sym, const struct witch_totals *t,
		      const uint32_t *order, size_t n)
{
	struct witch_path pb = { 0 };
	int rc = 0;

	if (!p->npairs) {
		fputs("<p id=\"no-pairs\">no pairs: no watchpoint trap was attributed to a pair of contexts</p>\n",
		      out);
		return 0;
	}
	if (n == p->npairs)
		fprintf(out, "<p>%zu pair%s by waste.</p>\n", n, n > 1 ? "s" : "");
	else
		fprintf(out, "<p>top %zu of %zu pairs by waste.</p>\n", n, p->npairs);
	fputs("<table id=\"pairs\">\n<thead><tr><th>#</th><th>share</th><th>waste</th>"
	      "<th>use</th><th>traps</th><th>watched access (C_watch)</th>"
	      "<th>trapping access (C_trap)</th></tr></thead>\n<tbody>\n", out);
	for (size_t k = 0; k < n; k++) {
		const struct witch_pair *q = &p->pairs[order[k]];
		double s = witch_share(q->waste, t->waste);
		bool wasted = q->waste > 0;

		fprintf(out, "<tr class=\"pair\" data-rank=\"%zu\"", k + 1);
		html_num_attr(out, "data-share", s);
		html_num_attr(out, "data-waste", q->waste);
		html_num_attr(out, "data-use", q->use);
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
		page_frames(out, &pb);
		fprintf(out, "</td>\n<td class=\"ctx trap\"><div class=\"what\">%s</div>",
			witch_trap_words(p->client, wasted));
		if ((rc = witch_path_collect(sym, p, q->trap, &pb)))
			goto out;
		page_frames(out, &pb);
		fputs("</td></tr>\n", out);
	}
	fputs("</tbody></table>\n", out);
out:
	witch_path_free(&pb);
	return rc;
}

int witch_html_write(FILE *out, const struct witch_view *v)
{
	const struct witch_profile *p = v->p;
	struct witch_symbolizer *sym = v->sym;
	const struct witch_totals *t = &v->t;
	const uint32_t *order = v->order;
	size_t n = v->shown;
	char *json = NULL;
	size_t json_len = 0;
	FILE *js;
	const char *prog = p->exe ? p->exe : NULL;
	int rc;

	/* The stacks first, into memory: they go inside <script> and need
	 * one more escaping pass on the way out. */
	js = open_memstream(&json, &json_len);
	if (!js)
		return -ENOMEM;
	rc = flame_json(js, p, sym, t, order, n);
	if (fclose(js) && !rc)
		rc = -ENOMEM;
	if (rc) {
		free(json);
		return rc;
	}

	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"generator\" content=\"witch report --format html\">\n"
	      "<title>witch report: ", out);
	fputs(witch_client_what(p->client), out);
	if (prog) {
		const char *slash = strrchr(prog, '/');

		fputs(" in ", out);
		html_text(out, slash ? slash + 1 : prog);
	}
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", page_css);
	fprintf(out, "<h1>witch report: %s</h1>\n", witch_client_what(p->client));
	page_summary(out, p, t);

	fputs("<h2>Flame graph</h2>\n<p class=\"hint\">Each tower is a pair: the watched "
	      "context from its outermost caller up, then <b>", out);
	html_text(out, witch_marker_frame(p->client));
	fputs("</b>, then the trapping context. Widths are waste. Click a frame "
	      "to zoom into it, the bottom frame to reset.</p>\n"
	      "<div id=\"flame-info\"></div>\n<div id=\"flame\"></div>\n", out);
	fputs("<h2>Pairs</h2>\n", out);
	rc = page_pairs(out, p, sym, t, order, n);
	if (rc) {
		free(json);
		return rc;
	}
	fputs("<script type=\"application/json\" id=\"witch-data\">", out);
	script_json(out, json, json_len);
	fprintf(out, "</script>\n<script>\n%s</script>\n</body>\n</html>\n", page_js);
	free(json);
	return 0;
}
