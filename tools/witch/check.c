/* check: the CI gate on the fraction of waste; see check.h. */
#include "check.h"

#include "cli.h"
#include "object_view.h"
#include "summary.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Rounding noise of sums (0.1 + 0.2 > 0.3) must not fail a build: values
 * this close to their limit count as equal to it.
 */
#define CHECK_EPSILON 1e-9

/*
 * Print a and b with two decimals, or more (up to 6) when they differ
 * but would print alike: "0.30 > 0.30" would read as a contradiction.
 */
static void two_numbers(double a, double b, bool sign_a, char *sa, char *sb,
			size_t len)
{
	for (int d = 2; d <= 6; d++) {
		snprintf(sa, len, sign_a ? "%+.*f" : "%.*f", d, a);
		snprintf(sb, len, "%.*f", d, b);
		if (fabs(a - b) <= CHECK_EPSILON || strcmp(sa + (sign_a && a >= 0), sb))
			break;
	}
}

/* The fraction criteria after "witch check: " (at line + n); returns
 * whether one fails and advances *np. */
static bool fraction_parts(double fraction, bool has_max, double max, bool has_base,
			   double base_fraction, double max_increase, char *line, size_t len,
			   size_t *np)
{
	char a[32], b[32], c[32], d[32];
	bool fail = false;
	size_t n = *np;

	if (has_max) {
		bool over = fraction > max + CHECK_EPSILON;

		two_numbers(fraction, max, false, a, b, sizeof(a));
		n += (size_t)snprintf(line + (n < len ? n : len), n < len ? len - n : 0,
				      "fraction %s %s %s (max)", a,
				      over ? ">" : "<=", b);
		fail |= over;
	}
	if (has_base) {
		double inc = fraction - base_fraction;
		bool over = inc > max_increase + CHECK_EPSILON;

		two_numbers(fraction, base_fraction, false, a, b, sizeof(a));
		two_numbers(inc, max_increase, true, c, d, sizeof(c));
		if (has_max)
			n += (size_t)snprintf(line + (n < len ? n : len),
					      n < len ? len - n : 0,
					      "; baseline %s: increase %s %s %s (max)",
					      b, c, over ? ">" : "<=", d);
		else
			n += (size_t)snprintf(line + (n < len ? n : len),
					      n < len ? len - n : 0,
					      "fraction %s, baseline %s: increase %s %s %s (max)",
					      a, b, c, over ? ">" : "<=", d);
		fail |= over;
	}
	*np = n;
	return fail;
}

int witch_check_verdict(double fraction, bool has_max, double max,
			bool has_base, double base_fraction,
			double max_increase, char *line, size_t len)
{
	size_t n = (size_t)snprintf(line, len, "witch check: ");
	bool fail = fraction_parts(fraction, has_max, max, has_base, base_fraction,
				   max_increase, line, len, &n);

	snprintf(line + (n < len ? n : len), n < len ? len - n : 0, ": %s",
		 fail ? "FAIL" : "PASS");
	return fail ? 1 : 0;
}

int witch_check_object_verdict(bool has_fraction, double fraction, bool has_max, double max,
			       bool has_base, double base_fraction, double max_increase,
			       double share, double max_share, const char *object,
			       char *line, size_t len)
{
	size_t n = (size_t)snprintf(line, len, "witch check: ");
	bool fail = false, over = share > max_share + CHECK_EPSILON;
	char a[32], b[32];

	if (has_fraction) {
		fail = fraction_parts(fraction, has_max, max, has_base, base_fraction,
				      max_increase, line, len, &n);
		n += (size_t)snprintf(line + (n < len ? n : len), n < len ? len - n : 0, "; ");
	}
	two_numbers(share, max_share, false, a, b, sizeof(a));
	n += (size_t)snprintf(line + (n < len ? n : len), n < len ? len - n : 0,
			      "largest object share %s %s %s (max), %s", a, over ? ">" : "<=", b,
			      object ? object : "no objects in the profile");
	fail |= over;
	snprintf(line + (n < len ? n : len), n < len ? len - n : 0, ": %s",
		 fail ? "FAIL" : "PASS");
	return fail ? 1 : 0;
}

static const char check_usage[] =
	"Usage: witch check [--max-fraction F] [--max-object-share S] [--baseline BASE --max-increase D] PROFILE...\n";


/* A fraction limit: a plain decimal number from 0 to 1. */
static int parse_limit(const char *s, double *out)
{
	char *end;
	double v;

	if (!*s || !(s[0] == '.' || (s[0] >= '0' && s[0] <= '9')))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno || !isfinite(v) || v < 0 || v > 1)
		return -EINVAL;
	*out = v;
	return 0;
}

/* The largest object of the merged profile p by waste: its share of the
 * waste and its name (malloc'd; NULL without objects). 0 or a negative
 * errno after a message. */
static int largest_object(const struct witch_profile *p, const struct witch_totals *t,
			  double *share, char **name)
{
	struct witch_symbolizer *sym = NULL;
	struct witch_objects o = { 0 };
	int rc = witch_symbolizer_new(p, &sym);

	*share = 0;
	*name = NULL;
	if (!rc)
		rc = witch_objects_build(p, sym, &o);
	if (!rc && o.n) {
		/* Rows are by waste: the first has the largest share. */
		*share = witch_share(o.rows[0].waste, t->waste);
		if (!(*name = strdup(o.rows[0].name)))
			rc = -ENOMEM;
	}
	if (rc)
		fprintf(stderr, "witch: cannot name the objects: %s\n", strerror(-rc));
	witch_objects_free(&o);
	witch_symbolizer_free(sym);
	return rc;
}

