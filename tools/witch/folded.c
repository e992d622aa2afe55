/* folded: folded stacks for flamegraph.pl and speedscope; see folded.h. */
#include "folded.h"

#include "summary.h"

#include <inttypes.h>
#include <stdbool.h>
#include <math.h>
#include <string.h>

/* A name without the two bytes that would break the line format. */
static void put_name(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == ';')
			fputc(':', out);
		else if (*s == '\n' || *s == '\r')
			fputc(' ', out);
		else
			fputc(*s, out);
	}
}

static void put_frame(FILE *out, const struct witch_frame *f)
{
	/* Demangled, or "[unknown in MODULE]" (symbolize.h): unknown
	 * frames of one module are one frame. */
	put_name(out, f->function);
	if (f->inlined)
		fputs("_[i]", out);
}

/* Path frames are leaf first; folded stacks are root first. Each frame
 * is preceded by ';' except the first of the line. */
static void put_path_root_first(FILE *out, const struct witch_path *path,
				bool first)
{
	for (size_t i = path->n; i-- > 0; first = false) {
		if (!first)
			fputc(';', out);
		put_frame(out, path->frames[i]);
	}
}

int witch_folded_write(FILE *out, const struct witch_view *v)
{
	const struct witch_profile *p = v->p;
	struct witch_symbolizer *sym = v->sym;
	const uint32_t *order = v->order;
	size_t n = v->shown;
	struct witch_path watch = { 0 }, trap = { 0 };
	int rc = 0;

	for (size_t k = 0; k < n; k++) {
		const struct witch_pair *q = &p->pairs[order[k]];
		double bytes = round(q->waste);

		if (bytes < 1)
			continue;
		if ((rc = witch_path_collect(sym, p, q->watch, &watch)) ||
		    (rc = witch_path_collect(sym, p, q->trap, &trap)))
			break;
		put_path_root_first(out, &watch, true);
		fprintf(out, ";%s", witch_marker_frame(p->client));
		put_path_root_first(out, &trap, false);
		fprintf(out, " %.0f\n", bytes);
	}
	witch_path_free(&watch);
	witch_path_free(&trap);
	return rc;
}
