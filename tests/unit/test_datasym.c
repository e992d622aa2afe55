/* test_datasym: naming static and TLS data by the loaded modules' ELF
 * symbols (datasym.h).
 *
 * The executable's own data (.data, .bss, .rodata, a file-local array,
 * unnamed data in .data, .tdata, .tbss), a library linked at start
 * (datasym/lib_start.c: a global, a TLS array) and two dlopen'd after
 * datasym_init (datasym/lib_dlopen.c: a global and dynamic TLS, not
 * named; lib_dlopen_tls.c: initial-exec TLS, static, named).  TLS from the
 * main thread and a second one.  Built twice: PIE (test_datasym) and not
 * (test_datasym_nopie, -DDATASYM_NOPIE).  Then dlopen/dlclose with
 * datasym_refresh in one thread while another looks up. */
#include "check.h"
#include "witch/datasym.h"

#include <asm/prctl.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int ds_data[4] = {1, 2, 3, 4};
long ds_bss[16];
const char ds_rodata[40] = "read-only, in .rodata";
static short ds_local[10] = {5, 6};
__thread int ds_tls_init[8] = {1};
__thread char ds_tls_zero[100];
/* Data no STT_OBJECT names: a plain label (STT_NOTYPE) in .data. */
__asm__(".data\n.balign 16\n.globl ds_blob\nds_blob:\n.zero 48\n.previous\n");
extern char ds_blob[];
/* Symbols as hand-written code and linkers leave them: objects inside
 * another, one at its start (the outer names them); names of one object
 * (fewer leading underscores first, even weak and longer, then global
 * over weak); a zero-size object (it names its address only). */
__asm__(".data\n.balign 16\n"
	".globl ds_head\n.type ds_head, @object\n.size ds_head, 8\n"
	".globl ds_outer\n.type ds_outer, @object\n.size ds_outer, 64\nds_head:\nds_outer:\n.zero 16\n"
	".globl ds_inner\n.type ds_inner, @object\n.size ds_inner, 8\nds_inner:\n.zero 48\n"
	".globl __dsal\n.type __dsal, @object\n.size __dsal, 24\n"
	".weak ds_alias\n.type ds_alias, @object\n.size ds_alias, 24\n__dsal:\nds_alias:\n.zero 24\n"
	".weak ds_aweak\n.type ds_aweak, @object\n.size ds_aweak, 8\n"
	".globl ds_bglob\n.type ds_bglob, @object\n.size ds_bglob, 8\nds_aweak:\nds_bglob:\n.zero 8\n"
	".globl ds_point\n.type ds_point, @object\n.size ds_point, 0\nds_point:\n.zero 8\n"
	".previous\n");
extern char ds_head[], ds_outer[], ds_inner[], ds_alias[], ds_bglob[], ds_point[];

/* Through functions: a direct reference would copy the library's data
 * into the executable (a copy relocation). */
int *dsa_global_addr(void);
long *dsa_tls_addr(void);

extern char **environ;

#define LIB_START "libdatasym_start.so"

static char exe_path[4096];

static uint64_t thread_pointer(void)
{
	uint64_t fs = 0;
	syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
	return fs;
}

static uint64_t u(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static int ends_with(const char *s, const char *tail)
{
	size_t ls = strlen(s), lt = strlen(tail);
	return ls >= lt && strcmp(s + ls - lt, tail) == 0;
}

/* What the loader says of a module, independently of datasym. */
struct mod_info {
	const char *tail; /* "" for the executable */
	uint64_t base;
	uint64_t tls_data;
	int found;
};

static int mod_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct mod_info *m = arg;
	int is_exe = info->dlpi_name[0] == 0;
	if (m->found || (m->tail[0] ? !ends_with(info->dlpi_name, m->tail) : !is_exe))
		return 0;
	m->found = 1;
	m->base = info->dlpi_addr;
	m->tls_data = u(info->dlpi_tls_data);
	return 1;
}

static struct mod_info mod(const char *tail)
{
	struct mod_info m = {.tail = tail};
	dl_iterate_phdr(mod_cb, &m);
	return m;
}

/* One static lookup and what it must give.  other: the address is past
 * the symbol: no hit, or a hit on some other symbol. */
struct srow {
	int line;
	uint64_t addr;
	int rc;
	const char *name;
	uint64_t start, size;
	const char *module; /* a tail of the hit's module path */
	int other;
};

