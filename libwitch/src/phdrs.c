/* phdrs: a lock-free snapshot of the module list for unwinding (see phdrs.h). */
#include "witch/phdrs.h"
#include "witch/deps.h"
#include "witch/lockguard.h"
#include "witch/export.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define PHDRS_MAX 4096 /* modules a snapshot holds; past it, unwinds there fail */

struct phdrs_buf {
	unsigned readers;	/* unwinds walking this buffer now */
	unsigned n;
	struct dl_phdr_info mods[PHDRS_MAX];
};

typedef int (*iterate_fn)(int (*)(struct dl_phdr_info *, size_t, void *), void *);

static struct phdrs_buf *phdrs_bufs[2];
static struct phdrs_buf *phdrs_current;	/* what unwinds read */
static int phdrs_closing;		/* a dlclose is under way: unwinds find nothing */
static int phdrs_stale;			/* an unwind missed a module since the last snapshot */
static pthread_mutex_t phdrs_lock = PTHREAD_MUTEX_INITIALIZER; /* writers only */
static iterate_fn phdrs_real;
static __thread int phdrs_in_unwind;
static __thread uint64_t phdrs_want_pc;	/* the pc the unwinder looks up next */
static __thread struct phdrs_buf *phdrs_held;	/* the buffer this thread's walk counts in */

static iterate_fn real_iterate(void)
{
	if (!phdrs_real)
		phdrs_real = (iterate_fn)dlsym(RTLD_NEXT, "dl_iterate_phdr");
	return phdrs_real;
}

static int copy_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct phdrs_buf *b = arg;
	if (b->n >= PHDRS_MAX)
		return 1;
	struct dl_phdr_info *m = &b->mods[b->n++];
	memset(m, 0, sizeof(*m));
	memcpy(m, info, size < sizeof(*m) ? size : sizeof(*m));
	m->dlpi_tls_data = NULL; /* the walking thread's, not the snapshot's */
	return 0;
}

static void wait_no_readers(struct phdrs_buf *b)
{
	while (__atomic_load_n(&b->readers, __ATOMIC_SEQ_CST))
		sched_yield();
}

void phdrs_refresh(void)
{
	iterate_fn real = real_iterate();
	if (!phdrs_bufs[0] || !real)
		return;
	pthread_mutex_lock(&phdrs_lock);
	__atomic_store_n(&phdrs_stale, 0, __ATOMIC_SEQ_CST);
	struct phdrs_buf *spare = phdrs_current == phdrs_bufs[0] ? phdrs_bufs[1] : phdrs_bufs[0];
	/* An unwind that took the spare before the last swap may still read it. */
	wait_no_readers(spare);
	spare->n = 0;
	real(copy_one, spare);
	__atomic_store_n(&phdrs_current, spare, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&phdrs_lock);
}

void phdrs_refresh_if_stale(void)
{
	if (__atomic_load_n(&phdrs_stale, __ATOMIC_SEQ_CST))
		phdrs_refresh();
}

int phdrs_init(void)
{
	for (int i = 0; i < 2; i++) {
		void *p = lockguard_map(sizeof(struct phdrs_buf), MAP_NORESERVE);
		if (p == MAP_FAILED)
			return -errno;
		phdrs_bufs[i] = p;
	}
	if (!real_iterate())
		return -ENOSYS;
	phdrs_refresh();
	return 0;
}

void phdrs_unwind_begin(void)
{
	phdrs_in_unwind++;
}

void phdrs_unwind_end(void)
{
	phdrs_in_unwind--;
	phdrs_want_pc = 0;
}

void phdrs_unwind_at(uint64_t pc)
{
	phdrs_want_pc = pc;
}

void phdrs_rescue(void)
{
	struct phdrs_buf *b = phdrs_held;
	phdrs_held = NULL;
	if (b)
		__atomic_sub_fetch(&b->readers, 1, __ATOMIC_SEQ_CST);
	phdrs_in_unwind = 0;
	phdrs_want_pc = 0;
}

void phdrs_close_begin(void)
{
	pthread_mutex_lock(&phdrs_lock);
	__atomic_store_n(&phdrs_closing, 1, __ATOMIC_SEQ_CST);
	for (int i = 0; i < 2; i++)
		if (phdrs_bufs[i])
			wait_no_readers(phdrs_bufs[i]);
	pthread_mutex_unlock(&phdrs_lock);
}

static uint64_t phdrs_gen;

uint64_t phdrs_generation(void)
{
	return __atomic_load_n(&phdrs_gen, __ATOMIC_ACQUIRE);
}

