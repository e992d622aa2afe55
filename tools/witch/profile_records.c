/* profile_records: one function per record type, found by name (see profile_fields.h). */
#include "profile_fields.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rec_client(struct raw_profile *r, char *cur)
{
	char *f[1] = { NULL }, q[64];
	int rc = raw_fields_exact(r, &cur, f, 1, "client", "client dead|silent|load");

	if (rc)
		return rc;
	if (r->has_client)
		return raw_duplicate(r, "client");
	if (!strcmp(f[0], "dead"))
		r->client = WITCH_CLIENT_DEAD;
	else if (!strcmp(f[0], "silent"))
		r->client = WITCH_CLIENT_SILENT;
	else if (!strcmp(f[0], "load"))
		r->client = WITCH_CLIENT_LOAD;
	else {
		/* The client decides what waste means; we cannot guess it. */
		raw_quote(q, sizeof(q), f[0]);
		return raw_error(r, -EINVAL,
				 "unknown client '%s' (expected dead, silent or load)",
				 q);
	}
	r->has_client = true;
	return 0;
}

static int rec_sampler(struct raw_profile *r, char *cur)
{
	char *f[1] = { NULL };
	int rc = raw_fields_exact(r, &cur, f, 1, "sampler", "sampler <name>");

	if (rc)
		return rc;
	if (r->has_sampler)
		return raw_duplicate(r, "sampler");
	/* Any sampler name is fine: metrics are already in bytes. */
	r->sampler = strdup(f[0]);
	if (!r->sampler)
		return -ENOMEM;
	r->has_sampler = true;
	return 0;
}

/* A header record holding one number: "period <n>", "pid <n>". */
static int rec_number(struct raw_profile *r, char *cur, const char *name,
		      const char *usage, uint64_t *out, bool *has)
{
	char *f[1] = { NULL };
	int rc = raw_fields_exact(r, &cur, f, 1, name, usage);

	if (rc)
		return rc;
	if (*has)
		return raw_duplicate(r, name);
	rc = raw_field_number(r, name, name, f[0], out);
	if (rc)
		return rc;
	*has = true;
	return 0;
}

static int rec_period(struct raw_profile *r, char *cur)
{
	return rec_number(r, cur, "period", "period <n>", &r->period, &r->has_period);
}

static int rec_tolerance(struct raw_profile *r, char *cur)
{
	char *f[1] = { NULL };
	int rc = raw_fields_exact(r, &cur, f, 1, "tolerance", "tolerance <relative>");

	if (rc)
		return rc;
	if (r->has_tolerance)
		return raw_duplicate(r, "tolerance");
	rc = raw_field_metric(r, "tolerance", "tolerance", f[0], &r->tolerance);
	if (rc)
		return rc;
	r->has_tolerance = true;
	return 0;
}

static int rec_pid(struct raw_profile *r, char *cur)
{
	return rec_number(r, cur, "pid", "pid <n>", &r->pid, &r->has_pid);
}

/* "sampler_why <text>": why the PMU sampler could not run (the rest of the
 * line); the first one counts. */
static int rec_sampler_why(struct raw_profile *r, char *cur)
{
	if (r->sampler_why || !*cur)
		return 0;
	r->sampler_why = strdup(cur);
	return r->sampler_why ? 0 : -ENOMEM;
}

/* What decided the verdicts (the runtime's config.h): "verdicts traps",
 * "window" (the run-ahead alone) or "none" (samples weighed only). */
static int rec_verdicts(struct raw_profile *r, char *cur)
{
	char *f[1] = { NULL }, q[64];
	int rc = raw_fields_exact(r, &cur, f, 1, "verdicts", "verdicts traps|window|none");

	if (rc)
		return rc;
	if (r->verdicts)
		return raw_duplicate(r, "verdicts");
	if (strcmp(f[0], "traps") && strcmp(f[0], "window") && strcmp(f[0], "none")) {
		raw_quote(q, sizeof(q), f[0]);
		return raw_error(r, -EINVAL,
				 "unknown verdicts '%s' (expected traps, window or none)", q);
	}
	r->verdicts = strdup(f[0]);
	return r->verdicts ? 0 : -ENOMEM;
}

static int rec_exe(struct raw_profile *r, char *cur)
{
	/* The path is the rest of the line and may contain spaces. */
	if (!*cur)
		return raw_error(r, -EINVAL,
				 "malformed 'exe' record: missing path (expected 'exe <path>')");
	if (r->has_exe)
		return raw_duplicate(r, "exe");
	r->exe = strdup(cur);
	if (!r->exe)
		return -ENOMEM;
	r->has_exe = true;
	return 0;
}

