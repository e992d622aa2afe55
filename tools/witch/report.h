/*
 * report: `witch report [--format text|json|folded|pprof|html] [--json]
 * [--top N] [--width N] [-o FILE] FILE...` - read and merge profiles,
 * symbolize, and print a summary and the pairs with the most waste, as
 * text (text_report.h) or JSON (json_report.h, with its schema), or write
 * them as folded stacks (folded.h), a gzipped pprof profile (pprof.h) or
 * an HTML page (html.h); each renders the one view (view.h) built here.
 * docs/report-formats.md describes the formats.
 *
 * API
 *   struct witch_report_options: format (json = true is the same as
 *       WITCH_FORMAT_JSON); top = how many pairs to print (0: all);
 *       top_set = whether top was given (the default is 10 pairs for text
 *       and all pairs for the other formats); output = a file to write
 *       instead of the given stream (written to a temp file and renamed
 *       into place, so it is whole or absent); width_set and width:
 *       text only, frame lines longer than width columns (UTF-8
 *       characters) are cut to width with "..." at the end, 0 = no limit.
 *       Without width_set the width is the terminal's when the report
 *       goes to a terminal (TIOCGWINSZ, else $COLUMNS, else no limit) and
 *       no limit otherwise. Widths below WITCH_MIN_WIDTH count as it.
 *   int witch_report_files(char *const *paths, size_t n,
 *                          const struct witch_report_options *o, FILE *out,
 *                          bool *input_failed);
 *       Reads and merges the n profiles and prints the report to out.
 *       Returns 0; or a negative errno after printing one "witch: ..."
 *       line on stderr. *input_failed (if not NULL) tells whether the
 *       failure was reading the profiles (the profile reader's errors, see
 *       profile_read.h) rather than symbolizing or writing the report.
 *   int witch_parse_format(const char *s, enum witch_report_format *out);
 *       "text", "json", "folded", "pprof" or "html": 0, else -EINVAL.
 *   int witch_report_main(int argc, char **argv);
 *       The subcommand; argv[0] is "report". Returns the exit status:
 *       0 success, 1 output error, 2 bad usage or unreadable profile.
 */
#ifndef WITCH_TOOL_REPORT_H
#define WITCH_TOOL_REPORT_H

#include "profile_read.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum witch_report_format {
	WITCH_FORMAT_TEXT,
	WITCH_FORMAT_JSON,
	WITCH_FORMAT_FOLDED,	/* folded.h */
	WITCH_FORMAT_PPROF,	/* pprof.h */
	WITCH_FORMAT_HTML,	/* html.h */
};

/* Narrower than this, a cut frame line would keep too little to read. */
#define WITCH_MIN_WIDTH 20

struct witch_report_options {
	bool json;		/* same as format = WITCH_FORMAT_JSON */
	bool top_set;
	size_t top;
	enum witch_report_format format;
	const char *output;	/* -o FILE; NULL or "-": the given stream */
	bool width_set;		/* false: the terminal's width, if any */
	size_t width;		/* text frame lines; 0 = no limit */
};

int witch_report_files(char *const *paths, size_t n,
		       const struct witch_report_options *o, FILE *out,
		       bool *input_failed);
int witch_parse_format(const char *s, enum witch_report_format *out);
int witch_report_main(int argc, char **argv);

#endif
