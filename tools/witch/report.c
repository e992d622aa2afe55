/*
 * report: the `witch report` command: read and merge the profiles, build
 * the view once, hand it to the renderer of the chosen format; see report.h.
 * Pairs are sorted by waste, largest first (ties: use, traps, then
 * profile order), zero-waste pairs last; --top N keeps the first N.
 */
#include "report.h"

#include "cli.h"
#include "folded.h"
#include "html.h"
#include "json_report.h"
#include "pprof.h"
#include "profile_read.h"
#include "sink.h"
#include "source.h"
#include "summary.h"
#include "symbolize.h"
#include "text_report.h"
#include "view.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_TEXT_TOP 10

int witch_report_files(char *const *paths, size_t n,
		       const struct witch_report_options *o, FILE *out,
		       bool *input_failed)
{
	struct witch_profile p;
	struct witch_symbolizer *sym = NULL;
	struct witch_source *src = NULL;
	struct witch_view v;
	struct witch_objects objs = { 0 };
	struct witch_sink k = { 0 };
	enum witch_report_format fmt = o->json ? WITCH_FORMAT_JSON : o->format;
	uint32_t *order = NULL;
	size_t shown, width;
	int rc = 0;

	if (input_failed)
		*input_failed = false;
	witch_profile_init(&p);
	rc = witch_load_profiles(&p, paths, n);
	if (rc) {
		if (input_failed)
			*input_failed = true;
		goto out;
	}

	rc = witch_pairs_by_waste(&p, &order);
	if (rc) {
		fprintf(stderr, "witch: out of memory\n");
		goto out;
	}

	if (o->top_set)
		shown = o->top;
	else
		shown = fmt == WITCH_FORMAT_TEXT ? DEFAULT_TEXT_TOP : 0;
	if (shown == 0 || shown > p.npairs)
		shown = p.npairs;	/* 0 means all */

	rc = witch_symbolizer_new(&p, &sym);
	if (rc) {
		fprintf(stderr, "witch: out of memory\n");
		goto out;
	}
	if ((o->source || fmt == WITCH_FORMAT_HTML) && (rc = witch_source_new(&src))) {
		fprintf(stderr, "witch: out of memory\n");
		goto out;
	}
	rc = witch_objects_build(&p, sym, &objs);
	if (rc) {
		fprintf(stderr, "witch: cannot name the objects: %s\n", strerror(-rc));
		goto out;
	}
	rc = witch_sink_open(&k, o->output, out);
	if (rc)
		goto out;
	/* Only a report read on a terminal is cut to it: files and pipes
	 * keep whole lines for grep and diff. */
	width = o->width_set ? o->width : k.tmp ? 0 : witch_terminal_width(fileno(k.f));
	if (width && width < WITCH_MIN_WIDTH)
		width = WITCH_MIN_WIDTH;
	v = (struct witch_view){.p = &p, .sym = sym, .order = order, .shown = shown, .width = width,
			      .src = src, .objects = &objs};
	/* --top N limits the objects listed as it limits the pairs. */
	v.objects_shown = o->top_set ? o->top : fmt == WITCH_FORMAT_TEXT ? DEFAULT_TEXT_TOP : 0;
	if (v.objects_shown == 0 || v.objects_shown > objs.n)
		v.objects_shown = objs.n;
	v.sampled_all = o->top_set && o->top == 0;
	witch_totals_of(&p, &v.t);
	switch (fmt) {
	case WITCH_FORMAT_JSON:
		rc = witch_json_write(k.f, &v);
		break;
	case WITCH_FORMAT_FOLDED:
		rc = witch_folded_write(k.f, &v);
		break;
	case WITCH_FORMAT_PPROF:
		rc = witch_pprof_write(k.f, &v);
		break;
	case WITCH_FORMAT_HTML:
		rc = witch_html_write(k.f, &v);
		break;
	case WITCH_FORMAT_TEXT:
	default:
		rc = witch_text_write(k.f, &v);
		break;
	}
	if (rc)
		fprintf(stderr, "witch: cannot build the report: %s\n",
			strerror(-rc));
	rc = witch_sink_close(&k, o->output, rc);
out:
	witch_objects_free(&objs);
	witch_source_free(src);
	witch_symbolizer_free(sym);
	free(order);
	witch_profile_free(&p);
	return rc;
}

int witch_parse_format(const char *s, enum witch_report_format *out)
{
	static const struct {
		const char *name;
		enum witch_report_format f;
	} names[] = {
		{ "text", WITCH_FORMAT_TEXT },
		{ "json", WITCH_FORMAT_JSON },
		{ "folded", WITCH_FORMAT_FOLDED },
		{ "pprof", WITCH_FORMAT_PPROF },
		{ "html", WITCH_FORMAT_HTML },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i].name)) {
			*out = names[i].f;
			return 0;
		}
	}
	return -EINVAL;
}

static const char report_usage[] =
	"Usage: witch report [--format text|json|folded|pprof|html] [--json] [--top N] [--width N] [--source] [-o FILE] FILE...\n";

