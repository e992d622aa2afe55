/* ehpages: the modules' unwind tables, given back (see ehpages.h). */

#include "witch/ehpages.h"
#include "witch/due.h"
#include "witch/filepages.h"

#include <link.h>

static uint64_t eh_due_ns; /* when ehpages_release_due last gave back */

/* The read-only, non-executable PT_LOAD holding the module's unwind table
 * header: its pages from the header on. */
static int eh_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	int *rc = arg;
	const ElfW(Phdr) *hdr = NULL;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = &info->dlpi_phdr[i];
	if (!hdr)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD || (p->p_flags & (PF_W | PF_X)) || hdr->p_vaddr < p->p_vaddr ||
		    hdr->p_vaddr >= p->p_vaddr + p->p_filesz)
			continue;
		uint64_t at = info->dlpi_addr + hdr->p_vaddr;
		uint64_t end = info->dlpi_addr + p->p_vaddr + p->p_filesz;
		int r = filepages_release((const void *)(uintptr_t)at, end - at);
		if (r < 0 && *rc == 0)
			*rc = r;
		break;
	}
	return 0;
}

int ehpages_release(void)
{
	int rc = 0;
	dl_iterate_phdr(eh_one, &rc);
	return rc;
}

void ehpages_release_due(void)
{
	if (due_claim(&eh_due_ns, EHPAGES_DUE_NS))
		(void)ehpages_release(); /* pagemap unreadable: the pages stay, as before */
}
