/*
 * html_flame: the flame graph of the HTML page (html.h). Each pair with
 * waste is one stack, root first: the C_watch frames from the outermost
 * caller, the client's marker frame (witch_marker_frame), the C_trap
 * frames from the outermost caller; widths are waste. It is drawn as an
 * icicle, the root at the top and every stack growing down, by the page's
 * script from JSON embedded in the page:
 *   {"marker":M, "total":TOTAL_WASTE, "names":[{"f":LABEL,"i":0|1}...],
 *    "stacks":[{"r":RANK, "v":WASTE, "w":[NAME...], "t":[NAME...]}...]}
 * Click a frame to zoom into it, the root to reset; hover for bytes and
 * share. Frame labels are the symbolizer's names (symbolize.h).
 */
#ifndef WITCH_TOOL_HTML_FLAME_H
#define WITCH_TOOL_HTML_FLAME_H

#include "view.h"

#include <stddef.h>
#include <stdio.h>

/* The style rules of the graph, for the page's <style>. */
extern const char html_flame_css[];
/* The JSON of the shown pairs' stacks into a malloc'd *json of *len bytes.
 * 0, -ENOMEM or the symbolizer's error (then *json is NULL). */
int html_flame_data(const struct witch_view *v, char **json, size_t *len);
/* The heading, hint, graph container, the data and the script. */
void html_flame_write(FILE *out, const struct witch_view *v, const char *json, size_t len);

#endif
