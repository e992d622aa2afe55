/*
 * profile_read: the model of one or more profiles; each file is parsed
 * whole (profile_parse.c) and only then merged here (see profile_read.h).
 */
#include "profile_read.h"

#include "index_table.h"
#include "profile_parse.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct witch_profile_index {
	struct index_table nodes;	/* by (parent, module, offset) */
	struct index_table pairs;	/* by (watch, trap) */
	struct index_table objects;	/* by kind and what names it */
	struct index_table pair_objects;	/* by (pair, object) */
	/* Allocated lengths of the model's arrays. */
	size_t cap_modules, cap_nodes, cap_pairs, cap_stats, cap_objects, cap_pair_objects;
};

void witch_profile_init(struct witch_profile *p)
{
	memset(p, 0, sizeof(*p));
}

const char *witch_object_kind_name(enum witch_object_kind k)
{
	switch (k) {
	case WITCH_OBJECT_HEAP:
		return "heap";
	case WITCH_OBJECT_STATIC:
		return "static";
	case WITCH_OBJECT_TLS:
		return "tls";
	case WITCH_OBJECT_STACK:
		return "stack";
	case WITCH_OBJECT_UNKNOWN:
		break;
	}
	return "unknown";
}

const char *witch_client_name(enum witch_client c)
{
	switch (c) {
	case WITCH_CLIENT_DEAD:
		return "dead";
	case WITCH_CLIENT_SILENT:
		return "silent";
	case WITCH_CLIENT_LOAD:
		return "load";
	}
	return "?";
}

double witch_profile_stat(const struct witch_profile *p, const char *name)
{
	for (size_t i = 0; i < p->nstats; i++)
		if (!strcmp(p->stats[i].name, name))
			return p->stats[i].value;
	return 0;
}

static bool same_str(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a, b);
}

static uint64_t node_hash(uint32_t parent, uint32_t module, uint64_t offset)
{
	return index_hash_mix(index_hash_mix(index_hash_u64(parent), module),
			      offset);
}

static uint64_t pair_hash(uint32_t watch, uint32_t trap)
{
	return index_hash_mix(index_hash_u64(watch), trap);
}

/* The model's module for (path, build-id), appended if new. */
static int merge_module(struct witch_profile *p, size_t *cap,
			const struct raw_module *m, uint32_t *out)
{
	struct witch_module *nm;
	int rc;

	/* Few modules per process: a linear search is fine. */
	for (size_t i = 0; i < p->nmodules; i++) {
		if (!strcmp(p->modules[i].path, m->path) &&
		    same_str(p->modules[i].build_id, m->build_id)) {
			*out = (uint32_t)i;
			return 0;
		}
	}
	if (p->nmodules >= MAX_ENTRIES)
		return -ENOMEM;
	rc = profile_grow((void **)&p->modules, cap, p->nmodules, sizeof(*p->modules));
	if (rc)
		return rc;
	nm = &p->modules[p->nmodules];
	memset(nm, 0, sizeof(*nm));
	nm->path = strdup(m->path);
	if (!nm->path)
		return -ENOMEM;
	if (m->build_id) {
		nm->build_id = strdup(m->build_id);
		if (!nm->build_id) {
			free(nm->path);
			return -ENOMEM;
		}
	}
	nm->base = m->base;
	nm->start = m->start;
	nm->end = m->end;
	*out = (uint32_t)p->nmodules++;
	return 0;
}

/* The raw module whose executable range holds pc, or NULL. */
static const struct raw_module *module_of(const struct raw_profile *r,
					  const uint32_t *by_start, uint64_t pc)
{
	size_t lo = 0, hi = r->nmodules;

	/* Last module with start <= pc; ranges do not overlap (checked). */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->modules[by_start[mid]].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo > 0) {
		const struct raw_module *m = &r->modules[by_start[lo - 1]];

		if (m->start == m->end) {
			lo--;	/* empty range: look further down */
			continue;
		}
		return pc < m->end ? m : NULL;
	}
	return NULL;
}

