/*
 * profile_read: parse and merge libwitch profiles; see profile_read.h.
 *
 * A file is parsed completely into a per-file "raw" form first and checked
 * (references, required records, the closing `end`), and only then merged
 * into the model, so a bad file never leaves half of itself behind.
 */
#include "profile_read.h"

#include "index_table.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PROFILE_MAGIC "witch-profile"
#define PROFILE_VERSION 1

/* Merged indices are uint32_t; the largest one is reserved (WITCH_NO_MODULE). */
#define MAX_ENTRIES ((size_t)UINT32_MAX - 1)

struct witch_profile_index {
	struct index_table nodes;	/* by (parent, module, offset) */
	struct index_table pairs;	/* by (watch, trap) */
	/* Allocated lengths of the model's arrays. */
	size_t cap_modules, cap_nodes, cap_pairs, cap_stats;
};

/* ---- per-file raw form ---- */

struct raw_module {
	uint64_t id;
	uint64_t base, start, end;
	char *build_id;		/* NULL for "-" */
	char *path;
	size_t line;		/* for messages about it */
	uint32_t merged;	/* index in the model, set while merging */
};

struct raw_node {
	uint64_t id;
	uint32_t parent;	/* raw index + 1; 0 is the root */
	uint64_t pc;
	uint32_t merged;
};

struct raw_pair {
	uint64_t watch_id, trap_id;
	uint32_t watch, trap;	/* raw node index + 1, resolved at the end */
	double waste, use, waste_approx;
	bool has_waste_approx;
	uint64_t traps;
	size_t line;
};

struct raw_profile {
	const char *path;
	char *err;
	size_t errlen;
	size_t line;

	bool has_client, has_sampler, has_pid, has_exe;
	enum witch_client client;
	char *sampler;
	uint64_t period;
	bool has_period;
	double tolerance;
	bool has_tolerance;
	uint64_t pid;
	char *exe;
	char *sampler_why;

	struct witch_stat *stats;
	size_t nstats, capstats;
	struct raw_module *modules;
	size_t nmodules, capmodules;
	struct raw_node *nodes;
	size_t nnodes, capnodes;
	struct raw_pair *pairs;
	size_t npairs, cappairs;

	struct index_table module_ids;	/* id -> raw module index */
	struct index_table node_ids;	/* id -> raw node index */
};

/* ---- small helpers ---- */

/* Grow a dynamic array so that one more element fits. */
static int grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	size_t ncap;
	void *na;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	if (ncap < *cap || ncap > SIZE_MAX / elem)
		return -ENOMEM;
	na = realloc(*arr, ncap * elem);
	if (!na)
		return -ENOMEM;
	*arr = na;
	*cap = ncap;
	return 0;
}

/*
 * Copy s for an error message: bounded, and non-printable bytes shown as
 * '?', so that binary garbage cannot mangle the terminal.
 */
static void quote_token(char *out, size_t outlen, const char *s)
{
	size_t i = 0;

	for (; *s && i + 4 < outlen; s++)
		out[i++] = isprint((unsigned char)*s) ? *s : '?';
	if (*s && i + 4 >= outlen) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
}

/* Record a message "FILE:LINE: ..." and return -EINVAL (or the given code). */
static int __attribute__((format(printf, 3, 4)))
raw_error(struct raw_profile *r, int code, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(r->err, r->errlen, "%s:%zu: ", r->path, r->line);
	if (n >= 0 && (size_t)n < r->errlen) {
		va_start(ap, fmt);
		vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return code;
}

/*
 * Split the next space-separated field off *cur, NUL-terminating it in
 * place. Runs of spaces count as one separator: the format asks for
 * single spaces, but rejecting a file for extra blanks would gain nothing.
 * Exactly one separator is consumed after the field, so that a following
 * "rest of the line" field (module path) keeps any spaces of its own.
 */
static char *next_field(char **cur)
{
	char *s = *cur, *e;

	while (*s == ' ')
		s++;
	if (!*s) {
		*cur = s;
		return NULL;
	}
	e = s;
	while (*e && *e != ' ')
		e++;
	if (*e) {
		*e = '\0';
		*cur = e + 1;
	} else {
		*cur = e;
	}
	return s;
}

/* Strict unsigned parse in the given base; no sign, no blanks, no overflow. */
static int parse_digits(const char *s, int base, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		int d;

		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return -ERANGE;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	*out = v;
	return 0;
}

/* A number: decimal unless written 0x... (the format's rule for numbers). */
static int parse_number(const char *s, uint64_t *out)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_digits(s + 2, 16, out);
	return parse_digits(s, 10, out);
}

