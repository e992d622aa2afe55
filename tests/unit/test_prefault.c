/* Unit test of prefault: a range's pages made present in one call.
 *
 * What must hold (prefault.h):
 *   - exactly the pages the range touches are made present, a partial
 *     page at either end included, none beside them (mincore over a
 *     mapping with a page untouched on each side);
 *   - prefault_pages() grows by that many pages, and by none on a failure;
 *   - an empty range does nothing and succeeds;
 *   - a range that is not all mapped says -ENOMEM, a read-only one
 *     -EINVAL (Linux 6.x; -EFAULT where the kernel finds it at the
 *     fault), and neither counts, nor turns prefault off: a writable
 *     range after them is still made present;
 *   - the pages hold what was written before (present, not replaced).
 * Where the kernel lacks MADV_POPULATE_WRITE (before 5.14) the first call
 * says -EOPNOTSUPP and the test reports skipped (77).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "witch/prefault.h"

#define PAGE 4096u
#define NPAGES 16u

/* Rows: a range in pages (first page, byte offset into it, length in
 * bytes) over a fresh mapping of NPAGES; the pages it should make
 * present, [want_first, want_last]. */
static const struct row {
	int line;
	unsigned first;
	unsigned offset;
	size_t len;
	unsigned want_first, want_last; /* want_last < want_first: none */
} rows[] = {
	{__LINE__, 1, 0, PAGE, 1, 1},                /* one whole page */
	{__LINE__, 2, 100, 10, 2, 2},                /* a few bytes inside one */
	{__LINE__, 3, PAGE - 1, 2, 3, 4},            /* two bytes across a boundary */
	{__LINE__, 1, 8, 13 * PAGE, 1, 14},          /* partial pages at both ends */
	{__LINE__, 5, 0, 0, 1, 0},                   /* empty: nothing */
};

static int resident(const char *base, unsigned page)
{
	unsigned char v = 0;
	if (mincore((void *)(base + (size_t)page * PAGE), PAGE, &v) != 0)
		return -1;
	return v & 1;
}

static void test_rows(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		char *m = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		CHECK(r->line, m != MAP_FAILED, "mmap");
		if (m == MAP_FAILED)
			continue;
		unsigned long before = prefault_pages();
		int rc = prefault_range(m + (size_t)r->first * PAGE + r->offset, r->len);
		CHECK(r->line, rc == 0, "prefault_range says %d", rc);
		unsigned want = r->want_last >= r->want_first ? r->want_last - r->want_first + 1 : 0;
		CHECK(r->line, prefault_pages() - before == want, "counted %lu pages, want %u",
		      prefault_pages() - before, want);
		for (unsigned p = 0; p < NPAGES; p++) {
			int in = p >= r->want_first && p <= r->want_last;
			CHECK(r->line, resident(m, p) == in, "page %u resident %d, want %d", p,
			      resident(m, p), in);
		}
		munmap(m, NPAGES * PAGE);
	}
}

static void test_refusals(void)
{
	/* Three pages, the middle one unmapped: not all mapped. */
	char *m = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(__LINE__, m != MAP_FAILED, "mmap");
	if (m == MAP_FAILED)
		return;
	munmap(m + PAGE, PAGE);
	unsigned long before = prefault_pages();
	int rc = prefault_range(m, 3 * PAGE);
	CHECK(__LINE__, rc == -ENOMEM, "a hole: %d, want -ENOMEM", rc);
	CHECK(__LINE__, prefault_pages() == before, "a hole counted %lu pages",
	      prefault_pages() - before);
	munmap(m, PAGE);
	munmap(m + 2 * PAGE, PAGE);

	char *ro = mmap(NULL, 2 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(__LINE__, ro != MAP_FAILED, "mmap");
	if (ro == MAP_FAILED)
		return;
	rc = prefault_range(ro, 2 * PAGE);
	CHECK(__LINE__, rc == -EINVAL || rc == -EFAULT, "read-only: %d, want -EINVAL or -EFAULT", rc);
	CHECK(__LINE__, prefault_pages() == before, "read-only counted %lu pages",
	      prefault_pages() - before);
	munmap(ro, 2 * PAGE);

	char *rw = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(__LINE__, rw != MAP_FAILED, "mmap");
	if (rw == MAP_FAILED)
		return;
	rc = prefault_range(rw, PAGE);
	CHECK(__LINE__, rc == 0 && resident(rw, 0) == 1,
	      "after the refusals: %d, resident %d (prefault turned itself off)", rc, resident(rw, 0));
	munmap(rw, PAGE);
}

static void test_keeps_contents(void)
{
	char *m = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(__LINE__, m != MAP_FAILED, "mmap");
	if (m == MAP_FAILED)
		return;
	m[PAGE + 5] = 42;
	CHECK(__LINE__, prefault_range(m, 4 * PAGE) == 0, "prefault_range");
	CHECK(__LINE__, m[PAGE + 5] == 42 && m[0] == 0 && m[3 * PAGE] == 0,
	      "contents changed: %d %d %d", m[PAGE + 5], m[0], m[3 * PAGE]);
	munmap(m, 4 * PAGE);
}

int main(void)
{
	char *probe = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (probe == MAP_FAILED || prefault_range(probe, PAGE) == -EOPNOTSUPP) {
		printf("skipped: MADV_POPULATE_WRITE is not supported here\n");
		return 77;
	}
	munmap(probe, PAGE);
	test_rows();
	test_refusals();
	test_keeps_contents();
	return check_failures != 0;
}