static int merge_node(struct witch_profile *p, size_t *cap, uint32_t parent,
		      uint32_t module, uint64_t offset, uint32_t *out)
{
	uint64_t h = node_hash(parent, module, offset);
	struct index_probe pr;
	struct witch_node *n;
	uint32_t idx;
	int rc;

	index_table_probe_start(&p->index->nodes, h, &pr);
	while (index_table_probe_next(&p->index->nodes, &pr, &idx)) {
		n = &p->nodes[idx];
		if (n->parent == parent && n->module == module &&
		    n->offset == offset) {
			*out = idx;
			return 0;
		}
	}
	if (p->nnodes >= MAX_ENTRIES)
		return -ENOMEM;
	rc = profile_grow((void **)&p->nodes, cap, p->nnodes, sizeof(*p->nodes));
	if (rc)
		return rc;
	rc = index_table_insert(&p->index->nodes, h, (uint32_t)p->nnodes);
	if (rc)
		return rc;
	n = &p->nodes[p->nnodes];
	n->parent = parent;
	n->module = module;
	n->offset = offset;
	n->sampled = 0;
	/* Unsigned wrap-around keeps pc = base + offset exact either way. */
	n->pc = module == WITCH_NO_MODULE ? offset :
					    p->modules[module].base + offset;
	*out = (uint32_t)p->nnodes++;
	return 0;
}

/* The model pair of (watch, trap); it is there once its file's pairs are merged. */
static bool find_pair(const struct witch_profile *p, uint32_t watch, uint32_t trap,
		      uint32_t *out)
{
	struct index_probe pr;

	index_table_probe_start(&p->index->pairs, pair_hash(watch, trap), &pr);
	while (index_table_probe_next(&p->index->pairs, &pr, out))
		if (p->pairs[*out].watch == watch && p->pairs[*out].trap == trap)
			return true;
	return false;
}

static bool same_object(const struct witch_object *o, enum witch_object_kind kind,
			uint32_t node, const char *module, const char *symbol)
{
	return o->kind == kind && o->node == node && same_str(o->module, module) &&
	       same_str(o->symbol, symbol);
}

/* The model object of this identity, appended if new: heap and stack by
 * node, static and tls by (module path, symbol), unknown once. */
static int merge_object(struct witch_profile *p, enum witch_object_kind kind, uint32_t node,
			const char *module, const char *symbol, uint64_t addr, uint32_t *out)
{
	uint64_t h = index_hash_mix(index_hash_mix(index_hash_u64(kind), node),
				    index_hash_str(index_hash_str(0, module ? module : ""),
						   symbol ? symbol : ""));
	struct witch_object *o;
	struct index_probe pr;
	int rc;

	index_table_probe_start(&p->index->objects, h, &pr);
	while (index_table_probe_next(&p->index->objects, &pr, out))
		if (same_object(&p->objects[*out], kind, node, module, symbol))
			return 0;
	if (p->nobjects >= MAX_ENTRIES)
		return -ENOMEM;
	rc = profile_grow((void **)&p->objects, &p->index->cap_objects, p->nobjects,
			  sizeof(*p->objects));
	if (rc)
		return rc;
	o = &p->objects[p->nobjects];
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->node = node;
	o->addr = addr;
	if ((module && !(o->module = strdup(module))) ||
	    (symbol && !(o->symbol = strdup(symbol)))) {
		free(o->module);
		return -ENOMEM;
	}
	rc = index_table_insert(&p->index->objects, h, (uint32_t)p->nobjects);
	if (rc) {
		free(o->module);
		free(o->symbol);
		return rc;
	}
	*out = (uint32_t)p->nobjects++;
	return 0;
}

/* Raw object reference (index + 1, 0 unknown) to its model object. */
static int model_object(struct witch_profile *p, const struct raw_profile *r, uint32_t ref,
			uint32_t *out)
{
	if (ref) {
		*out = r->objects[ref - 1].merged;
		return 0;
	}
	return merge_object(p, WITCH_OBJECT_UNKNOWN, 0, NULL, NULL, 0, out);
}

