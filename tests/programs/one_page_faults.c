/* one_page_faults: under the runtime, a read fault in this program's unwind
 * tables, or in the decoder library's constants, maps one page
 * (faultaround.h); natively, the kernel's fault-around maps up to 16.
 *
 * usage: one_page_faults native|profiled
 *
 * This program has 4096 small functions, each with an FDE: .eh_frame_hdr
 * 32 KiB and .eh_frame ~100 KiB, from the header's page to the end of its
 * read-only segment some 30 pages (ehpages.c's range).  Each check empties
 * a range (MADV_DONTNEED), reads one page in its middle, and counts the
 * other pages of the range now present (/proc/self/pagemap):
 *   - native, the unwind tables: more than 0 in the most of 5 tries (else
 *     this kernel does not fault around: 77, nothing to tell);
 *   - profiled, the unwind tables and libZydis's read-only segments: 0 in
 *     every one of 5 tries, in this process and in a fork child.  The
 *     runtime registers them at its first walk 100 ms or more into the run
 *     (ehpages.h), and a child's mappings lose the parent's registration
 *     until the child's first walk: each process starts a thread, so the
 *     profile writer runs and walks (woken every 250 ms), and checks again
 *     every 100 ms for up to 5 s.
 * The decoder is loaded at the runtime's first tick (deps.h): the
 * profiled run first spins until it is there (a CPU second at WITCH_RATE=1).
 * The runtime's own activity could only take pages away meanwhile (its
 * flusher gives the unwind tables back), never add any: WITCH_RATE=1 and
 * WITCH_OBJECTS=0 keep it from unwinding during the checks.
 * Where the kernel has no UFFD_FEATURE_WP_ASYNC (Linux 6.7) or refuses
 * userfaultfd: 77.
 * Prints one line a check: "<where> <range pages> <most other pages>".
 */
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <time.h>
#include <linux/userfaultfd.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#define PAGE 4096ul

/* 4096 functions, each its own FDE; the table keeps them all. */
#define F1(n) __attribute__((noinline)) static int f##n(int x) { return x * (n) + ((n) ^ 7); }
#define F4(n) F1(n##0) F1(n##1) F1(n##2) F1(n##3)
#define F16(n) F4(n##0) F4(n##1) F4(n##2) F4(n##3)
#define F64(n) F16(n##0) F16(n##1) F16(n##2) F16(n##3)
#define F256(n) F64(n##0) F64(n##1) F64(n##2) F64(n##3)
#define F1024(n) F256(n##0) F256(n##1) F256(n##2) F256(n##3)
F1024(10) F1024(11) F1024(12) F1024(13)
#define P1(n) f##n,
#define P4(n) P1(n##0) P1(n##1) P1(n##2) P1(n##3)
#define P16(n) P4(n##0) P4(n##1) P4(n##2) P4(n##3)
#define P64(n) P16(n##0) P16(n##1) P16(n##2) P16(n##3)
#define P256(n) P64(n##0) P64(n##1) P64(n##2) P64(n##3)
#define P1024(n) P256(n##0) P256(n##1) P256(n##2) P256(n##3)
static int (*const fns[])(int) = {P1024(10) P1024(11) P1024(12) P1024(13)};

struct range {
	uint64_t lo, hi; /* whole pages */
};

struct find {
	const char *name; /* a module whose name holds this; NULL: the program */
	int eh;           /* 1: its unwind tables; 0: its read-only, non-code PT_LOADs */
	struct range r[4];
	int n;
};

static int find_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	const ElfW(Phdr) *hdr = NULL;
	(void)size;
	if (f->name ? !strstr(info->dlpi_name, f->name) : info->dlpi_name[0] != 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = &info->dlpi_phdr[i];
	for (int i = 0; i < info->dlpi_phnum && f->n < 4; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD || (p->p_flags & (PF_W | PF_X)))
			continue;
		uint64_t lo = info->dlpi_addr + p->p_vaddr, hi = lo + p->p_filesz;
		if (f->eh) {
			if (!hdr || hdr->p_vaddr < p->p_vaddr || hdr->p_vaddr >= p->p_vaddr + p->p_filesz)
				continue;
			lo = info->dlpi_addr + hdr->p_vaddr;
		}
		f->r[f->n].lo = (lo + PAGE - 1) & ~(PAGE - 1);
		f->r[f->n].hi = hi & ~(PAGE - 1);
		if (f->r[f->n].hi > f->r[f->n].lo + 4 * PAGE)
			f->n++;
	}
	return 1;
}

