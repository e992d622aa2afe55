/* pairs: byte counts per <C_watch, C_trap> pair of one client, the same
 * pairs libwitch's profiles hold (Witch 4.4.2), but exact: every byte the
 * deciding access touched, not an estimate.
 *
 *   void pairs_add(struct pairs *p, UInt watch, UInt trap, ULong waste,
 *                  ULong use, ULong approx, ULong traps);  traps decisions
 *   void pairs_clear(struct pairs *p);                     (fork child)
 *   struct pair_count *pairs_at(const struct pairs *p, UInt i);
 *       slot i < p->cap; a slot with watch 0 is empty
 */
#ifndef ORACLE_PAIRS_H
#define ORACLE_PAIRS_H

#include "pub_tool_basics.h"

struct pair_count {
	UInt watch, trap;     /* the clients' pairs: watch a key (objects.h: <context,
			       * object>), trap a context (callstack.h) */
	ULong waste, use, approx, traps;
};

/* The last slots found, direct-mapped by <watch, trap>: a loop decides
 * the same few pairs again and again, and sort's table of ~3 million
 * pairs (120 MB) missed the cache on every access (a third of its time). */
#define PAIRS_RECENT 1024

struct pairs {
	struct pair_count *e; /* open addressing by <watch, trap>; watch 0 = empty */
	UInt cap, n;
	ULong seed;           /* of the hash, this table's own (pairs.c) */
	ULong waste, use, approx, traps; /* totals */
	struct {
		UInt watch, trap, slot;
	} recent[PAIRS_RECENT];
};

void pairs_add(struct pairs *p, UInt watch, UInt trap, ULong waste, ULong use, ULong approx,
	       ULong traps);
void pairs_clear(struct pairs *p);
struct pair_count *pairs_at(const struct pairs *p, UInt i);

#endif