static int rec_stat(struct raw_profile *r, char *cur)
{
	char *f[2] = { NULL }, q[64];
	double v;
	int rc = raw_fields_exact(r, &cur, f, 2, "stat", "stat <name> <value>");

	if (rc)
		return rc;
	if (!raw_is_record_type(f[0])) {
		raw_quote(q, sizeof(q), f[0]);
		return raw_error(r, -EINVAL,
				 "malformed 'stat' record: '%s' is not a counter name",
				 q);
	}
	rc = raw_field_metric(r, "stat", "value", f[1], &v);
	if (rc)
		return rc;
	for (size_t i = 0; i < r->nstats; i++)
		if (!strcmp(r->stats[i].name, f[0]))
			return raw_error(r, -EINVAL, "duplicate 'stat %s' record",
					 f[0]);
	rc = profile_grow((void **)&r->stats, &r->capstats, r->nstats,
		  sizeof(*r->stats));
	if (rc)
		return rc;
	r->stats[r->nstats].name = strdup(f[0]);
	if (!r->stats[r->nstats].name)
		return -ENOMEM;
	r->stats[r->nstats++].value = v;
	return 0;
}

static int rec_module(struct raw_profile *r, char *cur)
{
	static const char syntax[] =
		"module <id> <base> <start> <end> <build-id|-> <path>";
	struct raw_module m = { 0 };
	char *f[5] = { NULL }, q[64];
	uint32_t dup;
	int rc;

	for (int i = 0; i < 5; i++) {
		f[i] = raw_next_field(&cur);
		if (!f[i])
			return raw_error(r, -EINVAL,
					 "malformed 'module' record: too few fields (expected '%s')",
					 syntax);
	}
	if (!*cur)
		return raw_error(r, -EINVAL,
				 "malformed 'module' record: missing path (expected '%s')",
				 syntax);
	if ((rc = raw_field_number(r, "module", "id", f[0], &m.id)) ||
	    (rc = raw_field_number(r, "module", "base", f[1], &m.base)) ||
	    (rc = raw_field_hex(r, "module", "start", f[2], &m.start)) ||
	    (rc = raw_field_hex(r, "module", "end", f[3], &m.end)))
		return rc;
	if (m.start > m.end)
		return raw_error(r, -EINVAL,
				 "module %" PRIu64 ": start 0x%" PRIx64 " is above end 0x%" PRIx64,
				 m.id, m.start, m.end);
	if (strcmp(f[4], "-")) {
		size_t len = strlen(f[4]);

		for (size_t i = 0; i < len; i++)
			if (!isxdigit((unsigned char)f[4][i]))
				len = 0;
		if (!len || len % 2) {
			raw_quote(q, sizeof(q), f[4]);
			return raw_error(r, -EINVAL,
					 "malformed 'module' record: build-id '%s' is neither hex bytes nor '-'",
					 q);
		}
	}
	if (raw_find_module_id(r, m.id, &dup))
		return raw_error(r, -EINVAL, "duplicate module id %" PRIu64,
				 m.id);
	if (r->nmodules >= MAX_ENTRIES)
		return raw_error(r, -EINVAL, "too many modules");

	rc = profile_grow((void **)&r->modules, &r->capmodules, r->nmodules,
		  sizeof(*r->modules));
	if (rc)
		return rc;
	if (strcmp(f[4], "-")) {
		m.build_id = strdup(f[4]);
		if (!m.build_id)
			return -ENOMEM;
		for (char *c = m.build_id; *c; c++)
			*c = (char)tolower((unsigned char)*c);
	}
	m.line = r->line;
	m.path = strdup(cur);
	if (!m.path) {
		free(m.build_id);
		return -ENOMEM;
	}
	rc = index_table_insert(&r->module_ids, index_hash_u64(m.id),
				(uint32_t)r->nmodules);
	if (rc) {
		free(m.build_id);
		free(m.path);
		return rc;
	}
	r->modules[r->nmodules++] = m;
	return 0;
}

