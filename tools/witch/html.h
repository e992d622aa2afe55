/*
 * html: a profile model as one self-contained HTML page
 * (docs/report-formats.md): inline CSS and JavaScript, no network and no
 * other files, so it can be mailed, attached to a CI run or opened from
 * disk.
 *
 * The page leads with the answer, then gives the detail:
 *   - one sentence: the fraction of sampled accesses that were waste and
 *     the top pair's share of it;
 *   - the three pairs with most waste (#top, div.lead): share, what to look
 *     at (a sentence per client naming both accesses), both calling
 *     contexts and the source lines of the watched and of the trapping
 *     instruction, the line itself marked '>' as in `witch report
 *     --source` (pre.src, one span per line), or one line saying why
 *     there is none; and, when the profile has objects, a line naming the
 *     objects its waste fell on (p.objs);
 *   - the objects table (#objects, only for profiles with object records,
 *     object_view.h): rank, share, waste, use, sampled bytes, size, kind,
 *     name and a heap object's allocation context;
 *   - the flame graph of the pairs with waste (html_flame.h): an icicle,
 *     root at the top, the watched context, the marker frame, the
 *     trapping context;
 *   - the pair table (#pairs): rank, share, waste, use, traps and both
 *     calling contexts leaf first (function, file:line, module and
 *     address, inlined frames marked), as the text report lists them;
 *   - the counters and settings (program, client, sampler, samples,
 *     watchpoints armed, traps, waste and use bytes, fraction, other
 *     counters) in a collapsed <details id="counters">.
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