#define HIT(a, nm, st, sz, mo) {__LINE__, u(a), 0, nm, u(st), sz, mo, 0}
#define PAST(a, nm, st) {__LINE__, u(a), 0, nm, u(st), 0, NULL, 1}
#define MISS(a) {__LINE__, u(a), -ENOENT, NULL, 0, 0, NULL, 0}
#define UNNAMED(a, mo) {__LINE__, u(a), 0, NULL, 0, 0, mo, 0}

static void check_static(const struct srow *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct datasym_hit h = {0};
		int rc = datasym_static(r[i].addr, &h);
		if (r[i].other) {
			CHECK(r[i].line, rc != 0 || !h.name || strcmp(h.name, r[i].name) != 0 ||
						 h.start != r[i].start,
			      "one past %s: still %s", r[i].name, h.name);
			continue;
		}
		CHECK(r[i].line, rc == r[i].rc, "rc %d, want %d (name %s)", rc, r[i].rc,
		      rc == 0 ? (h.name ? h.name : "(none)") : "-");
		if (rc != 0 || r[i].rc != 0)
			continue;
		CHECK(r[i].line, h.module && ends_with(h.module, r[i].module), "module %s, want %s",
		      h.module, r[i].module);
		if (!r[i].name) {
			/* The section (or segment) holding it. */
			CHECK(r[i].line, h.name == NULL, "name %s, want none", h.name);
			CHECK(r[i].line, h.size > 0 && h.start <= r[i].addr && r[i].addr - h.start < h.size,
			      "section [%#llx, +%llu) does not hold %#llx", (unsigned long long)h.start,
			      (unsigned long long)h.size, (unsigned long long)r[i].addr);
			continue;
		}
		CHECK(r[i].line, h.name && strcmp(h.name, r[i].name) == 0, "name %s, want %s", h.name,
		      r[i].name);
		CHECK(r[i].line, h.start == r[i].start, "start %#llx, want %#llx",
		      (unsigned long long)h.start, (unsigned long long)r[i].start);
		CHECK(r[i].line, h.size == r[i].size, "size %llu, want %llu",
		      (unsigned long long)h.size, (unsigned long long)r[i].size);
	}
}

/* The TLS lookups of the calling thread; the offsets found go to off[]
 * (thread-invariant: compared across threads by the caller). */
struct trow {
	int line;
	uint64_t addr;
	int rc;
	const char *name;
	uint64_t start, size; /* start: the symbol's offset in its module's block */
	const char *module;
	int other;
};

