/* objects: classify a sample's address, and the process's object table (see objects.h). */
#include "witch/objects.h"
#include "witch/datasym.h"
#include "witch/heap.h"
#include "witch/heap_mix.h"
#include "witch/heap_sites.h"
#include "witch/rng.h"
#include "witch/unwind.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#define OBJECTS_SLOTS OBJECTS_ID_MAX /* at most half full: short probes */
#define RED_ZONE 128
/* Below the interrupted frame: the red zone, and frames the run-ahead
 * pushed (a pick may lie in a callee the emulator entered). */
#define BELOW_SP (16u << 10)
/* Above the outermost frame when the thread's stack top is unknown. */
#define ABOVE_OUTER (64u << 10)
#define KEY_BITS 56
#define KEY_UNNAMED (1ull << 55) /* static data no symbol holds: keyed by its section */

struct object {
	uint64_t tag;          /* 0: empty; else kind << KEY_BITS | key, set once (CAS) */
	int ready;             /* the fields below are written (release) */
	uint64_t where;        /* heap: site; static: start; tls: offset; stack: pc */
	const char *name;      /* static, tls: datasym's, never freed */
	const char *module;
	uint64_t size;         /* largest seen (atomic max) */
	double sampled;        /* bytes the samples here stand for (atomic add) */
	int64_t alloc_node;    /* heap: the profile writer's node, or -1 */
	int emitted;           /* the writer wrote its record */
};

static struct object *table;
static uint32_t n_objects;
static double all_sampled; /* every sample's bytes */

