/*
 * report: summary and top pairs of merged profiles; see report.h.
 *
 * JSON schema (names and meanings are stable; more fields may be added):
 *   {"client":"dead|silent|load", "sampler":"soft|pmu|mixed",
 *    "samples":N, "watchpoints_armed":N, "traps":N,
 *    "waste":BYTES, "use":BYTES, "fraction":F,   F = waste/(waste+use), 0 if both 0
 *    ["waste_approx":BYTES,]                     when any pair has it
 *    ["tolerance":T,]                            silent/load: FP relative tolerance
 *    "profiles":N, "pids":[...], ["exe":"...",] ["period":N,]
 *    "stats":{"name":value,...},                 every stat counter, summed
 *    "pairs":[{"waste":B, "use":B, "share":S,    S = waste/total waste (0 if none)
 *              "traps":N, ["waste_approx":B,]
 *              "watch":[FRAME...], "trap":[FRAME...]}]}   frames leaf first
 *   FRAME = {"function":"...", "file":"...", "line":N, "module":"...",
 *            "address":"0x...", "offset":"0x...", ["inlined":true]}
 * Pairs are sorted by waste, largest first (ties: use, traps, then
 * profile order), zero-waste pairs last; --top N keeps the first N.
 */
#include "report.h"

#include "profile_read.h"
#include "folded.h"
#include "html.h"
#include "json_out.h"
#include "pprof.h"
#include "summary.h"
#include "symbolize.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_TEXT_TOP 10

/* ---- output helpers ---- */

/* Bytes for people: exact-ish number, and a binary-unit hint when large. */
void witch_print_bytes(FILE *out, double v)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	double h = v;
	int u = -1;

	if (v >= 100 || v == (double)(uint64_t)v)
		fprintf(out, "%.0f bytes", v);
	else
		fprintf(out, "%.2f bytes", v);
	while (h >= 1024 && u < 4) {
		h /= 1024;
		u++;
	}
	if (u >= 0)
		fprintf(out, " (%.1f %s)", h, units[u]);
}

static double fraction(const struct witch_totals *t)
{
	return witch_fraction(t->waste, t->use);
}

static double share(const struct witch_totals *t, double waste)
{
	return witch_share(waste, t->waste);
}

/* ---- text ---- */

const char *witch_client_what(enum witch_client c)
{
	switch (c) {
	case WITCH_CLIENT_DEAD:
		return "dead stores";
	case WITCH_CLIENT_SILENT:
		return "silent stores";
	case WITCH_CLIENT_LOAD:
		return "redundant loads";
	}
	return "?";
}

/* A pair with no waste is a useful access: word it so. */
const char *witch_watch_words(enum witch_client c, bool wasted)
{
	if (!wasted)
		return c == WITCH_CLIENT_LOAD ? "load" : "store";
	switch (c) {
	case WITCH_CLIENT_DEAD:
		return "dead store";
	case WITCH_CLIENT_SILENT:
		return "silent store";
	case WITCH_CLIENT_LOAD:
		return "load";
	}
	return "?";
}

const char *witch_trap_words(enum witch_client c, bool wasted)
{
	if (!wasted) {
		switch (c) {
		case WITCH_CLIENT_DEAD:
			return "read by";
		case WITCH_CLIENT_SILENT:
			return "overwritten with a different value by";
		case WITCH_CLIENT_LOAD:
			return "different value loaded by";
		}
	}
	switch (c) {
	case WITCH_CLIENT_DEAD:
		return "killed by";
	case WITCH_CLIENT_SILENT:
		return "overwritten with the same value by";
	case WITCH_CLIENT_LOAD:
		return "same value loaded again by";
	}
	return "?";
}

static bool is_summary_stat(const char *name)
{
	return !strcmp(name, "samples") || !strcmp(name, "watchpoints_armed") ||
	       !strcmp(name, "traps");
}

