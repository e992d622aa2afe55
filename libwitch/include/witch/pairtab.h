/* pairtab: metrics of <C_watch, C_trap> pairs (Witch 4.4.2), each split by
 * the object its watched bytes were in (objects.h; 0 = unknown).
 *
 * Entries live in p->entries[1 .. p->n_entries - 1].
 */
#ifndef WITCH_PAIRTAB_H
#define WITCH_PAIRTAB_H

#include <stdint.h>

#include "witch/arena.h"

struct pair_entry {
	uint32_t watch;
	uint32_t trap;
	uint32_t object;
	uint32_t hash_next;
	double waste;
	double use;
	double waste_approx;
	uint64_t traps;
};

struct pairtab {
	struct pair_entry *entries;
	uint32_t *buckets;    /* grown in arena as the pairs grow */
	struct arena *arena;
	uint32_t n_entries;
	uint32_t max_entries;
	uint32_t bucket_mask;
	uint64_t dropped;
};

/* Room for max_pairs in a (its buckets start small and grow there: a
 * must outlive p).  0 or -ENOMEM. */
int pairtab_init(struct pairtab *p, struct arena *a, uint32_t max_pairs);
/* Accumulate into the pair (creating it) and count one trap. Returns 0 or
 * -ENOMEM when the table is full (counted in dropped). Async-signal-safe. */
int pairtab_add(struct pairtab *p, uint32_t watch, uint32_t trap, uint32_t object,
		double waste, double use, double waste_approx);
/* The same without counting a trap: another object's share of one trap's
 * verdict (objpend.h). */
int pairtab_add_share(struct pairtab *p, uint32_t watch, uint32_t trap, uint32_t object,
		      double waste, double use, double waste_approx);
/* Adds another table's entry (keeping its object). */
int pairtab_merge(struct pairtab *p, uint32_t watch, uint32_t trap,
		  const struct pair_entry *from);

/* Empty the table (after its pairs were folded into the profile). Not while a
 * handler may use it. */
void pairtab_clear(struct pairtab *p);

#endif
