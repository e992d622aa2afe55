/*
 * html_out: strings and numbers written into an HTML page, escaped for
 * where they go. Names and paths come from files and DWARF and may hold
 * any bytes.
 */
#ifndef WITCH_TOOL_HTML_OUT_H
#define WITCH_TOOL_HTML_OUT_H

#include <stddef.h>
#include <stdio.h>

/* s as HTML text or a quoted attribute value: markup characters become
 * entities; bytes that are not UTF-8 and control characters U+FFFD. */
void html_out_text(FILE *out, const char *s);
/* ` NAME="V"`, V as the JSON report writes numbers (exact, for tools). */
void html_out_num_attr(FILE *out, const char *name, double v);
/* JSON text (valid UTF-8, from json_out) copied into a <script> element,
 * '<', '>' and '&' as \u escapes so nothing in it can end the element. */
void html_out_script_json(FILE *out, const char *json, size_t len);

#endif