static int merge_pair_object(struct witch_profile *p, uint32_t pair, uint32_t object,
			     const struct raw_pair_object *rpo)
{
	uint64_t h = pair_hash(pair, object);
	struct witch_pair_object *q;
	struct index_probe pr;
	uint32_t idx;
	int rc;

	index_table_probe_start(&p->index->pair_objects, h, &pr);
	while (index_table_probe_next(&p->index->pair_objects, &pr, &idx)) {
		q = &p->pair_objects[idx];
		if (q->pair == pair && q->object == object)
			goto add;
	}
	rc = profile_grow((void **)&p->pair_objects, &p->index->cap_pair_objects,
			  p->npair_objects, sizeof(*p->pair_objects));
	if (rc)
		return rc;
	rc = index_table_insert(&p->index->pair_objects, h, (uint32_t)p->npair_objects);
	if (rc)
		return rc;
	q = &p->pair_objects[p->npair_objects++];
	memset(q, 0, sizeof(*q));
	q->pair = pair;
	q->object = object;
add:
	q->waste += rpo->waste;
	q->use += rpo->use;
	q->waste_approx += rpo->waste_approx;
	return 0;
}

/* The objects of one file, their sampled bytes and their parts of pairs. */
static int merge_objects(struct witch_profile *p, struct raw_profile *r,
			 const uint32_t *by_start)
{
	int rc;

	for (size_t i = 0; i < r->nobjects; i++) {
		struct raw_object *o = &r->objects[i];
		uint32_t node = 0;

		if (o->kind == WITCH_OBJECT_HEAP) {
			node = r->nodes[o->alloc - 1].merged;
		} else if (o->kind == WITCH_OBJECT_STACK) {
			/* A node of its own for the pc: module-relative like
			 * every pc, and named by the symbolizer like them. */
			const struct raw_module *m = module_of(r, by_start, o->addr);

			rc = merge_node(p, &p->index->cap_nodes, 0, m ? m->merged : WITCH_NO_MODULE,
					m ? o->addr - m->base : o->addr, &node);
			if (rc)
				return rc;
		}
		rc = merge_object(p, o->kind, node, o->module, o->symbol, o->addr, &o->merged);
		if (rc)
			return rc;
		if (o->size > p->objects[o->merged].size)
			p->objects[o->merged].size = o->size;
	}
	for (size_t i = 0; i < r->nobject_sampled; i++) {
		uint32_t obj;

		if ((rc = model_object(p, r, r->object_sampled[i].object, &obj)))
			return rc;
		p->objects[obj].sampled += r->object_sampled[i].bytes;
	}
	for (size_t i = 0; i < r->npair_objects; i++) {
		const struct raw_pair_object *po = &r->pair_objects[i];
		uint32_t pair, obj;

		/* raw_finish checked that the file has this pair. */
		if (!find_pair(p, r->nodes[po->watch - 1].merged, r->nodes[po->trap - 1].merged,
			       &pair))
			return -EINVAL;
		if ((rc = model_object(p, r, po->object, &obj)) ||
		    (rc = merge_pair_object(p, pair, obj, po)))
			return rc;
	}
	return 0;
}

static int merge_pair(struct witch_profile *p, size_t *cap,
		      const struct raw_pair *rp, uint32_t watch, uint32_t trap)
{
	uint64_t h = pair_hash(watch, trap);
	struct index_probe pr;
	struct witch_pair *q;
	uint32_t idx;
	int rc;

	index_table_probe_start(&p->index->pairs, h, &pr);
	while (index_table_probe_next(&p->index->pairs, &pr, &idx)) {
		q = &p->pairs[idx];
		if (q->watch == watch && q->trap == trap)
			goto add;
	}
	if (p->npairs >= MAX_ENTRIES)
		return -ENOMEM;
	rc = profile_grow((void **)&p->pairs, cap, p->npairs, sizeof(*p->pairs));
	if (rc)
		return rc;
	rc = index_table_insert(&p->index->pairs, h, (uint32_t)p->npairs);
	if (rc)
		return rc;
	q = &p->pairs[p->npairs++];
	memset(q, 0, sizeof(*q));
	q->watch = watch;
	q->trap = trap;
add:
	/* A pair repeated within one file, or across files, is summed. */
	q->waste += rp->waste;
	q->use += rp->use;
	q->traps += rp->traps;
	if (rp->has_waste_approx) {
		q->waste_approx += rp->waste_approx;
		q->has_waste_approx = true;
	}
	return 0;
}

