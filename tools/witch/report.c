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
#include "symbolize.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TEXT_TOP 10

/* Ordering of pairs: by waste, then use, then traps, then stable. */
static int cmp_pairs(const void *a, const void *b, void *arg)
{
	const struct witch_pair *pairs = arg;
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	const struct witch_pair *x = &pairs[ia], *y = &pairs[ib];

	if (x->waste != y->waste)
		return x->waste > y->waste ? -1 : 1;
	if (x->use != y->use)
		return x->use > y->use ? -1 : 1;
	if (x->traps != y->traps)
		return x->traps > y->traps ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

/* ---- output helpers ---- */

/* Shortest of %.15g / %.17g that reads back as the same double. */
static void print_num(FILE *out, double v)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, out);
}

/* Length of a valid UTF-8 sequence at s, or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and values past U+10FFFF are invalid. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/*
 * A JSON string. Paths and names come from files and DWARF and may hold
 * any bytes; JSON must be valid UTF-8, so invalid bytes become U+FFFD.
 */
static void json_str(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', out);
	while (*p) {
		size_t n;

		switch (*p) {
		case '"':
			fputs("\\\"", out);
			p++;
			continue;
		case '\\':
			fputs("\\\\", out);
			p++;
			continue;
		case '\n':
			fputs("\\n", out);
			p++;
			continue;
		case '\r':
			fputs("\\r", out);
			p++;
			continue;
		case '\t':
			fputs("\\t", out);
			p++;
			continue;
		}
		if (*p < 0x20 || *p == 0x7f) {
			fprintf(out, "\\u%04x", *p);
			p++;
			continue;
		}
		n = utf8_len(p);
		if (!n) {
			fputs("\\ufffd", out);
			p++;
			continue;
		}
		fwrite(p, 1, n, out);
		p += n;
	}
	fputc('"', out);
}

/* Bytes for people: exact-ish number, and a binary-unit hint when large. */
static void print_bytes(FILE *out, double v)
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

struct path_buf {
	const struct witch_frame **frames;
	size_t n, cap;
};

/* The frames of the path ending at node, leaf first. */
static int collect_path(struct witch_symbolizer *sym,
			const struct witch_profile *p, uint32_t node,
			struct path_buf *pb)
{
	pb->n = 0;
	/* Parents always have smaller indices, so this walk ends at 0. */
	for (; node != 0; node = p->nodes[node].parent) {
		const struct witch_frame *fr;
		size_t nfr;
		int rc = witch_symbolize_node(sym, node, &fr, &nfr);

		if (rc)
			return rc;
		for (size_t i = 0; i < nfr; i++) {
			if (pb->n == pb->cap) {
				size_t ncap = pb->cap ? pb->cap * 2 : 32;
				const struct witch_frame **nf =
					realloc(pb->frames, ncap * sizeof(*nf));

				if (!nf)
					return -ENOMEM;
				pb->frames = nf;
				pb->cap = ncap;
			}
			pb->frames[pb->n++] = &fr[i];
		}
	}
	return 0;
}

struct totals {
	double waste, use, waste_approx;
	bool has_waste_approx;
};

static double fraction(const struct totals *t)
{
	return t->waste + t->use > 0 ? t->waste / (t->waste + t->use) : 0;
}

static double share(const struct totals *t, double waste)
{
	return t->waste > 0 ? waste / t->waste : 0;
}

/* ---- text ---- */

static const char *client_what(enum witch_client c)
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
static const char *watch_words(enum witch_client c, bool wasted)
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

static const char *trap_words(enum witch_client c, bool wasted)
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

static void text_frames(FILE *out, const struct path_buf *pb)
{
	for (size_t i = 0; i < pb->n; i++) {
		const struct witch_frame *f = pb->frames[i];

		fprintf(out, "      #%-2zu %s%s at %s", i, f->function,
			f->inlined ? " (inlined)" : "", f->file);
		if (f->line)
			fprintf(out, ":%u", f->line);
		fprintf(out, " in %s [0x%" PRIx64 "]\n", f->module, f->address);
	}
}

