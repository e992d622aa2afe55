/*
 * summary: what every view of a profile model shares - loading several
 * files into one model, the totals and fraction (Witch Eq. 4.1), the
 * order of pairs by waste, and the symbolized frames of a path.
 * report (text, JSON), folded, pprof, diff and check are built on it.
 */
#ifndef WITCH_TOOL_SUMMARY_H
#define WITCH_TOOL_SUMMARY_H

#include "profile_read.h"
#include "symbolize.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct witch_totals {
	double waste, use, waste_approx;
	bool has_waste_approx;
	uint64_t traps;		/* traps attributed to pairs */
	double sampled;		/* bytes the samples stood for (`sampled` records) */
};

struct witch_path {
	const struct witch_frame **frames;	/* leaf first */
	size_t n, cap;
};

/* Reads and merges the n files into p (initialized by the caller, freed by the
 * caller even on failure). On failure prints the reader's one-line message as
 * "witch: ..." on stderr and returns its negative errno (see profile_read.h). */
int witch_load_profiles(struct witch_profile *p, char *const *paths, size_t n);
/* Sums waste, use, waste_approx and traps over all pairs. */
void witch_totals_of(const struct witch_profile *p, struct witch_totals *t);
/* The profiler's own estimate of what it cost (software sampler): *overhead =
 * (handler + kernel round trips + start-up and exit + the kernel's string
 * work that armed watchpoints slowed) / the program's CPU time, *rate =
 * ticks per CPU-second.  -ENODATA when the profile has no cost counters (older
 * runtime, PMU sampler). */
int witch_overhead_of(const struct witch_profile *p, double *overhead, double *rate);
/* waste / (waste + use), 0 when both are 0. */
double witch_fraction(double waste, double use);
/* waste / total_waste, 0 when the total is 0. */
double witch_share(double waste, double total_waste);
/* A malloc'd array of the p->npairs pair indices sorted by waste, largest
 * first (ties: use, traps, then profile order). 0 or -ENOMEM. */
int witch_pairs_by_waste(const struct witch_profile *p, uint32_t **order);
/* A malloc'd array of the *n nodes with sampled bytes (`sampled` records),
 * largest first, and their *total.  0 or -ENOMEM. */
int witch_sampled_by_bytes(const struct witch_profile *p, uint32_t **order, size_t *n,
			   double *total);
/* The frames of the calling context ending at node, leaf first, inlined frames
 * included (witch_symbolize_node for each node up to the root). path is
 * reused: its old contents are replaced. 0 or a negative errno from the
 * symbolizer. */
int witch_path_collect(struct witch_symbolizer *s, const struct witch_profile *p,
		       uint32_t node, struct witch_path *path);
void witch_path_free(struct witch_path *path);
/* The function that holds a path's leaf: the name of its first frame that
 * is not an inlined call (the leaf's own name when all are). n >= 1. */
const char *witch_path_function(const struct witch_path *path);
/* The synthetic frame between C_watch and C_trap in stack views (Witch 4.6.5):
 * KILLED_BY (dead), OVERWRITTEN_BY_SAME_VALUE (silent), RELOADED_BY (load). */
const char *witch_marker_frame(enum witch_client c);

#endif
