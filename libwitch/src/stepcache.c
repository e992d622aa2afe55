/* stepcache: frame sizes by return address, to walk stacks again (see stepcache.h). */
#include "witch/stepcache.h"
#include "witch/lbss.h"
#include "witch/firsttouch.h"

#include <stddef.h>
#include <string.h>

/* An entry: the return address (user space: below 2^47), the frame's size
 * in 8-byte words (14 bits: up to 128 KiB), and flags. */
#define RA_BITS 47
#define RA_MASK ((1ull << RA_BITS) - 1)
#define SIZE_SHIFT RA_BITS
#define SIZE_MAX_WORDS ((1u << 14) - 1)
#define F_SIZED (1ull << 61)    /* the size is known */
#define F_ENDS (1ull << 62)     /* libgcc's walk stopped after this frame */
#define F_VARIES (1ull << 63)   /* seen with two sizes: never walked */

/* Two ways a set: direct-mapped, two return addresses of one path that
 * met in a slot evicted each other at every walk, and the path was never
 * walked again (unit.heap's walk failed 1 run in 300, as ASLR placed
 * them). */
#define WAYS 2
#define SET_BITS 12
_Static_assert((1u << SET_BITS) * WAYS == STEPCACHE_SLOTS, "SET_BITS: STEPCACHE_SLOTS / WAYS sets");

/* A process starts on the table's first page alone (SMALL_SET_BITS: 256
 * sets of two words) and takes the whole table at the first learn after
 * GROW_AT return addresses were learned.  Hashed over all 16 pages, a
 * short process's few walks touched one page a frame, each twice (the
 * set's read maps the zero page, the write copies it): grep's 5 walks 22
 * faults of 12-15 us here.  What the first page held is lost where the
 * wider hash looks elsewhere: learned again at the next libgcc walk. */
#define SMALL_SET_BITS 8
#define GROW_AT 256u
_Static_assert((1u << SMALL_SET_BITS) * WAYS * sizeof(uint64_t) == 4096, "one page");

static _Alignas(4096) uint64_t entries[STEPCACHE_SLOTS] WITCH_LBSS;
static unsigned set_bits = SMALL_SET_BITS;
static unsigned learned; /* return addresses written into a slot, while small */

static uint64_t *set_of(uint64_t ra)
{
	unsigned bits = __atomic_load_n(&set_bits, __ATOMIC_RELAXED);
	return &entries[((ra * 0x9e3779b97f4a7c15ull) >> (64 - bits)) * WAYS];
}

/* Past GROW_AT return addresses learned, the whole table: before a
 * learn picks its slot, so what it writes is where walks look. */
static void grow_if_due(void)
{
	if (__atomic_load_n(&learned, __ATOMIC_RELAXED) >= GROW_AT &&
	    __atomic_load_n(&set_bits, __ATOMIC_RELAXED) != SET_BITS)
		__atomic_store_n(&set_bits, SET_BITS, __ATOMIC_RELAXED);
}

size_t stepcache_span(void)
{
	return ((size_t)1 << __atomic_load_n(&set_bits, __ATOMIC_RELAXED)) * WAYS * sizeof(uint64_t);
}

/* The entry for ra, or 0. */
static uint64_t entry_of(uint64_t ra)
{
	uint64_t *set = set_of(ra);
	for (int w = 0; w < WAYS; w++) {
		uint64_t e = __atomic_load_n(&set[w], __ATOMIC_RELAXED);
		if (e && (e & RA_MASK) == ra)
			return e;
	}
	return 0;
}

/* Where ra goes: its own way, else an empty one, else the one its address
 * picks (another thread may fill a way meanwhile: an entry is one word,
 * so the worst is a lost entry, learned again at the next libgcc walk). */
static uint64_t *slot_for(uint64_t ra)
{
	uint64_t *set = set_of(ra), *empty = NULL;
	for (int w = 0; w < WAYS; w++) {
		uint64_t e = __atomic_load_n(&set[w], __ATOMIC_RELAXED);
		if (e && (e & RA_MASK) == ra)
			return &set[w];
		if (!e && !empty)
			empty = &set[w];
	}
	return empty ? empty : &set[(ra >> 4) % WAYS];
}

int stepcache_walk(uint64_t ret, uint64_t cfa, uint64_t lo, uint64_t hi, uint64_t *pcs,
		   uint64_t *slots, int max)
{
	uint64_t ra = ret, slot = cfa - 8;
	if (slot < lo || slot > hi)
		return 0; /* not on the stack the thread's walks read */
	for (int n = 0; n < max; n++) {
		uint64_t e = entry_of(ra);
		if (!e || (e & F_VARIES))
			return 0; /* a frame no libgcc walk showed: not sure it is one */
		pcs[n] = ra - 1;
		slots[n] = slot;
		if ((e & F_ENDS) || n + 1 == max)
			return n + 1;
		if (!(e & F_SIZED))
			return 0;
		uint64_t next = slot + ((e >> SIZE_SHIFT) & SIZE_MAX_WORDS) * 8;
		if (next <= slot || next > hi)
			return 0;
		ra = *(const uint64_t *)(uintptr_t)next;
		slot = next;
	}
	return 0;
}

/* Record (ra, flags) without losing what is known: a size seen before
 * stays unless this one differs (then the frame varies). */
static void learn_one(uint64_t ra, uint64_t words, uint64_t flags)
{
	if (ra == 0 || ra > RA_MASK)
		return;
	grow_if_due();
	firsttouch_for_write(set_of(ra)); /* slot_for reads the set first */
	uint64_t *s = slot_for(ra);
	uint64_t old = __atomic_load_n(s, __ATOMIC_RELAXED), e = ra | flags;
	if ((!old || (old & RA_MASK) != ra) &&
	    __atomic_load_n(&set_bits, __ATOMIC_RELAXED) != SET_BITS)
		__atomic_add_fetch(&learned, 1, __ATOMIC_RELAXED); /* counted while small */
	if (old && (old & RA_MASK) == ra) {
		e |= old & (F_VARIES | F_ENDS);
		if ((old & F_SIZED) && (flags & F_SIZED) && ((old >> SIZE_SHIFT) & SIZE_MAX_WORDS) != words)
			e |= F_VARIES;
		else if ((old & F_SIZED) && !(flags & F_SIZED)) {
			e |= F_SIZED;
			words = (old >> SIZE_SHIFT) & SIZE_MAX_WORDS;
		}
	}
	if (e & F_SIZED)
		e |= words << SIZE_SHIFT;
	__atomic_store_n(s, e, __ATOMIC_RELAXED);
}

void stepcache_learn(const uint64_t *pcs, const uint64_t *slots, int n, int ended)
{
	for (int i = 0; i < n; i++) {
		uint64_t ra = pcs[i] + 1;
		if (i + 1 < n) {
			uint64_t d = slots[i + 1] - slots[i];
			if (slots[i + 1] <= slots[i] || d % 8 || d / 8 > SIZE_MAX_WORDS)
				learn_one(ra, 0, F_VARIES); /* not a frame size walked again */
			else
				learn_one(ra, d / 8, F_SIZED);
		} else {
			learn_one(ra, 0, ended ? F_ENDS : 0);
		}
	}
}

void stepcache_reset(void)
{
	memset(entries, 0, sizeof(entries));
	__atomic_store_n(&learned, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&set_bits, SMALL_SET_BITS, __ATOMIC_RELAXED);
}