static void text_summary(FILE *out, const struct witch_profile *p,
			 const struct totals *t)
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
		client_what(p->client));
	fprintf(out, "%-19s%s", "sampler:", p->sampler);
	if (p->has_period && !p->period_mixed)
		fprintf(out, " (period %" PRIu64 ")", p->period);
	else if (p->period_mixed)
		fprintf(out, " (periods differ between profiles)");
	fputc('\n', out);
	fprintf(out, "%-19s%.0f\n", "samples:", witch_profile_stat(p, "samples"));
	fprintf(out, "%-19s%.0f\n", "watchpoints armed:",
		witch_profile_stat(p, "watchpoints_armed"));
	fprintf(out, "%-19s%.0f\n", "traps:", witch_profile_stat(p, "traps"));
	fprintf(out, "%-19s", "waste:");
	print_bytes(out, t->waste);
	if (t->has_waste_approx) {
		fputs(", approximate part ", out);
		print_bytes(out, t->waste_approx);
	}
	if (p->has_tolerance && !p->tolerance_mixed)
		fprintf(out, " (floating point within %g%% counts as the same value)",
			p->tolerance * 100);
	else if (p->tolerance_mixed)
		fputs(" (FP tolerances differ between profiles)", out);
	fprintf(out, "\n%-19s", "use:");
	print_bytes(out, t->use);
	fprintf(out, "\n%-19s%.4f (waste / (waste + use))\n", "fraction:",
		fraction(t));
	for (size_t i = 0; i < p->nstats; i++) {
		if (is_summary_stat(p->stats[i].name))
			continue;
		fprintf(out, "%s%s ", others ? ", " : "other counters:    ",
			p->stats[i].name);
		print_num(out, p->stats[i].value);
		others = true;
	}
	if (others)
		fputc('\n', out);
}

static int text_report(FILE *out, const struct witch_profile *p,
		       struct witch_symbolizer *sym, const uint32_t *order,
		       size_t shown, const struct totals *t)
{
	struct path_buf pb = { 0 };
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
		print_bytes(out, q->waste);
		if (q->has_waste_approx) {
			fputs(" (approximate ", out);
			print_bytes(out, q->waste_approx);
			fputc(')', out);
		}
		fputs("  use ", out);
		print_bytes(out, q->use);
		fprintf(out, "  traps %" PRIu64 "\n", q->traps);

		fprintf(out, "    %s\n", watch_words(p->client, q->waste > 0));
		if ((rc = collect_path(sym, p, q->watch, &pb)))
			goto out;
		text_frames(out, &pb);
		fprintf(out, "    %s\n", trap_words(p->client, q->waste > 0));
		if ((rc = collect_path(sym, p, q->trap, &pb)))
			goto out;
		text_frames(out, &pb);
	}
out:
	free(pb.frames);
	return rc;
}

/* ---- JSON ---- */

