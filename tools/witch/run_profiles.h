/*
 * run_profiles: which profiles a `witch run` wrote.  The WITCH_OUTPUT
 * pattern (%p pid, %e program name, %% a percent sign) is made absolute,
 * so a program that changes directory still writes where witch looks, and
 * after the run the files matching it are found: the program's own first,
 * then its descendants', if written after the run started.
 */
#ifndef WITCH_TOOL_RUN_PROFILES_H
#define WITCH_TOOL_RUN_PROFILES_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

struct run_found {
	char **paths;
	size_t n, cap;
};

/* witch-<prog basename>-%p.prof, '%' in the name doubled; NULL without memory. */
char *run_default_pattern(const char *prog);
/* pat, prefixed with the current directory when relative; NULL on error. */
char *run_absolute_pattern(const char *pat);
/* pat with %p = pid (for messages); %e and %% kept as written. */
void run_expand_pid(const char *pat, pid_t pid, char *out, size_t outlen);
/* The profiles of process pid and its descendants written since start
 * (without %p in the pattern, also the ".<pid>" names libwitch gives forked
 * children) into f.  0 or a negative errno. */
int run_find_profiles(const char *pat, pid_t pid, const struct timespec *start,
		      struct run_found *f);
void run_found_free(struct run_found *f);

#endif
