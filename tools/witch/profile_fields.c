/* profile_fields: tokens, numbers and messages of profile lines (see profile_fields.h). */
#include "profile_fields.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Grow a dynamic array so that one more element fits. */
int profile_grow(void **arr, size_t *cap, size_t n, size_t elem)
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
void raw_quote(char *out, size_t outlen, const char *s)
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
int raw_error(struct raw_profile *r, int code, const char *fmt, ...)
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
char *raw_next_field(char **cur)
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
int raw_parse_digits(const char *s, int base, uint64_t *out)
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
int raw_parse_number(const char *s, uint64_t *out)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return raw_parse_digits(s + 2, 16, out);
	return raw_parse_digits(s, 10, out);
}

/*
 * An address the format documents as hex (pc, start, end). Numbers are
 * decimal unless written 0x..., so a hex address without the prefix is a
 * writer bug that could silently misread all-digit values; we insist on
 * the prefix. A bare "0" is accepted because printf("%#lx", 0) writes it.
 */
int raw_parse_hex(const char *s, uint64_t *out)
{
	if (!strcmp(s, "0")) {
		*out = 0;
		return 0;
	}
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return raw_parse_digits(s + 2, 16, out);
	return -EINVAL;
}

/* A metric: finite, non-negative, possibly fractional. */
int raw_parse_metric(const char *s, double *out)
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
int raw_field_error(struct raw_profile *r, const char *rec, const char *what,
		       const char *tok, int rc, const char *expected)
{
	char q[64];

	raw_quote(q, sizeof(q), tok);
	if (rc == -ERANGE)
		return raw_error(r, -EINVAL,
				 "malformed '%s' record: %s '%s' is out of range",
				 rec, what, q);
	return raw_error(r, -EINVAL, "malformed '%s' record: %s '%s' is not %s",
			 rec, what, q, expected);
}

int raw_field_number(struct raw_profile *r, const char *rec,
			const char *what, const char *tok, uint64_t *out)
{
	int rc = raw_parse_number(tok, out);

	return rc ? raw_field_error(r, rec, what, tok, rc, "a number") : 0;
}

int raw_field_hex(struct raw_profile *r, const char *rec, const char *what,
		     const char *tok, uint64_t *out)
{
	int rc = raw_parse_hex(tok, out);

	return rc ? raw_field_error(r, rec, what, tok, rc, "a 0x-prefixed hex address") : 0;
}

int raw_field_metric(struct raw_profile *r, const char *rec,
			const char *what, const char *tok, double *out)
{
	int rc = raw_parse_metric(tok, out);

	return rc ? raw_field_error(r, rec, what, tok, rc, "a non-negative number") : 0;
}

/*
 * Split exactly n fields off *cur into f[]; fewer or more is malformed,
 * with the record's syntax in the message.
 */
int raw_fields_exact(struct raw_profile *r, char **cur, char **f, int n,
			const char *rec, const char *syntax)
{
	for (int i = 0; i < n; i++) {
		f[i] = raw_next_field(cur);
		if (!f[i])
			return raw_error(r, -EINVAL,
					 "malformed '%s' record: too few fields (expected '%s')",
					 rec, syntax);
	}
	if (raw_next_field(cur))
		return raw_error(r, -EINVAL,
				 "malformed '%s' record: too many fields (expected '%s')",
				 rec, syntax);
	return 0;
}

bool raw_is_record_type(const char *s)
{
	if (!(*s >= 'a' && *s <= 'z'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '-'))
			return false;
	return true;
}

int raw_duplicate(struct raw_profile *r, const char *rec)
{
	return raw_error(r, -EINVAL, "duplicate '%s' record", rec);
}

/* Find a raw index by id in one of the id tables. */
bool raw_find_module_id(const struct raw_profile *r, uint64_t id,
			   uint32_t *idx)
{
	struct index_probe pr;

	index_table_probe_start(&r->module_ids, index_hash_u64(id), &pr);
	while (index_table_probe_next(&r->module_ids, &pr, idx))
		if (r->modules[*idx].id == id)
			return true;
	return false;
}

bool raw_find_node_id(const struct raw_profile *r, uint64_t id,
			 uint32_t *idx)
{
	struct index_probe pr;

	index_table_probe_start(&r->node_ids, index_hash_u64(id), &pr);
	while (index_table_probe_next(&r->node_ids, &pr, idx))
		if (r->nodes[*idx].id == id)
			return true;
	return false;
}

bool raw_find_object_id(const struct raw_profile *r, uint64_t id,
			   uint32_t *idx)
{
	struct index_probe pr;

	index_table_probe_start(&r->object_ids, index_hash_u64(id), &pr);
	while (index_table_probe_next(&r->object_ids, &pr, idx))
		if (r->objects[*idx].id == id)
			return true;
	return false;
}
