/* threadmap: a thread's one mapping, kept for the next thread (see
 * threadmap.h). */
#include "witch/threadmap.h"
#include "witch/fdguard.h"
#include "witch/fdio.h"
#include "witch/lockguard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE 4096u
#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)

static void *threadmap_slots[THREADMAP_KEEP];
static size_t threadmap_len; /* the size kept: the first one given back */

static int page_is_zero(const void *page)
{
	const uint64_t *w = page;
	uint64_t any = 0;
	for (unsigned i = 0; i < PAGE / sizeof(*w); i += 8)
		any |= w[i] | w[i + 1] | w[i + 2] | w[i + 3] | w[i + 4] | w[i + 5] | w[i + 6] |
		       w[i + 7];
	return any == 0;
}

/* Zero the pages of [lo, hi) that are there and not all zero (a page only
 * read is the zero page's: left as it is).  0 or -errno. */
static int threadmap_clear(char *lo, char *hi)
{
	uint64_t pm[512];
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = 0;
	for (char *chunk = lo; chunk < hi && rc == 0; chunk += sizeof(pm) / sizeof(pm[0]) * PAGE) {
		size_t n = (size_t)(hi - chunk) / PAGE;
		if (n > sizeof(pm) / sizeof(pm[0]))
			n = sizeof(pm) / sizeof(pm[0]);
		rc = fdio_pread_all(fd, pm, n * sizeof(pm[0]),
				    (uint64_t)(uintptr_t)chunk / PAGE * sizeof(pm[0]));
		for (size_t i = 0; rc == 0 && i < n; i++) {
			char *page = chunk + i * PAGE;
			if ((pm[i] & PM_SWAPPED) || ((pm[i] & PM_PRESENT) && !page_is_zero(page)))
				memset(page, 0, PAGE);
		}
	}
	int closed = fdguard_close(fd);
	return rc < 0 ? rc : closed;
}

void *threadmap_take(size_t len)
{
	for (int i = 0; len == __atomic_load_n(&threadmap_len, __ATOMIC_ACQUIRE) && i < THREADMAP_KEEP;
	     i++) {
		void *map = __atomic_exchange_n(&threadmap_slots[i], NULL, __ATOMIC_ACQUIRE);
		if (map)
			return map;
	}
	return lockguard_map(len, MAP_NORESERVE);
}

void threadmap_give(void *map, size_t len, size_t clean_from, size_t clean_to)
{
	clean_to = clean_to < len ? (clean_to + PAGE - 1) / PAGE * PAGE : len;
	size_t none = 0; /* the first size given back is the one kept (thread.c has one) */
	(void)__atomic_compare_exchange_n(&threadmap_len, &none, len, 0, __ATOMIC_RELEASE,
					  __ATOMIC_RELAXED);
	/* (no slot free now: unmapped without the clearing's work) */
	if (len == __atomic_load_n(&threadmap_len, __ATOMIC_ACQUIRE) &&
	    threadmap_kept() < THREADMAP_KEEP &&
	    (clean_from >= clean_to ||
	     threadmap_clear((char *)map + clean_from, (char *)map + clean_to) == 0)) {
		for (int i = 0; i < THREADMAP_KEEP; i++) {
			void *empty = NULL;
			if (__atomic_compare_exchange_n(&threadmap_slots[i], &empty, map, 0,
							__ATOMIC_RELEASE, __ATOMIC_RELAXED))
				return;
		}
	}
	(void)lockguard_unmap(map, len); /* (a failure leaves the mapping: nothing to do) */
}

int threadmap_kept(void)
{
	int n = 0;
	for (int i = 0; i < THREADMAP_KEEP; i++)
		n += __atomic_load_n(&threadmap_slots[i], __ATOMIC_RELAXED) != NULL;
	return n;
}
