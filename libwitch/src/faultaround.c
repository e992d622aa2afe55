/* faultaround: one page a read fault where only the runtime reads (see
 * faultaround.h). */
#include "witch/faultaround.h"
#include "witch/filepages.h"
#include "witch/rawsys.h"
#include "witch/fdguard.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Linux 6.7's; Debian 12's headers are 6.1's. */
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

#define FA_PAGE 4096ull

static int fa_fd = -1;
static int fa_rc = 1;          /* 1: not tried yet; else init's answer */
static dev_t fa_dev;           /* the descriptor's identity, to tell when */
static ino_t fa_ino;           /* the program closed or replaced it */
/* faultaround_add_module's, registered by each successful init. */
#define FA_MODULES 4
static const void *fa_modules[FA_MODULES];
static int fa_nmodules;

static int fa_register_module(const void *addr);

/* Raw: the runtime interposes syscall() for the program (perfguard.c). */
static long fa_open_uffd(const void *arg)
{
	(void)arg;
	return rawsys6(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY, 0, 0, 0, 0, 0);
}

int faultaround_init(void)
{
	if (fa_rc <= 0)
		return fa_rc;
	/* Out of the program's way and its sweeps (fdguard.h). */
	long fd = fdguard_open(fa_open_uffd, NULL);
	if (fd < 0)
		return fa_rc = (int)fd;
	struct uffdio_api api = {.api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC};
	struct stat st;
	if (ioctl((int)fd, UFFDIO_API, &api) < 0 || fstat((int)fd, &st) < 0) {
		fa_rc = -errno;
		fdguard_close((int)fd);
		return fa_rc;
	}
	fa_fd = (int)fd;
	fa_dev = st.st_dev;
	fa_ino = st.st_ino;
	fa_rc = 0;
	for (int i = 0; i < fa_nmodules; i++)
		(void)fa_register_module(fa_modules[i]); /* one that cannot faults around */
	return 0;
}

int faultaround_active(void)
{
	return __atomic_load_n(&fa_rc, __ATOMIC_RELAXED) == 0;
}

/* Whether fa_fd is still ours.  Each userfaultfd has its own inode since
 * Linux 6.7 (the first with WP_ASYNC), so this tells ours from whatever
 * the program opened at its number after closing it. */
static int fa_fd_ours(void)
{
	struct stat st;
	return fa_fd >= 0 && fstat(fa_fd, &st) == 0 && st.st_dev == fa_dev && st.st_ino == fa_ino;
}

int faultaround_off(const void *at, uint64_t size)
{
	if (fa_rc != 0)
		return -ENODEV;
	if (!fa_fd_ours())
		return -EBADF;
	uint64_t lo = (uint64_t)(uintptr_t)at & ~(FA_PAGE - 1);
	uint64_t hi = ((uint64_t)(uintptr_t)at + size + FA_PAGE - 1) & ~(FA_PAGE - 1);
	if (hi <= lo)
		return 0;
	struct uffdio_register reg = {.range = {.start = lo, .len = hi - lo}, .mode = UFFDIO_REGISTER_MODE_WP};
	return ioctl(fa_fd, UFFDIO_REGISTER, &reg) < 0 ? -errno : 0;
}

struct fa_module {
	uint64_t addr; /* in the module wanted */
	int rc;        /* 1 until found */
};

static int fa_module_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct fa_module *m = arg;
	(void)size;
	int holds = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + p->p_vaddr;
		holds |= p->p_type == PT_LOAD && m->addr >= lo && m->addr < lo + p->p_memsz;
	}
	if (!holds)
		return 0;
	m->rc = 0;
	for (int i = 0; i < info->dlpi_phnum && m->rc == 0; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		/* Writable ones are the process's own copies (data, RELRO).
		 * What came in before, in batches, is given back: the module
		 * is the runtime's alone, and its reads fault in again. */
		const void *at = (const void *)(uintptr_t)(info->dlpi_addr + p->p_vaddr);
		if (p->p_type == PT_LOAD && !(p->p_flags & PF_W) &&
		    (m->rc = faultaround_off(at, p->p_filesz)) == 0)
			m->rc = filepages_release(at, p->p_filesz);
	}
	return 1;
}

static int fa_register_module(const void *addr)
{
	struct fa_module m = {(uint64_t)(uintptr_t)addr, 1};
	dl_iterate_phdr(fa_module_one, &m);
	return m.rc == 1 ? -ENOENT : m.rc;
}

int faultaround_add_module(const void *addr)
{
	if (fa_rc < 0)
		return -ENODEV;
	if (fa_nmodules == FA_MODULES)
		return -ENOSPC;
	if (fa_rc == 0) {
		int rc = fa_register_module(addr);
		if (rc < 0)
			return rc;
	}
	fa_modules[fa_nmodules++] = addr;
	return 0;
}

void faultaround_postfork_child(void)
{
	if (fa_fd_ours()) /* never the program's own file at that number */
		fdguard_close(fa_fd);
	fa_fd = -1;
	fa_rc = 1;
}