/*
 * line, cut to width columns with "..." as the last three when longer
 * (0: no limit). A column is a UTF-8 character (a byte that is not a
 * continuation byte), so a cut never splits one; wide characters count
 * as one, which errs on the side of a line that wraps.
 */
static void put_cut(FILE *out, const char *line, size_t width)
{
	const unsigned char *p = (const unsigned char *)line;
	size_t cols = 0, keep = 0;

	if (width) {
		for (size_t i = 0; p[i]; i++) {
			if ((p[i] & 0xc0) == 0x80)
				continue;
			if (cols == width - 3)
				keep = i;
			cols++;
		}
	}
	if (!width || cols <= width) {
		fputs(line, out);
		return;
	}
	fwrite(line, 1, keep, out);
	fputs("...", out);
}

static int text_frames(FILE *out, const struct witch_path *pb, size_t width)
{
	for (size_t i = 0; i < pb->n; i++) {
		const struct witch_frame *f = pb->frames[i];
		char ln[16] = "";
		char *line;

		if (f->line)
			snprintf(ln, sizeof(ln), ":%u", f->line);
		if (asprintf(&line, "      #%-2zu %s%s at %s%s in %s [0x%" PRIx64 "]",
			     i, f->function, f->inlined ? " (inlined)" : "",
			     f->file, ln, f->module, f->address) < 0)
			return -ENOMEM;
		put_cut(out, line, width);
		fputc('\n', out);
		free(line);
	}
	return 0;
}

static void text_summary(FILE *out, const struct witch_profile *p,
			 const struct witch_totals *t)
{
	bool others = false;

	fprintf(out, "%-19s%zu", "profiles:", p->nfiles);
	if (p->npids) {
		fprintf(out, " (pid%s", p->npids > 1 ? "s" : "");
		for (size_t i = 0; i < p->npids && i < 8; i++)
			fprintf(out, "%s%" PRIu64, i ? ", " : " ", p->pids[i]);
		fprintf(out, "%s)", p->npids > 8 ? ", ..." : "");
	}
	fputc('\n', out);
	if (p->exe)
		fprintf(out, "%-19s%s\n", "program:", p->exe);
	fprintf(out, "%-19s%s (%s)\n", "client:", witch_client_name(p->client),
		witch_client_what(p->client));
	fprintf(out, "%-19s%s", "sampler:", p->sampler);
	if (p->has_period && !p->period_mixed)
		fprintf(out, " (period %" PRIu64 ")", p->period);
	else if (p->period_mixed)
		fprintf(out, " (periods differ between profiles)");
	if (p->sampler_why)
		fprintf(out, "; no PMU sampler: %s", p->sampler_why);
	fputc('\n', out);
	fprintf(out, "%-19s%.0f", "samples:", witch_profile_stat(p, "samples"));
	double overhead, rate;
	if (witch_overhead_of(p, &overhead, &rate) == 0)
		fprintf(out, " (%.0f ticks per CPU-second; the profiler's cost, as it measured it: "
			"%.1f%% of the program's CPU time)", rate, overhead * 100);
	fputc('\n', out);
	fprintf(out, "%-19s%.0f\n", "watchpoints armed:",
		witch_profile_stat(p, "watchpoints_armed"));
	fprintf(out, "%-19s%.0f\n", "traps:", witch_profile_stat(p, "traps"));
	fprintf(out, "%-19s", "waste:");
	witch_print_bytes(out, t->waste);
	if (t->has_waste_approx) {
		fputs(", approximate part ", out);
		witch_print_bytes(out, t->waste_approx);
	}
	if (p->has_tolerance && !p->tolerance_mixed)
		fprintf(out, " (floating point within %g%% counts as the same value)",
			p->tolerance * 100);
	else if (p->tolerance_mixed)
		fputs(" (FP tolerances differ between profiles)", out);
	fprintf(out, "\n%-19s", "use:");
	witch_print_bytes(out, t->use);
	fprintf(out, "\n%-19s%.4f (waste / (waste + use))\n", "fraction:",
		fraction(t));
	for (size_t i = 0; i < p->nstats; i++) {
		if (is_summary_stat(p->stats[i].name))
			continue;
		fprintf(out, "%s%s ", others ? ", " : "other counters:    ",
			p->stats[i].name);
		json_out_num(out, p->stats[i].value);
		others = true;
	}
	if (others)
		fputc('\n', out);
}

