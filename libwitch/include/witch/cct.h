/* cct: calling context tree in preallocated memory.
 *
 * Node 0 is the root and has no pc.  Children are found through one hash
 * table keyed by (parent, pc).  Each node carries the Witch 4.4.2 metrics:
 * mu (the bytes its samples stand for), eta (what traps have already
 * attributed) and mu_folded (what the profile has already taken of mu).
 */
#ifndef WITCH_CCT_H
#define WITCH_CCT_H

#include <stdint.h>

#include "witch/arena.h"

struct cct_node {
	uint64_t pc;
	uint32_t parent;
	uint32_t hash_next;
	double mu;
	double eta;
	double mu_folded;
	uint32_t objpend; /* the pending weight by object (objpend.h), 0: none */
};

struct cct {
	struct cct_node *nodes;
	uint32_t *buckets;     /* grows with the tree (cct.c) */
	struct arena *arena;   /* where it grows */
	uint32_t n_nodes;
	uint32_t max_nodes;
	uint32_t bucket_mask;
	uint64_t dropped;
};

int cct_init(struct cct *t, struct arena *a, uint32_t max_nodes);
/* pcs[0] is the leaf (the accessing instruction), pcs[n-1] the outermost
 * caller.  Returns the leaf's node id (> 0 when n > 0; the root, 0, when n ==
 * 0), or -ENOMEM when the tree is full (counted in t->dropped).  Async-signal-
 * safe. */
int64_t cct_insert_path(struct cct *t, const uint64_t *pcs, int n);
/* The path of a node, leaf first; returns its length. */
int cct_path(const struct cct *t, uint32_t node, uint64_t *pcs, int max);

static inline struct cct_node *cct_node(struct cct *t, uint32_t id)
{
	return &t->nodes[id];
}

#endif
