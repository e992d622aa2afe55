/* html_flame: the HTML page's flame graph; see html_flame.h. */
#include "html_flame.h"

#include "html_out.h"
#include "index_table.h"
#include "json_out.h"
#include "profile_parse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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
	if (profile_grow((void **)&s->v, &s->cap, s->n, sizeof(*s->v)) < 0)
		goto nomem;
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
static int flame_json(FILE *js, const struct witch_view *v)
{
	const struct witch_profile *p = v->p;
	struct witch_symbolizer *sym = v->sym;
	const struct witch_totals *t = &v->t;
	const uint32_t *order = v->order;
	size_t n = v->shown;
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

const char html_flame_css[] =
	"#flame{position:relative;width:100%;min-height:18px;background:#fafafa;"
	"border:1px solid #ddd}\n"
	".fr{position:absolute;height:17px;box-sizing:border-box;border:1px solid #fff;"
	"padding:0 3px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;"
	"font:12px/15px monospace;cursor:pointer}\n"
	".fr:hover{border-color:#333}\n"
	".fr-root{background:#c8c8c8}.fr-m{background:#d03030;color:#fff;font-weight:bold}\n"
	".fr-i{font-style:italic;border-style:dashed}.fr-focus{outline:2px solid #333}\n"
	"#flame-info{font-family:monospace;min-height:1.4em;margin:.3em 0}\n";

static const char flame_js[] =
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
	"  d.style.top = n.depth * ROW + \"px\";\n"
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

int html_flame_data(const struct witch_view *v, char **json, size_t *len)
{
	FILE *js = open_memstream(json, len);
	int rc;

	if (!js)
		return -ENOMEM;
	rc = flame_json(js, v);
	if (fclose(js) && !rc)
		rc = -ENOMEM;
	if (rc) {
		free(*json);
		*json = NULL;
	}
	return rc;
}

void html_flame_write(FILE *out, const struct witch_view *v, const char *json, size_t len)
{
	fputs("<h2 id=\"flame-graph\">Flame graph</h2>\n<p class=\"hint\">Each tower is a pair, "
	      "read from the top down: the watched context from its outermost caller, then <b>", out);
	html_out_text(out, witch_marker_frame(v->p->client));
	fputs("</b>, then the trapping context from its outermost caller. Widths are waste. "
	      "Click a frame to zoom into it, the top frame to reset.</p>\n"
	      "<div id=\"flame-info\"></div>\n<div id=\"flame\"></div>\n", out);
	fputs("<script type=\"application/json\" id=\"witch-data\">", out);
	html_out_script_json(out, json, len);
	fprintf(out, "</script>\n<script>\n%s</script>\n", flame_js);
}
