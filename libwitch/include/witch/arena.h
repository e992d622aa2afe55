/* arena: preallocated memory for signal handlers.
 *
 * Handlers never call malloc; each thread gets one arena at start.  Pages
 * are MAP_NORESERVE and only cost memory once touched.
 */
#ifndef WITCH_ARENA_H
#define WITCH_ARENA_H

#include <stddef.h>
#include <stdint.h>

struct arena {
	char *base;
	size_t size;
	size_t used;
	int mapped; /* arena_init mapped base (arena_destroy unmaps it) */
};

/* Maps size bytes (MAP_NORESERVE: no memory until touched). */
int arena_init(struct arena *a, size_t size);
/* Over size bytes of zeroed memory the caller mapped and unmaps itself
 * (a thread's one mapping: thread.c). */
void arena_init_at(struct arena *a, void *mem, size_t size);
/* Bump allocation, 16-byte aligned; NULL when full.  Async-signal-safe. */
void *arena_alloc(struct arena *a, size_t size);
void arena_destroy(struct arena *a);

static inline int arena_contains(const struct arena *a, uintptr_t addr)
{
	return addr >= (uintptr_t)a->base && addr < (uintptr_t)a->base + a->size;
}

#endif
