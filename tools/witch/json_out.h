/*
 * json_out: the JSON pieces every JSON view writes (report --json,
 * diff --json): strings and numbers.
 *
 * API
 *   void json_out_str(FILE *out, const char *s);
 *       s as a JSON string. Paths and names come from files and DWARF and
 *       may hold any bytes; JSON must be valid UTF-8, so bytes that are not
 *       UTF-8 become U+FFFD and control characters are escaped.
 *   void json_out_num(FILE *out, double v);
 *       v in the shortest of %.15g / %.17g that reads back as the same
 *       double (v must be finite: JSON has no inf or nan).
 * Write errors stick in the stream; callers check ferror once at the end.
 */
#ifndef WITCH_TOOL_JSON_OUT_H
#define WITCH_TOOL_JSON_OUT_H

#include <stdio.h>

void json_out_str(FILE *out, const char *s);
void json_out_num(FILE *out, double v);

#endif