static int text_report(FILE *out, const struct witch_profile *p,
		       struct witch_symbolizer *sym, const uint32_t *order,
		       size_t shown, const struct witch_totals *t, size_t width)
{
	struct witch_path pb = { 0 };
	int rc = 0;

	text_summary(out, p, t);
	if (!p->npairs) {
		fputs("\nno pairs: no watchpoint trap was attributed to a pair of contexts\n",
		      out);
		return 0;
	}
	if (shown == p->npairs)
		fprintf(out, "\n%zu pair%s by waste:\n", p->npairs,
			p->npairs > 1 ? "s" : "");
	else
		fprintf(out, "\ntop %zu of %zu pairs by waste:\n", shown,
			p->npairs);
	for (size_t k = 0; k < shown; k++) {
		const struct witch_pair *q = &p->pairs[order[k]];

		fprintf(out, "\n#%zu  share %.2f%%  waste ", k + 1,
			100 * share(t, q->waste));
		witch_print_bytes(out, q->waste);
		if (q->has_waste_approx) {
			fputs(" (approximate ", out);
			witch_print_bytes(out, q->waste_approx);
			fputc(')', out);
		}
		fputs("  use ", out);
		witch_print_bytes(out, q->use);
		fprintf(out, "  traps %" PRIu64 "\n", q->traps);

		fprintf(out, "    %s\n", witch_watch_words(p->client, q->waste > 0));
		if ((rc = witch_path_collect(sym, p, q->watch, &pb)) ||
		    (rc = text_frames(out, &pb, width)))
			goto out;
		fprintf(out, "    %s\n", witch_trap_words(p->client, q->waste > 0));
		if ((rc = witch_path_collect(sym, p, q->trap, &pb)) ||
		    (rc = text_frames(out, &pb, width)))
			goto out;
	}
out:
	witch_path_free(&pb);
	return rc;
}

/* ---- JSON ---- */

static void json_frames(FILE *out, const struct witch_path *pb)
{
	fputc('[', out);
	for (size_t i = 0; i < pb->n; i++) {
		const struct witch_frame *f = pb->frames[i];

		fputs(i ? ",\n      {" : "\n      {", out);
		fputs("\"function\":", out);
		json_out_str(out, f->function);
		fputs(", \"file\":", out);
		json_out_str(out, f->file);
		fprintf(out, ", \"line\":%u, \"module\":", f->line);
		json_out_str(out, f->module);
		fprintf(out, ", \"address\":\"0x%" PRIx64 "\", \"offset\":\"0x%" PRIx64 "\"",
			f->address, f->offset);
		if (f->inlined)
			fputs(", \"inlined\":true", out);
		fputc('}', out);
	}
	fputc(']', out);
}

