/* index_table: open-addressing hash index; see index_table.h. */
#include "index_table.h"

#include <errno.h>
#include <stdlib.h>

void index_table_init(struct index_table *t)
{
	t->slots = NULL;
	t->cap = 0;
	t->count = 0;
}

void index_table_free(struct index_table *t)
{
	free(t->slots);
	index_table_init(t);
}

/* Place without growing; the caller guarantees a free slot exists. */
static void place(struct index_slot *slots, size_t cap, uint64_t hash,
		  uint32_t idx)
{
	size_t pos = (size_t)hash & (cap - 1);

	while (slots[pos].used)
		pos = (pos + 1) & (cap - 1);
	slots[pos].hash = hash;
	slots[pos].idx = idx;
	slots[pos].used = 1;
}

int index_table_insert(struct index_table *t, uint64_t hash, uint32_t idx)
{
	/* Keep the load factor at or below 1/2 so linear probes stay short. */
	if ((t->count + 1) * 2 > t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		struct index_slot *ns;

		if (ncap < t->cap || ncap > SIZE_MAX / sizeof(*ns))
			return -ENOMEM;
		ns = calloc(ncap, sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		for (size_t i = 0; i < t->cap; i++)
			if (t->slots[i].used)
				place(ns, ncap, t->slots[i].hash,
				      t->slots[i].idx);
		free(t->slots);
		t->slots = ns;
		t->cap = ncap;
	}
	place(t->slots, t->cap, hash, idx);
	t->count++;
	return 0;
}

void index_table_probe_start(const struct index_table *t, uint64_t hash,
			     struct index_probe *pr)
{
	pr->hash = hash;
	pr->pos = t->cap ? ((size_t)hash & (t->cap - 1)) : 0;
}

bool index_table_probe_next(const struct index_table *t,
			    struct index_probe *pr, uint32_t *idx)
{
	if (!t->cap)
		return false;
	/* The table is never full (load <= 1/2), so an empty slot ends it. */
	while (t->slots[pr->pos].used) {
		const struct index_slot *s = &t->slots[pr->pos];

		pr->pos = (pr->pos + 1) & (t->cap - 1);
		if (s->hash == pr->hash) {
			*idx = s->idx;
			return true;
		}
	}
	return false;
}

uint64_t index_hash_u64(uint64_t x)
{
	/* splitmix64 finalizer: cheap and mixes all input bits into all output bits. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

uint64_t index_hash_mix(uint64_t h, uint64_t x)
{
	return index_hash_u64(h ^ index_hash_u64(x + 0x9e3779b97f4a7c15ULL));
}

uint64_t index_hash_str(uint64_t h, const char *s)
{
	/* FNV-1a over the bytes, then folded into h. */
	uint64_t f = 0xcbf29ce484222325ULL;

	for (; *s; s++) {
		f ^= (unsigned char)*s;
		f *= 0x100000001b3ULL;
	}
	return index_hash_mix(h, f);
}