static void check_tls(const char *who, uint64_t off[3])
{
	uint64_t tp = thread_pointer();
	struct mod_info exe = mod(""), lib = mod(LIB_START);
	char *ti = (char *)ds_tls_init, *tz = ds_tls_zero;
	char *ta = (char *)dsa_tls_addr();
	int stack_var;

	CHECK(__LINE__, exe.tls_data && lib.tls_data, "%s: no TLS block from the loader", who);
	struct trow rows[] = {
		{__LINE__, u(ti), 0, "ds_tls_init", u(ti) - exe.tls_data, sizeof(ds_tls_init), exe_path, 0},
		{__LINE__, u(ti + sizeof(ds_tls_init) - 1), 0, "ds_tls_init", u(ti) - exe.tls_data,
		 sizeof(ds_tls_init), exe_path, 0},
		{__LINE__, u(ti + sizeof(ds_tls_init)), 0, "ds_tls_init", u(ti) - exe.tls_data, 0, NULL, 1},
		{__LINE__, u(tz), 0, "ds_tls_zero", u(tz) - exe.tls_data, sizeof(ds_tls_zero), exe_path, 0},
		{__LINE__, u(tz + 99), 0, "ds_tls_zero", u(tz) - exe.tls_data, sizeof(ds_tls_zero), exe_path, 0},
		{__LINE__, u(tz + 100), 0, "ds_tls_zero", u(tz) - exe.tls_data, 0, NULL, 1},
		{__LINE__, u(ta), 0, "dsa_tls", u(ta) - lib.tls_data, 3 * sizeof(long), LIB_START, 0},
		{__LINE__, u(ta + 3 * sizeof(long) - 1), 0, "dsa_tls", u(ta) - lib.tls_data,
		 3 * sizeof(long), LIB_START, 0},
		{__LINE__, u(ta + 3 * sizeof(long)), 0, "dsa_tls", u(ta) - lib.tls_data, 0, NULL, 1},
		{__LINE__, u(ds_data), -ENOENT, NULL, 0, 0, NULL, 0},
		{__LINE__, u(&stack_var), -ENOENT, NULL, 0, 0, NULL, 0},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct trow *r = &rows[i];
		struct datasym_hit h = {0};
		int rc = datasym_tls(r->addr, tp, &h);
		if (r->other) {
			CHECK(r->line, rc != 0 || !h.name || strcmp(h.name, r->name) != 0 || h.start != r->start,
			      "%s: one past %s: still %s", who, r->name, h.name);
			continue;
		}
		CHECK(r->line, rc == r->rc, "%s: rc %d, want %d", who, rc, r->rc);
		if (rc != 0 || r->rc != 0)
			continue;
		CHECK(r->line, h.name && strcmp(h.name, r->name) == 0, "%s: name %s, want %s", who, h.name,
		      r->name);
		CHECK(r->line, h.start == r->start, "%s: offset %#llx, want %#llx", who,
		      (unsigned long long)h.start, (unsigned long long)r->start);
		CHECK(r->line, h.size == r->size, "%s: size %llu, want %llu", who,
		      (unsigned long long)h.size, (unsigned long long)r->size);
		CHECK(r->line, h.module && ends_with(h.module, r->module), "%s: module %s, want %s", who,
		      h.module, r->module);
	}
	off[0] = rows[0].start;
	off[1] = rows[3].start;
	off[2] = rows[6].start;
	/* TLS is not static data. */
	struct datasym_hit h;
	CHECK(__LINE__, datasym_static(u(ti), &h) == -ENOENT, "%s: TLS address is static data", who);
}

struct second {
	uint64_t off[3];
	uint64_t addr;
	int rc_main_tp; /* this thread's TLS looked up with the main thread's tp */
	uint64_t main_tp;
};

static void *second_main(void *arg)
{
	struct second *s = arg;
	struct datasym_hit h;
	check_tls("second thread", s->off);
	s->addr = u(ds_tls_init);
	s->rc_main_tp = datasym_tls(u(ds_tls_init), s->main_tp, &h);
	return NULL;
}

static void test_tls(void)
{
	uint64_t off[3];
	check_tls("main thread", off);
	struct second s = {.main_tp = thread_pointer()};
	pthread_t th;
	if (pthread_create(&th, NULL, second_main, &s) != 0) {
		FAIL(__LINE__, "pthread_create");
		return;
	}
	pthread_join(th, NULL);
	CHECK(__LINE__, s.addr != u(ds_tls_init), "the second thread's ds_tls_init is the main one's");
	for (int i = 0; i < 3; i++)
		CHECK(__LINE__, s.off[i] == off[i], "offset %d: %#llx in the second thread, %#llx in main", i,
		      (unsigned long long)s.off[i], (unsigned long long)off[i]);
	CHECK(__LINE__, s.rc_main_tp == -ENOENT, "another thread's TLS under main's tp: rc %d",
	      s.rc_main_tp);
}