static int json_report(FILE *out, const struct witch_profile *p,
		       struct witch_symbolizer *sym, const uint32_t *order,
		       size_t shown, const struct witch_totals *t)
{
	struct witch_path pb = { 0 };
	int rc = 0;

	fputs("{\"client\":", out);
	json_out_str(out, witch_client_name(p->client));
	fputs(", \"sampler\":", out);
	json_out_str(out, p->sampler);
	if (p->sampler_why) {
		fputs(", \"sampler_why\":", out);
		json_out_str(out, p->sampler_why);
	}
	fputs(",\n \"samples\":", out);
	json_out_num(out, witch_profile_stat(p, "samples"));
	double overhead, rate;
	if (witch_overhead_of(p, &overhead, &rate) == 0) {
		fputs(", \"overhead_estimate\":", out);
		json_out_num(out, overhead);
		fputs(", \"tick_rate\":", out);
		json_out_num(out, rate);
	}
	fputs(", \"watchpoints_armed\":", out);
	json_out_num(out, witch_profile_stat(p, "watchpoints_armed"));
	fputs(", \"traps\":", out);
	json_out_num(out, witch_profile_stat(p, "traps"));
	fputs(",\n \"waste\":", out);
	json_out_num(out, t->waste);
	fputs(", \"use\":", out);
	json_out_num(out, t->use);
	fputs(", \"fraction\":", out);
	json_out_num(out, fraction(t));
	if (t->has_waste_approx) {
		fputs(", \"waste_approx\":", out);
		json_out_num(out, t->waste_approx);
	}
	if (p->has_tolerance && !p->tolerance_mixed) {
		fputs(", \"tolerance\":", out);
		json_out_num(out, p->tolerance);
	}
	fprintf(out, ",\n \"profiles\":%zu, \"pids\":[", p->nfiles);
	for (size_t i = 0; i < p->npids; i++)
		fprintf(out, "%s%" PRIu64, i ? "," : "", p->pids[i]);
	fputc(']', out);
	if (p->exe) {
		fputs(", \"exe\":", out);
		json_out_str(out, p->exe);
	}
	if (p->has_period && !p->period_mixed)
		fprintf(out, ", \"period\":%" PRIu64, p->period);
	fputs(",\n \"stats\":{", out);
	for (size_t i = 0; i < p->nstats; i++) {
		fputs(i ? ", " : "", out);
		json_out_str(out, p->stats[i].name);
		fputc(':', out);
		json_out_num(out, p->stats[i].value);
	}
	fputs("},\n \"pairs\":[", out);
	for (size_t k = 0; k < shown; k++) {
		const struct witch_pair *q = &p->pairs[order[k]];

		fputs(k ? ",\n  {\"waste\":" : "\n  {\"waste\":", out);
		json_out_num(out, q->waste);
		fputs(", \"use\":", out);
		json_out_num(out, q->use);
		fputs(", \"share\":", out);
		json_out_num(out, share(t, q->waste));
		fprintf(out, ", \"traps\":%" PRIu64, q->traps);
		if (q->has_waste_approx) {
			fputs(", \"waste_approx\":", out);
			json_out_num(out, q->waste_approx);
		}
		fputs(",\n   \"watch\":", out);
		if ((rc = witch_path_collect(sym, p, q->watch, &pb)))
			goto out;
		json_frames(out, &pb);
		fputs(",\n   \"trap\":", out);
		if ((rc = witch_path_collect(sym, p, q->trap, &pb)))
			goto out;
		json_frames(out, &pb);
		fputc('}', out);
	}
	fputs("]}\n", out);
out:
	witch_path_free(&pb);
	return rc;
}

/* ---- entry points ---- */

int witch_parse_top(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end || errno || v > SIZE_MAX)
		return -EINVAL;
	*out = (size_t)v;
	return 0;
}

size_t witch_terminal_width(int fd)
{
	struct winsize ws;
	const char *env;
	size_t cols;

	if (fd < 0 || !isatty(fd))
		return 0;
	if (!ioctl(fd, TIOCGWINSZ, &ws) && ws.ws_col > 0)
		return ws.ws_col;
	/* A terminal that does not say its size (a serial line, some
	 * emulators): the shell's idea of it, if it exported one. */
	env = getenv("COLUMNS");
	if (env && !witch_parse_top(env, &cols) && cols > 0)
		return cols;
	return 0;
}

/* Where the report goes: out, or the -o file (made whole before rename). */
struct sink {
	FILE *f;
	char *tmp;		/* temp path while writing -o FILE, else NULL */
};

