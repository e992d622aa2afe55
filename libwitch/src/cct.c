/* cct: calling context tree (see cct.h). */
#include "witch/cct.h"

#include <errno.h>
#include <string.h>

int cct_init(struct cct *t, struct arena *a, uint32_t max_nodes)
{
	uint32_t nb = 1;
	while (nb < max_nodes * 2u)
		nb <<= 1;
	memset(t, 0, sizeof(*t));
	t->nodes = arena_alloc(a, sizeof(struct cct_node) * (size_t)max_nodes);
	t->buckets = arena_alloc(a, sizeof(uint32_t) * (size_t)nb);
	if (!t->nodes || !t->buckets)
		return -ENOMEM;
	t->max_nodes = max_nodes;
	t->bucket_mask = nb - 1;
	t->n_nodes = 1; /* the root; arena memory is zeroed by mmap */
	return 0;
}

static inline uint32_t cct_hash(uint32_t parent, uint64_t pc)
{
	uint64_t h = (pc ^ ((uint64_t)parent << 40)) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32);
}

static int64_t cct_child(struct cct *t, uint32_t parent, uint64_t pc)
{
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
