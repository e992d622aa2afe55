/* pprof: gzipped profile.proto with protobuf-c and zlib; see pprof.h. */
#include "pprof.h"

#include "index_table.h"
#include "profile.pb-c.h"
#include "summary.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;
typedef Perftools__Profiles__Label pb_label;

/* Everything the message points to, owned here until it is packed. */
struct builder {
	const struct witch_profile *p;
	struct witch_symbolizer *sym;

	const char **strings;		/* string_table; strings not owned */
	size_t nstrings, capstrings;
	struct index_table string_ix;	/* hash(string) -> index */
	char **owned;			/* strings made here (comments) */
	size_t nowned, capowned;

	pb_function *funcs;
	size_t nfuncs, capfuncs;
	struct index_table func_ix;	/* (name, file) -> index */

	pb_location *locs;
	uint32_t *loc_node;		/* a node with the location's pc */
	size_t nlocs, caplocs;
	struct index_table loc_ix;	/* (module, offset) -> index */

	pb_mapping *maps;		/* one per model module, id = index + 1 */

	pb_sample *samples;
	size_t nsamples;

	const struct witch_objects *objects;	/* the view's; n == 0: no labels */
	int64_t object_key;		/* string index of "object" */
};

static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	size_t ncap;
	void *na;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	if (ncap > SIZE_MAX / elem)
		return -ENOMEM;
	na = realloc(*arr, ncap * elem);
	if (!na)
		return -ENOMEM;
	*arr = na;
	*cap = ncap;
	return 0;
}

/* The string table index of s, added if new. */
static int intern(struct builder *b, const char *s, int64_t *out)
{
	uint64_t h = index_hash_str(0, s);
	struct index_probe pr;
	uint32_t idx;
	int rc;

	index_table_probe_start(&b->string_ix, h, &pr);
	while (index_table_probe_next(&b->string_ix, &pr, &idx)) {
		if (!strcmp(b->strings[idx], s)) {
			*out = idx;
			return 0;
		}
	}
	if (b->nstrings >= UINT32_MAX)
		return -ENOMEM;
	if ((rc = grow((void **)&b->strings, &b->capstrings, b->nstrings,
		       sizeof(*b->strings))) ||
	    (rc = index_table_insert(&b->string_ix, h, (uint32_t)b->nstrings)))
		return rc;
	b->strings[b->nstrings] = s;
	*out = (int64_t)b->nstrings++;
	return 0;
}

/* A comment line made here: the builder owns and frees it. */
static int intern_owned(struct builder *b, char *s, int64_t *out)
{
	int rc;

	if (!s)
		return -ENOMEM;
	rc = grow((void **)&b->owned, &b->capowned, b->nowned, sizeof(*b->owned));
	if (rc) {
		free(s);
		return rc;
	}
	b->owned[b->nowned++] = s;
	return intern(b, s, out);
}

/* The function id (index + 1) of (name, file), added if new; system_name
 * is the symbol as mangled in the binary (NULL: the same as name). */
static int function_id(struct builder *b, const char *name, const char *system_name,
		       const char *file, uint64_t *out)
{
	int64_t ni, si, fi;
	uint64_t h;
	struct index_probe pr;
	uint32_t idx;
	pb_function *f;
	int rc;

	if ((rc = intern(b, name, &ni)) || (rc = intern(b, file, &fi)) ||
	    (rc = intern(b, system_name ? system_name : name, &si)))
		return rc;
	h = index_hash_mix(index_hash_u64((uint64_t)ni), (uint64_t)fi);
	index_table_probe_start(&b->func_ix, h, &pr);
	while (index_table_probe_next(&b->func_ix, &pr, &idx)) {
		if (b->funcs[idx].name == ni && b->funcs[idx].filename == fi) {
			*out = b->funcs[idx].id;
			return 0;
		}
	}
	if ((rc = grow((void **)&b->funcs, &b->capfuncs, b->nfuncs,
		       sizeof(*b->funcs))) ||
	    (rc = index_table_insert(&b->func_ix, h, (uint32_t)b->nfuncs)))
		return rc;
	f = &b->funcs[b->nfuncs];
	perftools__profiles__function__init(f);
	f->id = b->nfuncs + 1;
	f->name = ni;
	f->system_name = si;
	f->filename = fi;
	b->nfuncs++;
	*out = f->id;
	return 0;
}