static int rec_node(struct raw_profile *r, char *cur)
{
	struct raw_node n = { 0 };
	uint64_t parent;
	uint32_t idx;
	char *f[3] = { NULL };
	int rc = raw_fields_exact(r, &cur, f, 3, "node", "node <id> <parent> <pc>");

	if (rc)
		return rc;
	if ((rc = raw_field_number(r, "node", "id", f[0], &n.id)) ||
	    (rc = raw_field_number(r, "node", "parent", f[1], &parent)) ||
	    (rc = raw_field_hex(r, "node", "pc", f[2], &n.pc)))
		return rc;
	if (n.id == 0)
		return raw_error(r, -EINVAL,
				 "node id 0 is out of range: node 0 is the root and is never written");
	if (raw_find_node_id(r, n.id, &idx))
		return raw_error(r, -EINVAL, "duplicate node id %" PRIu64, n.id);
	if (parent == 0) {
		n.parent = 0;
	} else if (raw_find_node_id(r, parent, &idx)) {
		n.parent = idx + 1;
	} else {
		/* Parents must come first: it is what makes a path finite. */
		return raw_error(r, -EINVAL,
				 "node %" PRIu64 ": parent %" PRIu64 " is not an earlier node",
				 n.id, parent);
	}
	if (r->nnodes >= MAX_ENTRIES)
		return raw_error(r, -EINVAL, "too many nodes");
	rc = profile_grow((void **)&r->nodes, &r->capnodes, r->nnodes,
		  sizeof(*r->nodes));
	if (rc)
		return rc;
	rc = index_table_insert(&r->node_ids, index_hash_u64(n.id),
				(uint32_t)r->nnodes);
	if (rc)
		return rc;
	r->nodes[r->nnodes++] = n;
	return 0;
}

static int rec_pair(struct raw_profile *r, char *cur)
{
	static const char syntax[] =
		"pair <watch-node> <trap-node> <waste> <use> <traps> [<waste_approx>]";
	struct raw_pair p = { 0 };
	char *f[7] = { NULL };
	int n = 0, rc;

	while (n < 7 && (f[n] = raw_next_field(&cur)))
		n++;
	if (n < 5)
		return raw_error(r, -EINVAL,
				 "malformed 'pair' record: too few fields (expected '%s')",
				 syntax);
	if (n > 6)
		return raw_error(r, -EINVAL,
				 "malformed 'pair' record: too many fields (expected '%s')",
				 syntax);
	if ((rc = raw_field_number(r, "pair", "watch node", f[0], &p.watch_id)) ||
	    (rc = raw_field_number(r, "pair", "trap node", f[1], &p.trap_id)) ||
	    (rc = raw_field_metric(r, "pair", "waste", f[2], &p.waste)) ||
	    (rc = raw_field_metric(r, "pair", "use", f[3], &p.use)) ||
	    (rc = raw_field_number(r, "pair", "traps", f[4], &p.traps)))
		return rc;
	if (n == 6) {
		rc = raw_field_metric(r, "pair", "waste_approx", f[5],
				  &p.waste_approx);
		if (rc)
			return rc;
		p.has_waste_approx = true;
	}
	if (p.watch_id == 0 || p.trap_id == 0)
		return raw_error(r, -EINVAL,
				 "pair: node 0 is out of range: the root has no calling context");
	if (r->npairs >= MAX_ENTRIES)
		return raw_error(r, -EINVAL, "too many pairs");
	/* Node references are resolved at the end: the format does not say
	 * that pairs follow the nodes they name. */
	p.line = r->line;
	rc = profile_grow((void **)&r->pairs, &r->cappairs, r->npairs,
		  sizeof(*r->pairs));
	if (rc)
		return rc;
	r->pairs[r->npairs++] = p;
	return 0;
}
static int rec_sampled(struct raw_profile *r, char *cur)
{
	static const char syntax[] = "sampled <node> <bytes>";
	struct raw_sampled s = { 0 };
	char *f[3] = { NULL };
	int n = 0, rc;

	while (n < 3 && (f[n] = raw_next_field(&cur)))
		n++;
	if (n != 2)
		return raw_error(r, -EINVAL, "malformed 'sampled' record: too %s fields (expected '%s')",
				 n < 2 ? "few" : "many", syntax);
	if ((rc = raw_field_number(r, "sampled", "node", f[0], &s.node_id)) ||
	    (rc = raw_field_metric(r, "sampled", "bytes", f[1], &s.bytes)))
		return rc;
	if (s.node_id == 0)
		return raw_error(r, -EINVAL,
				 "sampled: node 0 is out of range: the root has no calling context");
	s.line = r->line;
	rc = profile_grow((void **)&r->sampled, &r->capsampled, r->nsampled, sizeof(*r->sampled));
	if (rc)
		return rc;
	r->sampled[r->nsampled++] = s;
	return 0;
}