static int sink_open(struct sink *k, const struct witch_report_options *o,
		     FILE *out)
{
	int fd;

	k->f = out;
	k->tmp = NULL;
	if (!o->output || !strcmp(o->output, "-"))
		return 0;
	/* A temp file next to the target, renamed at the end, so a failed
	 * run never leaves a half-written profile where a viewer finds it. */
	if (asprintf(&k->tmp, "%s.XXXXXX", o->output) < 0) {
		k->tmp = NULL;
		fprintf(stderr, "witch: out of memory\n");
		return -ENOMEM;
	}
	fd = mkstemp(k->tmp);
	if (fd >= 0) {
		/* mkstemp makes it 0600; the output is an ordinary file,
		 * so give it the mode creat() would (0666 less the umask). */
		mode_t mask = umask(0);

		umask(mask);
		if (fchmod(fd, 0666 & ~mask)) {
			close(fd);
			unlink(k->tmp);
			fd = -1;
		}
	}
	if (fd < 0 || !(k->f = fdopen(fd, "w"))) {
		int e = errno;

		fprintf(stderr, "witch: cannot create %s: %s\n", o->output,
			strerror(e));
		if (fd >= 0) {
			close(fd);
			unlink(k->tmp);
		}
		free(k->tmp);
		k->tmp = NULL;
		k->f = NULL;
		return -e;
	}
	return 0;
}

/* Finish the output: flush, and rename the temp file into place when ok. */
static int sink_close(struct sink *k, const struct witch_report_options *o,
		      int rc)
{
	const char *name = k->tmp ? o->output : "the report";
	int e = 0;

	if (!k->f)
		return rc;
	/* Output errors stick in the stream; check once, at the end. */
	errno = 0;
	if (fflush(k->f) || ferror(k->f))
		e = errno ? errno : EIO;
	if (k->tmp) {
		if (fclose(k->f) && !e)
			e = errno ? errno : EIO;
		if (!rc && !e && rename(k->tmp, o->output))
			e = errno;
		if (rc || e)
			unlink(k->tmp);
		free(k->tmp);
	}
	k->f = NULL;
	k->tmp = NULL;
	if (!rc && e) {
		fprintf(stderr, "witch: cannot write %s: %s\n", name, strerror(e));
		rc = -e;
	}
	return rc;
}