/* A new location with the given lines (frames innermost first). */
static int add_location(struct builder *b, uint32_t node, uint64_t mapping_id,
			uint64_t address, const struct witch_frame *fr,
			size_t nfr, const char *marker, uint64_t *out)
{
	pb_location *l;
	size_t nlines = 0;
	int rc;

	if ((rc = grow((void **)&b->locs, &b->caplocs, b->nlocs,
		       sizeof(*b->locs))))
		return rc;
	/* loc_node grows in step with locs: same count, its own capacity. */
	{
		uint32_t *nn = realloc(b->loc_node, b->caplocs * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		b->loc_node = nn;
	}
	l = &b->locs[b->nlocs];
	perftools__profiles__location__init(l);
	l->id = b->nlocs + 1;
	l->mapping_id = mapping_id;
	l->address = address;
	if (marker || nfr) {
		size_t max = marker ? 1 : nfr;

		l->line = calloc(max, sizeof(*l->line));
		if (!l->line)
			return -ENOMEM;
		for (size_t i = 0; i < max; i++) {
			const char *name = marker ? marker : fr[i].function;
			const char *file = marker || fr[i].unknown ? "" : fr[i].file;
			pb_line *ln;

			/* An unnamed frame is "[unknown in MODULE]" here as in
			 * every format (its address stays in the location). */
			ln = malloc(sizeof(*ln));
			if (!ln) {
				rc = -ENOMEM;
				break;
			}
			perftools__profiles__line__init(ln);
			l->line[nlines++] = ln;
			if ((rc = function_id(b, name, marker ? NULL : fr[i].raw, file,
					       &ln->function_id)))
				break;
			ln->line = marker ? 0 : fr[i].line;
		}
	}
	l->n_line = nlines;
	b->loc_node[b->nlocs] = node;
	b->nlocs++;	/* counted even on error, so that its lines are freed */
	if (rc)
		return rc;
	if (nlines && mapping_id) {
		pb_mapping *m = &b->maps[mapping_id - 1];

		m->has_functions = m->has_filenames = m->has_line_numbers =
			m->has_inline_frames = true;
	}
	*out = l->id;
	return 0;
}

/* The location id of node's pc, added if new. Nodes with the same
 * (module, offset) symbolize alike, so they share one location. */
static int node_location(struct builder *b, uint32_t node, uint64_t *out)
{
	const struct witch_node *n = &b->p->nodes[node];
	uint64_t h = index_hash_mix(index_hash_u64(n->module), n->offset);
	const struct witch_frame *fr;
	struct index_probe pr;
	size_t nfr;
	uint32_t idx;
	int rc;

	index_table_probe_start(&b->loc_ix, h, &pr);
	while (index_table_probe_next(&b->loc_ix, &pr, &idx)) {
		const struct witch_node *o = &b->p->nodes[b->loc_node[idx]];

		if (o->module == n->module && o->offset == n->offset) {
			*out = b->locs[idx].id;
			return 0;
		}
	}
	if ((rc = witch_symbolize_node(b->sym, node, &fr, &nfr)) ||
	    (rc = index_table_insert(&b->loc_ix, h, (uint32_t)b->nlocs)))
		return rc;
	return add_location(b, node,
			    n->module == WITCH_NO_MODULE ? 0 : n->module + 1ull,
			    n->pc, fr, nfr, NULL, out);
}

static size_t path_len(const struct witch_profile *p, uint32_t node)
{
	size_t len = 0;

	for (; node != 0; node = p->nodes[node].parent)
		len++;
	return len;
}

/* pprof values are int64: round, and clamp what would not fit. */
static int64_t to_int64(double v)
{
	v = round(v);
	if (!(v < 9.2e18))
		return INT64_MAX;
	return (int64_t)v;
}

/* One sample: the stack of pair q (locations already in loc, nloc of
 * them), its values, and an `object` label when obj is not NULL. */
static int add_one_sample(struct builder *b, const uint64_t *loc, size_t nloc,
			  double waste, double use, uint64_t traps, const char *obj)
{
	pb_sample *s = &b->samples[b->nsamples];
	int rc;

	perftools__profiles__sample__init(s);
	s->location_id = calloc(nloc, sizeof(*s->location_id));
	s->value = calloc(3, sizeof(*s->value));
	if (obj)
		s->label = calloc(1, sizeof(*s->label));
	b->nsamples++;	/* counted now, so that its arrays are freed */
	if (!s->location_id || !s->value || (obj && !s->label))
		return -ENOMEM;
	memcpy(s->location_id, loc, nloc * sizeof(*loc));
	s->n_location_id = nloc;
	s->value[0] = to_int64(waste);
	s->value[1] = to_int64(use);
	s->value[2] = traps > INT64_MAX ? INT64_MAX : (int64_t)traps;
	s->n_value = 3;
	if (obj) {
		s->label[0] = malloc(sizeof(*s->label[0]));
		if (!s->label[0])
			return -ENOMEM;
		perftools__profiles__label__init(s->label[0]);
		s->n_label = 1;
		s->label[0]->key = b->object_key;
		if ((rc = intern(b, obj, &s->label[0]->str)))
			return rc;
	}
	return 0;
}

/* Samples of one pair: one, or one per object its waste and use fell on
 * (label `object`; the pair's traps on the first, the one with the most
 * waste, since traps are not split by object) and one without a label
 * for what the objects do not cover. */
static int add_sample(struct builder *b, uint32_t pair, uint64_t marker_loc)
{
	const struct witch_pair *q = &b->p->pairs[pair];
	const struct witch_objects *o = b->objects;
	size_t nt = path_len(b->p, q->trap), nw = path_len(b->p, q->watch);
	size_t k = 0, first = 0, end = 0;
	uint64_t *loc = calloc(nt + 1 + nw, sizeof(*loc));
	double waste = q->waste, use = q->use;
	uint32_t node;
	int rc = 0;

	if (!loc)
		return -ENOMEM;
	/* Leaf first: C_trap from the trapping access up, the marker, then
	 * C_watch from the watched access up. */
	for (node = q->trap; node != 0 && !rc; node = b->p->nodes[node].parent)
		rc = node_location(b, node, &loc[k++]);
	loc[k++] = marker_loc;
	for (node = q->watch; node != 0 && !rc; node = b->p->nodes[node].parent)
		rc = node_location(b, node, &loc[k++]);
	if (o->n) {
		first = o->pair_first[pair];
		end = o->pair_first[pair + 1];
	}
	for (size_t i = first; i < end && !rc; i++) {
		const struct witch_object_part *pt = &o->parts[i];

		rc = add_one_sample(b, loc, k, pt->waste, pt->use, i == first ? q->traps : 0,
				    o->rows[pt->row].name);
		waste -= pt->waste;
		use -= pt->use;
	}
	if (!rc && (first == end || to_int64(waste) > 0 || to_int64(use) > 0))
		rc = add_one_sample(b, loc, k, first == end ? q->waste : waste,
				    first == end ? q->use : use, first == end ? q->traps : 0, NULL);
	free(loc);
	return rc;
}

/* How many samples add_sample makes at most for the first n pairs of order. */
static size_t count_samples(const struct witch_objects *o, const uint32_t *order, size_t n)
{
	size_t c = 0;

	for (size_t k = 0; k < n; k++)
		c += 1 + (o->n ? o->pair_first[order[k] + 1] - o->pair_first[order[k]] : 0);
	return c;
}

static int add_mappings(struct builder *b)
{
	const struct witch_profile *p = b->p;
	int rc;

	b->maps = calloc(p->nmodules ? p->nmodules : 1, sizeof(*b->maps));
	if (!b->maps)
		return -ENOMEM;
	for (size_t i = 0; i < p->nmodules; i++) {
		pb_mapping *m = &b->maps[i];

		perftools__profiles__mapping__init(m);
		m->id = i + 1;
		m->memory_start = p->modules[i].start;
		m->memory_limit = p->modules[i].end;
		if ((rc = intern(b, p->modules[i].path, &m->filename)) ||
		    (rc = intern(b, p->modules[i].build_id ?
					    p->modules[i].build_id : "",
				 &m->build_id)))
			return rc;
	}
	return 0;
}

/* Gzip the packed message into out (zlib's gzip wrapper: windowBits + 16). */
static int gzip_to(FILE *out, const uint8_t *data, size_t len)
{
	unsigned char buf[16384];
	z_stream z;
	int zrc;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)data;
	do {
		/* avail_in is 32 bits: feed large messages in pieces. */
		if (z.avail_in == 0 && len > 0) {
			z.avail_in = len > (1u << 30) ? (1u << 30) : (uInt)len;
			len -= z.avail_in;
		}
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		zrc = deflate(&z, len == 0 ? Z_FINISH : Z_NO_FLUSH);
		if (zrc == Z_STREAM_ERROR) {
			deflateEnd(&z);
			return -EIO;
		}
		fwrite(buf, 1, sizeof(buf) - z.avail_out, out);
	} while (zrc != Z_STREAM_END);
	deflateEnd(&z);
	return 0;
}