static const char report_help[] =
	"Prints a summary and the pairs of calling contexts with the most\n"
	"waste (default 10; --top 0 for all; the other formats list all by\n"
	"default), then the objects (the data: heap allocation sites, static,\n"
	"TLS and stack variables) the waste fell on, when the profile has\n"
	"them. Several files are merged. Formats: text, json (same as\n"
	"--json), folded (stacks for flamegraph.pl and speedscope), pprof\n"
	"(gzipped profile.proto for go tool pprof; -o FILE, or stdout when it\n"
	"is not a terminal), html (one\n"
	"self-contained page: summary, flame graph, pair table). -o FILE\n"
	"writes there instead of stdout. On a terminal, text frame lines are\n"
	"cut to its width; --width N sets the width (0: no limit). --source\n"
	"prints, for each pair shown, the source lines of the watched and of\n"
	"the trapping access, the line itself marked '>' (the HTML page always\n"
	"shows them for its top pairs).\n"
	"See docs/report-formats.md.\n";

/* One option at c->i into o: 1 taken, 0 not an option of ours, 2 after a usage error. */
static int report_option(struct witch_cli *c, struct witch_report_options *o)
{
	const char *a = c->argv[c->i], *val;
	int rc;

	if (!strcmp(a, "--json")) {
		o->json = true;
		return 1;
	}
	if (!strcmp(a, "--source")) {
		o->source = true;
		return 1;
	}
	if ((rc = witch_cli_option(c, "--format", "text, json, folded, pprof or html", &val))) {
		if (rc < 0)
			return 2;
		if (witch_parse_format(val, &o->format))
			return witch_cli_usage_error(
				c, "--format: '%s' is not text, json, folded, pprof or html", val);
		return 1;
	}
	if ((rc = witch_cli_option(c, "-o", "a file name", &val)) ||
	    (rc = witch_cli_option(c, "--output", "a file name", &val))) {
		if (rc < 0)
			return 2;
		if (!*val)
			return witch_cli_usage_error(c, "%s", "-o: empty file name");
		o->output = val;
		return 1;
	}
	if ((rc = witch_cli_top(c, &o->top))) {
		o->top_set = true;
		return rc < 0 ? 2 : 1;
	}
	if ((rc = witch_cli_option(c, "--width", "a number", &val))) {
		if (rc < 0)
			return 2;
		_Static_assert(WITCH_MIN_WIDTH == 20, "the message below says 20");
		if (witch_parse_top(val, &o->width) || (o->width && o->width < WITCH_MIN_WIDTH))
			return witch_cli_usage_error(c, "--width: '%s' is not a column count of at least "
						     "20 (0 for no limit)", val);
		o->width_set = true;
		return 1;
	}
	return 0;
}

int witch_report_main(int argc, char **argv)
{
	struct witch_report_options o = { 0 };
	struct witch_cli c = {.cmd = "report", .usage = report_usage, .argc = argc, .argv = argv};
	char **files;
	size_t nfiles = 0;
	bool opts_done = false, input_failed;
	int rc = 0;

	files = calloc(argc > 0 ? (size_t)argc : 1, sizeof(*files));
	if (!files) {
		fprintf(stderr, "witch: out of memory\n");
		return 2;
	}
	for (c.i = 1; c.i < argc && rc == 0; c.i++) {
		const char *a = argv[c.i];

		if (opts_done || a[0] != '-' || !strcmp(a, "-")) {
			files[nfiles++] = argv[c.i];
		} else if (!strcmp(a, "--")) {
			opts_done = true;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(report_usage, stdout);
			fputs(report_help, stdout);
			free(files);
			return 0;
		} else {
			int taken = report_option(&c, &o);
			if (taken == 0)
				rc = witch_cli_usage_error(&c, "unknown option '%s'", a);
			else if (taken == 2)
				rc = 2;
		}
	}
	if (rc == 0 && !nfiles)
		rc = witch_cli_usage_error(&c, "%s", "no profile file given");
	if (rc == 0 && o.json && o.format != WITCH_FORMAT_TEXT && o.format != WITCH_FORMAT_JSON)
		rc = witch_cli_usage_error(&c, "%s", "--json contradicts --format");
	if (rc == 0 && o.source && (o.json || (o.format != WITCH_FORMAT_TEXT &&
					       o.format != WITCH_FORMAT_HTML)))
		rc = witch_cli_usage_error(&c, "%s", "--source is for the text report "
					   "(the HTML page always shows source lines)");
	/* gzip bytes on a terminal help nobody and may confuse it; a pipe
	 * or a redirected stdout takes them (witch report ... | go tool pprof). */
	if (rc == 0 && o.format == WITCH_FORMAT_PPROF &&
	    (!o.output || !strcmp(o.output, "-")) && isatty(STDOUT_FILENO))
		rc = witch_cli_usage_error(&c, "%s", "--format pprof writes a binary file: give -o FILE");
	if (rc) {
		free(files);
		return rc;
	}
	rc = witch_report_files(files, nfiles, &o, stdout, &input_failed);
	free(files);
	if (rc)
		return input_failed ? 2 : 1;
	return 0;
}
