/* cct: calling context tree (see cct.h). */
#include "witch/cct.h"

#include <errno.h>
#include <string.h>

/* The hash starts at CCT_BUCKETS_MIN buckets and doubles as the tree grows,
 * kept at least twice the nodes: sized for max_nodes at once, its pages
 * were all touched by a few thousand nodes spread over them (the process
 * tree's 8 MiB at the exit's fold: gcc's cc1 peaked 6 MiB higher). */
#define CCT_BUCKETS_MIN 1024u

int cct_init(struct cct *t, struct arena *a, uint32_t max_nodes)
{
	memset(t, 0, sizeof(*t));
	t->nodes = arena_alloc(a, sizeof(struct cct_node) * (size_t)max_nodes);
	t->buckets = arena_alloc(a, sizeof(uint32_t) * (size_t)CCT_BUCKETS_MIN);
	if (!t->nodes || !t->buckets)
		return -ENOMEM;
	t->arena = a;
	t->max_nodes = max_nodes;
	t->bucket_mask = CCT_BUCKETS_MIN - 1;
	t->n_nodes = 1; /* the root; arena memory is zeroed by mmap */
	return 0;
}

static inline uint32_t cct_hash(uint32_t parent, uint64_t pc)
{
	uint64_t h = (pc ^ ((uint64_t)parent << 40)) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32);
}

/* Twice the buckets, every node re-linked: O(n) once per doubling, in the
 * arena (async-signal-safe: a bump allocation).  Without room the old
 * table stays, its chains longer. */
static void cct_grow(struct cct *t)
{
	uint32_t nb = (t->bucket_mask + 1) * 2;
	uint32_t *b = arena_alloc(t->arena, sizeof(uint32_t) * (size_t)nb);
	if (!b)
		return;
	for (uint32_t id = 1; id < t->n_nodes; id++) {
		uint32_t h = cct_hash(t->nodes[id].parent, t->nodes[id].pc) & (nb - 1);
		t->nodes[id].hash_next = b[h];
		b[h] = id;
	}
	t->buckets = b;
	t->bucket_mask = nb - 1;
}

static int64_t cct_child(struct cct *t, uint32_t parent, uint64_t pc)
{
	if (t->n_nodes * 2u > t->bucket_mask + 1 && t->bucket_mask + 1 < (1u << 31))
		cct_grow(t);
	uint32_t b = cct_hash(parent, pc) & t->bucket_mask;
	for (uint32_t id = t->buckets[b]; id; id = t->nodes[id].hash_next)
		if (t->nodes[id].parent == parent && t->nodes[id].pc == pc)
			return id;
	if (t->n_nodes >= t->max_nodes) {
		t->dropped++;
		return -ENOMEM;
	}
	uint32_t id = t->n_nodes++;
	struct cct_node *n = &t->nodes[id];
	n->pc = pc;
	n->parent = parent;
	n->hash_next = t->buckets[b];
	t->buckets[b] = id;
	return id;
}

int64_t cct_insert_path(struct cct *t, const uint64_t *pcs, int n)
{
	int64_t node = 0;
	for (int i = n - 1; i >= 0; i--) {
		node = cct_child(t, (uint32_t)node, pcs[i]);
		if (node < 0)
			return node;
	}
	return node;
}

int cct_path(const struct cct *t, uint32_t node, uint64_t *pcs, int max)
{
	int n = 0;
	while (node != 0 && n < max) {
		pcs[n++] = t->nodes[node].pc;
		node = t->nodes[node].parent;
	}
	return n;
}
