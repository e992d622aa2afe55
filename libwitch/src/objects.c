/* objects: classify a sample's address, and the process's object table (see objects.h). */
#include "witch/objects.h"
#include "witch/lockguard.h"
#include "witch/datasym.h"
#include "witch/densetab.h"
#include "witch/fnrange.h"
#include "witch/heap.h"
#include "witch/heap_mix.h"
#include "witch/heap_sites.h"
#include "witch/outbuf.h"
#include "witch/rng.h"
#include "witch/unwind.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#define OBJECTS_SLOTS (2 * OBJECTS_MAX) /* at most half full: short probes */
#define RED_ZONE 128
/* Below the interrupted frame: the red zone, and frames the run-ahead
 * pushed (a pick may lie in a callee the emulator entered). */
#define BELOW_SP (16u << 10)
/* Above the outermost frame when the thread's stack top is unknown. */
#define ABOVE_OUTER (64u << 10)
#define KEY_BITS 56
#define KEY_UNNAMED (1ull << 55) /* static data no symbol holds: keyed by its section */

struct object {
	uint64_t tag;          /* kind << KEY_BITS | key */
	uint64_t where;        /* heap: site; static: start; tls: offset; stack: pc */
	const char *name;      /* static, tls: datasym's, never freed */
	const char *module;
	uint64_t size;         /* largest seen (atomic max) */
	double sampled;        /* bytes the samples here stand for (atomic add) */
	int64_t alloc_node;    /* heap: the profile writer's node, or -1 */
	int emitted;           /* the writer wrote its record */
};

/* Records by id (table[id - 1]), indexed by tag (densetab.h): only the
 * pages of the objects seen are touched. */
static struct object *table;
static struct densetab objects_index;
static double all_sampled; /* every sample's bytes */

int objects_init(void)
{
	void *p = lockguard_map(sizeof(struct object) * OBJECTS_MAX, MAP_NORESERVE);
	if (p == MAP_FAILED)
		return -errno;
	int rc = densetab_init(&objects_index, OBJECTS_MAX, OBJECTS_SLOTS);
	if (rc < 0) {
		(void)lockguard_unmap(p, sizeof(struct object) * OBJECTS_MAX);
		return rc;
	}
	table = p;
	return 0;
}

int objects_enabled(void)
{
	return table != NULL;
}

static void atomic_max(uint64_t *to, uint64_t v)
{
	uint64_t cur = __atomic_load_n(to, __ATOMIC_RELAXED);
	while (cur < v && !__atomic_compare_exchange_n(to, &cur, v, 1, __ATOMIC_RELAXED,
						      __ATOMIC_RELAXED))
		;
}

