/*
 * folded: a profile model as folded stacks, the input format of
 * flamegraph.pl and speedscope (docs/report-formats.md).
 *
 * One line per pair with waste: the synthetic stack root first - the
 * C_watch frames from the outermost caller to the watched access, the
 * client's marker frame (KILLED_BY, OVERWRITTEN_BY_SAME_VALUE or
 * RELOADED_BY), the C_trap frames from the outermost caller to the
 * trapping access - separated by ';', then a space and the pair's waste
 * in bytes rounded to the nearest integer (halves away from
 * zero, as C round()). Pairs whose waste rounds to 0
 * (use only) have nothing to draw and are left out.
 *
 * A frame is the function name; an inlined call is a frame of its own
 * with flamegraph.pl's "_[i]" suffix; an unknown function is written
 * "?? (MODULE-BASENAME+0xOFFSET)". ';' inside a name (which would split
 * it) becomes ':', and line breaks become spaces.
 */
#ifndef WITCH_TOOL_FOLDED_H
#define WITCH_TOOL_FOLDED_H

#include "view.h"

#include <stdio.h>

/* The lines of the shown pairs, in v's order.  0, or a negative errno from
 * the symbolizer; write errors stick in out for the caller to check. */
int witch_folded_write(FILE *out, const struct witch_view *v);

#endif