static int merge_stat(struct witch_profile *p, size_t *cap,
		      const struct witch_stat *s)
{
	int rc;

	for (size_t i = 0; i < p->nstats; i++) {
		if (!strcmp(p->stats[i].name, s->name)) {
			p->stats[i].value += s->value;
			return 0;
		}
	}
	rc = profile_grow((void **)&p->stats, cap, p->nstats, sizeof(*p->stats));
	if (rc)
		return rc;
	p->stats[p->nstats].name = strdup(s->name);
	if (!p->stats[p->nstats].name)
		return -ENOMEM;
	p->stats[p->nstats++].value = s->value;
	return 0;
}

static int merge_raw(struct witch_profile *p, struct raw_profile *r,
		     const uint32_t *by_start)
{
	struct witch_profile_index *ix = p->index;
	int rc;

	if (r->sampler_why && !p->sampler_why) {
		p->sampler_why = strdup(r->sampler_why);
		if (!p->sampler_why)
			return -ENOMEM;
	}
	const char *verdicts = r->verdicts ? r->verdicts : "traps";
	if (p->nfiles == 0 || strcmp(p->verdicts, verdicts)) {
		char *v = strdup(p->nfiles == 0 ? verdicts : "mixed");

		if (!v)
			return -ENOMEM;
		free(p->verdicts);
		p->verdicts = v;
	}
	if (p->nfiles == 0) {
		p->client = r->client;
		p->sampler = strdup(r->sampler);
		if (!p->sampler)
			return -ENOMEM;
	} else if (strcmp(p->sampler, r->sampler)) {
		char *mixed = strdup("mixed");

		if (!mixed)
			return -ENOMEM;
		free(p->sampler);
		p->sampler = mixed;
	}
	if (r->has_period) {
		if (!p->has_period) {
			p->period = r->period;
			p->has_period = true;
		} else if (p->period != r->period) {
			p->period_mixed = true;
		}
	}
	if (r->has_tolerance) {
		if (!p->has_tolerance) {
			p->tolerance = r->tolerance;
			p->has_tolerance = true;
		} else if (p->tolerance != r->tolerance) {
			p->tolerance_mixed = true;
		}
	}
	if (r->has_exe && !p->exe) {
		p->exe = strdup(r->exe);
		if (!p->exe)
			return -ENOMEM;
	}
	if (r->has_pid) {
		uint64_t *np = realloc(p->pids, (p->npids + 1) * sizeof(*np));

		if (!np)
			return -ENOMEM;
		p->pids = np;
		p->pids[p->npids++] = r->pid;
	}

	for (size_t i = 0; i < r->nstats; i++)
		if ((rc = merge_stat(p, &ix->cap_stats, &r->stats[i])))
			return rc;

	for (size_t i = 0; i < r->nmodules; i++)
		if ((rc = merge_module(p, &ix->cap_modules, &r->modules[i],
				       &r->modules[i].merged)))
			return rc;

	for (size_t i = 0; i < r->nnodes; i++) {
		struct raw_node *n = &r->nodes[i];
		const struct raw_module *m = module_of(r, by_start, n->pc);
		uint32_t parent = n->parent ? r->nodes[n->parent - 1].merged : 0;

		rc = merge_node(p, &ix->cap_nodes, parent,
				m ? m->merged : WITCH_NO_MODULE,
				m ? n->pc - m->base : n->pc, &n->merged);
		if (rc)
			return rc;
	}

	for (size_t i = 0; i < r->nsampled; i++)
		p->nodes[r->nodes[r->sampled[i].node - 1].merged].sampled += r->sampled[i].bytes;

	for (size_t i = 0; i < r->npairs; i++) {
		const struct raw_pair *rp = &r->pairs[i];

		rc = merge_pair(p, &ix->cap_pairs, rp, r->nodes[rp->watch - 1].merged,
				r->nodes[rp->trap - 1].merged);
		if (rc)
			return rc;
	}
	return merge_objects(p, r, by_start);
}

