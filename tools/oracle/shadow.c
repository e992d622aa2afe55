/* shadow: two-level table of per-byte shadow chunks; see shadow.h. */
#include "shadow.h"

#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcprint.h"

#define LEVEL_BITS 16
#define LEVEL (1u << LEVEL_BITS)

typedef struct shadow_chunk *middle_table[LEVEL];

static middle_table *top[LEVEL];
static ULong allocated;
static Bool out_of_memory_said;

/* The last chunk found: accesses cluster, so most lookups stop here. */
static Addr last_key = ~(Addr)0;
static struct shadow_chunk *last_chunk;

static void *alloc_zeroed(SizeT size)
{
	/* Anonymous mappings from the address space manager come zeroed. */
	void *p = VG_(am_shadow_alloc)(size);
	if (p == NULL) {
		if (!out_of_memory_said)
			VG_(printf)("witch-oracle: out of shadow memory after %llu MiB; "
				    "later bytes are not tracked\n", allocated >> 20);
		out_of_memory_said = True;
		return NULL;
	}
	allocated += size;
	return p;
}

struct shadow_chunk *shadow_chunk_of(Addr a)
{
	Addr key = a >> SHADOW_CHUNK_BITS;

	if (key == last_key)
		return last_chunk;
	if (a >> (SHADOW_CHUNK_BITS + 2 * LEVEL_BITS))
		return NULL;
	UInt hi = (UInt)(key >> LEVEL_BITS), mid = (UInt)(key & (LEVEL - 1));
	if (top[hi] == NULL && (top[hi] = alloc_zeroed(sizeof(middle_table))) == NULL)
		return NULL;
	struct shadow_chunk **slot = &(*top[hi])[mid];
	if (*slot == NULL && (*slot = alloc_zeroed(sizeof(struct shadow_chunk))) == NULL)
		return NULL;
	last_key = key;
	last_chunk = *slot;
	return last_chunk;
}

ULong shadow_bytes_allocated(void)
{
	return allocated;
}
