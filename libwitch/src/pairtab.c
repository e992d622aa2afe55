/* pairtab: context-pair metrics (see pairtab.h). */
#include "witch/pairtab.h"

#include <errno.h>
#include <string.h>

/* The buckets start at PAIRTAB_BUCKETS_MIN (4 KiB, one page) and double
 * as the pairs grow, kept at least twice the pairs, as cct's do.  Sized
 * for max_pairs at once (128 KiB a thread), a run's few dozen pairs were
 * spread over nearly every page of them: 25-31 of the ~60 page faults
 * its handlers still took (sort, strings at the default budget, scale 6),
 * and the pages stayed in the thread's resident set. */
#define PAIRTAB_BUCKETS_MIN 1024u

int pairtab_init(struct pairtab *p, struct arena *a, uint32_t max_pairs)
{
	memset(p, 0, sizeof(*p));
	p->entries = arena_alloc(a, sizeof(struct pair_entry) * (size_t)max_pairs);
	p->buckets = arena_alloc(a, sizeof(uint32_t) * (size_t)PAIRTAB_BUCKETS_MIN);
	if (!p->entries || !p->buckets)
		return -ENOMEM;
	p->arena = a;
	p->max_entries = max_pairs;
	p->bucket_mask = PAIRTAB_BUCKETS_MIN - 1;
	p->n_entries = 1; /* entry 0 is the "none" link */
	return 0;
}

static uint32_t pairtab_bucket(const struct pairtab *p, uint32_t watch, uint32_t trap,
			       uint32_t object)
{
	uint64_t key = ((uint64_t)watch << 32 | trap) ^ (uint64_t)object * 0xff51afd7ed558ccdull;
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & p->bucket_mask;
}

/* Only the buckets the entries hang from: the whole bucket array (128 KiB
 * a thread) was written at every thread's end, faulting in pages the
 * thread never used just before they were unmapped (threads_many: 16% of
 * a profiled run, 2064 short threads). */
void pairtab_clear(struct pairtab *p)
{
	for (uint32_t id = 1; id < p->n_entries; id++) {
		const struct pair_entry *e = &p->entries[id];
		p->buckets[pairtab_bucket(p, e->watch, e->trap, e->object)] = 0;
	}
	/* Entry 0 stays zero: an empty table's exit touches none of its
	 * pages (a fault each, a page table's too, in every process). */
	if (p->n_entries > 1)
		memset(p->entries + 1, 0, sizeof(p->entries[0]) * (size_t)(p->n_entries - 1));
	p->n_entries = 1;
	p->dropped = 0;
}

/* Twice the buckets, every pair re-linked: O(n) once per doubling, in the
 * arena (async-signal-safe: a bump allocation).  Without room the old
 * buckets stay, their chains longer. */
static void pairtab_grow(struct pairtab *p)
{
	uint32_t nb = (p->bucket_mask + 1) * 2;
	uint32_t *b = arena_alloc(p->arena, sizeof(uint32_t) * (size_t)nb);
	if (!b)
		return;
	p->buckets = b;
	p->bucket_mask = nb - 1;
	for (uint32_t id = 1; id < p->n_entries; id++) {
		struct pair_entry *e = &p->entries[id];
		uint32_t h = pairtab_bucket(p, e->watch, e->trap, e->object);
		e->hash_next = b[h];
		b[h] = id;
	}
}

static struct pair_entry *pairtab_get(struct pairtab *p, uint32_t watch, uint32_t trap,
				      uint32_t object)
{
	if (p->n_entries * 2u > p->bucket_mask + 1 && p->bucket_mask + 1 < p->max_entries * 2u)
		pairtab_grow(p);
	uint32_t b = pairtab_bucket(p, watch, trap, object);
	for (uint32_t id = p->buckets[b]; id; id = p->entries[id].hash_next)
		if (p->entries[id].watch == watch && p->entries[id].trap == trap &&
		    p->entries[id].object == object)
			return &p->entries[id];
	if (p->n_entries >= p->max_entries) {
		p->dropped++;
		return NULL;
	}
	uint32_t id = p->n_entries++;
	struct pair_entry *e = &p->entries[id];
	e->watch = watch;
	e->trap = trap;
	e->object = object;
	e->hash_next = p->buckets[b];
	p->buckets[b] = id;
	return e;
}

static int pair_accumulate(struct pairtab *p, uint32_t watch, uint32_t trap, uint32_t object,
			   double waste, double use, double waste_approx, uint64_t traps)
{
	struct pair_entry *e = pairtab_get(p, watch, trap, object);
	if (!e)
		return -ENOMEM;
	e->waste += waste;
	e->use += use;
	e->waste_approx += waste_approx;
	e->traps += traps;
	return 0;
}

int pairtab_add(struct pairtab *p, uint32_t watch, uint32_t trap, uint32_t object,
		double waste, double use, double waste_approx)
{
	return pair_accumulate(p, watch, trap, object, waste, use, waste_approx, 1);
}

int pairtab_add_share(struct pairtab *p, uint32_t watch, uint32_t trap, uint32_t object,
		      double waste, double use, double waste_approx)
{
	return pair_accumulate(p, watch, trap, object, waste, use, waste_approx, 0);
}

int pairtab_merge(struct pairtab *p, uint32_t watch, uint32_t trap,
		  const struct pair_entry *from)
{
	struct pair_entry *e = pairtab_get(p, watch, trap, from->object);
	if (!e)
		return -ENOMEM;
	e->waste += from->waste;
	e->use += from->use;
	e->waste_approx += from->waste_approx;
	e->traps += from->traps;
	return 0;
}
