/*
 * profile_fields: the fields of a profile line, for profile_parse.c and
 * profile_records.c: tokens, numbers, and errors that name FILE:LINE.
 * Each returns 0 or a negative errno and leaves its message in r->err.
 */
#ifndef WITCH_TOOL_PROFILE_FIELDS_H
#define WITCH_TOOL_PROFILE_FIELDS_H

#include "profile_parse.h"

/* s bounded for a message, non-printable bytes as '?'. */
void raw_quote(char *out, size_t outlen, const char *s);
/* "FILE:LINE: ..." into r->err; returns code. */
int raw_error(struct raw_profile *r, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The next space-separated field of *cur, cut in place; NULL at the end. */
char *raw_next_field(char **cur);
int raw_parse_digits(const char *s, int base, uint64_t *out);
int raw_parse_number(const char *s, uint64_t *out);
int raw_parse_hex(const char *s, uint64_t *out);
int raw_parse_metric(const char *s, double *out);
int raw_field_error(struct raw_profile *r, const char *rec, const char *what,
		    const char *tok, int rc, const char *expected);
int raw_field_number(struct raw_profile *r, const char *rec, const char *what,
		     const char *tok, uint64_t *out);
int raw_field_hex(struct raw_profile *r, const char *rec, const char *what,
		  const char *tok, uint64_t *out);
int raw_field_metric(struct raw_profile *r, const char *rec, const char *what,
		     const char *tok, double *out);
/* Exactly n fields into f, else a message quoting the record's syntax. */
int raw_fields_exact(struct raw_profile *r, char **cur, char **f, int n,
		     const char *rec, const char *syntax);
bool raw_is_record_type(const char *s);
int raw_duplicate(struct raw_profile *r, const char *rec);
bool raw_find_module_id(const struct raw_profile *r, uint64_t id, uint32_t *idx);
bool raw_find_node_id(const struct raw_profile *r, uint64_t id, uint32_t *idx);
bool raw_find_object_id(const struct raw_profile *r, uint64_t id, uint32_t *idx);

/* profile_records.c: one record line (its type is the first field) into r. */
int raw_dispatch(struct raw_profile *r, char *line);

#endif
