/*
 * pprof: a profile model as a gzipped pprof profile (profile.proto, the
 * format of `go tool pprof`, written with protobuf-c; the schema is in
 * profile.proto next to this file). docs/report-formats.md says how to
 * read it.
 *
 * Each pair is one sample. Its stack, leaf first as pprof wants it, is
 * the C_trap locations (trapping access first, then its callers), then
 * the client's marker location (a function named KILLED_BY,
 * OVERWRITTEN_BY_SAME_VALUE or RELOADED_BY, Witch 4.6.5), then the C_watch
 * locations (watched access first). So a flame graph, drawn root first,
 * shows where the waste was watched, the marker, and what wasted it.
 * Sample values, in this order: "waste"/"bytes", "use"/"bytes" (both
 * rounded to the nearest integer, as C round(); pprof values are
 * integers) and "traps"/"count"; the default sample type is waste.
 * A pair whose waste and use fell on objects (`pair_object` records,
 * object_view.h) is one sample per object instead, each with its part and
 * a string label `object` = the object's name (pprof -tags, -tagfocus);
 * the pair's traps go to its first sample (the object with the most
 * waste), and what the objects do not cover, if any, is one more sample
 * without the label.
 *
 * One location per calling-context node pc, shared between samples:
 * inlined calls are extra lines of that location (innermost first), as
 * pprof models inlining. One function per (name, file). One mapping per
 * module, with its run-time range, path and build-id; pcs outside every
 * module, and the marker, have no mapping. A frame the symbolizer could
 * not name gets no line, so pprof shows its address.
 */
#ifndef WITCH_TOOL_PPROF_H
#define WITCH_TOOL_PPROF_H

#include "view.h"

#include <stdio.h>

/* The gzipped profile of the shown pairs.  0, -ENOMEM, -EIO (zlib failed),
 * or a negative errno from the symbolizer; write errors stick in out. */
int witch_pprof_write(FILE *out, const struct witch_view *v);

#endif
