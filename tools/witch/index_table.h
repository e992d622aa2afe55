/*
 * index_table: an open-addressing hash index over a caller-owned array.
 *
 * The table stores (hash, index) pairs only; the caller keeps the keys in
 * its own array and compares candidates itself. That keeps one small
 * table usable for every keyed lookup in the witch command (node paths,
 * pairs, ids, symbolization cache) without callbacks.
 */
#ifndef WITCH_TOOL_INDEX_TABLE_H
#define WITCH_TOOL_INDEX_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct index_slot {
	uint64_t hash;
	uint32_t idx;
	uint32_t used;
};

struct index_table {
	struct index_slot *slots;
	size_t cap;	/* power of two, or 0 */
	size_t count;
};

struct index_probe {
	size_t pos;
	uint64_t hash;
};

/* Empty table; no allocation until the first insert. */
void index_table_init(struct index_table *t);
/* Releases the slots; the table is empty and reusable afterwards. */
void index_table_free(struct index_table *t);
/* Adds idx under hash (duplicates are the caller's business). Returns 0 or
 * -ENOMEM (the table is unchanged then). */
int index_table_insert(struct index_table *t, uint64_t hash, uint32_t idx);
void index_table_probe_start(const struct index_table *t, uint64_t hash,
			     struct index_probe *pr);
/* Enumerate the indices stored under hash; the caller checks its key.
 * Inserting invalidates a running probe. */
bool index_table_probe_next(const struct index_table *t,
			    struct index_probe *pr, uint32_t *idx);

uint64_t index_hash_u64(uint64_t x);
uint64_t index_hash_mix(uint64_t h, uint64_t x);
/* Hash helpers: a 64-bit finalizer, and chaining of several values. */
uint64_t index_hash_str(uint64_t h, const char *s);

#endif
