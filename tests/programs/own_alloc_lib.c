/* own_alloc_lib: a program's own allocator (as redis-server links jemalloc):
 * malloc, free, calloc, realloc, the aligned forms and malloc_usable_size,
 * from one static arena, each block with its size in a header.  Its
 * malloc_usable_size reads that header: given a block from another heap
 * (the C library's) it reads garbage, as jemalloc's crashed.
 * own_alloc_served() counts the blocks it handed out. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ARENA (64u << 20)
#define MAGIC 0x6f776e616c6c6f63ull

static _Alignas(4096) unsigned char arena[ARENA];
static size_t used;
static size_t served;

struct header {
	uint64_t magic;
	uint64_t size;
};

static void *take(size_t n, size_t align)
{
	if (align < 16)
		align = 16;
	for (;;) {
		size_t at = __atomic_load_n(&used, __ATOMIC_RELAXED);
		size_t p = (at + sizeof(struct header) + align - 1) & ~(align - 1);
		size_t end = p + ((n + 15) & ~(size_t)15);
		if (end > ARENA || (align & (align - 1)) != 0)
			return NULL;
		if (!__atomic_compare_exchange_n(&used, &at, end, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		struct header *h = (struct header *)(arena + p) - 1;
		h->magic = MAGIC;
		h->size = n;
		__atomic_add_fetch(&served, 1, __ATOMIC_RELAXED);
		return arena + p;
	}
}

int own_alloc_owns(const void *p)
{
	return (const unsigned char *)p >= arena && (const unsigned char *)p < arena + ARENA;
}

size_t own_alloc_served(void)
{
	return __atomic_load_n(&served, __ATOMIC_RELAXED);
}

size_t malloc_usable_size(void *p)
{
	if (!p)
		return 0;
	struct header *h = (struct header *)p - 1;
	if (!own_alloc_owns(p) || h->magic != MAGIC)
		__builtin_trap(); /* a block from another heap */
	return h->size;
}

void *malloc(size_t n)
{
	return take(n, 16);
}

void free(void *p)
{
	if (p)
		(void)malloc_usable_size(p); /* checks it is ours; never reused */
}

void *calloc(size_t k, size_t n)
{
	size_t bytes;
	if (__builtin_mul_overflow(k, n, &bytes))
		return NULL;
	return take(bytes, 16); /* the arena starts zeroed and is never reused */
}

void *realloc(void *old, size_t n)
{
	void *p = take(n, 16);
	if (p && old) {
		size_t had = malloc_usable_size(old);
		memcpy(p, old, had < n ? had : n);
	}
	return p;
}

void *memalign(size_t align, size_t n)
{
	return take(n, align);
}

void *aligned_alloc(size_t align, size_t n)
{
	return take(n, align);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = take(n, align);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *valloc(size_t n)
{
	return take(n, 4096);
}

void *pvalloc(size_t n)
{
	return take((n + 4095) & ~(size_t)4095, 4096);
}
