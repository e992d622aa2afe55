/* object_view: objects named and merged by name for the reports; see object_view.h. */
#include "object_view.h"

#include "index_table.h"
#include "summary.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The main executable's path: what a static object outside it is named by
 * its module, and where a heap object's name looks past library frames. */
static const char *main_path(const struct witch_profile *p)
{
	if (p->exe)
		return p->exe;
	return p->nmodules ? p->modules[0].path : NULL;
}

/* Where the compiler's and the C/C++ libraries' headers live: code from
 * them (std::vector's allocate, inlined or not) is library code even when
 * it was compiled into the program. */
static const char *const system_dirs[] = {
	"/usr/include/", "/usr/local/include/", "/usr/lib/gcc/", "/usr/lib/llvm-",
};

/* The language runtimes' libraries: their allocation wrappers (operator
 * new, strdup, the loader's) are not where the program allocates. */
static const char *const runtime_libs[] = {
	"libc.so", "libstdc++.so", "libgcc_s.so", "ld-linux", "libm.so", "libc++.so",
	"libc++abi.so", "libpthread.so", "libdl.so",
};

/* Library code, not the program's: a frame in a language runtime's library,
 * or one whose source is a system header.  A program's own shared libraries
 * are its code (python's libpython, a plugin): naming by the first frame
 * in the executable would name most of their blocks `_start`. */
static bool library_frame(const struct witch_frame *f, const char *exe)
{
	const char *base = base_name(f->module);
	(void)exe;
	for (size_t i = 0; i < sizeof(runtime_libs) / sizeof(runtime_libs[0]); i++)
		if (!strncmp(base, runtime_libs[i], strlen(runtime_libs[i])))
			return true;
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		if (!strncmp(f->file, system_dirs[i], strlen(system_dirs[i])))
			return true;
	return false;
}

/* The frame naming a heap object: the allocation context's leaf, the
 * program's call of the allocator; when the leaf is library code
 * (operator new in libstdc++, std::vector's allocate inlined from a
 * header), the first frame of the program's own code, if there is one. */
static const struct witch_frame *heap_frame(const struct witch_path *pb, const char *exe)
{
	if (!exe)
		return pb->frames[0];
	for (size_t i = 0; i < pb->n; i++)
		if (!library_frame(pb->frames[i], exe))
			return pb->frames[i];
	return pb->frames[0];
}

/* The name of model object o (docs/objects.md), malloc'd in *name. */
static int object_name(const struct witch_profile *p, struct witch_symbolizer *s,
		       const struct witch_object *o, struct witch_path *pb, char **name)
{
	const char *exe = main_path(p);
	const struct witch_frame *f;
	int rc, n = -1;

	switch (o->kind) {
	case WITCH_OBJECT_HEAP:
		if ((rc = witch_path_collect(s, p, o->node, pb)))
			return rc;
		f = heap_frame(pb, exe);
		if (f->line && strcmp(f->file, "??"))
			n = asprintf(name, "heap from %s (%s:%u)", f->function, base_name(f->file),
				     f->line);
		else
			n = asprintf(name, "heap from %s", f->function);
		break;
	case WITCH_OBJECT_STACK:
		if ((rc = witch_path_collect(s, p, o->node, pb)))
			return rc;
		n = asprintf(name, "stack of %s", witch_path_function(pb));
		break;
	case WITCH_OBJECT_STATIC:
		/* A module written "-" is one the runtime could not name. */
		if (!o->symbol)
			n = strcmp(o->module, "-") ? asprintf(name, "[data in %s]", base_name(o->module))
						   : asprintf(name, "[data]");
		else if ((exe && !strcmp(o->module, exe)) || !strcmp(o->module, "-"))
			n = asprintf(name, "%s", o->symbol);
		else
			n = asprintf(name, "%s (%s)", o->symbol, base_name(o->module));
		break;
	case WITCH_OBJECT_TLS:
		if (o->symbol)
			n = asprintf(name, "%s (tls)", o->symbol);
		else
			n = strcmp(o->module, "-") ? asprintf(name, "[tls in %s]", base_name(o->module))
						   : asprintf(name, "[tls]");
		break;
	case WITCH_OBJECT_UNKNOWN:
		n = asprintf(name, "unknown");
		break;
	}
	if (n < 0) {
		*name = NULL;
		return -ENOMEM;
	}
	return 0;
}

