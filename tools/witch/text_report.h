/* text_report: the report as text for people (the default format). */
#ifndef WITCH_TOOL_TEXT_REPORT_H
#define WITCH_TOOL_TEXT_REPORT_H

#include "view.h"

#include <stdio.h>

/* The summary, then the shown pairs with both contexts, frame lines cut to
 * v->width.  0 or a negative errno. */
int witch_text_write(FILE *out, const struct witch_view *v);

#endif
