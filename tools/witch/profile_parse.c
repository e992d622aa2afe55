/* profile_parse: one profile file into its raw form (see profile_parse.h). */
#include "profile_fields.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void raw_init(struct raw_profile *r, const char *path, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	r->path = path;
	r->err = err;
	r->errlen = errlen;
	index_table_init(&r->module_ids);
	index_table_init(&r->node_ids);
	index_table_init(&r->object_ids);
}

void raw_free(struct raw_profile *r)
{
	free(r->sampler);
	free(r->exe);
	free(r->sampler_why);
	free(r->verdicts);
	for (size_t i = 0; i < r->nstats; i++)
		free(r->stats[i].name);
	free(r->stats);
	for (size_t i = 0; i < r->nmodules; i++) {
		free(r->modules[i].build_id);
		free(r->modules[i].path);
	}
	free(r->modules);
	free(r->nodes);
	free(r->pairs);
	free(r->sampled);
	for (size_t i = 0; i < r->nobjects; i++) {
		free(r->objects[i].symbol);
		free(r->objects[i].module);
	}
	free(r->objects);
	free(r->object_sampled);
	free(r->pair_objects);
	index_table_free(&r->module_ids);
	index_table_free(&r->node_ids);
	index_table_free(&r->object_ids);
}

static int check_header(struct raw_profile *r, char *line)
{
	char *cur = line, *magic, *version, q[64];
	uint64_t v;

	/* Quote before splitting: raw_next_field() cuts the line in place. */
	raw_quote(q, sizeof(q), line);
	magic = raw_next_field(&cur);
	if (!magic || strcmp(magic, PROFILE_MAGIC))
		return raw_error(r, -EINVAL,
				 "not a libwitch profile (expected '%s %d', got '%s')",
				 PROFILE_MAGIC, PROFILE_VERSION, q);
	version = raw_next_field(&cur);
	if (!version || raw_next_field(&cur) || raw_parse_digits(version, 10, &v))
		return raw_error(r, -EINVAL,
				 "malformed header (expected '%s %d')",
				 PROFILE_MAGIC, PROFILE_VERSION);
	if (v != PROFILE_VERSION)
		return raw_error(r, -EPROTONOSUPPORT,
				 "unsupported profile version %" PRIu64 " (this witch reads version %d)",
				 v, PROFILE_VERSION);
	return 0;
}


static int cmp_module_start(const void *a, const void *b, void *arg)
{
	const struct raw_module *m = arg;
	const struct raw_module *x = &m[*(const uint32_t *)a];
	const struct raw_module *y = &m[*(const uint32_t *)b];

	return x->start < y->start ? -1 : x->start > y->start;
}

/* An object id of object_sampled or pair_object: raw index + 1, 0 for id 0. */
static int resolve_object_ref(struct raw_profile *r, const char *rec, uint64_t id,
			      uint32_t *out)
{
	uint32_t o;

	if (id == 0) {
		*out = 0;	/* unknown: never written as an object */
		return 0;
	}
	if (!raw_find_object_id(r, id, &o))
		return raw_error(r, -EINVAL, "%s: object %" PRIu64 " is not defined", rec, id);
	*out = o + 1;
	return 0;
}

static uint64_t raw_pair_hash(uint32_t watch, uint32_t trap)
{
	return index_hash_mix(index_hash_u64(watch), trap);
}

/* Object records name nodes, objects and pairs that may come later in the
 * file: resolved here, after `end`, as pairs are. */
static int resolve_objects(struct raw_profile *r)
{
	struct index_table pairs;
	int rc = 0;

	for (size_t i = 0; i < r->nobjects; i++) {
		struct raw_object *o = &r->objects[i];
		uint32_t n;

		if (o->kind != WITCH_OBJECT_HEAP)
			continue;
		r->line = o->line;
		if (!raw_find_node_id(r, o->alloc_id, &n))
			return raw_error(r, -EINVAL,
					 "object %" PRIu64 ": allocation node %" PRIu64 " is not defined",
					 o->id, o->alloc_id);
		o->alloc = n + 1;
	}
	for (size_t i = 0; i < r->nobject_sampled; i++) {
		struct raw_object_sampled *s = &r->object_sampled[i];

		r->line = s->line;
		if ((rc = resolve_object_ref(r, "object_sampled", s->object_id, &s->object)))
			return rc;
	}
	/* A pair_object is a part of a pair: its pair must be in the file. */
	index_table_init(&pairs);
	for (size_t i = 0; i < r->npairs && !rc; i++)
		rc = index_table_insert(&pairs, raw_pair_hash(r->pairs[i].watch, r->pairs[i].trap),
					(uint32_t)i);
	for (size_t i = 0; i < r->npair_objects && !rc; i++) {
		struct raw_pair_object *po = &r->pair_objects[i];
		struct index_probe pr;
		uint32_t w, t, idx;
		bool found = false;

		r->line = po->line;
		if (!raw_find_node_id(r, po->watch_id, &w)) {
			rc = raw_error(r, -EINVAL, "pair_object: watch node %" PRIu64 " is not defined",
				       po->watch_id);
			break;
		}
		if (!raw_find_node_id(r, po->trap_id, &t)) {
			rc = raw_error(r, -EINVAL, "pair_object: trap node %" PRIu64 " is not defined",
				       po->trap_id);
			break;
		}
		po->watch = w + 1;
		po->trap = t + 1;
		index_table_probe_start(&pairs, raw_pair_hash(po->watch, po->trap), &pr);
		while (!found && index_table_probe_next(&pairs, &pr, &idx))
			found = r->pairs[idx].watch == po->watch && r->pairs[idx].trap == po->trap;
		if (!found) {
			rc = raw_error(r, -EINVAL,
				       "pair_object: no 'pair %" PRIu64 " %" PRIu64 "' record for it to be part of",
				       po->watch_id, po->trap_id);
			break;
		}
		rc = resolve_object_ref(r, "pair_object", po->object_id, &po->object);
	}
	index_table_free(&pairs);
	return rc;
}

