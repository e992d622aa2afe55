/* json_report: summary and top pairs as JSON (see json_report.h). */
#include "json_report.h"

#include "json_out.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void json_frames(FILE *out, const struct witch_path *pb)
{
	fputc('[', out);
	for (size_t i = 0; i < pb->n; i++) {
		const struct witch_frame *f = pb->frames[i];

		fputs(i ? ",\n      {" : "\n      {", out);
		fputs("\"function\":", out);
		json_out_str(out, f->function);
		if (f->raw) {
			fputs(", \"raw\":", out);
			json_out_str(out, f->raw);
		}
		fputs(", \"file\":", out);
		json_out_str(out, f->file);
		fprintf(out, ", \"line\":%u, \"module\":", f->line);
		json_out_str(out, f->module);
		fprintf(out, ", \"address\":\"0x%" PRIx64 "\", \"offset\":\"0x%" PRIx64 "\"",
			f->address, f->offset);
		if (f->inlined)
			fputs(", \"inlined\":true", out);
		fputc('}', out);
	}
	fputc(']', out);
}

/* The contexts whose samples stand for the most bytes (`sampled` records):
 * what the sampler saw, apart from what the watchpoints made of it.  At
 * most JSON_SAMPLED_MAX, largest first, all of them with --top 0 (weights
 * by function, against the oracle's bytes: bench/sampled.py); the total
 * counts them all. */
#define JSON_SAMPLED_MAX 200

static int json_sampled(FILE *out, const struct witch_view *v, struct witch_path *pb)
{
	const struct witch_profile *p = v->p;
	double total;
	size_t n;
	uint32_t *order;
	int rc = witch_sampled_by_bytes(p, &order, &n, &total);

	if (rc)
		return rc;
	fputs(",\n \"sampled_total\":", out);
	json_out_num(out, total);
	fputs(", \"sampled\":[", out);
	size_t listed = v->sampled_all ? n : JSON_SAMPLED_MAX;
	for (size_t k = 0; k < n && k < listed; k++) {
		fputs(k ? ",\n  {\"bytes\":" : "\n  {\"bytes\":", out);
		json_out_num(out, p->nodes[order[k]].sampled);
		fputs(", \"share\":", out);
		json_out_num(out, witch_share(p->nodes[order[k]].sampled, total));
		fputs(",\n   \"context\":", out);
		if ((rc = witch_path_collect(v->sym, p, order[k], pb)))
			break;
		json_frames(out, pb);
		fputc('}', out);
	}
	fputc(']', out);
	free(order);
	return rc;
}

/* A pair's parts on objects, by waste: ,"objects":[{"kind","name","waste","use"}];
 * nothing for a pair without pair_object records: an empty list would say
 * its waste fell on no object, when the profile did not say where. */
static void json_pair_objects(FILE *out, const struct witch_view *v, uint32_t pair)
{
	const struct witch_objects *o = v->objects;
	size_t first = o->n ? o->pair_first[pair] : 0, end = o->n ? o->pair_first[pair + 1] : 0;

	if (first == end)
		return;
	fputs(",\n   \"objects\":[", out);
	for (size_t i = first; i < end; i++) {
		const struct witch_object_part *pt = &o->parts[i];

		fputs(i > first ? ",\n     {\"kind\":" : "\n     {\"kind\":", out);
		json_out_str(out, witch_object_kind_name(o->rows[pt->row].kind));
		fputs(", \"name\":", out);
		json_out_str(out, o->rows[pt->row].name);
		fputs(", \"waste\":", out);
		json_out_num(out, pt->waste);
		fputs(", \"use\":", out);
		json_out_num(out, pt->use);
		fputc('}', out);
	}
	fputc(']', out);
}

/* Every object, by waste; "alloc" is a heap object's allocation context. */
static int json_objects(FILE *out, const struct witch_view *v, struct witch_path *pb)
{
	const struct witch_objects *o = v->objects;
	int rc;

	fputs(",\n \"objects\":[", out);
	for (size_t k = 0; k < o->n; k++) {
		const struct witch_object_row *r = &o->rows[k];

		fputs(k ? ",\n  {\"kind\":" : "\n  {\"kind\":", out);
		json_out_str(out, witch_object_kind_name(r->kind));
		fputs(", \"name\":", out);
		json_out_str(out, r->name);
		fputs(", \"size\":", out);
		json_out_num(out, (double)r->size);
		fputs(", \"waste\":", out);
		json_out_num(out, r->waste);
		fputs(", \"use\":", out);
		json_out_num(out, r->use);
		fputs(", \"share\":", out);
		json_out_num(out, witch_share(r->waste, v->t.waste));
		fputs(", \"sampled\":", out);
		json_out_num(out, r->sampled);
		fputs(",\n   \"alloc\":", out);
		if (r->alloc) {
			if ((rc = witch_path_collect(v->sym, v->p, r->alloc, pb)))
				return rc;
			json_frames(out, pb);
		} else {
			fputs("[]", out);
		}
		fputc('}', out);
	}
	fputc(']', out);
	return 0;
}

