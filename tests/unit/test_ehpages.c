/* test_ehpages: the C library's unwind tables, read and given back
 * (ehpages.h), and its .rodata, in the same read-only segment before them,
 * left alone.
 *
 * libc.so.6's read-only segment after its code holds .rodata, then
 * .eh_frame_hdr and .eh_frame (GNU ld's layout; skipped, 77, where the
 * layout differs).  Each whole page of the header is read here, as an
 * unwind's search would, and so is the segment's first page (.rodata).
 * After ehpages_release: the header's pages are no longer in the process
 * (pagemap: not present), the .rodata page still is.  Giving back from the
 * segment's start fails the second check; giving back nothing, the first.
 */

#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "witch/ehpages.h"

#define PAGE 4096ull

struct found {
	uint64_t seg_lo, hdr_lo, hdr_hi; /* whole pages of the header: [hdr_lo, hdr_hi) */
};

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct found *f = arg;
	const ElfW(Phdr) *hdr = NULL;
	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libc.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = &info->dlpi_phdr[i];
	for (int i = 0; hdr && i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD || (p->p_flags & (PF_W | PF_X)) || hdr->p_vaddr < p->p_vaddr ||
		    hdr->p_vaddr >= p->p_vaddr + p->p_filesz)
			continue;
		f->seg_lo = info->dlpi_addr + p->p_vaddr;
		f->hdr_lo = (info->dlpi_addr + hdr->p_vaddr + PAGE - 1) & ~(PAGE - 1);
		f->hdr_hi = (info->dlpi_addr + hdr->p_vaddr + hdr->p_memsz) & ~(PAGE - 1);
	}
	return 1;
}

/* 1: mapped in this process; 0: not; -1: pagemap unreadable. */
static int present(int pm, uint64_t page)
{
	uint64_t e;
	if (pread(pm, &e, sizeof e, (off_t)(page / PAGE * sizeof e)) != sizeof e)
		return -1;
	return (e >> 63) & 1;
}

int main(void)
{
	struct found f = {0, 0, 0};
	dl_iterate_phdr(find_libc, &f);
	if (!f.seg_lo || f.hdr_hi <= f.hdr_lo || f.seg_lo >= f.hdr_lo) {
		printf("test_ehpages: SKIP: libc.so's unwind table header is not in whole pages after its .rodata\n");
		return 77;
	}
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (pm < 0 || present(pm, f.seg_lo) < 0) {
		printf("test_ehpages: SKIP: /proc/self/pagemap unreadable\n");
		return 77;
	}
	volatile const unsigned char *b;
	unsigned sum = 0;
	for (uint64_t page = f.hdr_lo; page < f.hdr_hi; page += PAGE)
		sum += *(b = (const unsigned char *)(uintptr_t)page);
	sum += *(b = (const unsigned char *)(uintptr_t)f.seg_lo);
	CHECK(__LINE__, present(pm, f.hdr_lo) == 1 && present(pm, f.seg_lo) == 1,
	      "pages read are not present before the release");

	int rc = ehpages_release();
	CHECK(__LINE__, rc == 0, "ehpages_release: %d", rc);
	int kept = 0;
	for (uint64_t page = f.hdr_lo; page < f.hdr_hi; page += PAGE)
		kept += present(pm, page) != 0;
	CHECK(__LINE__, kept == 0, "%d of %lu header pages still present", kept,
	      (unsigned long)((f.hdr_hi - f.hdr_lo) / PAGE));
	CHECK(__LINE__, present(pm, f.seg_lo) == 1, ".rodata's first page was given back too");
	close(pm);
	printf("test_ehpages: %lu header pages given back (checksum %u)\n",
	       (unsigned long)((f.hdr_hi - f.hdr_lo) / PAGE), sum);
	return check_failures != 0;
}
