/* ehpages: the modules' unwind tables, given back (see ehpages.h). */

#include "witch/ehpages.h"
#include "witch/deps.h"
#include "witch/due.h"
#include "witch/faultaround.h"
#include "witch/filepages.h"
#include "witch/log.h"

#include <link.h>
#include <pthread.h>
#include <string.h>

static uint64_t eh_due_ns; /* when ehpages_release_due last gave back */
/* The loader's count of modules added at the last walk: a walk registers
 * the ranges with faultaround.h only when it moved (0: none seen yet). */
static unsigned long long eh_adds_seen;
static uint64_t eh_start_ns; /* ehpages_start's clock (due.h); 0: not started */
/* Held around the walk, and by fork's prepare handler (ehpages_prefork):
 * dl_iterate_phdr holds the loader's module-list lock for the walk, the C
 * library does not reset that lock in a child, and a child forked while
 * the flusher walked inherited it held and hung in its first walk (the
 * soak's timeout: thread_begin -> datasym_refresh -> dl_iterate_phdr). */
static pthread_mutex_t eh_lock = PTHREAD_MUTEX_INITIALIZER;

struct eh_walk {
	int rc;                  /* the first error */
	unsigned long long adds; /* the loader's count of modules added */
};

/* The read-only, non-executable PT_LOAD holding the module's unwind table
 * header: its pages from the header on. */
static int eh_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct eh_walk *w = arg;
	const ElfW(Phdr) *hdr = NULL;
	w->adds = info->dlpi_adds;
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
		/* One page a fault from here on; where the kernel cannot, or
		 * the program's own userfaultfd holds the range, faults map 16
		 * pages as before and the release below still bounds them. */
		if (info->dlpi_adds != eh_adds_seen) /* -ENODEV until it is on */
			(void)faultaround_off((const void *)(uintptr_t)at, end - at);
		int r = filepages_release((const void *)(uintptr_t)at, end - at);
		if (r < 0 && w->rc == 0)
			w->rc = r;
		break;
	}
	return 0;
}

/* The decoder's tables (Zydis's 421 KiB of constants, read a few pages a
 * decode) fault one page at a time too, once a tick has loaded it
 * (deps.h).  eh_lock held. */
static void eh_add_decoder(void)
{
	static int added;
	const void *decoder = deps_decoder_library();
	if (added || !decoder)
		return;
	added = 1;
	int rc = faultaround_add_module(decoder);
	if (rc < 0)
		log_verbose(1, "the decoder's tables keep 16 pages a fault (%s)", strerror(-rc));
}

/* eh_lock held. */
static int eh_walk(void)
{
	eh_add_decoder();
	/* One page a fault from the first walk EHPAGES_ONE_PAGE_AFTER_NS into
	 * the run (faultaround_init's answer is kept: a kernel that cannot
	 * costs one try a process); this walk registers every module. */
	if (!faultaround_active() && eh_start_ns &&
	    due_now_ns() - eh_start_ns >= EHPAGES_ONE_PAGE_AFTER_NS && faultaround_init() == 0)
		eh_adds_seen = 0;
	struct eh_walk w = {0, eh_adds_seen};
	dl_iterate_phdr(eh_one, &w);
	eh_adds_seen = w.adds;
	return w.rc;
}

int ehpages_release(void)
{
	pthread_mutex_lock(&eh_lock);
	int rc = eh_walk();
	pthread_mutex_unlock(&eh_lock);
	return rc;
}

void ehpages_start(void)
{
	eh_start_ns = due_now_ns();
	__atomic_store_n(&eh_due_ns, eh_start_ns, __ATOMIC_RELAXED);
}

void ehpages_release_due(void)
{
	uint64_t every = faultaround_active() ? EHPAGES_DUE_ONE_PAGE_NS : EHPAGES_DUE_NS;
	if (!due_claim(&eh_due_ns, every))
		return;
	/* Never waits: a fork in progress holds it (the next interval will
	 * do), and the heap's hook may run in a program's signal handler. */
	if (pthread_mutex_trylock(&eh_lock) != 0)
		return;
	(void)eh_walk(); /* pagemap unreadable: the pages stay, as before */
	pthread_mutex_unlock(&eh_lock);
}

void ehpages_prefork(void)
{
	pthread_mutex_lock(&eh_lock);
}

void ehpages_postfork_parent(void)
{
	pthread_mutex_unlock(&eh_lock);
}

void ehpages_postfork_child(void)
{
	pthread_mutex_init(&eh_lock, NULL);
	/* The child's mappings lost the parent's registrations: its next
	 * walk registers them again, with its own descriptor (a child of a
	 * process past EHPAGES_ONE_PAGE_AFTER_NS at once). */
	faultaround_postfork_child();
	eh_adds_seen = 0;
}