int witch_json_write(FILE *out, const struct witch_view *v)
{
	const struct witch_profile *p = v->p;
	const struct witch_totals *t = &v->t;
	size_t shown = v->shown;
	struct witch_path pb = { 0 };
	int rc = 0;

	fputs("{\"client\":", out);
	json_out_str(out, witch_client_name(p->client));
	fputs(", \"sampler\":", out);
	json_out_str(out, p->sampler);
	if (p->sampler_why) {
		fputs(", \"sampler_why\":", out);
		json_out_str(out, p->sampler_why);
	}
	fputs(", \"verdicts\":", out);
	json_out_str(out, p->verdicts);
	fputs(",\n \"samples\":", out);
	json_out_num(out, witch_profile_stat(p, "samples"));
	double overhead, rate;
	if (witch_overhead_of(p, &overhead, &rate) == 0) {
		fputs(", \"overhead_estimate\":", out);
		json_out_num(out, overhead);
		fputs(", \"tick_rate\":", out);
		json_out_num(out, rate);
	}
	fputs(", \"watchpoints_armed\":", out);
	json_out_num(out, witch_profile_stat(p, "watchpoints_armed"));
	fputs(", \"traps\":", out);
	json_out_num(out, witch_profile_stat(p, "traps"));
	fputs(",\n \"waste\":", out);
	json_out_num(out, t->waste);
	fputs(", \"use\":", out);
	json_out_num(out, t->use);
	fputs(", \"fraction\":", out);
	json_out_num(out, witch_fraction(t->waste, t->use));
	if (t->has_waste_approx) {
		fputs(", \"waste_approx\":", out);
		json_out_num(out, t->waste_approx);
	}
	if (p->has_tolerance && !p->tolerance_mixed) {
		fputs(", \"tolerance\":", out);
		json_out_num(out, p->tolerance);
	}
	fprintf(out, ",\n \"profiles\":%zu, \"pids\":[", p->nfiles);
	for (size_t i = 0; i < p->npids; i++)
		fprintf(out, "%s%" PRIu64, i ? "," : "", p->pids[i]);
	fputc(']', out);
	if (p->exe) {
		fputs(", \"exe\":", out);
		json_out_str(out, p->exe);
	}
	if (p->has_period && !p->period_mixed)
		fprintf(out, ", \"period\":%" PRIu64, p->period);
	fputs(",\n \"stats\":{", out);
	for (size_t i = 0; i < p->nstats; i++) {
		fputs(i ? ", " : "", out);
		json_out_str(out, p->stats[i].name);
		fputc(':', out);
		json_out_num(out, p->stats[i].value);
	}
	fputs("},\n \"pairs\":[", out);
	for (size_t k = 0; k < shown; k++) {
		const struct witch_pair *q = &p->pairs[v->order[k]];

		fputs(k ? ",\n  {\"waste\":" : "\n  {\"waste\":", out);
		json_out_num(out, q->waste);
		fputs(", \"use\":", out);
		json_out_num(out, q->use);
		fputs(", \"share\":", out);
		json_out_num(out, witch_share(q->waste, t->waste));
		fprintf(out, ", \"traps\":%" PRIu64, q->traps);
		if (q->has_waste_approx) {
			fputs(", \"waste_approx\":", out);
			json_out_num(out, q->waste_approx);
		}
		fputs(",\n   \"watch\":", out);
		if ((rc = witch_path_collect(v->sym, p, q->watch, &pb)))
			goto out;
		json_frames(out, &pb);
		fputs(",\n   \"trap\":", out);
		if ((rc = witch_path_collect(v->sym, p, q->trap, &pb)))
			goto out;
		json_frames(out, &pb);
		json_pair_objects(out, v, v->order[k]);
		fputc('}', out);
	}
	fputc(']', out);
	if ((rc = json_objects(out, v, &pb)) || (rc = json_sampled(out, v, &pb)))
		goto out;
	fputs("}\n", out);
out:
	witch_path_free(&pb);
	return rc;
}
