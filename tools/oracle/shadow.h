/* shadow: per-byte shadow state of the client's memory, what the oracle
 * remembers of every byte between two accesses (DeadSpy/RedSpy/LoadSpy's
 * shadow memory).  Addresses are split 16/16/16: a top table of 2^16
 * middle tables of 2^16 chunks, each chunk covering 64 KiB; both are
 * allocated on first touch, zeroed (no access seen yet).
 *
 *   struct shadow_chunk *shadow_chunk_of(Addr a);
 *       the chunk holding a's byte (index SHADOW_INDEX(a)); NULL above
 *       2^48 or when the shadow cannot be allocated (counted, and the
 *       access is not tracked).
 *   ULong shadow_bytes_allocated(void);
 */
#ifndef ORACLE_SHADOW_H
#define ORACLE_SHADOW_H

#include "pub_tool_basics.h"

#define SHADOW_CHUNK_BITS 16
#define SHADOW_CHUNK (1u << SHADOW_CHUNK_BITS)
#define SHADOW_INDEX(a) ((UInt)((a) & (SHADOW_CHUNK - 1)))

/* flags[] bits */
#define SH_DEAD_OPEN   0x01 /* last access was a store: its fate is open */
#define SH_STORED      0x02 /* a store has written this byte (sctx valid) */
#define SH_STORE_STACK 0x04 /* ... by a push/call (never sampled by silent) */
#define SH_LOADED      0x08 /* a load has read this byte (lctx, lval valid) */
#define SH_LOAD_STACK  0x10 /* ... by a pop/ret (never sampled by load) */

struct shadow_chunk {
	UInt sctx[SHADOW_CHUNK];  /* key (<context, object>, objects.h) of the last store */
	UInt lctx[SHADOW_CHUNK];  /* key of the last load */
	UChar lval[SHADOW_CHUNK]; /* value the last load read */
	UChar flags[SHADOW_CHUNK];
};

struct shadow_chunk *shadow_chunk_of(Addr a);
ULong shadow_bytes_allocated(void);

#endif
