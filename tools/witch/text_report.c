/* text_report: summary and top pairs as text (see text_report.h). */
#include "text_report.h"

#include "json_out.h"
#include "wording.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_summary_stat(const char *name)
{
	return !strcmp(name, "samples") || !strcmp(name, "watchpoints_armed") ||
	       !strcmp(name, "traps");
}

/*
 * line, cut to width columns with "..." as the last three when longer
 * (0: no limit). A column is a UTF-8 character (a byte that is not a
 * continuation byte), so a cut never splits one; wide characters count
 * as one, which errs on the side of a line that wraps.
 */
static void put_cut(FILE *out, const char *line, size_t width)
{
	const unsigned char *p = (const unsigned char *)line;
	size_t cols = 0, keep = 0;

	if (width) {
		for (size_t i = 0; p[i]; i++) {
			if ((p[i] & 0xc0) == 0x80)
				continue;
			if (cols == width - 3)
				keep = i;
			cols++;
		}
	}
	if (!width || cols <= width) {
		fputs(line, out);
		return;
	}
	fwrite(line, 1, keep, out);
	fputs("...", out);
}

static int text_frames(FILE *out, const struct witch_path *pb, size_t width)
{
	for (size_t i = 0; i < pb->n; i++) {
		const struct witch_frame *f = pb->frames[i];
		char ln[16] = "";
		char *line;

		if (f->line)
			snprintf(ln, sizeof(ln), ":%u", f->line);
		if (asprintf(&line, "      #%-2zu %s%s at %s%s in %s [0x%" PRIx64 "]",
			     i, f->function, f->inlined ? " (inlined)" : "",
			     f->file, ln, f->module, f->address) < 0)
			return -ENOMEM;
		put_cut(out, line, width);
		fputc('\n', out);
		free(line);
	}
	return 0;
}

/*
 * The source lines around the leaf frame of a context (the accessing
 * instruction's line), headed by what the access is and where:
 *
 *     dead store: /src/prog.c:13 (fill, inlined in store_first)
 *            10  {
 *       >    13          a[i] = v * i + 7;
 *
 * or one plain line when there is no source to show.
 */
static int text_source(FILE *out, struct witch_source *src, const char *what,
		       const struct witch_path *pb)
{
	const struct witch_frame *f = pb->frames[0];
	struct witch_source_excerpt ex;
	int rc;

	if (!f->line || !strcmp(f->file, "??")) {
		fprintf(out, "    %s: no source line for %s\n", what, f->function);
		return 0;
	}
	fprintf(out, "    %s: %s:%u (%s", what, f->file, f->line, f->function);
	if (witch_path_function(pb) != f->function)
		fprintf(out, ", inlined in %s", witch_path_function(pb));
	fputc(')', out);
	rc = witch_source_excerpt(src, f->file, f->line, WITCH_SOURCE_CONTEXT, &ex);
	if (rc == -ENOMEM)
		return rc;
	if (rc == -ERANGE) {
		fputs(": the source file has no such line (another version of it?)\n", out);
		return 0;
	}
	if (rc) {
		fputs(": source file not found\n", out);
		return 0;
	}
	fputc('\n', out);
	for (size_t i = 0; i < ex.n; i++) {
		unsigned ln = ex.first + (unsigned)i;

		fprintf(out, "      %c %5u  %s\n", ln == ex.mark ? '>' : ' ', ln, ex.lines[i]);
	}
	return 0;
}