/* The fraction of the merged files and, when share is not NULL, the largest
 * object's share and name; or a negative errno (message printed). */
static int fraction_of(char **files, size_t n, double *out, double *share, char **name)
{
	struct witch_profile p;
	struct witch_totals t;
	int rc;

	witch_profile_init(&p);
	rc = witch_load_profiles(&p, files, n);
	if (!rc) {
		witch_totals_of(&p, &t);
		*out = witch_fraction(t.waste, t.use);
		if (share)
			rc = largest_object(&p, &t, share, name);
	}
	witch_profile_free(&p);
	return rc;
}

int witch_check_main(int argc, char **argv)
{
	char **files = NULL, **bases = NULL, line[1024];
	size_t nfiles = 0, nbases = 0;
	bool has_max = false, has_inc = false, has_share = false, opts_done = false;
	double max = 0, inc = 0, fraction = 0, base = 0, max_share = 0, share = 0;
	char *object = NULL;
	int status = 2;
	struct witch_cli c = {.cmd = "check", .usage = check_usage, .argc = argc, .argv = argv};

	files = calloc(argc > 0 ? (size_t)argc : 1, sizeof(*files));
	bases = calloc(argc > 0 ? (size_t)argc : 1, sizeof(*bases));
	if (!files || !bases) {
		fprintf(stderr, "witch: out of memory\n");
		goto out;
	}
	for (c.i = 1; c.i < argc; c.i++) {
		const char *a = argv[c.i], *val = NULL;
		int rc;

		if (opts_done || a[0] != '-' || !strcmp(a, "-")) {
			files[nfiles++] = argv[c.i];
			continue;
		}
		if (!strcmp(a, "--")) {
			opts_done = true;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(check_usage, stdout);
			fputs("Exit 0 (PASS) or 1 (FAIL) on the fraction waste / (waste + use)\n"
			      "of the merged PROFILEs, with a one-line verdict; 2 on bad input.\n"
			      "--max-increase D compares with the --baseline profiles' fraction.\n"
			      "--max-object-share S fails when one object (docs/objects.md) holds\n"
			      "more than S of the waste, and names it.\n",
			      stdout);
			status = 0;
			goto out;
		}
		if ((rc = witch_cli_option(&c, "--max-fraction", "a value", &val))) {
			if (rc < 0)
				goto out;
			if (parse_limit(val, &max)) {
				status = witch_cli_usage_error(&c, "--max-fraction: '%s' is not a fraction from 0 to 1", val);
				goto out;
			}
			has_max = true;
		} else if ((rc = witch_cli_option(&c, "--max-object-share", "a value", &val))) {
			if (rc < 0)
				goto out;
			if (parse_limit(val, &max_share)) {
				status = witch_cli_usage_error(&c, "--max-object-share: '%s' is not a share from 0 to 1", val);
				goto out;
			}
			has_share = true;
		} else if ((rc = witch_cli_option(&c, "--baseline", "a value", &val))) {
			if (rc < 0)
				goto out;
			bases[nbases++] = (char *)val;
		} else if ((rc = witch_cli_option(&c, "--max-increase", "a value", &val))) {
			if (rc < 0)
				goto out;
			if (parse_limit(val, &inc)) {
				status = witch_cli_usage_error(&c, "--max-increase: '%s' is not a fraction from 0 to 1", val);
				goto out;
			}
			has_inc = true;
		} else {
			status = witch_cli_usage_error(&c, "unknown option '%s'", a);
			goto out;
		}
	}
	if (!nfiles) {
		status = witch_cli_usage_error(&c, "%s", "no profile file given");
		goto out;
	}
	if (has_inc != (nbases > 0)) {
		status = witch_cli_usage_error(&c, "%s", has_inc ? "--max-increase needs --baseline BASE" :
					       "--baseline needs --max-increase D");
		goto out;
	}
	if (!has_max && !has_inc && !has_share) {
		status = witch_cli_usage_error(&c, "%s", "nothing to check: give --max-fraction F, --max-object-share S and/or --baseline BASE --max-increase D");
		goto out;
	}
	if (fraction_of(files, nfiles, &fraction, has_share ? &share : NULL, &object) ||
	    (nbases && fraction_of(bases, nbases, &base, NULL, NULL)))
		goto out;	/* status 2; the reader said why */
	if (has_share)
		status = witch_check_object_verdict(has_max || nbases > 0, fraction, has_max, max,
						    nbases > 0, base, inc, share, max_share, object,
						    line, sizeof(line));
	else
		status = witch_check_verdict(fraction, has_max, max, nbases > 0, base,
					     inc, line, sizeof(line));
	printf("%s\n", line);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "witch: cannot write the verdict: %s\n",
			strerror(errno ? errno : EIO));
		/* The exit status still carries the verdict. */
	}
out:
	free(object);
	free(files);
	free(bases);
	return status;
}
