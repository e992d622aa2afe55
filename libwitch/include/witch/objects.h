/* objects: which data a sample's address falls on (docs/objects.md, #15).
 *
 * An address is classified when its sample is taken (the block live then):
 * heap block (by allocation site, heap.h), then the thread's stack (by the
 * frame holding it), static TLS, static data (by symbol, datasym.h), else
 * unknown (id 0).  Objects live in one process-wide, insert-only, lock-free
 * table of OBJECTS_MAX entries; what is past it counts as unknown.
 */
#ifndef WITCH_OBJECTS_H
#define WITCH_OBJECTS_H

#include <stdint.h>

struct outbuf;
struct rng;

#define OBJECTS_MAX 4096
/* Ids run from 1 to OBJECTS_ID_MAX, in the order objects were first seen; 0
 * is unknown. */
#define OBJECTS_ID_MAX OBJECTS_MAX

enum objects_kind {
	OBJECTS_UNKNOWN = 0,
	OBJECTS_HEAP,
	OBJECTS_STATIC,
	OBJECTS_TLS,
	OBJECTS_STACK,
};

/* Where the sample was taken: its thread's stack and calling context with
 * each frame's stack pointer (unwind.h; after a run-ahead, as
 * emulate_context left them), pcs[0] the sampled instruction, and pc the
 * function that owns [sps[0], sps[1]) when not pcs[0]'s (0: pcs[0]'s). */
struct objects_where {
	uint64_t pc;
	const uint64_t *pcs;
	const uint64_t *sps;
	int n;
	uint64_t stack_hi; /* top of the thread's stack, 0 when unknown */
	uint64_t tp;       /* the thread pointer (fs base) */
	struct rng *rng;   /* the thread's: draws an untracked heap block's site (heap_mix.h) */
	struct fnrange *fns; /* the thread's functions (fnrange.h), NULL: ask the unwind tables */
};

/* Once, from the constructor, when WITCH_OBJECTS is on: the table.  0 or
 * -errno (then every sample is unknown). */
int objects_init(void);
int objects_enabled(void);
/* The object holding addr: its id, 0 when unknown (*dropped set to 1 when
 * that is because the table is full).  An address in an untracked small
 * heap block (heap.h tracks those by sampling) gets a site drawn from the
 * live sampled blocks' mix with w->rng (heap_mix.h).  Async-signal-safe,
 * lock-free. */
uint32_t objects_classify(uint64_t addr, const struct objects_where *w, int *dropped);
/* A sample of bytes falls in object id (mu, by object).  The unknown
 * object's part is what the known ones leave of all samples' bytes
 * (objects_emit). */
void objects_add_sampled(uint32_t id, double bytes);

/* Profile writer (under the profile lock, not in a handler).  Heap objects'
 * allocation contexts become nodes of the process tree through node_of
 * (pcs leaf first; returns the node id or -errno); call before the node
 * records are written, then objects_emit for the object records. */
typedef int64_t (*objects_node_fn)(const uint64_t *pcs, int n, void *arg);
void objects_prepare(objects_node_fn node_of, void *arg);
/* Object records taken so far (0: none to write). */
uint32_t objects_count(void);
/* The object records into f: 0, or the writer's first error (outbuf.h). */
int objects_emit(struct outbuf *f);

/* After objects_emit: id if its record was written, else 0 (unknown). */
uint32_t objects_written_id(uint32_t id);

/* The child of fork starts its profile afresh: sampled bytes go to 0,
 * objects (and their ids) stay. */
void objects_postfork_child(void);

#endif