static void builder_free(struct builder *b)
{
	for (size_t i = 0; i < b->nlocs; i++) {
		for (size_t j = 0; j < b->locs[i].n_line; j++)
			free(b->locs[i].line[j]);
		free(b->locs[i].line);
	}
	free(b->locs);
	free(b->loc_node);
	for (size_t i = 0; i < b->nsamples; i++) {
		free(b->samples[i].location_id);
		free(b->samples[i].value);
		for (size_t j = 0; j < b->samples[i].n_label; j++)
			free(b->samples[i].label[j]);
		free(b->samples[i].label);
	}
	free(b->samples);
	free(b->funcs);
	free(b->maps);
	free(b->strings);
	for (size_t i = 0; i < b->nowned; i++)
		free(b->owned[i]);
	free(b->owned);
	index_table_free(&b->string_ix);
	index_table_free(&b->func_ix);
	index_table_free(&b->loc_ix);
}

/* Pointer arrays the message wants, over the builder's element arrays. */
#define POINTERS(type, arr, n, dst)                                  \
	do {                                                         \
		(dst) = calloc((n) ? (n) : 1, sizeof(type *));       \
		if (!(dst)) {                                        \
			rc = -ENOMEM;                                \
			goto out;                                    \
		}                                                    \
		for (size_t i_ = 0; i_ < (n); i_++)                  \
			(dst)[i_] = &(arr)[i_];                      \
	} while (0)