static void test_static(void *lib)
{
	int stack_var = 0;
	int *ga = dsa_global_addr();
	double *gb = lib ? dlsym(lib, "dsb_global") : NULL;
	void *anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *heap = malloc(64);
	const char *rodata = ds_rodata;
	__asm__("" : "+r"(rodata)); /* the array's address, not a folded copy */

	if (!gb) {
		FAIL(__LINE__, "dsb_global: %s", dlerror());
		return;
	}
	struct srow rows[] = {
		HIT(ds_data, "ds_data", ds_data, sizeof(ds_data), exe_path),
		HIT((char *)ds_data + sizeof(ds_data) - 1, "ds_data", ds_data, sizeof(ds_data), exe_path),
		PAST((char *)ds_data + sizeof(ds_data), "ds_data", ds_data),
		HIT(ds_bss, "ds_bss", ds_bss, sizeof(ds_bss), exe_path),
		HIT((char *)ds_bss + sizeof(ds_bss) - 1, "ds_bss", ds_bss, sizeof(ds_bss), exe_path),
		PAST((char *)ds_bss + sizeof(ds_bss), "ds_bss", ds_bss),
		HIT(rodata, "ds_rodata", rodata, sizeof(ds_rodata), exe_path),
		HIT(rodata + sizeof(ds_rodata) - 1, "ds_rodata", rodata, sizeof(ds_rodata), exe_path),
		PAST(rodata + sizeof(ds_rodata), "ds_rodata", rodata),
		HIT(&ds_local[0], "ds_local", ds_local, sizeof(ds_local), exe_path),
		HIT((char *)ds_local + sizeof(ds_local) - 1, "ds_local", ds_local, sizeof(ds_local), exe_path),
		PAST((char *)ds_local + sizeof(ds_local), "ds_local", ds_local),
		HIT(ds_head, "ds_outer", ds_outer, 64, exe_path),
		HIT(ds_inner, "ds_outer", ds_outer, 64, exe_path),
		HIT(ds_outer + 63, "ds_outer", ds_outer, 64, exe_path),
		HIT(ds_alias, "ds_alias", ds_alias, 24, exe_path),
		HIT(ds_alias + 23, "ds_alias", ds_alias, 24, exe_path),
		HIT(ds_bglob, "ds_bglob", ds_bglob, 8, exe_path),
		HIT(ds_point, "ds_point", ds_point, 0, exe_path),
		UNNAMED(ds_point + 1, exe_path),
		UNNAMED(ds_blob, exe_path),
		UNNAMED(ds_blob + 47, exe_path),
		/* A copy relocation: "environ@GLIBC_2.2.5" in the executable's .symtab. */
		HIT(&environ, "environ", &environ, sizeof(environ), exe_path),
		HIT(ga, "dsa_global", ga, 5 * sizeof(int), LIB_START),
		HIT((char *)ga + 5 * sizeof(int) - 1, "dsa_global", ga, 5 * sizeof(int), LIB_START),
		PAST((char *)ga + 5 * sizeof(int), "dsa_global", ga),
		HIT(gb, "dsb_global", gb, 6 * sizeof(double), DATASYM_LIB),
		HIT((char *)gb + 6 * sizeof(double) - 1, "dsb_global", gb, 6 * sizeof(double), DATASYM_LIB),
		PAST((char *)gb + 6 * sizeof(double), "dsb_global", gb),
		MISS(&stack_var),
		MISS(anon),
		MISS(heap),
		MISS(&check_static), /* code is not data */
		MISS(0),
		MISS((void *)~(uintptr_t)0),
	};
	check_static(rows, sizeof(rows) / sizeof(rows[0]));
	munmap(anon, 4096);
	free(heap);
}

/* A stripped library's exported data, named from the .dynsym its loaded
 * image holds (elfdata reads it there, not from the file); its static
 * data has no symbol left, so it is the module's, unnamed. */
static void test_stripped(void)
{
	struct datasym_stats before, after;
	datasym_stats(&before);
	void *lib = dlopen(DATASYM_LIB_STRIPPED, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		FAIL(__LINE__, "dlopen %s: %s", DATASYM_LIB_STRIPPED, dlerror());
		return;
	}
	datasym_refresh();
	datasym_stats(&after);
	CHECK(__LINE__, after.in_image == before.in_image + 1,
	      "the stripped library's .dynsym read in its image: %llu -> %llu",
	      (unsigned long long)before.in_image, (unsigned long long)after.in_image);
	long *ex = dlsym(lib, "dss_exported");
	long *(*hidden_fn)(void) = (long *(*)(void))dlsym(lib, "dss_hidden_addr");
	long *hid = hidden_fn ? hidden_fn() : NULL;
	if (!ex || !hid) {
		FAIL(__LINE__, "dss_exported or dss_hidden_addr: %s", dlerror());
		dlclose(lib);
		return;
	}
	struct srow rows[] = {
		HIT(ex, "dss_exported", ex, 7 * sizeof(long), DATASYM_LIB_STRIPPED),
		HIT((char *)ex + 7 * sizeof(long) - 1, "dss_exported", ex, 7 * sizeof(long),
		    DATASYM_LIB_STRIPPED),
		PAST((char *)ex + 7 * sizeof(long), "dss_exported", ex),
		UNNAMED(hid, DATASYM_LIB_STRIPPED),
	};
	check_static(rows, sizeof(rows) / sizeof(rows[0]));
	dlclose(lib);
	datasym_refresh();
}