static void json_frames(FILE *out, const struct path_buf *pb)
{
	fputc('[', out);
	for (size_t i = 0; i < pb->n; i++) {
		const struct witch_frame *f = pb->frames[i];

		fputs(i ? ",\n      {" : "\n      {", out);
		fputs("\"function\":", out);
		json_str(out, f->function);
		fputs(", \"file\":", out);
		json_str(out, f->file);
		fprintf(out, ", \"line\":%u, \"module\":", f->line);
		json_str(out, f->module);
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
		       size_t shown, const struct totals *t)
{
	struct path_buf pb = { 0 };
	int rc = 0;

	fputs("{\"client\":", out);
	json_str(out, witch_client_name(p->client));
	fputs(", \"sampler\":", out);
	json_str(out, p->sampler);
	fputs(",\n \"samples\":", out);
	print_num(out, witch_profile_stat(p, "samples"));
	fputs(", \"watchpoints_armed\":", out);
	print_num(out, witch_profile_stat(p, "watchpoints_armed"));
	fputs(", \"traps\":", out);
	print_num(out, witch_profile_stat(p, "traps"));
	fputs(",\n \"waste\":", out);
	print_num(out, t->waste);
	fputs(", \"use\":", out);
	print_num(out, t->use);
	fputs(", \"fraction\":", out);
	print_num(out, fraction(t));
	if (t->has_waste_approx) {
		fputs(", \"waste_approx\":", out);
		print_num(out, t->waste_approx);
	}
	if (p->has_tolerance && !p->tolerance_mixed) {
		fputs(", \"tolerance\":", out);
		print_num(out, p->tolerance);
	}
	fprintf(out, ",\n \"profiles\":%zu, \"pids\":[", p->nfiles);
	for (size_t i = 0; i < p->npids; i++)
		fprintf(out, "%s%" PRIu64, i ? "," : "", p->pids[i]);
	fputc(']', out);
	if (p->exe) {
		fputs(", \"exe\":", out);
		json_str(out, p->exe);
	}
	if (p->has_period && !p->period_mixed)
		fprintf(out, ", \"period\":%" PRIu64, p->period);
	fputs(",\n \"stats\":{", out);
	for (size_t i = 0; i < p->nstats; i++) {
		fputs(i ? ", " : "", out);
		json_str(out, p->stats[i].name);
		fputc(':', out);
		print_num(out, p->stats[i].value);
	}
	fputs("},\n \"pairs\":[", out);
	for (size_t k = 0; k < shown; k++) {
		const struct witch_pair *q = &p->pairs[order[k]];

		fputs(k ? ",\n  {\"waste\":" : "\n  {\"waste\":", out);
		print_num(out, q->waste);
		fputs(", \"use\":", out);
		print_num(out, q->use);
		fputs(", \"share\":", out);
		print_num(out, share(t, q->waste));
		fprintf(out, ", \"traps\":%" PRIu64, q->traps);
		if (q->has_waste_approx) {
			fputs(", \"waste_approx\":", out);
			print_num(out, q->waste_approx);
		}
		fputs(",\n   \"watch\":", out);
		if ((rc = collect_path(sym, p, q->watch, &pb)))
			goto out;
		json_frames(out, &pb);
		fputs(",\n   \"trap\":", out);
		if ((rc = collect_path(sym, p, q->trap, &pb)))
			goto out;
		json_frames(out, &pb);
		fputc('}', out);
	}
	fputs("]}\n", out);
out:
	free(pb.frames);
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

int witch_report_files(char *const *paths, size_t n,
		       const struct witch_report_options *o, FILE *out,
		       bool *input_failed)
{
	struct witch_profile p;
	struct witch_symbolizer *sym = NULL;
	struct totals t = { 0 };
	uint32_t *order = NULL;
	char err[1024];
	size_t shown;
	int rc = 0;

	if (input_failed)
		*input_failed = false;
	witch_profile_init(&p);
	for (size_t i = 0; i < n; i++) {
		rc = witch_profile_read(&p, paths[i], err, sizeof(err));
		if (rc) {
			fprintf(stderr, "witch: %s\n", err);
			if (input_failed)
				*input_failed = true;
			goto out;
		}
	}

	order = malloc((p.npairs ? p.npairs : 1) * sizeof(*order));
	if (!order) {
		rc = -ENOMEM;
		fprintf(stderr, "witch: out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < p.npairs; i++) {
		order[i] = (uint32_t)i;
		t.waste += p.pairs[i].waste;
		t.use += p.pairs[i].use;
		if (p.pairs[i].has_waste_approx) {
			t.waste_approx += p.pairs[i].waste_approx;
			t.has_waste_approx = true;
		}
	}
	qsort_r(order, p.npairs, sizeof(*order), cmp_pairs, p.pairs);

	if (o->top_set)
		shown = o->top;
	else
		shown = o->json ? 0 : DEFAULT_TEXT_TOP;
	if (shown == 0 || shown > p.npairs)
		shown = p.npairs;	/* 0 means all */

	rc = witch_symbolizer_new(&p, &sym);
	if (rc) {
		fprintf(stderr, "witch: out of memory\n");
		goto out;
	}
	if (o->json)
		rc = json_report(out, &p, sym, order, shown, &t);
	else
		rc = text_report(out, &p, sym, order, shown, &t);
	if (rc) {
		fprintf(stderr, "witch: symbolization failed: %s\n",
			strerror(-rc));
		goto out;
	}
	/* Output errors stick in the stream; check once, at the end. */
	if (fflush(out) || ferror(out)) {
		rc = -EIO;
		fprintf(stderr, "witch: cannot write the report: %s\n",
			strerror(errno ? errno : EIO));
	}
out:
	witch_symbolizer_free(sym);
	free(order);
	witch_profile_free(&p);
	return rc;
}

static const char report_usage[] =
	"Usage: witch report [--json] [--top N] FILE...\n";

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
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(report_usage, stdout);
			fputs("Prints a summary and the pairs of calling contexts with the most\n"
			      "waste (default 10; --top 0 for all; --json lists all by default).\n"
			      "Several files are merged. See 'witch --help'.\n",
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
		} else {
			free(files);
			return usage_error("unknown option '%s'", a);
		}
	}
	if (!nfiles) {
		free(files);
		return usage_error("%s", "no profile file given");
	}
	rc = witch_report_files(files, nfiles, &o, stdout, &input_failed);
	free(files);
	if (rc)
		return input_failed ? 2 : 1;
	return 0;
}