/* The most pages of r other than its middle one present after emptying r
 * and reading that one, over 5 tries (a fault now and then finds its page
 * busy and maps it alone); -1 when pagemap is unreadable. */
static int others_after_one_read(struct range r)
{
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC), most = -1;
	uint64_t mid = r.lo + (r.hi - r.lo) / PAGE / 2 * PAGE;
	for (int t = 0; t < 5 && pm >= 0; t++) {
		if (madvise((void *)(uintptr_t)r.lo, r.hi - r.lo, MADV_DONTNEED) < 0)
			break;
		volatile char c = *(volatile char *)(uintptr_t)mid;
		(void)c;
		int n = 0;
		for (uint64_t p = r.lo; p < r.hi; p += PAGE) {
			uint64_t e = 0;
			if (pread(pm, &e, 8, (off_t)(p / PAGE * 8)) != 8) {
				close(pm);
				return -1;
			}
			n += p != mid && (e >> 63);
		}
		most = n > most ? n : most;
	}
	if (pm >= 0)
		close(pm);
	return most;
}

static int zydis_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	return info->dlpi_name && strstr(info->dlpi_name, "libZydis") != NULL;
}

static int decoder_loaded(void)
{
	return dl_iterate_phdr(zydis_cb, NULL);
}

static void *nothing(void *arg)
{
	return arg;
}

static int check(const char *who, const char *name, int eh, int profiled, int print);

/* who's checks, again every 100 ms until they pass or 5 s go by; then
 * once more, printed. */
static int profiled_checks(const char *who)
{
	pthread_t th;
	if (pthread_create(&th, NULL, nothing, NULL) != 0 || pthread_join(th, NULL) != 0)
		return 1;
	for (int i = 0; i < 50; i++) {
		if (!(check(who, NULL, 1, 1, 0) | check(who, "libZydis", 0, 1, 0)))
			break;
		struct timespec ts = {0, 100000000};
		nanosleep(&ts, NULL);
	}
	return check(who, NULL, 1, 1, 1) | check(who, "libZydis", 0, 1, 1);
}

static int check(const char *who, const char *name, int eh, int profiled, int print)
{
	struct find f = {name, eh, {{0, 0}}, 0};
	dl_iterate_phdr(find_one, &f);
	if (f.n == 0) {
		printf("%s %s: no such range\n", who, name ? name : "unwind tables");
		return 1;
	}
	int bad = 0;
	for (int i = 0; i < f.n; i++) {
		int others = others_after_one_read(f.r[i]);
		if (print)
			printf("%s %s %lu %d\n", who, name ? name : "unwind_tables",
			       (unsigned long)((f.r[i].hi - f.r[i].lo) / PAGE), others);
		bad |= others < 0 || (profiled ? others != 0 : others == 0);
	}
	return bad;
}

int main(int argc, char **argv)
{
	int profiled = argc > 1 && strcmp(argv[1], "profiled") == 0;
	int sum = 0;
	for (unsigned i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		sum += fns[i]((int)i);
	long u = syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* UFFD_USER_MODE_ONLY */);
	struct uffdio_api api = {.api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC};
	if (u < 0 || ioctl((int)u, UFFDIO_API, &api) < 0) {
		printf("SKIP: no userfaultfd with UFFD_FEATURE_WP_ASYNC (Linux 6.7) here\n");
		return 77;
	}
	close((int)u);
	if (!profiled) {
		struct find f = {NULL, 1, {{0, 0}}, 0};
		dl_iterate_phdr(find_one, &f);
		if (f.n == 1 && others_after_one_read(f.r[0]) == 0) {
			printf("SKIP: a read fault maps one page here unregistered: no fault-around\n");
			return 77;
		}
		return check("native", NULL, 1, 0, 1);
	}
	/* The runtime loads the decoder at a tick (deps.h), the first a CPU
	 * second in at WITCH_RATE=1: this program's own loop until it is
	 * there, for up to 3 s of CPU. */
	volatile unsigned long spin = 0;
	for (clock_t end = clock() + 3 * CLOCKS_PER_SEC; !decoder_loaded() && clock() < end;)
		for (int i = 0; i < 1000000; i++)
			spin += (unsigned long)i;
	int bad = profiled_checks("parent");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int child_bad = profiled_checks("child");
		fflush(stdout);
		_exit(child_bad);
	}
	int status = -1;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		bad = 1;
	printf("checksum %d\n", sum);
	return bad;
}