int witch_report_files(char *const *paths, size_t n,
		       const struct witch_report_options *o, FILE *out,
		       bool *input_failed)
{
	struct witch_profile p;
	struct witch_symbolizer *sym = NULL;
	struct witch_totals t;
	struct sink k = { 0 };
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
	witch_totals_of(&p, &t);

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
	rc = sink_open(&k, o, out);
	if (rc)
		goto out;
	/* Only a report read on a terminal is cut to it: files and pipes
	 * keep whole lines for grep and diff. */
	width = o->width_set ? o->width : k.tmp ? 0 : witch_terminal_width(fileno(k.f));
	if (width && width < WITCH_MIN_WIDTH)
		width = WITCH_MIN_WIDTH;
	switch (fmt) {
	case WITCH_FORMAT_JSON:
		rc = json_report(k.f, &p, sym, order, shown, &t);
		break;
	case WITCH_FORMAT_FOLDED:
		rc = witch_folded_write(k.f, &p, sym, order, shown);
		break;
	case WITCH_FORMAT_PPROF:
		rc = witch_pprof_write(k.f, &p, sym, order, shown);
		break;
	case WITCH_FORMAT_HTML:
		rc = witch_html_write(k.f, &p, sym, &t, order, shown);
		break;
	case WITCH_FORMAT_TEXT:
	default:
		rc = text_report(k.f, &p, sym, order, shown, &t, width);
		break;
	}
	if (rc)
		fprintf(stderr, "witch: cannot build the report: %s\n",
			strerror(-rc));
	rc = sink_close(&k, o, rc);
out:
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
	"Usage: witch report [--format text|json|folded|pprof|html] [--json] [--top N] [--width N] [-o FILE] FILE...\n";

static int usage_error(const char *fmt, const char *arg)
{
	fputs("witch: report: ", stderr);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s(see 'witch --help')\n", report_usage);
	return 2;
}

int witch_report_main(int argc, char **argv)
{
	struct witch_report_options o = { 0 };
	char **files;
	size_t nfiles = 0;
	bool opts_done = false, input_failed;
	int rc;

	files = calloc(argc > 0 ? (size_t)argc : 1, sizeof(*files));
	if (!files) {
		fprintf(stderr, "witch: out of memory\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;

		if (opts_done || a[0] != '-' || !strcmp(a, "-")) {
			files[nfiles++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			opts_done = true;
		} else if (!strcmp(a, "--json")) {
			o.json = true;
		} else if (!strcmp(a, "--format") || !strncmp(a, "--format=", 9)) {
			if (a[8] == '=')
				val = a + 9;
			else if (i + 1 < argc)
				val = argv[++i];
			else {
				free(files);
				return usage_error("%s needs text, json, folded, pprof or html", a);
			}
			if (witch_parse_format(val, &o.format)) {
				free(files);
				return usage_error("--format: '%s' is not text, json, folded, pprof or html",
						   val);
			}
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output") ||
			   !strncmp(a, "--output=", 9)) {
			if (a[1] == '-' && a[8] == '=')
				o.output = a + 9;
			else if (i + 1 < argc)
				o.output = argv[++i];
			else {
				free(files);
				return usage_error("%s needs a file name", a);
			}
			if (!*o.output) {
				free(files);
				return usage_error("%s", "-o: empty file name");
			}
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(report_usage, stdout);
			fputs("Prints a summary and the pairs of calling contexts with the most\n"
			      "waste (default 10; --top 0 for all; the other formats list all by\n"
			      "default). Several files are merged. Formats: text, json (same as\n"
			      "--json), folded (stacks for flamegraph.pl and speedscope), pprof\n"
			      "(gzipped profile.proto for go tool pprof; needs -o FILE), html (one\n"
			      "self-contained page: summary, flame graph, pair table). -o FILE\n"
			      "writes there instead of stdout. On a terminal, text frame lines are\n"
			      "cut to its width; --width N sets the width (0: no limit).\n"
			      "See docs/report-formats.md.\n",
			      stdout);
			free(files);
			return 0;
		} else if (!strcmp(a, "--top") || !strncmp(a, "--top=", 6)) {
			if (a[5] == '=')
				val = a + 6;
			else if (i + 1 < argc)
				val = argv[++i];
			else {
				free(files);
				return usage_error("%s needs a number", a);
			}
			if (witch_parse_top(val, &o.top)) {
				free(files);
				return usage_error("--top: '%s' is not a count (0 for all)",
						   val);
			}
			o.top_set = true;
		} else if (!strcmp(a, "--width") || !strncmp(a, "--width=", 8)) {
			if (a[7] == '=')
				val = a + 8;
			else if (i + 1 < argc)
				val = argv[++i];
			else {
				free(files);
				return usage_error("%s needs a number", a);
			}
			_Static_assert(WITCH_MIN_WIDTH == 20, "the message below says 20");
			if (witch_parse_top(val, &o.width) ||
			    (o.width && o.width < WITCH_MIN_WIDTH)) {
				free(files);
				return usage_error("--width: '%s' is not a column count of at least "
						   "20 (0 for no limit)", val);
			}
			o.width_set = true;
		} else {
			free(files);
			return usage_error("unknown option '%s'", a);
		}
	}
	if (!nfiles) {
		free(files);
		return usage_error("%s", "no profile file given");
	}
	if (o.json && o.format != WITCH_FORMAT_TEXT &&
	    o.format != WITCH_FORMAT_JSON) {
		free(files);
		return usage_error("%s", "--json contradicts --format");
	}
	/* gzip bytes on a terminal help nobody and may confuse it. */
	if (o.format == WITCH_FORMAT_PPROF &&
	    (!o.output || (!strcmp(o.output, "-") && isatty(STDOUT_FILENO)))) {
		free(files);
		return usage_error("%s", "--format pprof writes a binary file: give -o FILE");
	}
	rc = witch_report_files(files, nfiles, &o, stdout, &input_failed);
	free(files);
	if (rc)
		return input_failed ? 2 : 1;
	return 0;
}