void witch_objects_free(struct witch_objects *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->rows[i].name);
	free(o->rows);
	free(o->parts);
	free(o->pair_first);
	*o = (struct witch_objects){ 0 };
}

/* Row indices by waste (ties: sampled, use, kind, name). */
static int cmp_rows(const void *a, const void *b, void *arg)
{
	const struct witch_object_row *rows = arg;
	const struct witch_object_row *x = &rows[*(const uint32_t *)a];
	const struct witch_object_row *y = &rows[*(const uint32_t *)b];

	if (x->waste != y->waste)
		return x->waste > y->waste ? -1 : 1;
	if (x->sampled != y->sampled)
		return x->sampled > y->sampled ? -1 : 1;
	if (x->use != y->use)
		return x->use > y->use ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* A pair's part on a row, before they are grouped. */
struct part_key {
	uint32_t pair;
	struct witch_object_part part;
};

static int cmp_parts(const void *a, const void *b)
{
	const struct part_key *x = a, *y = b;

	if (x->pair != y->pair)
		return x->pair < y->pair ? -1 : 1;
	if (x->part.waste != y->part.waste)
		return x->part.waste > y->part.waste ? -1 : 1;
	if (x->part.use != y->part.use)
		return x->part.use > y->part.use ? -1 : 1;
	return x->part.row < y->part.row ? -1 : x->part.row > y->part.row;
}

static int cmp_key_row(const void *a, const void *b)
{
	const struct part_key *x = a, *y = b;

	if (x->pair != y->pair)
		return x->pair < y->pair ? -1 : 1;
	return x->part.row < y->part.row ? -1 : x->part.row > y->part.row;
}

/* Each pair's parts, summed per row (two objects of one name), by waste. */
static int build_parts(const struct witch_profile *p, const uint32_t *row_of,
		       struct witch_objects *o)
{
	size_t np = p->npair_objects, n = 0;
	struct part_key *k = malloc((np ? np : 1) * sizeof(*k));

	o->parts = malloc((np ? np : 1) * sizeof(*o->parts));
	o->pair_first = calloc(p->npairs + 1, sizeof(*o->pair_first));
	if (!k || !o->parts || !o->pair_first) {
		free(k);
		return -ENOMEM;
	}
	for (size_t i = 0; i < np; i++) {
		const struct witch_pair_object *q = &p->pair_objects[i];

		k[i] = (struct part_key){.pair = q->pair,
					 .part = {.row = row_of[q->object], .waste = q->waste,
						  .use = q->use}};
	}
	qsort(k, np, sizeof(*k), cmp_key_row);
	for (size_t i = 0; i < np; i++) {
		if (n && k[n - 1].pair == k[i].pair && k[n - 1].part.row == k[i].part.row) {
			k[n - 1].part.waste += k[i].part.waste;
			k[n - 1].part.use += k[i].part.use;
		} else {
			k[n++] = k[i];
		}
	}
	qsort(k, n, sizeof(*k), cmp_parts);
	for (size_t i = 0; i < n; i++) {
		o->parts[i] = k[i].part;
		o->pair_first[k[i].pair + 1]++;
	}
	for (size_t i = 0; i < p->npairs; i++)
		o->pair_first[i + 1] += o->pair_first[i];
	free(k);
	return 0;
}

int witch_objects_build(const struct witch_profile *p, struct witch_symbolizer *s,
			struct witch_objects *o)
{
	size_t nobj = p->nobjects;
	struct witch_path pb = { 0 };
	struct index_table ix;
	uint32_t *row_of = NULL, *rank = NULL, *where = NULL;
	struct witch_object_row *sorted = NULL;
	double *waste = NULL, *best = NULL, *best_sampled = NULL;
	int rc = 0;

	*o = (struct witch_objects){ 0 };
	index_table_init(&ix);
	row_of = malloc((nobj ? nobj : 1) * sizeof(*row_of));
	rank = malloc((nobj ? nobj : 1) * sizeof(*rank));
	waste = calloc(nobj ? nobj : 1, sizeof(*waste));
	best = calloc(nobj ? nobj : 1, sizeof(*best));
	best_sampled = calloc(nobj ? nobj : 1, sizeof(*best_sampled));
	where = malloc((nobj ? nobj : 1) * sizeof(*where));
	sorted = malloc((nobj ? nobj : 1) * sizeof(*sorted));
	o->rows = calloc(nobj ? nobj : 1, sizeof(*o->rows));
	if (!row_of || !rank || !waste || !best || !best_sampled || !where || !sorted ||
	    !o->rows) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p->npair_objects; i++)
		waste[p->pair_objects[i].object] += p->pair_objects[i].waste;
	for (size_t i = 0; i < nobj && !rc; i++) {
		const struct witch_object *ob = &p->objects[i];
		struct witch_object_row *r = NULL;
		struct index_probe pr;
		uint32_t idx;
		uint64_t h;
		char *name;

		if ((rc = object_name(p, s, ob, &pb, &name)))
			break;
		h = index_hash_str(index_hash_u64(ob->kind), name);
		index_table_probe_start(&ix, h, &pr);
		while (!r && index_table_probe_next(&ix, &pr, &idx))
			if (o->rows[idx].kind == ob->kind && !strcmp(o->rows[idx].name, name))
				r = &o->rows[idx];
		if (r) {
			free(name);
		} else {
			if ((rc = index_table_insert(&ix, h, (uint32_t)o->n))) {
				free(name);
				break;
			}
			r = &o->rows[o->n++];
			r->kind = ob->kind;
			r->name = name;
		}
		row_of[i] = (uint32_t)(r - o->rows);
		if (ob->size > r->size)
			r->size = ob->size;
		r->sampled += ob->sampled;
		o->sampled_total += ob->sampled;
		/* The context shown: the part with the most waste, then sampled. */
		idx = row_of[i];
		if (ob->kind == WITCH_OBJECT_HEAP &&
		    (!r->alloc || waste[i] > best[idx] ||
		     (waste[i] == best[idx] && ob->sampled > best_sampled[idx]))) {
			best[idx] = waste[i];
			best_sampled[idx] = ob->sampled;
			r->alloc = ob->node;
		}
	}
	if (rc)
		goto out;
	for (size_t i = 0; i < p->npair_objects; i++) {
		struct witch_object_row *r = &o->rows[row_of[p->pair_objects[i].object]];

		r->waste += p->pair_objects[i].waste;
		r->use += p->pair_objects[i].use;
	}
	/* Sort the rows, then renumber row_of through where each went. */
	for (size_t i = 0; i < o->n; i++)
		rank[i] = (uint32_t)i;
	/* Casting away const is safe: cmp_rows only reads. */
	qsort_r(rank, o->n, sizeof(*rank), cmp_rows, o->rows);
	for (size_t j = 0; j < o->n; j++) {
		sorted[j] = o->rows[rank[j]];
		where[rank[j]] = (uint32_t)j;
	}
	memcpy(o->rows, sorted, o->n * sizeof(*sorted));
	for (size_t i = 0; i < nobj; i++)
		row_of[i] = where[row_of[i]];
	rc = build_parts(p, row_of, o);
out:
	witch_path_free(&pb);
	index_table_free(&ix);
	free(row_of);
	free(rank);
	free(waste);
	free(best);
	free(best_sampled);
	free(where);
	free(sorted);
	return rc;
}

static int cmp_sampled(const void *a, const void *b, void *arg)
{
	const struct witch_object_row *r = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (r[x].sampled != r[y].sampled)
		return r[x].sampled > r[y].sampled ? -1 : 1;
	return x < y ? -1 : x > y;
}

int witch_objects_by_sampled(const struct witch_objects *o, uint32_t **order, size_t *n)
{
	uint32_t *ord = malloc((o->n ? o->n : 1) * sizeof(*ord));

	if (!ord)
		return -ENOMEM;
	*n = 0;
	for (size_t i = 0; i < o->n; i++)
		if (o->rows[i].sampled > 0)
			ord[(*n)++] = (uint32_t)i;
	/* Casting away const is safe: cmp_sampled only reads. */
	qsort_r(ord, *n, sizeof(*ord), cmp_sampled, (void *)o->rows);
	*order = ord;
	return 0;
}