/* Syntax of each kind's `object` record, for messages. */
static const struct {
	const char *name;
	enum witch_object_kind kind;
	const char *syntax;
} object_kinds[] = {
	{"heap", WITCH_OBJECT_HEAP, "object <id> heap <size> <alloc-node>"},
	{"static", WITCH_OBJECT_STATIC, "object <id> static <size> <addr> <name|-> <module path>"},
	{"tls", WITCH_OBJECT_TLS, "object <id> tls <size> <offset> <name|-> <module path>"},
	{"stack", WITCH_OBJECT_STACK, "object <id> stack <size> <pc>"},
};

/* "object <id> <kind> <size> ...": the fields after size depend on the kind. */
static int rec_object(struct raw_profile *r, char *cur)
{
	struct raw_object o = { 0 };
	const char *syntax = NULL;
	char *f[5] = { NULL }, q[64];
	uint32_t dup;
	int n = 0, want, rc;

	while (n < 3 && (f[n] = raw_next_field(&cur)))
		n++;
	if (n < 2)
		return raw_error(r, -EINVAL,
				 "malformed 'object' record: too few fields (expected 'object <id> heap|static|tls|stack <size> ...')");
	for (size_t i = 0; i < sizeof(object_kinds) / sizeof(object_kinds[0]); i++)
		if (!strcmp(f[1], object_kinds[i].name)) {
			o.kind = object_kinds[i].kind;
			syntax = object_kinds[i].syntax;
		}
	if (!syntax) {
		raw_quote(q, sizeof(q), f[1]);
		return raw_error(r, -EINVAL,
				 "malformed 'object' record: unknown kind '%s' (expected heap, static, tls or stack)",
				 q);
	}
	/* heap and stack: one field after size; static and tls: two, then the
	 * module path, the rest of the line (it may contain spaces). */
	want = o.kind == WITCH_OBJECT_HEAP || o.kind == WITCH_OBJECT_STACK ? 4 : 5;
	while (n < want && (f[n] = raw_next_field(&cur)))
		n++;
	if (n < want)
		return raw_error(r, -EINVAL, "malformed 'object' record: too few fields (expected '%s')",
				 syntax);
	if (want == 4 && raw_next_field(&cur))
		return raw_error(r, -EINVAL, "malformed 'object' record: too many fields (expected '%s')",
				 syntax);
	if (want == 5 && !*cur)
		return raw_error(r, -EINVAL, "malformed 'object' record: missing module path (expected '%s')",
				 syntax);
	if ((rc = raw_field_number(r, "object", "id", f[0], &o.id)) ||
	    (rc = raw_field_number(r, "object", "size", f[2], &o.size)))
		return rc;
	switch (o.kind) {
	case WITCH_OBJECT_HEAP:
		rc = raw_field_number(r, "object", "allocation node", f[3], &o.alloc_id);
		break;
	case WITCH_OBJECT_STATIC:
		rc = raw_field_hex(r, "object", "address", f[3], &o.addr);
		break;
	case WITCH_OBJECT_TLS:
		rc = raw_field_hex(r, "object", "offset", f[3], &o.addr);
		break;
	default:
		rc = raw_field_hex(r, "object", "pc", f[3], &o.addr);
		break;
	}
	if (rc)
		return rc;
	if (o.id == 0)
		return raw_error(r, -EINVAL,
				 "object id 0 is out of range: object 0 is the unknown object and is never written");
	if (o.kind == WITCH_OBJECT_HEAP && o.alloc_id == 0)
		return raw_error(r, -EINVAL,
				 "object %" PRIu64 ": allocation node 0 is out of range: the root has no calling context",
				 o.id);
	if (raw_find_object_id(r, o.id, &dup))
		return raw_error(r, -EINVAL, "duplicate object id %" PRIu64, o.id);
	if (r->nobjects >= MAX_ENTRIES)
		return raw_error(r, -EINVAL, "too many objects");
	rc = profile_grow((void **)&r->objects, &r->capobjects, r->nobjects, sizeof(*r->objects));
	if (rc)
		return rc;
	if (want == 5) {
		if (strcmp(f[4], "-") && !(o.symbol = strdup(f[4])))
			return -ENOMEM;
		if (!(o.module = strdup(cur))) {
			free(o.symbol);
			return -ENOMEM;
		}
	}
	o.line = r->line;
	rc = index_table_insert(&r->object_ids, index_hash_u64(o.id), (uint32_t)r->nobjects);
	if (rc) {
		free(o.symbol);
		free(o.module);
		return rc;
	}
	r->objects[r->nobjects++] = o;
	return 0;
}

