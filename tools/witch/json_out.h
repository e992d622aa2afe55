/*
 * json_out: the JSON pieces every JSON view writes (report --json,
 * diff --json): strings and numbers.
 *
size_t json_out_utf8_len(const unsigned char *s);
 *       v in the shortest of %.15g / %.17g that reads back as the same
 *       double (v must be finite: JSON has no inf or nan).
 *   size_t json_out_utf8_len(const unsigned char *s);
 *       Length of the valid UTF-8 sequence at s (1-4), or 0 if it is not
 *       one (overlong, surrogate, past U+10FFFF).  Also used by html.c.
 * Write errors stick in the stream; callers check ferror once at the end.
 */
#ifndef WITCH_TOOL_JSON_OUT_H
#define WITCH_TOOL_JSON_OUT_H

#include <stddef.h>
#include <stdio.h>

/* s as a JSON string. Paths and names come from files and DWARF and may hold
 * any bytes; JSON must be valid UTF-8, so bytes that are not UTF-8 become
 * U+FFFD and control characters are escaped. */
void json_out_str(FILE *out, const char *s);
void json_out_num(FILE *out, double v);
size_t json_out_utf8_len(const unsigned char *s);

#endif