static void text_summary(FILE *out, const struct witch_profile *p,
			 const struct witch_totals *t)
{
	bool others = false;

	fprintf(out, "%-19s%zu", "profiles:", p->nfiles);
	witch_print_pids(out, p);
	fputc('\n', out);
	if (p->exe)
		fprintf(out, "%-19s%s\n", "program:", p->exe);
	fprintf(out, "%-19s%s (%s)\n", "client:", witch_client_name(p->client),
		witch_client_what(p->client));
	fprintf(out, "%-19s%s", "sampler:", p->sampler);
	if (p->has_period && !p->period_mixed)
		fprintf(out, " (period %" PRIu64 ")", p->period);
	else if (p->period_mixed)
		fprintf(out, " (periods differ between profiles)");
	if (p->sampler_why)
		fprintf(out, "; no PMU sampler: %s", p->sampler_why);
	fputc('\n', out);
	fprintf(out, "%-19s%.0f", "samples:", witch_profile_stat(p, "samples"));
	double overhead, rate;
	if (witch_overhead_of(p, &overhead, &rate) == 0)
		fprintf(out, " (%.0f ticks per CPU-second; the profiler's cost, as it measured it: "
			"%.1f%% of the program's CPU time)", rate, overhead * 100);
	fputc('\n', out);
	double blocked = witch_profile_stat(p, "threads_signal_blocked");
	double unprofiled = witch_profile_stat(p, "threads_unprofiled");
	if (blocked > 0)
		fprintf(out, "%-19s%.0f of %.0f threads began with the profiler's signal blocked "
			"(its mask names that signal): they were not sampled\n",
			"note:", blocked, witch_profile_stat(p, "threads"));
	if (unprofiled > 0)
		fprintf(out, "%-19s%.0f threads were not profiled: WITCH_MEMORY_MB was reached\n",
			"note:", unprofiled);
	/* fdguard.h: a dup2 onto one of the runtime's numbers is the program's. */
	double taken = witch_profile_stat(p, "fd_numbers_taken");
	if (taken > 0)
		fprintf(out, "%-19sthe program replaced %.0f of the profiler's descriptors (dup2 onto "
			"their numbers): sampling or watching stopped where they served\n",
			"note:", taken);
	fprintf(out, "%-19s%.0f\n", "watchpoints armed:",
		witch_profile_stat(p, "watchpoints_armed"));
	double traced = witch_profile_stat(p, "verdicts_traced");
	if (traced > 0) /* decided by the run ahead, no watchpoint (sample.c) */
		fprintf(out, "%-19s%.0f (and %.0f samples decided from the window, no trap)\n",
			"traps:", witch_profile_stat(p, "traps"), traced);
	else
		fprintf(out, "%-19s%.0f\n", "traps:", witch_profile_stat(p, "traps"));
	/* Without traps a share of the samples found no verdict: say how much
	 * of the sampled bytes the verdicts stand for. */
	if (strcmp(p->verdicts, "traps")) {
		fprintf(out, "%-19s%s", "verdicts:", witch_verdicts_what(p->verdicts));
		if (t->sampled > 0)
			fprintf(out, "; they stand for %.1f%% of the sampled bytes",
				100 * (t->waste + t->use) / t->sampled);
		fputc('\n', out);
	}
	fprintf(out, "%-19s", "waste:");
	witch_print_bytes(out, t->waste);
	if (t->has_waste_approx) {
		fputs(", approximate part ", out);
		witch_print_bytes(out, t->waste_approx);
	}
	if (p->has_tolerance && !p->tolerance_mixed)
		fprintf(out, " (floating point within %g%% counts as the same value)",
			p->tolerance * 100);
	else if (p->tolerance_mixed)
		fputs(" (FP tolerances differ between profiles)", out);
	fprintf(out, "\n%-19s", "use:");
	witch_print_bytes(out, t->use);
	fprintf(out, "\n%-19s%.4f (waste / (waste + use)", "fraction:",
		witch_fraction(t->waste, t->use));
	/* The run-ahead's verdicts are a part, and not a random one: say so
	 * where the fraction is read. */
	if (!strcmp(p->verdicts, "window"))
		fputs(", of the bytes the run-ahead decided only", out);
	fputs(")\n", out);
	for (size_t i = 0; i < p->nstats; i++) {
		if (is_summary_stat(p->stats[i].name))
			continue;
		fprintf(out, "%s%s ", others ? ", " : "other counters:    ",
			p->stats[i].name);
		json_out_num(out, p->stats[i].value);
		others = true;
	}
	if (others)
		fputc('\n', out);
}

/* Without pairs (WITCH_WATCHPOINTS=0, or no trap here): what the samples
 * stood for, by context, so the profile still says where the bytes went. */
#define TEXT_SAMPLED_MAX 10