/*
 * After `end`: resolve pair references, check required records and that
 * executable ranges do not overlap (a pc must name one module).
 * by_start receives the module indices sorted by start.
 */
int raw_finish(struct raw_profile *r, uint32_t *by_start)
{
	uint32_t prev = UINT32_MAX;
	int rc;

	if (!r->has_client)
		return raw_error(r, -EINVAL, "missing 'client' record");
	if (!r->has_sampler)
		return raw_error(r, -EINVAL, "missing 'sampler' record");
	for (size_t i = 0; i < r->npairs; i++) {
		struct raw_pair *p = &r->pairs[i];
		uint32_t w, t;

		r->line = p->line;
		if (!raw_find_node_id(r, p->watch_id, &w))
			return raw_error(r, -EINVAL,
					 "pair: watch node %" PRIu64 " is not defined",
					 p->watch_id);
		if (!raw_find_node_id(r, p->trap_id, &t))
			return raw_error(r, -EINVAL,
					 "pair: trap node %" PRIu64 " is not defined",
					 p->trap_id);
		p->watch = w + 1;
		p->trap = t + 1;
	}
	for (size_t i = 0; i < r->nsampled; i++) {
		struct raw_sampled *s = &r->sampled[i];
		uint32_t n;

		r->line = s->line;
		if (!raw_find_node_id(r, s->node_id, &n))
			return raw_error(r, -EINVAL, "sampled: node %" PRIu64 " is not defined",
					 s->node_id);
		s->node = n + 1;
	}
	if ((rc = resolve_objects(r)))
		return rc;
	for (size_t i = 0; i < r->nmodules; i++)
		by_start[i] = (uint32_t)i;
	qsort_r(by_start, r->nmodules, sizeof(*by_start), cmp_module_start,
		r->modules);
	for (size_t i = 0; i < r->nmodules; i++) {
		const struct raw_module *m = &r->modules[by_start[i]];

		if (m->start == m->end)
			continue;	/* no executable segment: covers no pc */
		if (prev != UINT32_MAX && r->modules[prev].end > m->start) {
			r->line = m->line;
			return raw_error(r, -EINVAL,
					 "module %" PRIu64 ": executable range overlaps that of module %" PRIu64,
					 m->id, r->modules[prev].id);
		}
		prev = by_start[i];
	}
	return 0;
}

/* Whether line is the `end` record (blanks around it tolerated). */
static bool is_end_line(const char *s)
{
	s += strspn(s, " ");
	if (strncmp(s, "end", 3))
		return false;
	s += 3;
	return s[strspn(s, " ")] == '\0';
}

/* Read and check one file into r (r->path, err, errlen set by the caller). */
int raw_parse(struct raw_profile *r, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	bool seen_end = false;
	int rc = 0;

	r->line = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		bool complete = len > 0 && line[len - 1] == '\n';

		r->line++;
		if (seen_end) {
			/* Anything after `end` means the file is not what its
			 * writer meant it to be (e.g. two profiles concatenated). */
			if (strspn(line, " \n") != (size_t)len) {
				rc = raw_error(r, -EINVAL,
					       "data after the 'end' record");
				goto out;
			}
			continue;
		}
		if (complete)
			line[--len] = '\0';
		if (strlen(line) != (size_t)len) {
			rc = raw_error(r, -EINVAL,
				       "malformed line: contains a NUL byte");
			goto out;
		}
		if (r->line == 1) {
			rc = check_header(r, line);
			if (rc)
				goto out;
			continue;
		}
		if (is_end_line(line)) {
			/* "end" without its newline is still complete. */
			seen_end = true;
			continue;
		}
		if (!complete) {
			/* The writer was cut off in the middle of this line. */
			rc = raw_error(r, -EINVAL,
				       "truncated profile: incomplete last line and no 'end' record");
			goto out;
		}
		rc = raw_dispatch(r, line);
		if (rc)
			goto out;
	}
	if (ferror(f) || !feof(f)) {
		/* getline fails without setting the error flag on ENOMEM. */
		rc = errno ? -errno : -EIO;
		snprintf(r->err, r->errlen, "%s: read error: %s", r->path,
			 strerror(-rc));
		goto out;
	}
	if (r->line == 0) {
		r->line = 1;
		rc = raw_error(r, -EINVAL,
			       "empty file, not a libwitch profile (expected '%s %d')",
			       PROFILE_MAGIC, PROFILE_VERSION);
		goto out;
	}
	if (!seen_end) {
		rc = raw_error(r, -EINVAL,
			       "truncated profile: no 'end' record after the last line");
		goto out;
	}
out:
	free(line);
	return rc;
}