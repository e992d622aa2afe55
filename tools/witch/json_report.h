/*
 * json_report: the report as one JSON object, for scripts and
 * bench/accuracy.sh (the oracle writes the same schema).
 *
 * JSON schema (names and meanings are stable; more fields may be added):
 *   {"client":"dead|silent|load", "sampler":"soft|pmu|mixed",
 *    ["sampler_why":"...",]                      why the PMU sampler did not run
 *    "verdicts":"traps|window|none|mixed",       what decided the pairs
 *                                                (docs/profile-format.md)
 *    "samples":N, "watchpoints_armed":N, "traps":N,
 *    "waste":BYTES, "use":BYTES, "fraction":F,   F = waste/(waste+use), 0 if both 0
 *    ["waste_approx":BYTES,]                     when any pair has it
 *    ["tolerance":T,]                            silent/load: FP relative tolerance
 *    "profiles":N, "pids":[...], ["exe":"...",] ["period":N,]
 *    "stats":{"name":value,...},                 every stat counter, summed
 *    "pairs":[{"waste":B, "use":B, "share":S,    S = waste/total waste (0 if none)
 *              "traps":N, ["waste_approx":B,]
 *              "watch":[FRAME...], "trap":[FRAME...],     frames leaf first
 *              ["objects":[{"kind":K, "name":"...",    the pair's part on each
 *                           "waste":B, "use":B}]]}],   object, by waste; only for
 *                                                pairs with pair_object records
 *    "objects":[{"kind":K, "name":"...",         every object (docs/objects.md),
 *                "size":N, "waste":B, "use":B,   by waste; [] for profiles
 *                "share":S, "sampled":B,         without object records;
 *                "alloc":[FRAME...]}],           S = waste/total waste; alloc:
 *                                                heap: allocation context, leaf
 *                                                first (the call of the
 *                                                allocator); [] for other kinds
 *    "sampled_total":BYTES,                      what all samples stand for
 *    "sampled":[{"bytes":B, "share":S,           S = bytes/sampled_total; the
 *                "context":[FRAME...]}]}         200 largest contexts (--top 0: all)
 *   FRAME = {"function":"...", ["raw":"...",] "file":"...", "line":N, "module":"...",
 *            "address":"0x...", "offset":"0x...", ["inlined":true]}
 *   function is the name as people read it (symbolize.h): C++ and Rust
 *   names demangled, "[unknown in MODULE]" for a frame nothing names,
 *   "[JIT]" for a pc outside every module; raw, when the name was
 *   demangled, is the symbol as the binary spells it.
 *   K = "heap" | "static" | "tls" | "stack" | "unknown"; names as
 *   object_view.h makes them: "heap from FUNCTION (FILE:LINE)", "SYMBOL",
 *   "SYMBOL (MODULE)", "[data in MODULE]", "SYMBOL (tls)", "stack of
 *   FUNCTION", "unknown".  Objects of one kind and name are one entry.
 */
#ifndef WITCH_TOOL_JSON_REPORT_H
#define WITCH_TOOL_JSON_REPORT_H

#include "view.h"

#include <stdio.h>

/* The summary and the shown pairs, in the schema above.  0 or a negative errno. */
int witch_json_write(FILE *out, const struct witch_view *v);

#endif