static int text_sampled(FILE *out, const struct witch_view *v)
{
	struct witch_path pb = { 0 };
	double total;
	size_t n;
	uint32_t *order;
	int rc = witch_sampled_by_bytes(v->p, &order, &n, &total);

	if (rc || n == 0) {
		free(order);
		return rc;
	}
	fprintf(out, "\nbytes the samples stand for, by context (top %zu of %zu):\n",
		n < TEXT_SAMPLED_MAX ? n : TEXT_SAMPLED_MAX, n);
	for (size_t k = 0; k < n && k < TEXT_SAMPLED_MAX; k++) {
		double b = v->p->nodes[order[k]].sampled;
		fprintf(out, "\n#%zu  share %.2f%%  ", k + 1, 100 * witch_share(b, total));
		witch_print_bytes(out, b);
		fputc('\n', out);
		if ((rc = witch_path_collect(v->sym, v->p, order[k], &pb)) ||
		    (rc = text_frames(out, &pb, v->width)))
			break;
	}
	witch_path_free(&pb);
	free(order);
	return rc;
}

/* A heap object's allocation context, under its name. */
static int text_alloc(FILE *out, const struct witch_view *v, const struct witch_object_row *r,
		      struct witch_path *pb)
{
	int rc;

	if (!r->alloc)
		return 0;
	fputs("    allocated at\n", out);
	if ((rc = witch_path_collect(v->sym, v->p, r->alloc, pb)))
		return rc;
	return text_frames(out, pb, v->width);
}

/* The size column: heap, static and tls objects have one. */
static void text_size(FILE *out, const struct witch_object_row *r)
{
	if (r->kind == WITCH_OBJECT_STACK || r->kind == WITCH_OBJECT_UNKNOWN)
		return;
	fputs("  size ", out);
	witch_print_bytes(out, (double)r->size);
}

/*
 * The objects by waste, after the pairs:
 *
 *     #1  share 50.00%  waste 200 bytes  use 60 bytes  heap  size 400 bytes
 *         heap from main (/src/prog.c:45)
 *         allocated at
 *           #0  main at /src/prog.c:45 in /bin/prog [0x55555555522b]
 */
static int text_objects(FILE *out, const struct witch_view *v)
{
	const struct witch_objects *o = v->objects;
	struct witch_path pb = { 0 };
	int rc = 0;

	if (!o->n)
		return 0;
	if (v->objects_shown == o->n)
		fprintf(out, "\n%zu object%s by waste:\n", o->n, o->n > 1 ? "s" : "");
	else
		fprintf(out, "\ntop %zu of %zu objects by waste:\n", v->objects_shown, o->n);
	for (size_t k = 0; k < v->objects_shown && !rc; k++) {
		const struct witch_object_row *r = &o->rows[k];

		fprintf(out, "\n#%zu  share %.2f%%  waste ", k + 1,
			100 * witch_share(r->waste, v->t.waste));
		witch_print_bytes(out, r->waste);
		fputs("  use ", out);
		witch_print_bytes(out, r->use);
		fprintf(out, "  %s", witch_object_kind_name(r->kind));
		text_size(out, r);
		if (r->sampled > 0) {
			fputs("  sampled ", out);
			witch_print_bytes(out, r->sampled);
		}
		fprintf(out, "\n    %s\n", r->name);
		rc = text_alloc(out, v, r, &pb);
	}
	witch_path_free(&pb);
	return rc;
}

/* Without pairs: the objects by the bytes their samples stand for. */
static int text_objects_sampled(FILE *out, const struct witch_view *v)
{
	const struct witch_objects *o = v->objects;
	struct witch_path pb = { 0 };
	uint32_t *order;
	size_t n, shown;
	int rc = witch_objects_by_sampled(o, &order, &n);

	if (rc || n == 0) {
		free(order);
		return rc;
	}
	shown = n < v->objects_shown ? n : v->objects_shown;
	fprintf(out, "\nbytes the samples stand for, by object (top %zu of %zu):\n", shown, n);
	for (size_t k = 0; k < shown && !rc; k++) {
		const struct witch_object_row *r = &o->rows[order[k]];

		fprintf(out, "\n#%zu  share %.2f%%  ", k + 1,
			100 * witch_share(r->sampled, o->sampled_total));
		witch_print_bytes(out, r->sampled);
		fprintf(out, "  %s", witch_object_kind_name(r->kind));
		text_size(out, r);
		fprintf(out, "\n    %s\n", r->name);
		rc = text_alloc(out, v, r, &pb);
	}
	witch_path_free(&pb);
	free(order);
	return rc;
}

