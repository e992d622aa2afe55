/* stepcache: walking an allocation's stack again without libgcc's unwinder.
 *
 * Finding a heap block's allocation site (heap_sites.h) unwinds 16 frames
 * with libgcc's _Unwind_Backtrace each time a thread's site cache misses:
 * ~6 us and ~34,000 instructions (per frame: find the FDE, parse it, run
 * its CFA program).  Most of those frames were walked before, from other
 * call sites.  libgcc's walk says, for each return address, where the next
 * return address was: the frame's size, fixed for code that does not
 * alloca.  Kept process-wide by return address, those sizes walk the
 * stack again by reading one slot a frame.
 *
 * A walk succeeds only if every return address it reads was seen in a
 * libgcc walk before (a value that is not one fails the walk: no path is
 * made of garbage), every frame but the last has a size, and every slot it
 * reads lies within the stretch of the thread's stack that its libgcc walks
 * read (so within one mapping; a coroutine's stack elsewhere is not walked).  A
 * return address seen with two sizes (a frame that allocas) is never
 * walked again.  Otherwise the caller unwinds with libgcc and teaches the
 * cache what it found.
 *
 * Memory: STEPCACHE_SLOTS words (64 KiB), two ways a set: one 64-bit word
 * an entry, so readers never see half an update.  Lock-free, no waiting.
 * Only its first page is used until 256 return addresses were learned (a
 * short process's walks touch one page, not one a frame). 
 */
#ifndef WITCH_STEPCACHE_H
#define WITCH_STEPCACHE_H

#include <stddef.h>
#include <stdint.h>

#define STEPCACHE_SLOTS 8192u

/* A walk of up to max frames from the interposer's return address ret and
 * CFA cfa (the return address was read at cfa - 8): pcs[i] is frame i's
 * return address minus one, slots[i] where it was read.  [lo, hi]: the
 * stretch of this thread's stack its libgcc walks read (one mapping); the
 * walk reads nowhere else.  The frames walked, or 0. */
int stepcache_walk(uint64_t ret, uint64_t cfa, uint64_t lo, uint64_t hi, uint64_t *pcs,
		   uint64_t *slots, int max);

/* What a libgcc walk found: n frames (pcs, slots as above), ended: the
 * unwinder stopped after the last one (it has no caller to walk to). */
void stepcache_learn(const uint64_t *pcs, const uint64_t *slots, int n, int ended);

/* Forget everything, back to the first page (tests). */
void stepcache_reset(void);
/* The bytes of the table in use: 4096 until 256 return addresses were
 * learned, then all of it. */
size_t stepcache_span(void);

#endif
