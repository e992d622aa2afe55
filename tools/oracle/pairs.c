/* pairs: an open-addressing table of pair counts; see pairs.h. */
#include "pairs.h"

#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"

/* The top log2(cap) bits of a mix of the key with the table's seed (cap a
 * power of two).  Each table has its own seed: the output merges one
 * table into another by walking it in slot order, and with one hash for
 * both the keys came in slot order, piled into one run of linear probing
 * and made each insertion walk it: quadratic (sort's load answer took 12
 * minutes to write, longer than the run took to compute it). */
static UInt slot_of(UInt watch, UInt trap, UInt cap, ULong seed)
{
	ULong h = ((ULong)watch << 32 | trap) ^ seed;
	h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdULL; /* MurmurHash3's finalizer */
	h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return (UInt)(h >> (64 - __builtin_ctz(cap)));
}

static void grow(struct pairs *p)
{
	static ULong tables;
	if (p->cap == 0)
		p->seed = ++tables * 0x9E3779B97F4A7C15ULL;
	UInt cap = p->cap ? p->cap * 2 : 4096;
	struct pair_count *e = VG_(calloc)("oracle.pairs", cap, sizeof(*e));
	for (UInt i = 0; i < p->cap; i++) {
		if (!p->e[i].watch)
			continue;
		UInt j = slot_of(p->e[i].watch, p->e[i].trap, cap, p->seed);
		while (e[j].watch)
			j = (j + 1) & (cap - 1);
		e[j] = p->e[i];
	}
	if (p->e)
		VG_(free)(p->e);
	p->e = e;
	p->cap = cap;
	VG_(memset)(p->recent, 0, sizeof(p->recent)); /* the slots moved */
}

void pairs_add(struct pairs *p, UInt watch, UInt trap, ULong waste, ULong use, ULong approx,
	       ULong traps)
{
	if ((p->n + 1) * 4 > p->cap * 3)
		grow(p);
	UInt r = (watch * 2654435761u ^ trap * 40503u) & (PAIRS_RECENT - 1), j;
	if (p->recent[r].watch == watch && p->recent[r].trap == trap && watch) {
		j = p->recent[r].slot;
	} else {
		j = slot_of(watch, trap, p->cap, p->seed);
		while (p->e[j].watch && (p->e[j].watch != watch || p->e[j].trap != trap))
			j = (j + 1) & (p->cap - 1);
		p->recent[r].watch = watch;
		p->recent[r].trap = trap;
		p->recent[r].slot = j;
	}
	struct pair_count *c = &p->e[j];
	if (!c->watch) {
		c->watch = watch;
		c->trap = trap;
		p->n++;
	}
	c->waste += waste;
	c->use += use;
	c->approx += approx;
	c->traps += traps;
	p->waste += waste;
	p->use += use;
	p->approx += approx;
	p->traps += traps;
}

void pairs_clear(struct pairs *p)
{
	if (p->e)
		VG_(memset)(p->e, 0, p->cap * sizeof(*p->e));
	VG_(memset)(p->recent, 0, sizeof(p->recent));
	p->n = 0;
	p->waste = p->use = p->approx = p->traps = 0;
}

struct pair_count *pairs_at(const struct pairs *p, UInt i)
{
	return &p->e[i];
}