void phdrs_close_end(void)
{
	__atomic_add_fetch(&phdrs_gen, 1, __ATOMIC_RELEASE);
	phdrs_refresh();
	__atomic_store_n(&phdrs_closing, 0, __ATOMIC_SEQ_CST);
}

void phdrs_prefork(void)
{
	pthread_mutex_lock(&phdrs_lock);
}

void phdrs_postfork_parent(void)
{
	pthread_mutex_unlock(&phdrs_lock);
}

void phdrs_postfork_child(void)
{
	pthread_mutex_init(&phdrs_lock, NULL);
	for (int i = 0; i < 2; i++) /* (written only if not 0: a written page is copied) */
		if (phdrs_bufs[i] && phdrs_bufs[i]->readers != 0)
			phdrs_bufs[i]->readers = 0;
}

/* A module the snapshot does not hold yet (loaded since it was taken), as
 * the C library's lock-free _dl_find_object sees it: the program headers
 * are those the ELF header at the start of its mapping points to, checked
 * against the eh_frame segment _dl_find_object gives. */
static int find_unlisted(uint64_t pc, struct dl_phdr_info *info)
{
#ifdef DLFO_EH_SEGMENT_TYPE
	struct dl_find_object fo;
	if (pc == 0 || _dl_find_object((void *)pc, &fo) != 0 || !fo.dlfo_link_map ||
	    !fo.dlfo_eh_frame)
		return -ENOENT;
	const ElfW(Ehdr) *eh = fo.dlfo_map_start;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_phentsize != sizeof(ElfW(Phdr)) ||
	    (char *)fo.dlfo_map_start + eh->e_phoff +
			    (uint64_t)eh->e_phnum * sizeof(ElfW(Phdr)) > (char *)fo.dlfo_map_end)
		return -ENOENT;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
	ElfW(Addr) base = fo.dlfo_link_map->l_addr;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != DLFO_EH_SEGMENT_TYPE ||
		    (void *)(base + ph[i].p_vaddr) != fo.dlfo_eh_frame)
			continue;
		memset(info, 0, sizeof(*info));
		info->dlpi_addr = base;
		info->dlpi_name = fo.dlfo_link_map->l_name;
		info->dlpi_phdr = ph;
		info->dlpi_phnum = eh->e_phnum;
		return 0;
	}
#else
	(void)pc;
	(void)info;
#endif
	return -ENOENT;
}

int phdrs_in_code(uint64_t addr)
{
	struct dl_phdr_info info;
	if (find_unlisted(addr, &info) < 0)
		return 0;
	for (unsigned i = 0; i < info.dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info.dlpi_phdr[i];
		uint64_t lo = info.dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && addr >= lo &&
		    addr - lo < ph->p_memsz)
			return 1;
	}
	return 0;
}

/* The snapshot's walk: as the C library's, less its lock.  No module gives 0,
 * which libunwind takes as "no unwind info": the unwind stops there. */
static int walk_snapshot(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	struct phdrs_buf *b;
	int rc = 0;

	for (;;) {
		b = __atomic_load_n(&phdrs_current, __ATOMIC_SEQ_CST);
		if (!b)
			return 0;
		__atomic_add_fetch(&b->readers, 1, __ATOMIC_SEQ_CST);
		/* Checked after the count is up: a writer that saw 0 readers
		 * has published a new buffer or set closing first. */
		if (b == __atomic_load_n(&phdrs_current, __ATOMIC_SEQ_CST))
			break;
		__atomic_sub_fetch(&b->readers, 1, __ATOMIC_SEQ_CST);
	}
	phdrs_held = b;
	if (!__atomic_load_n(&phdrs_closing, __ATOMIC_SEQ_CST)) {
		for (unsigned i = 0; i < b->n && rc == 0; i++) {
			struct dl_phdr_info info = b->mods[i];
			rc = cb(&info, sizeof(info), data);
		}
		if (rc == 0) {
			struct dl_phdr_info info;
			__atomic_store_n(&phdrs_stale, 1, __ATOMIC_RELAXED);
			if (find_unlisted(phdrs_want_pc, &info) == 0)
				rc = cb(&info, sizeof(info), data);
		}
	}
	phdrs_held = NULL;
	__atomic_sub_fetch(&b->readers, 1, __ATOMIC_SEQ_CST);
	return rc;
}

WITCH_EXPORT int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
{
	if (phdrs_in_unwind && phdrs_bufs[0])
		return walk_snapshot(cb, data);
	iterate_fn real = real_iterate();
	deps_loader_enter(); /* the callback runs under the loader's lock (deps.h) */
	int rc = real ? real(cb, data) : 0;
	deps_loader_leave();
	return rc;
}