static int rec_object_sampled(struct raw_profile *r, char *cur)
{
	struct raw_object_sampled s = { 0 };
	char *f[2] = { NULL };
	int rc = raw_fields_exact(r, &cur, f, 2, "object_sampled", "object_sampled <id> <bytes>");

	if (rc)
		return rc;
	if ((rc = raw_field_number(r, "object_sampled", "id", f[0], &s.object_id)) ||
	    (rc = raw_field_metric(r, "object_sampled", "bytes", f[1], &s.bytes)))
		return rc;
	/* Object references are resolved at the end, as pairs' nodes are. */
	s.line = r->line;
	rc = profile_grow((void **)&r->object_sampled, &r->capobject_sampled, r->nobject_sampled,
			  sizeof(*r->object_sampled));
	if (rc)
		return rc;
	r->object_sampled[r->nobject_sampled++] = s;
	return 0;
}

static int rec_pair_object(struct raw_profile *r, char *cur)
{
	static const char syntax[] =
		"pair_object <watch-node> <trap-node> <object-id> <waste> <use> <waste_approx>";
	struct raw_pair_object po = { 0 };
	char *f[6] = { NULL };
	int rc = raw_fields_exact(r, &cur, f, 6, "pair_object", syntax);

	if (rc)
		return rc;
	if ((rc = raw_field_number(r, "pair_object", "watch node", f[0], &po.watch_id)) ||
	    (rc = raw_field_number(r, "pair_object", "trap node", f[1], &po.trap_id)) ||
	    (rc = raw_field_number(r, "pair_object", "object id", f[2], &po.object_id)) ||
	    (rc = raw_field_metric(r, "pair_object", "waste", f[3], &po.waste)) ||
	    (rc = raw_field_metric(r, "pair_object", "use", f[4], &po.use)) ||
	    (rc = raw_field_metric(r, "pair_object", "waste_approx", f[5], &po.waste_approx)))
		return rc;
	if (po.watch_id == 0 || po.trap_id == 0)
		return raw_error(r, -EINVAL,
				 "pair_object: node 0 is out of range: the root has no calling context");
	po.line = r->line;
	rc = profile_grow((void **)&r->pair_objects, &r->cappair_objects, r->npair_objects,
			  sizeof(*r->pair_objects));
	if (rc)
		return rc;
	r->pair_objects[r->npair_objects++] = po;
	return 0;
}

/* A second header line inside the file. */
static int rec_magic_again(struct raw_profile *r, char *cur)
{
	(void)cur;
	return raw_duplicate(r, PROFILE_MAGIC);
}

/* A bare `end` is the parser's (raw_parse); one with fields is not an end. */
static int rec_end_with_fields(struct raw_profile *r, char *cur)
{
	(void)cur;
	return raw_error(r, -EINVAL, "malformed 'end' record: too many fields (expected 'end')");
}

static const struct {
	const char *name;
	int (*parse)(struct raw_profile *r, char *cur);
} record_types[] = {
	{"client", rec_client},
	{"sampler", rec_sampler},
	{"sampler_why", rec_sampler_why},
	{"verdicts", rec_verdicts},
	{"period", rec_period},
	{"tolerance", rec_tolerance},
	{"stat", rec_stat},
	{"pid", rec_pid},
	{"exe", rec_exe},
	{"module", rec_module},
	{"node", rec_node},
	{"pair", rec_pair},
	{"sampled", rec_sampled},
	{"object", rec_object},
	{"object_sampled", rec_object_sampled},
	{"pair_object", rec_pair_object},
	{PROFILE_MAGIC, rec_magic_again},
	{"end", rec_end_with_fields},
};

int raw_dispatch(struct raw_profile *r, char *line)
{
	char *cur = line, *type, q[64];

	/* Quote before splitting: raw_next_field() cuts the line in place. */
	raw_quote(q, sizeof(q), line);
	type = raw_next_field(&cur);
	if (!type)
		return 0;	/* blank line: no record, nothing lost */
	if (!raw_is_record_type(type))
		return raw_error(r, -EINVAL,
				 "malformed line: '%s' does not start with a record type",
				 q);
	for (size_t i = 0; i < sizeof(record_types) / sizeof(record_types[0]); i++)
		if (!strcmp(type, record_types[i].name))
			return record_types[i].parse(r, cur);
	/* Unknown record type: skipped, as the format requires. */
	return 0;
}
