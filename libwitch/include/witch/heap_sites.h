/* heap_sites: the allocation sites of heap blocks (docs/objects.md).
 *
 * A site is an allocation's calling context, leaf first (the program's
 * call of the allocator, return address minus one, then its callers; no
 * libwitch frames), interned once per process in an insert-only table:
 * sites are numbered from 1 in the order first seen, and never change.
 *
 * Finding one: libgcc's _Unwind_Backtrace (a private copy from
 * libgcc_eh.a: libunwind, which libwitch links, exports functions of the
 * same names; and the shared libgcc_s would be one more library for every
 * C program to load; JIT code registered with libgcc_s's
 * __register_frame is not walked through), once per thread,
 * call site, callers and stack depth, or, where every frame was walked
 * before, the frame sizes it found (stepcache.h: a slot read a frame, not
 * an FDE parsed); a per-thread 4-way cache keyed by
 * (return address, the interposer's CFA) answers the repeats after
 * checking a hash of the return addresses in the cached path's stack
 * slots (exact for frames of fixed size; a frame that moves its stack by
 * alloca between two calls with the same callers may be taken for the
 * cached one).  libgcc's unwinder shares no state with the handlers'
 * libunwind (no signals to hold off) and finds unwind tables lock-free
 * (_dl_find_object), so an allocation under the loader's lock unwinds too.
 *
 * Memory, preallocated by heap_sites_init (mmap, MAP_NORESERVE):
 *   sites   HEAP_SITES paths of 16 frames: 4096 x 144 B = 576 KiB reserved,
 *           kept densely (densetab.h: 144 B a site seen, and a 32 KiB
 *           index).  Past it, new sites are dropped (heap_sites_find
 *           returns 0).
 *   caches  HEAP_CACHES per-thread caches, each 1 to 8 chunks of 256
 *           entries (16 KiB) from a pool of HEAP_CACHE_CHUNKS (2 MiB
 *           reserved, touched by the threads that allocate, returned at
 *           thread exit): a thread grows its cache while its misses are
 *           many and half the pool is free; threads past it unwind each
 *           time.
 * The caches also hold their threads' block counts (heap_sites_count),
 * so counting takes no shared cache line.
 */
#ifndef WITCH_HEAP_SITES_H
#define WITCH_HEAP_SITES_H

#include <stdint.h>

#define HEAP_SITE_MAX_DEPTH 16
#define HEAP_SITES 4096u
#define HEAP_CACHES 128u
#define HEAP_CACHE_CHUNKS 128u

struct heap_sites_stats {
	uint64_t sites;          /* distinct allocation contexts */
	uint64_t dropped;        /* finds whose new site found no room */
	uint64_t tracked;        /* heap_sites_count(1) calls */
	uint64_t untracked;      /* heap_sites_count(0) calls */
	uint64_t unwinds;        /* finds the per-thread caches missed: unwound */
	uint64_t walked;         /* ... of those, walked from known frame sizes */
	double slow_ns;          /* the time those finds took (the TSC's) */
	uint64_t bytes_reserved; /* the tables' mappings */
};

/* Outside handlers, once (heap_init): the tables; 0 or -errno. */
int heap_sites_init(void);
/* The site of the allocation being made: `ret` is the interposer's return
 * address (into the program), `cfa` the stack pointer before that call
 * pushed it.  0 when the site table is full (counted as dropped).  Not
 * reentrant in one thread (the caller guards), not in a handler. */
uint32_t heap_sites_find(uint64_t ret, uint64_t cfa);
/* Return addresses the stack will hold but does not yet: the tick's
 * window emulated the calls that push them (slot[i] will hold val[i]). */
struct heap_stack_overlay {
	int n;
	const uint64_t *slot, *val;
};
/* heap_sites_find's answer where this thread's cache holds it, else 0: no
 * unwind, nothing written; the stack read through ov (may be NULL), and
 * peek_read (a slot may lie below the stack pointer).  Async-signal-safe
 * where the handler did not interrupt the thread's own heap_sites_find
 * (heap.c guards). */
uint32_t heap_sites_peek(uint64_t ret, uint64_t cfa, const struct heap_stack_overlay *ov);
/* Count one block of this thread as tracked (1) or not (0). */
void heap_sites_count(int tracked);
/* A site's path, leaf first: the frame count (>= 1, at most max) or
 * -ENOENT.  Read-only, async-signal-safe. */
int heap_sites_path(uint32_t site, uint64_t *pcs, int max);
void heap_sites_get_stats(struct heap_sites_stats *st);
/* Fork: the child frees the site slots and the thread caches the parent's
 * other threads held. */
void heap_sites_prefork(void);
void heap_sites_postfork_parent(void);
void heap_sites_postfork_child(void);

#endif
