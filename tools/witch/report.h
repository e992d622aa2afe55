/*
 * report: `witch report [--format text|json|folded|pprof|html] [--json]
 * [--top N] [--width N] [-o FILE] FILE...` - read and merge profiles,
 * symbolize, and print a summary and the pairs with the most waste, as
 * text (text_report.h) or JSON (json_report.h, with its schema), or write
 * them as folded stacks (folded.h), a gzipped pprof profile (pprof.h) or
 * an HTML page (html.h); each renders the one view (view.h) built here.
 * docs/report-formats.md describes the formats.
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

/* Without width_set the width is the terminal's when the report goes to a
 * terminal (TIOCGWINSZ, else $COLUMNS, else no limit), no limit otherwise;
 * frame lines longer than width columns (UTF-8 characters) are cut to width
 * with "..." at the end.  Widths below WITCH_MIN_WIDTH count as it. */
struct witch_report_options {
	bool json;		/* same as format = WITCH_FORMAT_JSON */
	bool top_set;		/* false: 10 pairs for text, all for the other formats */
	size_t top;		/* pairs to print; 0: all */
	enum witch_report_format format;
	const char *output;	/* -o FILE, written whole (temp file + rename); NULL or "-": out */
	bool width_set;		/* false: the terminal's width, if any */
	size_t width;		/* text frame lines; 0 = no limit */
	bool source;		/* --source: text shows the pairs' source lines */
};

/* Reads and merges the n profiles and prints the report to out.  Returns 0;
 * or a negative errno after printing one "witch: ..." line on stderr.
 * *input_failed (if not NULL) tells whether the failure was reading the
 * profiles (the profile reader's errors, see profile_read.h) rather than
 * symbolizing or writing the report. */
int witch_report_files(char *const *paths, size_t n,
		       const struct witch_report_options *o, FILE *out,
		       bool *input_failed);
/* "text", "json", "folded", "pprof" or "html": 0, else -EINVAL. */
int witch_parse_format(const char *s, enum witch_report_format *out);
/* The subcommand; argv[0] is "report".  Returns the exit status: 0 success,
 * 1 output error, 2 bad usage or unreadable profile. */
int witch_report_main(int argc, char **argv);

#endif