/* Model arrays start out holding the root node, so first-time setup. */
static int model_setup(struct witch_profile *p)
{
	if (p->index)
		return 0;
	p->index = calloc(1, sizeof(*p->index));
	if (!p->index)
		return -ENOMEM;
	index_table_init(&p->index->nodes);
	index_table_init(&p->index->pairs);
	index_table_init(&p->index->objects);
	index_table_init(&p->index->pair_objects);
	p->index->cap_nodes = 16;
	p->nodes = calloc(p->index->cap_nodes, sizeof(*p->nodes));
	if (!p->nodes)
		return -ENOMEM;
	/* The root: no module, no pc; never a key of a lookup. */
	p->nodes[0].parent = 0;
	p->nodes[0].module = WITCH_NO_MODULE;
	p->nodes[0].sampled = 0;
	p->nnodes = 1;
	return 0;
}

int witch_profile_read(struct witch_profile *p, const char *path, char *err,
		       size_t errlen)
{
	struct raw_profile r;
	uint32_t *by_start = NULL;
	struct witch_file_id *nf;
	struct stat st;
	FILE *f;
	int rc;

	if (errlen)
		err[0] = '\0';
	f = fopen(path, "r");
	if (!f) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fileno(f), &st)) {
		rc = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		fclose(f);
		return rc;
	}
	/* The same file twice would silently double every metric. */
	for (size_t i = 0; i < p->nfiles; i++) {
		if (p->files[i].dev == st.st_dev && p->files[i].ino == st.st_ino) {
			snprintf(err, errlen,
				 "%s: same file as %s, given twice (metrics would be counted twice)",
				 path, p->files[i].path);
			fclose(f);
			return -EINVAL;
		}
	}

	raw_init(&r, path, err, errlen);
	rc = raw_parse(&r, f);
	fclose(f);
	if (rc)
		goto out;

	by_start = malloc((r.nmodules ? r.nmodules : 1) * sizeof(*by_start));
	if (!by_start) {
		rc = -ENOMEM;
		goto out;
	}
	rc = raw_finish(&r, by_start);
	if (rc)
		goto out;
	if (p->nfiles > 0 && r.client != p->client) {
		snprintf(err, errlen,
			 "%s: client '%s' differs from client '%s' of %s; only profiles of one client can be merged",
			 path, witch_client_name(r.client),
			 witch_client_name(p->client), p->files[0].path);
		rc = -EINVAL;
		goto out;
	}

	nf = realloc(p->files, (p->nfiles + 1) * sizeof(*nf));
	if (!nf) {
		rc = -ENOMEM;
		goto out;
	}
	p->files = nf;
	nf[p->nfiles].path = strdup(path);
	if (!nf[p->nfiles].path) {
		rc = -ENOMEM;
		goto out;
	}
	nf[p->nfiles].dev = st.st_dev;
	nf[p->nfiles].ino = st.st_ino;
	rc = model_setup(p);
	if (!rc)
		rc = merge_raw(p, &r, by_start);
	/* Count the file even after -ENOMEM so that free() sees its path. */
	p->nfiles++;
out:
	if (rc == -ENOMEM && !err[0])
		snprintf(err, errlen, "%s: out of memory", path);
	free(by_start);
	raw_free(&r);
	return rc;
}

void witch_profile_free(struct witch_profile *p)
{
	for (size_t i = 0; i < p->nfiles; i++)
		free(p->files[i].path);
	free(p->files);
	free(p->sampler);
	free(p->sampler_why);
	free(p->verdicts);
	free(p->exe);
	free(p->pids);
	for (size_t i = 0; i < p->nmodules; i++) {
		free(p->modules[i].path);
		free(p->modules[i].build_id);
	}
	free(p->modules);
	free(p->nodes);
	free(p->pairs);
	for (size_t i = 0; i < p->nstats; i++)
		free(p->stats[i].name);
	free(p->stats);
	for (size_t i = 0; i < p->nobjects; i++) {
		free(p->objects[i].module);
		free(p->objects[i].symbol);
	}
	free(p->objects);
	free(p->pair_objects);
	if (p->index) {
		index_table_free(&p->index->nodes);
		index_table_free(&p->index->pairs);
		index_table_free(&p->index->objects);
		index_table_free(&p->index->pair_objects);
		free(p->index);
	}
	witch_profile_init(p);
}
