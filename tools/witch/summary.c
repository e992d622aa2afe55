/* summary: totals, pair order and paths shared by every view; see summary.h. */
#include "summary.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int witch_load_profiles(struct witch_profile *p, char *const *paths, size_t n)
{
	char err[1024];

	for (size_t i = 0; i < n; i++) {
		int rc = witch_profile_read(p, paths[i], err, sizeof(err));

		if (rc) {
			fprintf(stderr, "witch: %s\n", err);
			return rc;
		}
	}
	return 0;
}

void witch_totals_of(const struct witch_profile *p, struct witch_totals *t)
{
	*t = (struct witch_totals){ 0 };
	for (size_t i = 0; i < p->npairs; i++) {
		const struct witch_pair *q = &p->pairs[i];

		t->waste += q->waste;
		t->use += q->use;
		t->traps += q->traps;
		if (q->has_waste_approx) {
			t->waste_approx += q->waste_approx;
			t->has_waste_approx = true;
		}
	}
	for (size_t i = 0; i < p->nnodes; i++)
		t->sampled += p->nodes[i].sampled;
}

double witch_fraction(double waste, double use)
{
	return waste + use > 0 ? waste / (waste + use) : 0;
}

double witch_share(double waste, double total_waste)
{
	return total_waste > 0 ? waste / total_waste : 0;
}

/* By waste, then use, then traps; equal pairs keep profile order. */
static int cmp_pairs(const void *a, const void *b, void *arg)
{
	const struct witch_pair *pairs = arg;
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	const struct witch_pair *x = &pairs[ia], *y = &pairs[ib];

	if (x->waste != y->waste)
		return x->waste > y->waste ? -1 : 1;
	if (x->use != y->use)
		return x->use > y->use ? -1 : 1;
	if (x->traps != y->traps)
		return x->traps > y->traps ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

int witch_pairs_by_waste(const struct witch_profile *p, uint32_t **order)
{
	uint32_t *o = malloc((p->npairs ? p->npairs : 1) * sizeof(*o));

	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < p->npairs; i++)
		o[i] = (uint32_t)i;
	/* Casting away const is safe: cmp_pairs only reads. */
	qsort_r(o, p->npairs, sizeof(*o), cmp_pairs, (void *)p->pairs);
	*order = o;
	return 0;
}

static int cmp_sampled(const void *a, const void *b, void *arg)
{
	const struct witch_node *n = arg;
	double x = n[*(const uint32_t *)a].sampled, y = n[*(const uint32_t *)b].sampled;
	return x > y ? -1 : x < y ? 1 : 0;
}

int witch_sampled_by_bytes(const struct witch_profile *p, uint32_t **order, size_t *n,
			   double *total)
{
	uint32_t *o = malloc((p->nnodes ? p->nnodes : 1) * sizeof(*o));

	if (!o)
		return -ENOMEM;
	*n = 0;
	*total = 0;
	for (size_t i = 1; i < p->nnodes; i++)
		if (p->nodes[i].sampled > 0) {
			o[(*n)++] = (uint32_t)i;
			*total += p->nodes[i].sampled;
		}
	/* Casting away const is safe: cmp_sampled only reads. */
	qsort_r(o, *n, sizeof(*o), cmp_sampled, (void *)p->nodes);
	*order = o;
	return 0;
}

int witch_path_collect(struct witch_symbolizer *s, const struct witch_profile *p,
		       uint32_t node, struct witch_path *path)
{
	path->n = 0;
	/* Parents always have smaller indices, so this walk ends at 0. */
	for (; node != 0; node = p->nodes[node].parent) {
		const struct witch_frame *fr;
		size_t nfr;
		int rc = witch_symbolize_node(s, node, &fr, &nfr);

		if (rc)
			return rc;
		for (size_t i = 0; i < nfr; i++) {
			if (path->n == path->cap) {
				size_t ncap = path->cap ? path->cap * 2 : 32;
				const struct witch_frame **nf =
					realloc(path->frames, ncap * sizeof(*nf));

				if (!nf)
					return -ENOMEM;
				path->frames = nf;
				path->cap = ncap;
			}
			path->frames[path->n++] = &fr[i];
		}
	}
	return 0;
}

void witch_path_free(struct witch_path *path)
{
	free(path->frames);
	*path = (struct witch_path){ 0 };
}

const char *witch_marker_frame(enum witch_client c)
{
	switch (c) {
	case WITCH_CLIENT_DEAD:
		return "KILLED_BY";
	case WITCH_CLIENT_SILENT:
		return "OVERWRITTEN_BY_SAME_VALUE";
	case WITCH_CLIENT_LOAD:
		return "RELOADED_BY";
	}
	return "WASTED_BY";
}

int witch_overhead_of(const struct witch_profile *p, double *overhead, double *rate)
{
	double clock = witch_profile_stat(p, "clock_ns");
	double handler = witch_profile_stat(p, "cost_handler_ns");
	double kernel = witch_profile_stat(p, "cost_kernel_ns");
	double fixed = witch_profile_stat(p, "cost_startup_ns"); /* start-up and exit */
	double dr = witch_profile_stat(p, "cost_dr_ns"); /* the kernel's work, slower */
	double heap = witch_profile_stat(p, "cost_heap_ns"); /* recording tracked blocks */
	double inl = witch_profile_stat(p, "cost_inline_ns"); /* ticks in interposers, wrappers */
	double flog = witch_profile_stat(p, "cost_faultlog_ns"); /* the page-fault log's records */
	double pieces = witch_profile_stat(p, "cost_pieces_ns"); /* copies in pieces while armed */
	double cpu = witch_profile_stat(p, "cpu_ns");    /* user and system, all told */

	/* The clock counts the program's user time and the handlers'. */
	if (!(clock > handler) || handler <= 0)
		return -ENODATA;
	double spent = handler + kernel + fixed + dr + heap + inl + flog + pieces;
	/* The program's CPU time: the process's less the profiler's, or (a
	 * profile without cpu_ns) the clock's user time less the handlers'. */
	double program = cpu > spent ? cpu - spent : clock - handler;
	*overhead = spent / program;
	*rate = witch_profile_stat(p, "ticks") / (clock / 1e9);
	return 0;
}

const char *witch_path_function(const struct witch_path *path)
{
	for (size_t i = 0; i < path->n; i++)
		if (!path->frames[i]->inlined)
			return path->frames[i]->function;
	return path->frames[0]->function;
}