int witch_pprof_write(FILE *out, const struct witch_view *v)
{
	const struct witch_profile *p = v->p;
	struct witch_symbolizer *sym = v->sym;
	const uint32_t *order = v->order;
	size_t n = v->shown;
	static const char *const types[3][2] = {
		{ "waste", "bytes" }, { "use", "bytes" }, { "traps", "count" },
	};
	struct builder b = { .p = p, .sym = sym, .objects = v->objects };
	size_t nsamples = count_samples(v->objects, order, n);
	pb_profile prof;
	pb_value_type vt[3], *vtp[3];
	pb_sample **sp = NULL;
	pb_mapping **mp = NULL;
	pb_location **lp = NULL;
	pb_function **fp = NULL;
	int64_t comments[3], empty;
	uint64_t marker_loc;
	struct witch_totals t;
	uint8_t *buf = NULL;
	size_t len;
	int rc;

	index_table_init(&b.string_ix);
	index_table_init(&b.func_ix);
	index_table_init(&b.loc_ix);
	perftools__profiles__profile__init(&prof);

	/* string_table[0] must be the empty string. */
	if ((rc = intern(&b, "", &empty)))
		goto out;
	for (int i = 0; i < 3; i++) {
		perftools__profiles__value_type__init(&vt[i]);
		if ((rc = intern(&b, types[i][0], &vt[i].type)) ||
		    (rc = intern(&b, types[i][1], &vt[i].unit)))
			goto out;
		vtp[i] = &vt[i];
	}
	if ((rc = add_mappings(&b)))
		goto out;
	/* The marker: a location of its own, no mapping, address 0. */
	if ((rc = add_location(&b, 0, 0, 0, NULL, 0,
			       witch_marker_frame(p->client), &marker_loc)))
		goto out;
	if (v->objects->n && (rc = intern(&b, "object", &b.object_key)))
		goto out;
	b.samples = calloc(nsamples ? nsamples : 1, sizeof(*b.samples));
	if (!b.samples) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < n; k++)
		if ((rc = add_sample(&b, order[k], marker_loc)))
			goto out;

	/* Comments: what a reader of `pprof -comments` needs to know. */
	witch_totals_of(p, &t);
	{
		char *c0 = NULL, *c1 = NULL, *c2 = NULL;

		if (asprintf(&c0, "witch client %s (%s marks where waste happened)",
			     witch_client_name(p->client),
			     witch_marker_frame(p->client)) < 0)
			c0 = NULL;
		if ((rc = intern_owned(&b, c0, &comments[0])))
			goto out;
		if (asprintf(&c1, "sampler %s, %zu profile(s)", p->sampler,
			     p->nfiles) < 0)
			c1 = NULL;
		if ((rc = intern_owned(&b, c1, &comments[1])))
			goto out;
		if (asprintf(&c2, "fraction %.4f = waste / (waste + use), all pairs",
			     witch_fraction(t.waste, t.use)) < 0)
			c2 = NULL;
		if ((rc = intern_owned(&b, c2, &comments[2])))
			goto out;
	}

	POINTERS(pb_sample, b.samples, b.nsamples, sp);
	POINTERS(pb_mapping, b.maps, p->nmodules, mp);
	POINTERS(pb_location, b.locs, b.nlocs, lp);
	POINTERS(pb_function, b.funcs, b.nfuncs, fp);
	prof.n_sample_type = 3;
	prof.sample_type = vtp;
	prof.n_sample = b.nsamples;
	prof.sample = sp;
	prof.n_mapping = p->nmodules;
	prof.mapping = mp;
	prof.n_location = b.nlocs;
	prof.location = lp;
	prof.n_function = b.nfuncs;
	prof.function = fp;
	prof.n_string_table = b.nstrings;
	/* protobuf-c's field is char **; it only reads the strings. */
	prof.string_table = (char **)b.strings;
	prof.n_comment = 3;
	prof.comment = comments;
	prof.default_sample_type = vt[0].type;

	len = perftools__profiles__profile__get_packed_size(&prof);
	buf = malloc(len ? len : 1);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	perftools__profiles__profile__pack(&prof, buf);
	rc = gzip_to(out, buf, len);
out:
	free(buf);
	free(sp);
	free(mp);
	free(lp);
	free(fp);
	builder_free(&b);
	return rc;
}
