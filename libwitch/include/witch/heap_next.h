/* heap_next: the allocator the program would have called without libwitch.
 *
 * heap.c interposes malloc and friends, and must hand every call on to the
 * definition that comes after libwitch in the lookup order (RTLD_NEXT): the
 * C library's, or an allocator the program links (redis-server links
 * jemalloc).  Calling glibc's allocator by its internal names instead gave
 * such a program blocks from one heap that it then passed to the other's
 * malloc_usable_size or free: redis-server died at startup.
 *
 * The functions are looked up at the first call.  dlsym may allocate
 * itself; what is asked for while the lookup runs comes from a small static
 * arena (heap_next_owns), which free ignores.
 *
 * Async-signal-safe once resolved (plain calls through pointers).
 */
#ifndef WITCH_HEAP_NEXT_H
#define WITCH_HEAP_NEXT_H

#include <stddef.h>
#include <stdint.h>

struct heap_next_fns {
	void *(*malloc)(size_t);
	void (*free)(void *);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*usable_size)(void *);
	int glibc; /* they are the C library's own (glibc's chunk layout holds) */
};

extern const struct heap_next_fns *heap_next_table; /* NULL until resolved */

/* The functions, or NULL while the lookup runs (this or another thread):
 * use the heap_next_boot_* allocations then. */
const struct heap_next_fns *heap_next_resolve(void);

static inline const struct heap_next_fns *heap_next(void)
{
	const struct heap_next_fns *f = __atomic_load_n(&heap_next_table, __ATOMIC_ACQUIRE);
	return f ? f : heap_next_resolve();
}

/* The static arena for calls during the lookup: 16-byte aligned blocks,
 * never freed.  NULL when it is full. */
void *heap_next_boot_alloc(size_t n, size_t align);
/* Whether p is one of its blocks, and its size. */
int heap_next_owns(const void *p);
size_t heap_next_boot_size(const void *p);

#endif