/* The section named `name` of the ELF file at path: 0, or -1. */
static int section_of(const char *path, const char *name, Elf64_Shdr *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf64_Ehdr eh;
	Elf64_Shdr sh[64], strsh;
	char names[4096];
	int rc = -1;
	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) == sizeof(eh) && eh.e_shnum <= 64 &&
	    pread(fd, sh, eh.e_shnum * sizeof(sh[0]), (off_t)eh.e_shoff) == (ssize_t)(eh.e_shnum * sizeof(sh[0]))) {
		strsh = sh[eh.e_shstrndx];
		ssize_t n = pread(fd, names, sizeof(names) - 1, (off_t)strsh.sh_offset);
		names[n > 0 ? n : 0] = 0;
		for (int i = 0; i < eh.e_shnum; i++)
			if (sh[i].sh_name < (uint32_t)(n > 0 ? n : 0) && strcmp(names + sh[i].sh_name, name) == 0) {
				*out = sh[i];
				rc = 0;
			}
	}
	close(fd);
	return rc;
}

static int page_present(uint64_t addr)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = pread(fd, &e, sizeof(e), (off_t)(addr / 4096 * sizeof(e)));
	close(fd);
	return n == sizeof(e) ? (int)(e >> 63) : -1;
}

/* A .dynsym read in place is given back page by page (it no longer counts
 * as resident), except a page the program made writable and changed:
 * that one keeps the change (giving it back would revert it to the
 * file's). */
static void test_release(void)
{
	Elf64_Shdr ds;
	Dl_info di;
	void *lib = dlopen(DATASYM_LIB_MANY, RTLD_NOW | RTLD_LOCAL);
	long *first = lib ? dlsym(lib, "dsm_100") : NULL;
	if (!first || section_of(DATASYM_LIB_MANY, ".dynsym", &ds) < 0 || !dladdr(first, &di)) {
		FAIL(__LINE__, "%s: its .dynsym or dsm_100 not found (%s)", DATASYM_LIB_MANY, dlerror());
		if (lib)
			dlclose(lib);
		return;
	}
	uint64_t lo = ((uint64_t)(uintptr_t)di.dli_fbase + ds.sh_addr + 4095) & ~4095ull;
	uint64_t hi = ((uint64_t)(uintptr_t)di.dli_fbase + ds.sh_addr + ds.sh_size) & ~4095ull;
	CHECK(__LINE__, hi >= lo + 2 * 4096, "%s's .dynsym holds %llu whole pages, want 2 or more",
	      DATASYM_LIB_MANY, (unsigned long long)((hi - lo) / 4096));
	if (hi < lo + 2 * 4096) {
		dlclose(lib);
		return;
	}
	/* Patch the first whole page (an st_other byte: nothing reads its
	 * high bits), touch the second. */
	volatile unsigned char *patched = (unsigned char *)(uintptr_t)lo + 5 * 24 + 5;
	volatile const unsigned char *other = (const unsigned char *)(uintptr_t)(lo + 4096);
	unsigned char was = *patched;
	(void)*other;
	CHECK(__LINE__, mprotect((void *)(uintptr_t)lo, 4096, PROT_READ | PROT_WRITE) == 0, "mprotect: %d", errno);
	*patched = (unsigned char)(was | 0x80);
	mprotect((void *)(uintptr_t)lo, 4096, PROT_READ);
	CHECK(__LINE__, page_present(lo + 4096) == 1, "the touched page is not resident before the walk");

	datasym_refresh();
	CHECK(__LINE__, *patched == (unsigned char)(was | 0x80), "the patched page was given back: %#x",
	      *patched);
	CHECK(__LINE__, page_present(lo + 4096) == 0, "a page read in place is still resident");
	struct datasym_hit h;
	CHECK(__LINE__, datasym_static((uint64_t)(uintptr_t)first, &h) == 0 && h.name &&
				strcmp(h.name, "dsm_100") == 0,
	      "dsm_100 not named from the read table");
	mprotect((void *)(uintptr_t)lo, 4096, PROT_READ | PROT_WRITE);
	*patched = was;
	mprotect((void *)(uintptr_t)lo, 4096, PROT_READ);
	dlclose(lib);
	datasym_refresh();
}

