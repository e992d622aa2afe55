/* run_profiles: the profiles a `witch run` wrote (see run_profiles.h). */
#include "run_profiles.h"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * Slack for the program's own profile: on file systems with coarse
 * timestamps its mtime may read as slightly before the start of the run.
 * Only that one file gets it; a stale file with the same pid within two
 * seconds would need pid wrap-around.
 */
#define OWN_PROFILE_SLACK_S 2

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Default pattern: witch-<prog basename>-%p.prof, '%' in the name doubled. */
char *run_default_pattern(const char *prog)
{
	const char *b = base_name(prog);
	size_t len = strlen(b);
	char *out = malloc(2 * len + sizeof("witch--%p.prof"));
	char *o = out;

	if (!out)
		return NULL;
	o += sprintf(o, "witch-");
	for (; *b; b++) {
		*o++ = *b;
		if (*b == '%')
			*o++ = '%';
	}
	strcpy(o, "-%p.prof");
	return out;
}

/* Prefix relative patterns with the current directory. */
char *run_absolute_pattern(const char *pat)
{
	char *cwd, *out;

	if (pat[0] == '/')
		return strdup(pat);
	cwd = getcwd(NULL, 0);
	if (!cwd)
		return NULL;
	/* '%' in the directory name must not read as a conversion. */
	out = malloc(2 * strlen(cwd) + strlen(pat) + 2);
	if (out) {
		char *o = out;

		for (const char *c = cwd; *c; c++) {
			*o++ = *c;
			if (*c == '%')
				*o++ = '%';
		}
		*o++ = '/';
		strcpy(o, pat);
	}
	free(cwd);
	return out;
}

/* The pattern as a glob(3) pattern: %p and %e become *, metacharacters quoted. */
static char *glob_of_pattern(const char *pat)
{
	char *out = malloc(2 * strlen(pat) + 1), *o = out;

	if (!out)
		return NULL;
	for (const char *c = pat; *c; c++) {
		if (c[0] == '%' && (c[1] == 'p' || c[1] == 'e')) {
			*o++ = '*';
			c++;
		} else if (c[0] == '%' && c[1] == '%') {
			*o++ = '%';
			c++;
		} else {
			if (strchr("*?[\\", *c))
				*o++ = '\\';
			*o++ = *c;
		}
	}
	*o = '\0';
	return out;
}

/*
 * Whether s is an expansion of pat: %p matches one or more digits (the
 * first one is stored in *pid), %e one or more characters other than '/',
 * %% a '%'; anything else is literal.
 */
static bool match_pattern(const char *pat, const char *s, long long *pid)
{
	while (*pat) {
		if (pat[0] == '%' && (pat[1] == 'p' || pat[1] == 'e')) {
			size_t max = pat[1] == 'p' ? strspn(s, "0123456789") :
						     strcspn(s, "/");

			for (size_t k = max; k >= 1; k--) {
				if (match_pattern(pat + 2, s + k, pid)) {
					if (pat[1] == 'p') {
						char num[32];

						if (k >= sizeof(num))
							return false;
						memcpy(num, s, k);
						num[k] = '\0';
						*pid = strtoll(num, NULL, 10);
					}
					return true;
				}
			}
			return false;
		}
		if (pat[0] == '%' && pat[1] == '%') {
			if (*s != '%')
				return false;
			pat += 2;
			s++;
			continue;
		}
		if (*pat != *s)
			return false;
		pat++;
		s++;
	}
	return *s == '\0';
}

static bool has_pid_conversion(const char *pat)
{
	for (const char *c = pat; *c; c++) {
		if (c[0] == '%' && c[1] == 'p')
			return true;
		if (c[0] == '%' && c[1] == '%')
			c++;
	}
	return false;
}

/* The pattern with %p = pid (for messages); %e and %% kept as written. */
void run_expand_pid(const char *pat, pid_t pid, char *out, size_t outlen)
{
	size_t o = 0;

	for (const char *c = pat; *c && o + 1 < outlen; c++) {
		if (c[0] == '%' && c[1] == 'p') {
			int n = snprintf(out + o, outlen - o, "%ld", (long)pid);

			if (n < 0 || (size_t)n >= outlen - o)
				break;
			o += (size_t)n;
			c++;
		} else {
			out[o++] = *c;
		}
	}
	out[o] = '\0';
}

static bool written_since(const struct stat *st, const struct timespec *t,
			  time_t slack)
{
	time_t from = t->tv_sec - slack;

	if (st->st_mtim.tv_sec != from)
		return st->st_mtim.tv_sec > from;
	return st->st_mtim.tv_nsec >= t->tv_nsec;
}


void run_found_free(struct run_found *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->paths[i]);
	free(f->paths);
	f->paths = NULL;
	f->n = f->cap = 0;
}

static int found_add(struct run_found *f, const char *path)
{
	if (f->n == f->cap) {
		size_t ncap = f->cap ? 2 * f->cap : 8;
		char **np = realloc(f->paths, ncap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		f->paths = np;
		f->cap = ncap;
	}
	f->paths[f->n] = strdup(path);
	if (!f->paths[f->n])
		return -ENOMEM;
	f->n++;
	return 0;
}

/*
 * Add the files that expand pat and were written during the run: with
 * own, the program's (%p = its pid; any name if pat has no %p), else
 * those of other pids.
 */
static int collect(const char *pat, pid_t pid, bool own,
		   const struct timespec *start, struct run_found *f)
{
	char *gpat = glob_of_pattern(pat);
	bool pid_conv = has_pid_conversion(pat);
	glob_t g;
	int grc, rc = 0;

	if (!gpat)
		return -ENOMEM;
	/* GLOB_PERIOD: %e may expand to a name that starts with a dot. */
	grc = glob(gpat, GLOB_PERIOD, NULL, &g);
	free(gpat);
	if (grc == GLOB_NOMATCH)
		return 0;
	if (grc == GLOB_NOSPACE)
		return -ENOMEM;
	if (grc == GLOB_ABORTED) {
		fprintf(stderr,
			"witch: warning: cannot search the directory of %s for profiles\n",
			pat);
		globfree(&g);
		return 0;
	}
	for (size_t i = 0; i < g.gl_pathc && !rc; i++) {
		const char *path = g.gl_pathv[i];
		long long fpid = -1;
		struct stat st;

		if (!match_pattern(pat, path, &fpid))
			continue;
		if (own != (!pid_conv || fpid == (long long)pid))
			continue;
		if (stat(path, &st) || !S_ISREG(st.st_mode))
			continue;	/* vanished, or not a profile */
		if (!written_since(&st, start, own ? OWN_PROFILE_SLACK_S : 0))
			continue;	/* left over from an earlier run */
		rc = found_add(f, path);
	}
	globfree(&g);
	return rc;
}

/*
 * The profiles of this run, the program's own first, then those of its
 * descendants. Without %p in the pattern, the program writes the
 * pattern's name itself and every process below it the name with
 * ".<pid>" appended (libwitch adds ".%p" to WITCH_OUTPUT for them:
 * libwitch/src/profile.c), so those are looked for too.
 */
int run_find_profiles(const char *pat, pid_t pid,
			 const struct timespec *start, struct run_found *f)
{
	char *dotted;
	int rc;

	rc = collect(pat, pid, true, start, f);
	if (!rc && has_pid_conversion(pat))
		rc = collect(pat, pid, false, start, f);
	if (!rc && !has_pid_conversion(pat)) {
		if (asprintf(&dotted, "%s.%%p", pat) < 0)
			return -ENOMEM;
		rc = collect(dotted, pid, false, start, f);
		free(dotted);
	}
	return rc;
}