static void atomic_add_double(double *to, double v)
{
	uint64_t *bits = (uint64_t *)to, cur = __atomic_load_n(bits, __ATOMIC_RELAXED), next;
	do {
		double d;
		memcpy(&d, &cur, sizeof(d));
		d += v;
		memcpy(&next, &d, sizeof(next));
	} while (!__atomic_compare_exchange_n(bits, &cur, next, 1, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
}

struct object_key {
	uint64_t tag, where;
	const char *name, *module;
};

static int object_matches(uint32_t id, const void *arg)
{
	return table[id - 1].tag == ((const struct object_key *)arg)->tag;
}

static void object_fill(uint32_t id, const void *arg)
{
	const struct object_key *k = arg;
	struct object *o = &table[id - 1];
	o->tag = k->tag;
	o->where = k->where;
	o->name = k->name;
	o->module = k->module;
	o->alloc_node = -1;
}

/* The object's id, inserting it on first sight; 0 when the table is full.
 * Lock-free (densetab.h): two threads meeting the same object agree on it. */
static uint32_t object_id(enum objects_kind kind, uint64_t key, uint64_t where,
			  const char *name, const char *module, uint64_t size)
{
	struct object_key k = {.tag = (uint64_t)kind << KEY_BITS | (key & ((1ull << KEY_BITS) - 1)),
			       .where = where, .name = name, .module = module};
	uint32_t id = densetab_intern(&objects_index, k.tag * 0x9e3779b97f4a7c15ull >> 32, object_matches,
				      object_fill, &k);
	if (id)
		atomic_max(&table[id - 1].size, size);
	return id;
}

/* Frames no larger than this hold stack slots only: a larger one may span
 * a switch of stacks (a handler on an altstack, a coroutine's stack in a
 * heap block), with the heap or TLS between its ends. */
#define FRAME_SURE (64u << 10)

static int frame_small(const uint64_t *sps, int i)
{
	return sps[i + 1] > sps[i] && sps[i + 1] - sps[i] <= FRAME_SURE;
}

/* A pc of the function whose frame holds addr, or 0 when addr is not on
 * the thread's stack.  Frame i owns [sps[i], sps[i+1]); frame 0 is the
 * interrupted function's.  Below sps[0] (a red zone, or a frame the
 * run-ahead pushed) is the sampled instruction's function.  *sure: addr
 * is below sps[0], or in a walked frame that, with every frame inside it,
 * spans at most FRAME_SURE: a stack slot, whatever the heap's and TLS's
 * lookups would say, so they are not asked (cold at budget rates: ~3
 * thousand cycles of a stack sample's 4-7). */
static uint64_t stack_pc_of(uint64_t addr, const struct objects_where *w, int *sure)
{
	*sure = 0;
	if (w->n <= 0 || !w->sps || w->sps[0] == 0)
		return 0;
	uint64_t lo = w->sps[0] - BELOW_SP;
	uint64_t hi = w->stack_hi ? w->stack_hi : w->sps[w->n - 1] + ABOVE_OUTER;
	if (addr < lo || addr >= hi)
		return 0;
	if (addr < w->sps[0]) {
		*sure = 1;
		return w->pcs[0];
	}
	int i = 0, small = 1;
	while (i + 1 < w->n && w->sps[i + 1] != 0 && w->sps[i + 1] <= addr) {
		small &= frame_small(w->sps, i);
		i++;
	}
	*sure = small && i + 1 < w->n && frame_small(w->sps, i);
	return i == 0 && w->pc ? w->pc : w->pcs[i];
}

uint32_t objects_classify(uint64_t addr, const struct objects_where *w, int *dropped)
{
	struct datasym_hit hit;
	uint64_t start, size, fn;
	uint32_t site, id = 0;

	*dropped = 0;
	if (!table)
		return 0;
	int sure_stack;
	uint64_t stack_pc = stack_pc_of(addr, w, &sure_stack);
	if (!sure_stack && heap_lookup(addr, &site, &start, &size) == 0) {
		id = object_id(OBJECTS_HEAP, site, site, NULL, NULL, size);
	} else if (!sure_stack && datasym_tls(addr, w->tp, &hit) == 0) {
		/* datasym's strings are unique per module and symbol: a key */
		uint64_t key = (uint64_t)(uintptr_t)(hit.name ? hit.name : hit.module);
		id = object_id(OBJECTS_TLS, key, hit.start, hit.name, hit.module, hit.size);
	} else if (stack_pc != 0) {
		if ((w->fns ? fnrange_start(w->fns, stack_pc, &fn) : unwind_proc_start(stack_pc, &fn)) < 0)
			fn = stack_pc;
		id = object_id(OBJECTS_STACK, fn, fn, NULL, NULL, 0);
	} else if (datasym_static(addr, &hit) == 0) {
		uint64_t key = hit.name ? hit.start : hit.start | KEY_UNNAMED;
		id = object_id(OBJECTS_STATIC, key, hit.start, hit.name, hit.module, hit.size);
	} else if (heap_pending_site(addr, &site) == 0) {
		id = object_id(OBJECTS_HEAP, site, site, NULL, NULL, 0); /* calloc filling it, a malloc's ahead */
	} else if (w->rng && heap_mix_holds(addr) && heap_mix_draw(rng_next(w->rng), &site) == 0) {
		id = object_id(OBJECTS_HEAP, site, site, NULL, NULL, 0); /* an untracked small block */
	} else {
		return 0;
	}
	*dropped = id == 0;
	return id;
}

void objects_add_sampled(uint32_t id, double bytes)
{
	if (!table)
		return;
	atomic_add_double(&all_sampled, bytes);
	if (id)
		atomic_add_double(&table[id - 1].sampled, bytes);
}

/* Ids 1..objects_count() are records; densetab_is_live says which. */
uint32_t objects_count(void)
{
	return table ? densetab_taken(&objects_index) : 0;
}

void objects_prepare(objects_node_fn node_of, void *arg)
{
	uint64_t pcs[HEAP_SITE_MAX_DEPTH];
	for (uint32_t id = 1; id <= objects_count(); id++) {
		struct object *o = &table[id - 1];
		if (!densetab_is_live(&objects_index, id) || o->tag >> KEY_BITS != OBJECTS_HEAP ||
		    o->alloc_node >= 0)
			continue;
		int n = heap_sites_path((uint32_t)o->where, pcs, HEAP_SITE_MAX_DEPTH);
		if (n > 0)
			o->alloc_node = node_of(pcs, n, arg);
	}
}

/* 1 if o's record was written, 0 if it has none to write. */
static int object_emit(struct outbuf *f, uint32_t id, struct object *o)
{
	unsigned long long size = (unsigned long long)__atomic_load_n(&o->size, __ATOMIC_RELAXED);
	switch ((enum objects_kind)(o->tag >> KEY_BITS)) {
	case OBJECTS_HEAP:
		if (o->alloc_node < 0)
			return 0; /* no context for it: its bytes read as unknown */
		outbuf_printf(f, "object %u heap %llu %lld\n", id, size, (long long)o->alloc_node);
		return 1;
	case OBJECTS_STATIC:
	case OBJECTS_TLS:
		/* (names and paths by outbuf_puts: of any length) */
		outbuf_printf(f, "object %u %s %llu 0x%llx ", id,
			      o->tag >> KEY_BITS == OBJECTS_TLS ? "tls" : "static", size,
			      (unsigned long long)o->where);
		outbuf_puts(f, o->name ? o->name : "-");
		outbuf_puts(f, " ");
		outbuf_puts(f, o->module ? o->module : "-");
		outbuf_puts(f, "\n");
		return 1;
	case OBJECTS_STACK:
		outbuf_printf(f, "object %u stack 0 0x%llx\n", id, (unsigned long long)o->where);
		return 1;
	default:
		return 0;
	}
}

uint32_t objects_written_id(uint32_t id)
{
	return id && table && table[id - 1].emitted ? id : 0;
}

int objects_emit(struct outbuf *f)
{
	double unknown = all_sampled; /* less every known object's part */
	for (uint32_t id = 1; id <= objects_count(); id++) {
		struct object *o = &table[id - 1];
		o->emitted = 0;
		if (!densetab_is_live(&objects_index, id))
			continue;
		o->emitted = object_emit(f, id, o);
		if (o->emitted && o->sampled > 0) {
			outbuf_printf(f, "object_sampled %u %.17g\n", id, o->sampled);
			unknown -= o->sampled;
		}
	}
	if (unknown > 1e-9 * all_sampled) /* not the rounding of the sums */
		outbuf_printf(f, "object_sampled 0 %.17g\n", unknown);
	return f->err;
}

/* Written only where they differ: a page the child writes is copied for
 * it, and most records of a parent that never wrote its profile have
 * neither a sample's bytes nor a node. */
void objects_postfork_child(void)
{
	all_sampled = 0;
	for (uint32_t id = 1; id <= objects_count(); id++) {
		struct object *o = &table[id - 1];
		if (o->sampled != 0)
			o->sampled = 0;
		if (o->alloc_node != -1)
			o->alloc_node = -1; /* the child's profile has a tree of its own */
	}
}