/* datasym_refresh_due (the allocation path's refresh, where no flusher
 * thread refreshes): at most one walk a DATASYM_DUE_NS; a library
 * dlopen'd just after one is named at the first call past the interval. */
static void test_due(void)
{
	struct datasym_hit h;
	datasym_refresh_due(); /* a walk now, or one was less than DUE ago */
	void *lib = dlopen(DATASYM_LIB_STRIPPED, RTLD_NOW | RTLD_LOCAL);
	long *ex = lib ? dlsym(lib, "dss_exported") : NULL;
	if (!ex) {
		FAIL(__LINE__, "dlopen %s: %s", DATASYM_LIB_STRIPPED, dlerror());
		return;
	}
	datasym_refresh_due();
	CHECK(__LINE__, datasym_static((uint64_t)(uintptr_t)ex, &h) == -ENOENT,
	      "named by a second walk within the interval");
	struct timespec ts = {0, (long)(DATASYM_DUE_NS + 50000000ull)};
	nanosleep(&ts, NULL);
	datasym_refresh_due();
	CHECK(__LINE__, datasym_static((uint64_t)(uintptr_t)ex, &h) == 0 && h.name &&
				strcmp(h.name, "dss_exported") == 0,
	      "not named by the walk past the interval");
	dlclose(lib);
	datasym_refresh();
}

/* The executable is what the build says: PIE at a nonzero base, or not. */
static void test_exe_kind(void)
{
	struct mod_info exe = mod("");
	CHECK(__LINE__, exe.found, "no executable in dl_iterate_phdr");
#ifdef DATASYM_NOPIE
	CHECK(__LINE__, exe.base == 0, "non-PIE build loaded at %#llx", (unsigned long long)exe.base);
#else
	CHECK(__LINE__, exe.base != 0, "PIE build loaded at 0");
#endif
}

/* A library dlopen'd after datasym_init with initial-exec TLS: its block
 * is in the static area (the loader puts it there at dlopen), though the
 * loader gives the indexing thread no dlpi_tls_data for it yet.  Its one
 * variable is at offset 0; looked up from this thread and a new one. */
static long *(*dsc_addr_fn)(void);

struct tls_probe {
	int rc;
	struct datasym_hit h;
	uint64_t addr;
};

static void tls_probe(struct tls_probe *p)
{
	char *t = (char *)dsc_addr_fn();
	p->addr = u(t);
	p->rc = datasym_tls(u(t + 9), thread_pointer(), &p->h);
}

static void *tls_probe_main(void *arg)
{
	tls_probe(arg);
	return NULL;
}

/* The library is opened through a symlink, as a program opens one by its
 * soname link (libsqlite3.so.0 -> libsqlite3.so.0.8.6): its data is named
 * by the file itself, as its frames are (profile.c) and as the oracle
 * names it, not by the link. */
static void test_dlopen_static_tls(void)
{
	char dir[] = "/tmp/witch-datasym.XXXXXX", alias[sizeof(dir) + 32];
	if (!mkdtemp(dir)) {
		FAIL(__LINE__, "mkdtemp");
		return;
	}
	snprintf(alias, sizeof(alias), "%s/libalias_tls.so.1", dir);
	CHECK(__LINE__, symlink(DATASYM_LIB_TLS, alias) == 0, "symlink %s", alias);
	void *lib = dlopen(alias, RTLD_NOW | RTLD_LOCAL);
	if (lib)
		datasym_refresh(); /* reads the module through the link */
	unlink(alias);
	rmdir(dir);
	if (!lib) {
		FAIL(__LINE__, "dlopen %s: %s", alias, dlerror());
		return;
	}
	dsc_addr_fn = (long *(*)(void))dlsym(lib, "dsc_tls_addr");
	if (!dsc_addr_fn) {
		FAIL(__LINE__, "dsc_tls_addr: %s", dlerror());
		return;
	}
	struct tls_probe p[2];
	pthread_t th;
	tls_probe(&p[0]);
	if (pthread_create(&th, NULL, tls_probe_main, &p[1]) != 0) {
		FAIL(__LINE__, "pthread_create");
		return;
	}
	pthread_join(th, NULL);
	CHECK(__LINE__, p[0].addr != p[1].addr, "one dsc_tls in two threads");
	for (int i = 0; i < 2; i++) {
		struct datasym_hit *h = &p[i].h;
		CHECK(__LINE__, p[i].rc == 0 && h->name && strcmp(h->name, "dsc_tls") == 0 &&
					h->start == 0 && h->size == 4 * sizeof(long) &&
					ends_with(h->module, "libdatasym_dlopen_tls.so"),
		      "thread %d: dsc_tls: rc %d name %s offset %#llx size %llu module %s", i,
		      p[i].rc, p[i].rc == 0 ? h->name : "-", (unsigned long long)h->start,
		      (unsigned long long)h->size, p[i].rc == 0 ? h->module : "-");
	}
	uint64_t t = p[0].addr;
	dlclose(lib);
	datasym_refresh();
	struct datasym_hit h;
	CHECK(__LINE__, datasym_tls(t + 9, thread_pointer(), &h) == -ENOENT,
	      "dlclose'd library's TLS still named");
}