/*
 * An address the format documents as hex (pc, start, end). Numbers are
 * decimal unless written 0x..., so a hex address without the prefix is a
 * writer bug that could silently misread all-digit values; we insist on
 * the prefix. A bare "0" is accepted because printf("%#lx", 0) writes it.
 */
static int parse_hex_addr(const char *s, uint64_t *out)
{
	if (!strcmp(s, "0")) {
		*out = 0;
		return 0;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_digits(s + 2, 16, out);
	return -EINVAL;
}

/* A metric: finite, non-negative, possibly fractional. */
static int parse_metric(const char *s, double *out)
{
	char *end;
	double v;

	/* strtod accepts leading blanks and signs; the format has neither. */
	if (!*s || isspace((unsigned char)*s) || *s == '+' || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || end == s)
		return -EINVAL;
	if (errno == ERANGE && (v > 1.0 || v < -1.0))
		return -ERANGE;	/* overflow; underflow to ~0 is harmless */
	if (!isfinite(v))
		return -ERANGE;
	*out = v;
	return 0;
}

/* Field parsers that produce the error message on failure: `expected`
 * says what a good token looks like. */
static int field_error(struct raw_profile *r, const char *rec, const char *what,
		       const char *tok, int rc, const char *expected)
{
	char q[64];

	quote_token(q, sizeof(q), tok);
	if (rc == -ERANGE)
		return raw_error(r, -EINVAL,
				 "malformed '%s' record: %s '%s' is out of range",
				 rec, what, q);
	return raw_error(r, -EINVAL, "malformed '%s' record: %s '%s' is not %s",
			 rec, what, q, expected);
}

static int field_number(struct raw_profile *r, const char *rec,
			const char *what, const char *tok, uint64_t *out)
{
	int rc = parse_number(tok, out);

	return rc ? field_error(r, rec, what, tok, rc, "a number") : 0;
}

static int field_hex(struct raw_profile *r, const char *rec, const char *what,
		     const char *tok, uint64_t *out)
{
	int rc = parse_hex_addr(tok, out);

	return rc ? field_error(r, rec, what, tok, rc, "a 0x-prefixed hex address") : 0;
}

static int field_metric(struct raw_profile *r, const char *rec,
			const char *what, const char *tok, double *out)
{
	int rc = parse_metric(tok, out);

	return rc ? field_error(r, rec, what, tok, rc, "a non-negative number") : 0;
}

/*
 * Split exactly n fields off *cur into f[]; fewer or more is malformed,
 * with the record's syntax in the message.
 */
static int fields_exact(struct raw_profile *r, char **cur, char **f, int n,
			const char *rec, const char *syntax)
{
	for (int i = 0; i < n; i++) {
		f[i] = next_field(cur);
		if (!f[i])
			return raw_error(r, -EINVAL,
					 "malformed '%s' record: too few fields (expected '%s')",
					 rec, syntax);
	}
	if (next_field(cur))
		return raw_error(r, -EINVAL,
				 "malformed '%s' record: too many fields (expected '%s')",
				 rec, syntax);
	return 0;
}

static bool is_record_type(const char *s)
{
	if (!(*s >= 'a' && *s <= 'z'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '-'))
			return false;
	return true;
}

static int duplicate(struct raw_profile *r, const char *rec)
{
	return raw_error(r, -EINVAL, "duplicate '%s' record", rec);
}

/* Find a raw index by id in one of the id tables. */
static bool find_module_id(const struct raw_profile *r, uint64_t id,
			   uint32_t *idx)
{
	struct index_probe pr;

	index_table_probe_start(&r->module_ids, index_hash_u64(id), &pr);
	while (index_table_probe_next(&r->module_ids, &pr, idx))
		if (r->modules[*idx].id == id)
			return true;
	return false;
}

static bool find_node_id(const struct raw_profile *r, uint64_t id,
			 uint32_t *idx)
{
	struct index_probe pr;

	index_table_probe_start(&r->node_ids, index_hash_u64(id), &pr);
	while (index_table_probe_next(&r->node_ids, &pr, idx))
		if (r->nodes[*idx].id == id)
			return true;
	return false;
}

/* ---- records ---- */

static int rec_client(struct raw_profile *r, char *cur)
{
	char *f[1] = { NULL }, q[64];
	int rc = fields_exact(r, &cur, f, 1, "client", "client dead|silent|load");

	if (rc)
		return rc;
	if (r->has_client)
		return duplicate(r, "client");
	if (!strcmp(f[0], "dead"))
		r->client = WITCH_CLIENT_DEAD;
	else if (!strcmp(f[0], "silent"))
		r->client = WITCH_CLIENT_SILENT;
	else if (!strcmp(f[0], "load"))
		r->client = WITCH_CLIENT_LOAD;
	else {
		/* The client decides what waste means; we cannot guess it. */
		quote_token(q, sizeof(q), f[0]);
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
	int rc = fields_exact(r, &cur, f, 1, "sampler", "sampler <name>");

	if (rc)
		return rc;
	if (r->has_sampler)
		return duplicate(r, "sampler");
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
	int rc = fields_exact(r, &cur, f, 1, name, usage);

	if (rc)
		return rc;
	if (*has)
		return duplicate(r, name);
	rc = field_number(r, name, name, f[0], out);
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
	int rc = fields_exact(r, &cur, f, 1, "tolerance", "tolerance <relative>");

	if (rc)
		return rc;
	if (r->has_tolerance)
		return duplicate(r, "tolerance");
	rc = field_metric(r, "tolerance", "tolerance", f[0], &r->tolerance);
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

static int rec_exe(struct raw_profile *r, char *cur)
{
	/* The path is the rest of the line and may contain spaces. */
	if (!*cur)
		return raw_error(r, -EINVAL,
				 "malformed 'exe' record: missing path (expected 'exe <path>')");
	if (r->has_exe)
		return duplicate(r, "exe");
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
	int rc = fields_exact(r, &cur, f, 2, "stat", "stat <name> <value>");

	if (rc)
		return rc;
	if (!is_record_type(f[0])) {
		quote_token(q, sizeof(q), f[0]);
		return raw_error(r, -EINVAL,
				 "malformed 'stat' record: '%s' is not a counter name",
				 q);
	}
	rc = field_metric(r, "stat", "value", f[1], &v);
	if (rc)
		return rc;
	for (size_t i = 0; i < r->nstats; i++)
		if (!strcmp(r->stats[i].name, f[0]))
			return raw_error(r, -EINVAL, "duplicate 'stat %s' record",
					 f[0]);
	rc = grow((void **)&r->stats, &r->capstats, r->nstats,
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
		f[i] = next_field(&cur);
		if (!f[i])
			return raw_error(r, -EINVAL,
					 "malformed 'module' record: too few fields (expected '%s')",
					 syntax);
	}
	if (!*cur)
		return raw_error(r, -EINVAL,
				 "malformed 'module' record: missing path (expected '%s')",
				 syntax);
	if ((rc = field_number(r, "module", "id", f[0], &m.id)) ||
	    (rc = field_number(r, "module", "base", f[1], &m.base)) ||
	    (rc = field_hex(r, "module", "start", f[2], &m.start)) ||
	    (rc = field_hex(r, "module", "end", f[3], &m.end)))
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
			quote_token(q, sizeof(q), f[4]);
			return raw_error(r, -EINVAL,
					 "malformed 'module' record: build-id '%s' is neither hex bytes nor '-'",
					 q);
		}
	}
	if (find_module_id(r, m.id, &dup))
		return raw_error(r, -EINVAL, "duplicate module id %" PRIu64,
				 m.id);
	if (r->nmodules >= MAX_ENTRIES)
		return raw_error(r, -EINVAL, "too many modules");

	rc = grow((void **)&r->modules, &r->capmodules, r->nmodules,
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
	int rc = fields_exact(r, &cur, f, 3, "node", "node <id> <parent> <pc>");

	if (rc)
		return rc;
	if ((rc = field_number(r, "node", "id", f[0], &n.id)) ||
	    (rc = field_number(r, "node", "parent", f[1], &parent)) ||
	    (rc = field_hex(r, "node", "pc", f[2], &n.pc)))
		return rc;
	if (n.id == 0)
		return raw_error(r, -EINVAL,
				 "node id 0 is out of range: node 0 is the root and is never written");
	if (find_node_id(r, n.id, &idx))
		return raw_error(r, -EINVAL, "duplicate node id %" PRIu64, n.id);
	if (parent == 0) {
		n.parent = 0;
	} else if (find_node_id(r, parent, &idx)) {
		n.parent = idx + 1;
	} else {
		/* Parents must come first: it is what makes a path finite. */
		return raw_error(r, -EINVAL,
				 "node %" PRIu64 ": parent %" PRIu64 " is not an earlier node",
				 n.id, parent);
	}
	if (r->nnodes >= MAX_ENTRIES)
		return raw_error(r, -EINVAL, "too many nodes");
	rc = grow((void **)&r->nodes, &r->capnodes, r->nnodes,
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

	while (n < 7 && (f[n] = next_field(&cur)))
		n++;
	if (n < 5)
		return raw_error(r, -EINVAL,
				 "malformed 'pair' record: too few fields (expected '%s')",
				 syntax);
	if (n > 6)
		return raw_error(r, -EINVAL,
				 "malformed 'pair' record: too many fields (expected '%s')",
				 syntax);
	if ((rc = field_number(r, "pair", "watch node", f[0], &p.watch_id)) ||
	    (rc = field_number(r, "pair", "trap node", f[1], &p.trap_id)) ||
	    (rc = field_metric(r, "pair", "waste", f[2], &p.waste)) ||
	    (rc = field_metric(r, "pair", "use", f[3], &p.use)) ||
	    (rc = field_number(r, "pair", "traps", f[4], &p.traps)))
		return rc;
	if (n == 6) {
		rc = field_metric(r, "pair", "waste_approx", f[5],
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
	rc = grow((void **)&r->pairs, &r->cappairs, r->npairs,
		  sizeof(*r->pairs));
	if (rc)
		return rc;
	r->pairs[r->npairs++] = p;
	return 0;
}

/* ---- whole file ---- */

static void raw_free(struct raw_profile *r)
{
	free(r->sampler);
	free(r->exe);
	free(r->sampler_why);
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
	index_table_free(&r->module_ids);
	index_table_free(&r->node_ids);
}

static int check_header(struct raw_profile *r, char *line)
{
	char *cur = line, *magic, *version, q[64];
	uint64_t v;

	/* Quote before splitting: next_field() cuts the line in place. */
	quote_token(q, sizeof(q), line);
	magic = next_field(&cur);
	if (!magic || strcmp(magic, PROFILE_MAGIC))
		return raw_error(r, -EINVAL,
				 "not a libwitch profile (expected '%s %d', got '%s')",
				 PROFILE_MAGIC, PROFILE_VERSION, q);
	version = next_field(&cur);
	if (!version || next_field(&cur) || parse_digits(version, 10, &v))
		return raw_error(r, -EINVAL,
				 "malformed header (expected '%s %d')",
				 PROFILE_MAGIC, PROFILE_VERSION);
	if (v != PROFILE_VERSION)
		return raw_error(r, -EPROTONOSUPPORT,
				 "unsupported profile version %" PRIu64 " (this witch reads version %d)",
				 v, PROFILE_VERSION);
	return 0;
}

static int dispatch(struct raw_profile *r, char *line)
{
	char *cur = line, *type, q[64];

	/* Quote before splitting: next_field() cuts the line in place. */
	quote_token(q, sizeof(q), line);
	type = next_field(&cur);
	if (!type)
		return 0;	/* blank line: no record, nothing lost */
	if (!is_record_type(type))
		return raw_error(r, -EINVAL,
				 "malformed line: '%s' does not start with a record type",
				 q);
	if (!strcmp(type, "client"))
		return rec_client(r, cur);
	if (!strcmp(type, "sampler"))
		return rec_sampler(r, cur);
	if (!strcmp(type, "sampler_why"))
		return rec_sampler_why(r, cur);
	if (!strcmp(type, "period"))
		return rec_period(r, cur);
	if (!strcmp(type, "tolerance"))
		return rec_tolerance(r, cur);
	if (!strcmp(type, "stat"))
		return rec_stat(r, cur);
	if (!strcmp(type, "pid"))
		return rec_pid(r, cur);
	if (!strcmp(type, "exe"))
		return rec_exe(r, cur);
	if (!strcmp(type, "module"))
		return rec_module(r, cur);
	if (!strcmp(type, "node"))
		return rec_node(r, cur);
	if (!strcmp(type, "pair"))
		return rec_pair(r, cur);
	if (!strcmp(type, PROFILE_MAGIC))
		return duplicate(r, PROFILE_MAGIC);
	if (!strcmp(type, "end"))	/* a bare `end` never gets here */
		return raw_error(r, -EINVAL,
				 "malformed 'end' record: too many fields (expected 'end')");
	/* Unknown record type: skipped, as the format requires. */
	return 0;
}

static int cmp_module_start(const void *a, const void *b, void *arg)
{
	const struct raw_module *m = arg;
	const struct raw_module *x = &m[*(const uint32_t *)a];
	const struct raw_module *y = &m[*(const uint32_t *)b];

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * After `end`: resolve pair references, check required records and that
 * executable ranges do not overlap (a pc must name one module).
 * by_start receives the module indices sorted by start.
 */
static int raw_finish(struct raw_profile *r, uint32_t *by_start)
{
	uint32_t prev = UINT32_MAX;

	if (!r->has_client)
		return raw_error(r, -EINVAL, "missing 'client' record");
	if (!r->has_sampler)
		return raw_error(r, -EINVAL, "missing 'sampler' record");
	for (size_t i = 0; i < r->npairs; i++) {
		struct raw_pair *p = &r->pairs[i];
		uint32_t w, t;

		r->line = p->line;
		if (!find_node_id(r, p->watch_id, &w))
			return raw_error(r, -EINVAL,
					 "pair: watch node %" PRIu64 " is not defined",
					 p->watch_id);
		if (!find_node_id(r, p->trap_id, &t))
			return raw_error(r, -EINVAL,
					 "pair: trap node %" PRIu64 " is not defined",
					 p->trap_id);
		p->watch = w + 1;
		p->trap = t + 1;
	}
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
static int raw_parse(struct raw_profile *r, FILE *f)
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
		rc = dispatch(r, line);
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

/* ---- merging ---- */

void witch_profile_init(struct witch_profile *p)
{
	memset(p, 0, sizeof(*p));
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
	rc = grow((void **)&p->modules, cap, p->nmodules, sizeof(*p->modules));
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
	rc = grow((void **)&p->nodes, cap, p->nnodes, sizeof(*p->nodes));
	if (rc)
		return rc;
	rc = index_table_insert(&p->index->nodes, h, (uint32_t)p->nnodes);
	if (rc)
		return rc;
	n = &p->nodes[p->nnodes];
	n->parent = parent;
	n->module = module;
	n->offset = offset;
	/* Unsigned wrap-around keeps pc = base + offset exact either way. */
	n->pc = module == WITCH_NO_MODULE ? offset :
					    p->modules[module].base + offset;
	*out = (uint32_t)p->nnodes++;
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
	rc = grow((void **)&p->pairs, cap, p->npairs, sizeof(*p->pairs));
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
	rc = grow((void **)&p->stats, cap, p->nstats, sizeof(*p->stats));
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

	for (size_t i = 0; i < r->npairs; i++) {
		const struct raw_pair *rp = &r->pairs[i];

		rc = merge_pair(p, &ix->cap_pairs, rp, r->nodes[rp->watch - 1].merged,
				r->nodes[rp->trap - 1].merged);
		if (rc)
			return rc;
	}
	return 0;
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
	p->index->cap_nodes = 16;
	p->nodes = calloc(p->index->cap_nodes, sizeof(*p->nodes));
	if (!p->nodes)
		return -ENOMEM;
	/* The root: no module, no pc; never a key of a lookup. */
	p->nodes[0].parent = 0;
	p->nodes[0].module = WITCH_NO_MODULE;
	p->nnodes = 1;
	return 0;
}

int witch_profile_read(struct witch_profile *p, const char *path, char *err,
		       size_t errlen)
{
	struct raw_profile r = { 0 };
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

	r.path = path;
	r.err = err;
	r.errlen = errlen;
	index_table_init(&r.module_ids);
	index_table_init(&r.node_ids);
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
	if (p->index) {
		index_table_free(&p->index->nodes);
		index_table_free(&p->index->pairs);
		free(p->index);
	}
	witch_profile_init(p);
}
