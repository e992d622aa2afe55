/* pairs: an open-addressing table of pair counts; see pairs.h. */
#include "pairs.h"

#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"

/* Fibonacci hashing: the top log2(cap) bits (cap a power of two). */
static UInt slot_of(UInt watch, UInt trap, UInt cap)
{
	ULong h = ((ULong)watch << 32 | trap) * 0x9E3779B97F4A7C15ULL;
	return (UInt)(h >> (64 - __builtin_ctz(cap)));
}

static void grow(struct pairs *p)
{
	UInt cap = p->cap ? p->cap * 2 : 4096;
	struct pair_count *e = VG_(calloc)("oracle.pairs", cap, sizeof(*e));
	for (UInt i = 0; i < p->cap; i++) {
		if (!p->e[i].watch)
			continue;
		UInt j = slot_of(p->e[i].watch, p->e[i].trap, cap);
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
		j = slot_of(watch, trap, p->cap);
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
