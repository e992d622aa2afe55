/* prefault: a handler table's pages made present at once (see prefault.h). */
#include "witch/prefault.h"
#include "witch/rawsys.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define PREFAULT_PAGE 4096u

static int prefault_unsupported;
static unsigned long prefault_count;

static long populate(uintptr_t start, uintptr_t end)
{
	return rawsys6(SYS_madvise, (long)start, (long)(end - start), MADV_POPULATE_WRITE, 0, 0, 0);
}

int prefault_range(void *p, size_t len)
{
	if (len == 0)
		return 0;
	if (__atomic_load_n(&prefault_unsupported, __ATOMIC_RELAXED))
		return -EOPNOTSUPP;
	uintptr_t start = (uintptr_t)p & ~(uintptr_t)(PREFAULT_PAGE - 1);
	uintptr_t end = ((uintptr_t)p + len + PREFAULT_PAGE - 1) & ~(uintptr_t)(PREFAULT_PAGE - 1);
	long rc = populate(start, end);
	/* EINVAL is both an advice the kernel does not know (before 5.14)
	 * and a range it will not write (read-only, PROT_NONE): asked again
	 * of a page of this module's own data, which is writable, it tells. */
	uintptr_t own = (uintptr_t)&prefault_count & ~(uintptr_t)(PREFAULT_PAGE - 1);
	if (rc == -EINVAL && populate(own, own + PREFAULT_PAGE) == -EINVAL) {
		__atomic_store_n(&prefault_unsupported, 1, __ATOMIC_RELAXED);
		return -EOPNOTSUPP;
	}
	if (rc < 0)
		return (int)rc;
	__atomic_fetch_add(&prefault_count, (end - start) / PREFAULT_PAGE, __ATOMIC_RELAXED);
	return 0;
}

unsigned long prefault_pages(void)
{
	return __atomic_load_n(&prefault_count, __ATOMIC_RELAXED);
}