/* ---- dlopen/dlclose against concurrent lookups ---- */

static uint64_t race_addr; /* dsb_global of the latest load, 0 before */
static int race_done;
static uint64_t race_lookups, race_hits;

static void *race_reader(void *arg)
{
	(void)arg;
	uint64_t tp = thread_pointer();
	while (!__atomic_load_n(&race_done, __ATOMIC_ACQUIRE)) {
		struct datasym_hit h;
		int rc = datasym_static(u(ds_data), &h);
		CHECK(__LINE__, rc == 0 && h.name && strcmp(h.name, "ds_data") == 0 && h.start == u(ds_data),
		      "ds_data during dlopen/dlclose: rc %d name %s", rc, rc == 0 ? h.name : "-");
		rc = datasym_tls(u(&ds_tls_zero[5]), tp, &h);
		CHECK(__LINE__, rc == 0 && h.name && strcmp(h.name, "ds_tls_zero") == 0,
		      "ds_tls_zero during dlopen/dlclose: rc %d", rc);
		uint64_t a = __atomic_load_n(&race_addr, __ATOMIC_ACQUIRE);
		if (!a)
			continue;
		/* Loaded, unloaded or loaded again: no hit, or the library's. */
		rc = datasym_static(a + 8, &h);
		__atomic_add_fetch(&race_lookups, 1, __ATOMIC_RELAXED);
		if (rc != 0) {
			CHECK(__LINE__, rc == -ENOENT, "rc %d", rc);
			continue;
		}
		__atomic_add_fetch(&race_hits, 1, __ATOMIC_RELAXED);
		CHECK(__LINE__, h.module && strcmp(h.module, DATASYM_LIB) == 0, "module %s", h.module);
		CHECK(__LINE__, h.start <= a + 8 && a + 8 - h.start < h.size, "hit [%#llx, +%llu) misses",
		      (unsigned long long)h.start, (unsigned long long)h.size);
		CHECK(__LINE__, !h.name || strcmp(h.name, "dsb_global") == 0, "name %s", h.name);
	}
	return NULL;
}

