/*
 * html: a profile model as one self-contained HTML page
 * (docs/report-formats.md): inline CSS and JavaScript, no network and no
 * other files, so it can be mailed, attached to a CI run or opened from
 * disk.
 *
 * The page has
 *   - a summary table (program, client, sampler, samples, watchpoints
 *     armed, traps, waste and use bytes, fraction, other counters);
 *   - an interactive flame graph of the pairs with waste: each pair is a
 *     stack root first - the C_watch frames from the outermost caller,
 *     the client's marker frame (witch_marker_frame), the C_trap frames -
 *     with widths proportional to waste. The stacks are embedded as JSON
 *     and laid out by the page's script (click a frame to zoom into it,
 *     click the root to reset, hover for name, waste and share);
 *   - the pair table: rank, share, waste, use, traps and both calling
 *     contexts leaf first (function, file:line, module and address,
 *     inlined frames marked), as the text report lists them.
 * Every string from the profile or the debug info is escaped for where
 * it goes (HTML text and attributes, or JSON inside the script element);
 * bytes that are not UTF-8 become U+FFFD. The rows and frames carry data-*
 * attributes with exact values (JSON number syntax) for tools and tests.
 */
#ifndef WITCH_TOOL_HTML_H
#define WITCH_TOOL_HTML_H

#include "view.h"

#include <stdio.h>

/* The page for the shown pairs, in v's order (totals over all pairs).  0,
 * or a negative errno (the symbolizer's, or -ENOMEM); write errors stick
 * in out for the caller to check. */
int witch_html_write(FILE *out, const struct witch_view *v);

#endif