/* A pair's parts on objects, on one line under its heading; the first
 * TEXT_PAIR_OBJECTS of them (the objects section has all). */
#define TEXT_PAIR_OBJECTS 3

static void text_pair_objects(FILE *out, const struct witch_view *v, uint32_t pair)
{
	const struct witch_objects *o = v->objects;
	size_t first, end;

	if (!o->n)
		return;
	first = o->pair_first[pair];
	end = o->pair_first[pair + 1];
	if (first == end)
		return;
	fputs("    objects: ", out);
	for (size_t i = first; i < end && i < first + TEXT_PAIR_OBJECTS; i++) {
		/* A use-only pair's parts are its use. */
		bool wasted = v->p->pairs[pair].waste > 0;

		fprintf(out, "%s%s %s ", i > first ? "; " : "", o->rows[o->parts[i].row].name,
			wasted ? "waste" : "use");
		witch_print_bytes(out, wasted ? o->parts[i].waste : o->parts[i].use);
	}
	if (end - first > TEXT_PAIR_OBJECTS)
		fprintf(out, "; and %zu more", end - first - TEXT_PAIR_OBJECTS);
	fputc('\n', out);
}

int witch_text_write(FILE *out, const struct witch_view *v)
{
	const struct witch_profile *p = v->p;
	const struct witch_totals *t = &v->t;
	size_t shown = v->shown;
	struct witch_path pb = { 0 };
	int rc = 0;

	text_summary(out, p, t);
	if (!p->npairs) {
		fprintf(out, "\nno pairs: %s\n", witch_no_pairs_why(p->verdicts));
		rc = text_sampled(out, v);
		return rc ? rc : text_objects_sampled(out, v);
	}
	if (shown == p->npairs)
		fprintf(out, "\n%zu pair%s by waste:\n", p->npairs,
			p->npairs > 1 ? "s" : "");
	else
		fprintf(out, "\ntop %zu of %zu pairs by waste:\n", shown,
			p->npairs);
	for (size_t k = 0; k < shown; k++) {
		const struct witch_pair *q = &p->pairs[v->order[k]];

		fprintf(out, "\n#%zu  share %.2f%%  waste ", k + 1,
			100 * witch_share(q->waste, t->waste));
		witch_print_bytes(out, q->waste);
		if (q->has_waste_approx) {
			fputs(" (approximate ", out);
			witch_print_bytes(out, q->waste_approx);
			fputc(')', out);
		}
		fputs("  use ", out);
		witch_print_bytes(out, q->use);
		fprintf(out, "  traps %" PRIu64 "\n", q->traps);
		text_pair_objects(out, v, v->order[k]);

		fprintf(out, "    %s\n", witch_watch_words(p->client, q->waste > 0));
		if ((rc = witch_path_collect(v->sym, p, q->watch, &pb)) ||
		    (rc = text_frames(out, &pb, v->width)))
			goto out;
		fprintf(out, "    %s\n", witch_trap_words(p->client, q->waste > 0));
		if ((rc = witch_path_collect(v->sym, p, q->trap, &pb)) ||
		    (rc = text_frames(out, &pb, v->width)))
			goto out;
		if (!v->src)
			continue;
		if ((rc = witch_path_collect(v->sym, p, q->watch, &pb)) ||
		    (rc = text_source(out, v->src, witch_watch_words(p->client, q->waste > 0), &pb)) ||
		    (rc = witch_path_collect(v->sym, p, q->trap, &pb)) ||
		    (rc = text_source(out, v->src, witch_trap_words(p->client, q->waste > 0), &pb)))
			goto out;
	}
	rc = text_objects(out, v);
out:
	witch_path_free(&pb);
	return rc;
}