static void test_race(void)
{
	enum { LOADS = 1000 };
	pthread_t th;
	struct datasym_stats before, after;

	if (pthread_create(&th, NULL, race_reader, NULL) != 0) {
		FAIL(__LINE__, "pthread_create");
		return;
	}
	for (int i = 0; i < LOADS; i++) {
		void *h = dlopen(DATASYM_LIB, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			FAIL(__LINE__, "dlopen: %s", dlerror());
			break;
		}
		datasym_refresh();
		if (i == 0)
			datasym_stats(&before);
		__atomic_store_n(&race_addr, u(dlsym(h, "dsb_global")), __ATOMIC_RELEASE);
		for (volatile int k = 0; k < 2000; k++)
			;
		dlclose(h);
		datasym_refresh();
	}
	__atomic_store_n(&race_done, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	datasym_stats(&after);
	CHECK(__LINE__, race_lookups > 0, "the reader never looked the library up");
	/* One file index for every load: reloading costs no memory. */
	CHECK(__LINE__, after.bytes == before.bytes && after.files == before.files,
	      "memory grew over reloads: %llu -> %llu bytes, %llu -> %llu files",
	      (unsigned long long)before.bytes, (unsigned long long)after.bytes,
	      (unsigned long long)before.files, (unsigned long long)after.files);
	CHECK(__LINE__, after.modules >= before.modules + LOADS - 1, "modules %llu -> %llu",
	      (unsigned long long)before.modules, (unsigned long long)after.modules);
	fprintf(stderr, "race: %llu lookups of the reloaded library, %llu hits\n",
		(unsigned long long)race_lookups, (unsigned long long)race_hits);
}

/* The modules loaded at start are read at the first lookup in them, which
 * a signal handler makes as a rule: their files' headers, sections and
 * symbols were most of every process's start-up (libc's debug symbols
 * ~2 ms, the rest ~0.9 ms here). */
static struct datasym_hit lazy_hit;
static int lazy_rc = 1;

static void lazy_handler(int sig)
{
	(void)sig;
	lazy_rc = datasym_static(u(&ds_data[3]), &lazy_hit);
}

static void test_lazy(void)
{
	struct datasym_stats st;
	datasym_stats(&st);
	CHECK(__LINE__, st.modules == 0 && st.files == 0 && st.symbols == 0,
	      "files read before any lookup: %llu modules, %llu files, %llu symbols",
	      (unsigned long long)st.modules, (unsigned long long)st.files,
	      (unsigned long long)st.symbols);
	struct sigaction sa = {.sa_handler = lazy_handler}, old;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, &old) < 0) {
		FAIL(__LINE__, "sigaction");
		return;
	}
	raise(SIGUSR1);
	sigaction(SIGUSR1, &old, NULL);
	CHECK(__LINE__, lazy_rc == 0 && lazy_hit.name && strcmp(lazy_hit.name, "ds_data") == 0 &&
				lazy_hit.start == u(ds_data),
	      "first lookup, in a handler: rc %d name %s", lazy_rc,
	      lazy_rc == 0 && lazy_hit.name ? lazy_hit.name : "-");
	datasym_stats(&st);
	CHECK(__LINE__, st.modules == 1 && st.files == 1 && st.symbols > 0,
	      "the first lookup read %llu modules, %llu files, %llu symbols (want the executable's)",
	      (unsigned long long)st.modules, (unsigned long long)st.files,
	      (unsigned long long)st.symbols);
}

int main(void)
{
	ssize_t len = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
	if (len <= 0)
		return 77;
	exe_path[len] = 0;
	test_exe_kind();

	int rc = datasym_init();
	CHECK(__LINE__, rc == 0, "datasym_init: %d", rc);
	if (rc != 0)
		return 1;
	test_lazy();

	/* Loaded after the index: unknown until datasym_refresh. */
	void *lib = dlopen(DATASYM_LIB, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		FAIL(__LINE__, "dlopen %s: %s", DATASYM_LIB, dlerror());
		return 1;
	}
	struct datasym_hit h;
	void *gb = dlsym(lib, "dsb_global");
	CHECK(__LINE__, datasym_static(u(gb), &h) == -ENOENT, "dlopen'd library known before refresh");
	datasym_refresh();
	/* Its TLS is dynamic: a malloc'd block, neither static TLS nor data. */
	int *(*dsb_tls_fn)(void) = (int *(*)(void))dlsym(lib, "dsb_tls_addr");
	int *dt = dsb_tls_fn ? dsb_tls_fn() : NULL;
	CHECK(__LINE__, dt && datasym_tls(u(dt), thread_pointer(), &h) == -ENOENT,
	      "dynamic TLS named as static: %s", dt ? h.name : "(no dsb_tls)");
	CHECK(__LINE__, dt && datasym_static(u(dt), &h) == -ENOENT, "dynamic TLS named as data");
	test_static(lib);
	test_tls();
	test_dlopen_static_tls();
	test_stripped();
	test_release();
	test_due();

	/* Unloaded: marked dead by the next refresh (its memory is not read). */
	dlclose(lib);
	datasym_refresh();
	CHECK(__LINE__, datasym_static(u(gb), &h) == -ENOENT, "dlclose'd library still named");
	CHECK(__LINE__, datasym_static(u(ds_data), &h) == 0, "ds_data lost after dlclose");

	test_race();

	struct datasym_stats st;
	datasym_stats(&st);
	fprintf(stderr, "datasym: %llu module loads, %llu unindexed, %llu files, %llu symbols, %llu bytes\n",
		(unsigned long long)st.modules, (unsigned long long)st.unindexed,
		(unsigned long long)st.files, (unsigned long long)st.symbols,
		(unsigned long long)st.bytes);
	return check_failures != 0;
}
