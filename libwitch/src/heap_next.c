/* heap_next: the allocator after libwitch's interposers (see heap_next.h). */
#include "witch/heap_next.h"
#include "witch/lbss.h"

#include <dlfcn.h>
#include <string.h>

#define BOOT_BYTES (64u << 10)
#define BOOT_HEADER 16u /* each block's size, in the 16 bytes before it */

const struct heap_next_fns *heap_next_table;
static struct heap_next_fns next_fns;
static int next_resolving;

static _Alignas(16) uint8_t boot[BOOT_BYTES] WITCH_LBSS;
static size_t boot_used;

void *heap_next_boot_alloc(size_t n, size_t align)
{
	if (align < 16)
		align = 16;
	if (n > BOOT_BYTES || (align & (align - 1)) != 0 || align > 4096)
		return NULL;
	for (;;) {
		size_t used = __atomic_load_n(&boot_used, __ATOMIC_RELAXED);
		size_t at = (used + BOOT_HEADER + align - 1) & ~(align - 1);
		size_t end = at + ((n + 15) & ~(size_t)15);
		if (end > BOOT_BYTES)
			return NULL;
		if (__atomic_compare_exchange_n(&boot_used, &used, end, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			memcpy(boot + at - sizeof(size_t), &n, sizeof(n));
			return boot + at;
		}
	}
}

int heap_next_owns(const void *p)
{
	return (const uint8_t *)p >= boot && (const uint8_t *)p < boot + BOOT_BYTES;
}

size_t heap_next_boot_size(const void *p)
{
	size_t n;
	memcpy(&n, (const uint8_t *)p - sizeof(size_t), sizeof(n));
	return n;
}

/* Whether a and b lie in one module.  glibc 2.35's lock-free
 * _dl_find_object: ~2 us in a fresh process, where dladdr's scan of the C
 * library's symbol table read its pages, 47-89 us of every process's
 * start here; dladdr where it cannot say. */
static int heap_next_same_module(void *a, void *b)
{
	struct dl_find_object fa, fb;
	if (_dl_find_object(a, &fa) == 0 && _dl_find_object(b, &fb) == 0)
		return fa.dlfo_map_start == fb.dlfo_map_start;
	Dl_info ia, ib;
	return dladdr(a, &ia) && dladdr(b, &ib) && ia.dli_fbase == ib.dli_fbase;
}

static void *next_sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

const struct heap_next_fns *heap_next_resolve(void)
{
	const struct heap_next_fns *f = __atomic_load_n(&heap_next_table, __ATOMIC_ACQUIRE);
	if (f)
		return f;
	/* One thread looks up; the others (and the lookup's own allocations)
	 * use the boot arena meanwhile. */
	int expect = 0;
	if (!__atomic_compare_exchange_n(&next_resolving, &expect, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return NULL;
	struct heap_next_fns n;
	n.malloc = (void *(*)(size_t))next_sym("malloc");
	n.free = (void (*)(void *))next_sym("free");
	n.calloc = (void *(*)(size_t, size_t))next_sym("calloc");
	n.realloc = (void *(*)(void *, size_t))next_sym("realloc");
	n.memalign = (void *(*)(size_t, size_t))next_sym("memalign");
	n.aligned_alloc = (void *(*)(size_t, size_t))next_sym("aligned_alloc");
	n.posix_memalign = (int (*)(void **, size_t, size_t))next_sym("posix_memalign");
	n.valloc = (void *(*)(size_t))next_sym("valloc");
	n.pvalloc = (void *(*)(size_t))next_sym("pvalloc");
	n.usable_size = (size_t(*)(void *))next_sym("malloc_usable_size");
	if (!n.malloc || !n.free || !n.calloc || !n.realloc || !n.memalign || !n.aligned_alloc ||
	    !n.posix_memalign || !n.valloc || !n.pvalloc || !n.usable_size) {
		/* Not a usable C library: leave the lock set, the boot arena
		 * serves what it can (never seen; dlsym found none of them). */
		return NULL;
	}
	/* The C library's allocator, not one the program links (jemalloc):
	 * malloc comes from the module that defines gnu_get_libc_version. */
	void *libc_fn = dlsym(RTLD_DEFAULT, "gnu_get_libc_version");
	n.glibc = libc_fn && heap_next_same_module((void *)n.malloc, libc_fn);
	next_fns = n;
	__atomic_store_n(&heap_next_table, &next_fns, __ATOMIC_RELEASE);
	return &next_fns;
}