int objects_init(void)
{
	void *p = mmap(NULL, sizeof(struct object) * OBJECTS_SLOTS, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	table = p;
	return 0;
}

int objects_enabled(void)
{
	return table != NULL;
}

static uint32_t slot_of(uint64_t tag)
{
	uint64_t h = tag * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 40) & (OBJECTS_SLOTS - 1);
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

/* The object's id (slot + 1), inserting it on first sight; 0 when the table
 * is full.  Lock-free: the tag is claimed by CAS, so two threads meeting the
 * same object agree on its slot; the claimer fills the rest. */
static uint32_t object_id(enum objects_kind kind, uint64_t key, uint64_t where,
			  const char *name, const char *module, uint64_t size)
{
	uint64_t tag = (uint64_t)kind << KEY_BITS | (key & ((1ull << KEY_BITS) - 1));
	uint32_t s = slot_of(tag);
	for (uint32_t probes = 0; probes < OBJECTS_SLOTS; probes++, s = (s + 1) & (OBJECTS_SLOTS - 1)) {
		struct object *o = &table[s];
		uint64_t cur = __atomic_load_n(&o->tag, __ATOMIC_ACQUIRE);
		if (cur == 0) {
			if (__atomic_load_n(&n_objects, __ATOMIC_RELAXED) >= OBJECTS_MAX)
				return 0;
			if (!__atomic_compare_exchange_n(&o->tag, &cur, tag, 0, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE)) {
				if (cur != tag)
					continue; /* another object took the slot */
			} else {
				__atomic_fetch_add(&n_objects, 1, __ATOMIC_RELAXED);
				o->where = where;
				o->name = name;
				o->module = module;
				o->alloc_node = -1;
				__atomic_store_n(&o->ready, 1, __ATOMIC_RELEASE);
			}
		} else if (cur != tag) {
			continue;
		}
		atomic_max(&o->size, size);
		return s + 1;
	}
	return 0;
}

/* A pc of the function whose frame holds addr, or 0 when addr is not on
 * the thread's stack.  Frame i owns [sps[i], sps[i+1]); frame 0 is the
 * interrupted function's.  Below sps[0] (a red zone, or a frame the
 * run-ahead pushed) is the sampled instruction's function. */
static uint64_t stack_pc_of(uint64_t addr, const struct objects_where *w)
{
	if (w->n <= 0 || !w->sps || w->sps[0] == 0)
		return 0;
	uint64_t lo = w->sps[0] - BELOW_SP;
	uint64_t hi = w->stack_hi ? w->stack_hi : w->sps[w->n - 1] + ABOVE_OUTER;
	if (addr < lo || addr >= hi)
		return 0;
	if (addr < w->sps[0])
		return w->pcs[0];
	int i = 0;
	while (i + 1 < w->n && w->sps[i + 1] != 0 && w->sps[i + 1] <= addr)
		i++;
	return i == 0 && w->pc ? w->pc : w->pcs[i];
}

uint32_t objects_classify(uint64_t addr, const struct objects_where *w, int *dropped)
{
	struct datasym_hit hit;
	uint64_t start, size, fn, pc;
	uint32_t site, id = 0;

	*dropped = 0;
	if (!table)
		return 0;
	if (heap_lookup(addr, &site, &start, &size) == 0) {
		id = object_id(OBJECTS_HEAP, site, site, NULL, NULL, size);
	} else if (datasym_tls(addr, w->tp, &hit) == 0) {
		/* datasym's strings are unique per module and symbol: a key */
		uint64_t key = (uint64_t)(uintptr_t)(hit.name ? hit.name : hit.module);
		id = object_id(OBJECTS_TLS, key, hit.start, hit.name, hit.module, hit.size);
	} else if ((pc = stack_pc_of(addr, w)) != 0) {
		if (unwind_proc_start(pc, &fn) < 0)
			fn = pc;
		id = object_id(OBJECTS_STACK, fn, fn, NULL, NULL, 0);
	} else if (datasym_static(addr, &hit) == 0) {
		uint64_t key = hit.name ? hit.start : hit.start | KEY_UNNAMED;
		id = object_id(OBJECTS_STATIC, key, hit.start, hit.name, hit.module, hit.size);
	} else if (heap_pending_site(&site) == 0) {
		id = object_id(OBJECTS_HEAP, site, site, NULL, NULL, 0); /* calloc filling it */
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

static int object_live(const struct object *o)
{
	return __atomic_load_n(&o->tag, __ATOMIC_ACQUIRE) != 0 &&
	       __atomic_load_n(&o->ready, __ATOMIC_ACQUIRE);
}

void objects_prepare(objects_node_fn node_of, void *arg)
{
	uint64_t pcs[HEAP_SITE_MAX_DEPTH];
	for (uint32_t s = 0; table && s < OBJECTS_SLOTS; s++) {
		struct object *o = &table[s];
		if (!object_live(o) || o->tag >> KEY_BITS != OBJECTS_HEAP || o->alloc_node >= 0)
			continue;
		int n = heap_sites_path((uint32_t)o->where, pcs, HEAP_SITE_MAX_DEPTH);
		if (n > 0)
			o->alloc_node = node_of(pcs, n, arg);
	}
}

static int object_emit(FILE *f, uint32_t id, struct object *o)
{
	unsigned long long size = (unsigned long long)__atomic_load_n(&o->size, __ATOMIC_RELAXED);
	switch ((enum objects_kind)(o->tag >> KEY_BITS)) {
	case OBJECTS_HEAP:
		if (o->alloc_node < 0)
			return 0; /* no context for it: its bytes read as unknown */
		return fprintf(f, "object %u heap %llu %lld\n", id, size, (long long)o->alloc_node);
	case OBJECTS_STATIC:
	case OBJECTS_TLS:
		return fprintf(f, "object %u %s %llu 0x%llx %s %s\n", id,
			       o->tag >> KEY_BITS == OBJECTS_TLS ? "tls" : "static", size,
			       (unsigned long long)o->where, o->name ? o->name : "-",
			       o->module ? o->module : "-");
	case OBJECTS_STACK:
		return fprintf(f, "object %u stack 0 0x%llx\n", id, (unsigned long long)o->where);
	default:
		return 0;
	}
}

uint32_t objects_written_id(uint32_t id)
{
	return id && table && table[id - 1].emitted ? id : 0;
}

int objects_emit(FILE *f)
{
	double unknown = all_sampled; /* less every known object's part */
	for (uint32_t s = 0; table && s < OBJECTS_SLOTS; s++) {
		struct object *o = &table[s];
		o->emitted = 0;
		if (!object_live(o))
			continue;
		int rc = object_emit(f, s + 1, o);
		if (rc < 0)
			return -EIO;
		o->emitted = rc > 0;
		if (o->emitted && o->sampled > 0) {
			fprintf(f, "object_sampled %u %.17g\n", s + 1, o->sampled);
			unknown -= o->sampled;
		}
	}
	if (unknown > 1e-9 * all_sampled) /* not the rounding of the sums */
		fprintf(f, "object_sampled 0 %.17g\n", unknown);
	return ferror(f) ? -EIO : 0;
}

void objects_postfork_child(void)
{
	all_sampled = 0;
	for (uint32_t s = 0; table && s < OBJECTS_SLOTS; s++) {
		table[s].sampled = 0;
		table[s].alloc_node = -1; /* the child's profile has a tree of its own */
	}
}
