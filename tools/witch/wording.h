/*
 * wording: how the reports say bytes and name a client's pairs, shared by
 * the text and HTML renderers so both say the same.
 */
#ifndef WITCH_TOOL_WORDING_H
#define WITCH_TOOL_WORDING_H

#include "profile_read.h"

#include <stdbool.h>
#include <stdio.h>

/* v bytes for people: "300 bytes", "2.50 bytes", "4096 bytes (4.0 KiB)". */
void witch_print_bytes(FILE *out, double v);
/* The profiles' pids after their count: " (pids 1, 2, ...)", eight at most. */
void witch_print_pids(FILE *out, const struct witch_profile *p);
/* "dead stores", "silent stores" or "redundant loads". */
const char *witch_client_what(enum witch_client c);
/* What decided the verdicts, for a report's summary: the profile's
 * verdicts word ("traps", "window", "none", "mixed") said in full. */
const char *witch_verdicts_what(const char *verdicts);
/* Why a profile has no pair, by its verdicts word: "no watchpoint trap
 * was attributed ...", "no sample's deciding access lay within the
 * run-ahead's reach", ... */
const char *witch_no_pairs_why(const char *verdicts);
/* How a pair's C_watch and C_trap are headed ("dead store" ... "killed by";
 * a pair without waste is a use: "store" ... "read by"). */
const char *witch_watch_words(enum witch_client c, bool wasted);
const char *witch_trap_words(enum witch_client c, bool wasted);

#endif
