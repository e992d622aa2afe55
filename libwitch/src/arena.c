/* arena: mmap-backed bump allocator (see arena.h). */
#include "witch/arena.h"
#include "witch/lockguard.h"

#include <errno.h>
#include <sys/mman.h>

int arena_init(struct arena *a, size_t size)
{
	void *p = lockguard_map(size, MAP_NORESERVE);
	if (p == MAP_FAILED)
		return -errno;
	a->base = p;
	a->size = size;
	a->used = 0;
	a->mapped = 1;
	return 0;
}

void arena_init_at(struct arena *a, void *mem, size_t size)
{
	a->base = mem;
	a->size = size;
	a->used = 0;
	a->mapped = 0;
}

void *arena_alloc(struct arena *a, size_t size)
{
	size_t start = (a->used + 15) & ~(size_t)15;
	if (start > a->size || size > a->size - start)
		return NULL;
	a->used = start + size;
	return a->base + start;
}

void arena_destroy(struct arena *a)
{
	if (a->base && a->mapped)
		(void)lockguard_unmap(a->base, a->size);
	a->base = NULL;
	a->size = a->used = 0;
}
