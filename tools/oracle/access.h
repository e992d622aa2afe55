/* access: what every load and store means to the three clients, decided
 * byte by byte against shadow state (DeadSpy, RedSpy, LoadSpy; Witch 4.7):
 *
 *  dead   a stored byte's next access decides: a store kills it (waste),
 *         a load uses it (use); pair <last store, that access>.
 *  silent a store to bytes a non-stack store wrote last: bytes unchanged
 *         (FP elements within the tolerance) are waste, else use; pair
 *         <last store, this store>.
 *  load   a load of bytes a non-stack load read last: the same value
 *         (same rule) is waste, else use; pair <last load, this load>.
 *
 * silent and load judge a run of bytes that share their last access's
 * context as one value, as libwitch judges the bytes a watchpoint covers
 * (value.c): an 8-byte counter incremented is one changed value, not seven
 * silent bytes and one used one.
 *
 * Each decision also names the earlier access's object, the one its bytes
 * were in when it was made (the pairs' watch side is a key, objects.h).
 *
 */
#ifndef ORACLE_ACCESS_H
#define ORACLE_ACCESS_H

#include "pub_tool_basics.h"
#include "pairs.h"

struct access_totals {
	ULong stores, loads, bytes_stored, bytes_loaded, bytes_untracked;
};

extern struct pairs access_dead, access_silent, access_load_pairs;
extern struct access_totals access_totals;
extern double access_tolerance;
/* Two FP elements (size 4 or 8) equal within access_tolerance: NaNs never
 * are, other values when |a-b| <= tol*max(|a|,|b|) (libwitch's value.c). */
Bool access_fp_close(const UChar *a, const UChar *b, UInt size);

/* Before a load of n bytes at a (its value is read from memory); cls is
 * insn_class_of() of the instruction, ctx its context (callstack.h), key
 * its <context, object> (objects.h): what the shadow remembers of it, so
 * the pairs are <earlier access's key, deciding access's context>. */
void access_load(Addr a, UInt n, UInt cls, UInt ctx, UInt key);
/* A store of n bytes: the bytes before it and the bytes it writes. */
void access_store(Addr a, UInt n, UInt cls, UInt ctx, UInt key, const UChar *old,
		  const UChar *now);

#endif
