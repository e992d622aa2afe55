/*
 * check: `witch check [--max-fraction F] [--max-object-share S]
 * [--baseline BASE]... [--max-increase D] PROFILE...` - a pass/fail gate
 * for CI on the fraction of wasted operations, waste / (waste + use)
 * (Witch Eq. 4.1), and on how much of the waste one object holds.
 *
 * PROFILE... are merged (as witch report does), and so are several
 * --baseline files. Criteria, at least one:
 *   --max-fraction F   fail if the fraction is above F (0 <= F <= 1)
 *   --baseline BASE --max-increase D
 *                      fail if the fraction exceeds BASE's by more than D
 *                      (0 <= D <= 1, in fraction units: 0.05 allows 0.30
 *                      to become 0.35)
 *   --max-object-share S
 *                      fail if one object (docs/objects.md, object_view.h)
 *                      holds more than S of the waste (0 <= S <= 1); the
 *                      largest is named (the "unknown" object counts too;
 *                      profiles without objects pass, with a note)
 * Prints one verdict line on stdout, e.g.
 *   witch check: fraction 0.42 > 0.30 (max): FAIL
 *   witch check: fraction 0.31, baseline 0.30: increase +0.01 <= 0.05 (max): PASS
 *   witch check: largest object share 0.62 > 0.50 (max), heap from main (a.c:12): FAIL
 * (several criteria: their parts, separated by "; "). Numbers have two
 * decimals, more when two of them would otherwise print alike.
 */
#ifndef WITCH_TOOL_CHECK_H
#define WITCH_TOOL_CHECK_H

#include <stdbool.h>
#include <stddef.h>

/* The subcommand; argv[0] is "check". Returns the exit status: 0 pass, 1 fail,
 * 2 bad usage or an unreadable profile (one "witch: ..." line on stderr, no
 * verdict). */
int witch_check_main(int argc, char **argv);
/* The verdict without the files: writes the line (no newline) and returns 0
 * (pass) or 1 (fail). */
int witch_check_verdict(double fraction, bool has_max, double max,
			bool has_base, double base_fraction,
			double max_increase, char *line, size_t len);
/* The same with the object criterion last: share of the largest object
 * (named object; NULL: the profile has none) against max_share; the
 * fraction parts only when has_fraction. */
int witch_check_object_verdict(bool has_fraction, double fraction, bool has_max, double max,
			       bool has_base, double base_fraction, double max_increase,
			       double share, double max_share, const char *object,
			       char *line, size_t len);

#endif
