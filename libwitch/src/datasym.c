/* datasym: data symbols of the loaded modules (see datasym.h). */
#include "witch/datasym.h"
#include "witch/arena.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define DATASYM_ARENA (16u << 20)   /* symbols, names, paths of all files */
#define DATASYM_SLOTS 4096          /* module loads indexed at once (dead slots are reused) */
#define DS_RANGES 8                 /* data ranges per module; past it, the rest are not data */
#define DS_LOADS 16                 /* PT_LOADs a file may have to be indexed */
#define DS_TLS_SURPLUS (64u << 10) /* static TLS past the start modules' (glibc's surplus is ~2 KiB) */
#define DS_PROBE_MAX 64              /* modules with TLS one walk resolves; past it, unnamed */
#define DS_DEBUG_DIR "/usr/lib/debug/.build-id/"

struct ds_sym {
	uint64_t value; /* static: link-time address; tls: offset in the TLS segment */
	uint64_t size;
	const char *name;
};

struct ds_sec {
	uint64_t addr; /* static: link-time address; tls: offset in the TLS segment */
	uint64_t size;
};

struct ds_load {
	uint64_t vaddr, memsz, flags;
};

/* One file's index: immutable once a slot points to it, never freed. */
struct ds_file {
	struct ds_file *next; /* the writer's cache list */
	uint64_t dev, ino, fsize, mtime_ns;
	const char *path;
	const struct ds_sym *syms, *tsyms; /* static and TLS symbols, sorted */
	const struct ds_sec *secs, *tsecs; /* non-code SHF_ALLOC sections, sorted */
	uint32_t nsyms, ntsyms, nsecs, ntsecs;
	uint32_t nloads;
	struct ds_load loads[DS_LOADS]; /* to check the loaded image is this file */
};

/* What a lookup reads of a slot, word by word under the slot's sequence
 * count: every field a uint64_t. */
struct ds_body {
	uint64_t live;   /* 0: empty or unloaded */
	uint64_t base;   /* dlpi_addr */
	uint64_t lo, hi; /* bounds of the ranges, a lookup's first filter */
	uint64_t nranges;
	uint64_t range[DS_RANGES][2]; /* run-time [lo, hi) of the module's data */
	uint64_t file;   /* const struct ds_file * */
	uint64_t tls_static;
	uint64_t tls_off; /* int64_t: the block's start minus tp */
	uint64_t tls_size;
};

struct ds_slot {
	uint64_t seq; /* odd while the writer changes body */
	struct ds_body b;
	/* The writer's only. */
	const void *phdr;
	uint64_t seen; /* the last walk that found the module */
};

static struct arena ds_arena;
static struct ds_slot *ds_slots;
static uint32_t ds_nslots;       /* published with release after a slot is filled */
static struct ds_file *ds_files; /* writer's cache */
static pthread_mutex_t ds_lock = PTHREAD_MUTEX_INITIALIZER; /* writers only */
static uint64_t ds_gen;
static uint64_t ds_adds, ds_subs; /* the loader's counts at the last full walk */
static int ds_walked;
static struct datasym_stats ds_st;
static uint64_t ds_tls_bound; /* a static TLS block starts at most this far below tp */

static uint64_t ds_thread_pointer(void)
{
	uint64_t tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return tp;
}

static void ds_count(uint64_t *c, uint64_t n)
{
	__atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

/* ---- symbols and sections, in order ---- */

/* A symbol while its file is read: name points into the scratch's copy
 * of the string table. */
struct ds_cand {
	uint64_t value, size;
	const char *name;
	uint32_t tls;
	uint32_t rank; /* leading underscores << 2 | binding rank: lower names better */
};

/* A name less its symbol version: binutils writes a copy-relocated
 * `environ` as "environ@GLIBC_2.2.5" in .symtab (C and mangled C++ names
 * have no '@'). */
static size_t ds_name_len(const char *name)
{
	return strcspn(name, "@");
}

static int ds_cand_cmp(const struct ds_cand *a, const struct ds_cand *b)
{
	if (a->tls != b->tls)
		return a->tls < b->tls ? -1 : 1;
	if (a->value != b->value)
		return a->value < b->value ? -1 : 1;
	if (a->size != b->size) /* the outer symbol first */
		return a->size > b->size ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	size_t la = ds_name_len(a->name), lb = ds_name_len(b->name);
	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int ds_sec_cmp(const struct ds_sec *a, const struct ds_sec *b)
{
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->size > b->size ? -1 : a->size < b->size;
}

/* ---- sorting (not qsort: it may malloc) ---- */

static void ds_sift(struct ds_cand *v, size_t root, size_t n)
{
	struct ds_cand x = v[root];
	for (;;) {
		size_t child = 2 * root + 1;
		if (child >= n)
			break;
		if (child + 1 < n && ds_cand_cmp(&v[child], &v[child + 1]) < 0)
			child++;
		if (ds_cand_cmp(&x, &v[child]) >= 0)
			break;
		v[root] = v[child];
		root = child;
	}
	v[root] = x;
}

static void ds_sort_cands(struct ds_cand *v, size_t n)
{
	if (n < 2)
		return;
	for (size_t i = n / 2; i-- > 0;)
		ds_sift(v, i, n);
	for (size_t end = n - 1; end > 0; end--) {
		struct ds_cand t = v[0];
		v[0] = v[end];
		v[end] = t;
		ds_sift(v, 0, end);
	}
}

/* Sections are few (tens): insertion. */
static void ds_sort_secs(struct ds_sec *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct ds_sec x = v[i];
		size_t j = i;
		for (; j > 0 && ds_sec_cmp(&v[j - 1], &x) > 0; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* ---- reading a file ----
 *
 * pread into a prefaulted scratch buffer, not mmap: on the project's VM a
 * file mapping's page faults and unmap cost ~1 ms a file, and every
 * first touch of anonymous memory ~30 us a page (MAP_POPULATE: ~0.4 us).
 * The scratch lives for one walk. */

#define DS_PHDRS_MAX 64
#define DS_NOTES_MAX 4096
#define DS_POPULATE_STEP (64u << 10)

static struct {
	unsigned char *p;
	size_t size;
} ds_scratch;                 /* the writer's */
static size_t ds_populated;   /* arena bytes prefaulted */

static void ds_scratch_release(void)
{
	if (ds_scratch.p)
		munmap(ds_scratch.p, ds_scratch.size);
	ds_scratch.p = NULL;
	ds_scratch.size = 0;
}

/* At least size bytes of scratch; what it held is lost. */
static int ds_scratch_need(size_t size)
{
	if (size <= ds_scratch.size)
		return 0;
	size_t want = ds_scratch.size ? ds_scratch.size : (256u << 10);
	while (want < size)
		want *= 2;
	ds_scratch_release();
	void *p = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		       -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	ds_scratch.p = p;
	ds_scratch.size = want;
	return 0;
}

/* arena_alloc, the pages prefaulted a step at a time (one madvise, not a
 * fault a page; where the kernel lacks it, they fault in as written). */
static void *ds_alloc(size_t size)
{
	void *p = arena_alloc(&ds_arena, size);
	if (p && ds_arena.used > ds_populated) {
		size_t end = (ds_arena.used + DS_POPULATE_STEP - 1) & ~(size_t)(DS_POPULATE_STEP - 1);
		if (end > ds_arena.size)
			end = ds_arena.size;
		madvise(ds_arena.base + ds_populated, end - ds_populated, MADV_POPULATE_WRITE);
		ds_populated = end;
	}
	return p;
}

static int ds_pread(int fd, void *buf, uint64_t size, uint64_t off)
{
	unsigned char *b = buf;
	while (size) {
		ssize_t n = pread(fd, b, size, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		b += n;
		size -= (uint64_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* An ELF file being read; its section headers, once read, are at the
 * scratch's start (until the scratch is needed for more). */
struct ds_elf {
	int fd;
	uint64_t fsize;
	Elf64_Ehdr eh;
	uint64_t nsh;
};

static int ds_in_file(const struct ds_elf *e, uint64_t off, uint64_t size)
{
	return off <= e->fsize && size <= e->fsize - off;
}

static int ds_elf_open(int fd, struct ds_elf *e)
{
	struct stat st;
	memset(e, 0, sizeof(*e));
	e->fd = fd;
	if (fstat(fd, &st) < 0)
		return -errno;
	e->fsize = (uint64_t)st.st_size;
	if (!S_ISREG(st.st_mode) || e->fsize < sizeof(Elf64_Ehdr) ||
	    ds_pread(fd, &e->eh, sizeof(e->eh), 0) < 0)
		return -ENOEXEC;
	const Elf64_Ehdr *eh = &e->eh;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !ds_in_file(e, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
		return -ENOEXEC;
	return 0;
}

/* The section headers into the scratch; none is not an error. */
static int ds_elf_shdrs(struct ds_elf *e)
{
	const Elf64_Ehdr *eh = &e->eh;
	Elf64_Shdr sh0;
	e->nsh = 0;
	if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !ds_in_file(e, eh->e_shoff, sizeof(Elf64_Shdr)) ||
	    ds_pread(e->fd, &sh0, sizeof(sh0), eh->e_shoff) < 0)
		return 0;
	uint64_t num = eh->e_shnum ? eh->e_shnum : sh0.sh_size; /* >= SHN_LORESERVE sections */
	if (num == 0 || num > (e->fsize - eh->e_shoff) / sizeof(Elf64_Shdr))
		return 0;
	int rc = ds_scratch_need(num * sizeof(Elf64_Shdr));
	if (rc < 0)
		return rc;
	if (ds_pread(e->fd, ds_scratch.p, num * sizeof(Elf64_Shdr), eh->e_shoff) < 0)
		return 0;
	e->nsh = num;
	return 0;
}

/* The section headers of the file's symbol table (SHT_SYMTAB or
 * SHT_DYNSYM) and its strings, copied out of the scratch. */
static int ds_pick_symtab(const struct ds_elf *e, uint32_t type, Elf64_Shdr *sym, Elf64_Shdr *str)
{
	const Elf64_Shdr *sh = (const Elf64_Shdr *)ds_scratch.p;
	for (uint64_t i = 0; i < e->nsh; i++) {
		const Elf64_Shdr *s = &sh[i];
		if (s->sh_type != type || s->sh_size == 0 || s->sh_entsize != sizeof(Elf64_Sym) ||
		    s->sh_link >= e->nsh || !ds_in_file(e, s->sh_offset, s->sh_size))
			continue;
		const Elf64_Shdr *ss = &sh[s->sh_link];
		if (ss->sh_type != SHT_STRTAB || ss->sh_size == 0 ||
		    !ds_in_file(e, ss->sh_offset, ss->sh_size))
			continue;
		*sym = *s;
		*str = *ss;
		return 0;
	}
	return -ENOENT;
}

/* /usr/lib/debug/.build-id/xx/yyyy.debug from the file's GNU build-id
 * note; 0 or -ENOENT. */
static int ds_debug_path(const struct ds_elf *e, const Elf64_Phdr *ph, char *out, size_t outsize)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char buf[DS_NOTES_MAX];
	for (unsigned i = 0; i < e->eh.e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE || ph[i].p_filesz > sizeof(buf) ||
		    !ds_in_file(e, ph[i].p_offset, ph[i].p_filesz) ||
		    ds_pread(e->fd, buf, ph[i].p_filesz, ph[i].p_offset) < 0)
			continue;
		const unsigned char *n = buf, *end = buf + ph[i].p_filesz;
		while (end - n >= (long)sizeof(Elf64_Nhdr)) {
			const Elf64_Nhdr *nh = (const Elf64_Nhdr *)n;
			uint64_t namesz = (nh->n_namesz + 3ull) & ~3ull, descsz = (nh->n_descsz + 3ull) & ~3ull;
			const unsigned char *name = n + sizeof(*nh);
			if ((uint64_t)(end - name) < namesz || (uint64_t)(end - name) - namesz < descsz)
				break;
			const unsigned char *desc = name + namesz;
			size_t plen = sizeof(DS_DEBUG_DIR) - 1;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && nh->n_descsz >= 2 &&
			    plen + 2 * (size_t)nh->n_descsz + 8 < outsize) {
				char *o = out;
				memcpy(o, DS_DEBUG_DIR, plen);
				o += plen;
				for (uint32_t k = 0; k < nh->n_descsz; k++) {
					*o++ = hex[desc[k] >> 4];
					*o++ = hex[desc[k] & 15];
					if (k == 0)
						*o++ = '/';
				}
				memcpy(o, ".debug", 7);
				return 0;
			}
			n = desc + descsz;
		}
	}
	return -ENOENT;
}

static uint32_t ds_rank(const char *name, unsigned bind)
{
	uint32_t us = 0;
	while (name[us] == '_' && us < 64)
		us++;
	uint32_t b = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
	return us << 2 | b;
}

/* The symbols worth keeping of one table into c (room for its data
 * symbols); their count. */
static uint64_t ds_candidates(const Elf64_Sym *sy, uint64_t nsy, const char *str, uint64_t strsize,
			      struct ds_cand *c)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i < nsy; i++) {
		unsigned type = ELF64_ST_TYPE(sy[i].st_info);
		if ((type != STT_OBJECT && type != STT_TLS) || sy[i].st_shndx == SHN_UNDEF ||
		    sy[i].st_shndx >= SHN_LORESERVE || sy[i].st_name == 0 || sy[i].st_name >= strsize)
			continue;
		const char *name = str + sy[i].st_name;
		if (!memchr(name, 0, strsize - sy[i].st_name) || !name[0] || name[0] == '@')
			continue;
		c[n].value = sy[i].st_value;
		c[n].size = sy[i].st_size;
		c[n].name = name;
		c[n].tls = type == STT_TLS;
		c[n].rank = ds_rank(name, ELF64_ST_BIND(sy[i].st_info));
		n++;
	}
	return n;
}

/* Sorted candidates to kept symbols in place: aliases give one name,
 * symbols inside a kept one go, points only where no symbol is. */
static uint64_t ds_dedupe(struct ds_cand *c, uint64_t n)
{
	uint64_t out = 0, end = 0;
	for (uint64_t i = 0; i < n; i++) {
		if (out > 0 && c[out - 1].tls == c[i].tls && c[i].value < end)
			continue;
		c[out++] = c[i];
		end = c[i].value + (c[i].size ? c[i].size : 1);
	}
	return out;
}

/* Copies n kept candidates and their names (packed, one block) into the
 * arena. */
static const struct ds_sym *ds_copy_syms(const struct ds_cand *c, uint64_t n)
{
	if (n == 0)
		return NULL;
	size_t bytes = 0;
	for (uint64_t i = 0; i < n; i++)
		bytes += ds_name_len(c[i].name) + 1;
	struct ds_sym *s = ds_alloc(n * sizeof(*s));
	char *names = s ? ds_alloc(bytes) : NULL;
	if (!names)
		return NULL;
	for (uint64_t i = 0; i < n; i++) {
		size_t len = ds_name_len(c[i].name);
		memcpy(names, c[i].name, len);
		names[len] = 0;
		s[i].value = c[i].value;
		s[i].size = c[i].size;
		s[i].name = names;
		names += len + 1;
	}
	return s;
}

/* One symbol table (sym, its strings str, of the file at fd) into f. */
static int ds_read_symbols(int fd, const Elf64_Shdr *sym, const Elf64_Shdr *str, struct ds_file *f)
{
	uint64_t nsy = sym->sh_size / sizeof(Elf64_Sym), nobj = 0;
	size_t at_str = (sym->sh_size + 15) & ~(size_t)15;
	size_t at_cand = (at_str + str->sh_size + 15) & ~(size_t)15;
	/* Room for the candidates is counted first (a tenth of a symbol table
	 * is data, typically); a scratch that grows for them is read again. */
	for (int pass = 0; pass < 2; pass++) {
		size_t need = at_cand + nobj * sizeof(struct ds_cand);
		if (pass == 1 && need <= ds_scratch.size)
			break;
		int rc = ds_scratch_need(need);
		if (rc < 0)
			return rc;
		if (ds_pread(fd, ds_scratch.p, sym->sh_size, sym->sh_offset) < 0 ||
		    ds_pread(fd, ds_scratch.p + at_str, str->sh_size, str->sh_offset) < 0)
			return 0; /* unreadable symbols: sections and segments only */
		const Elf64_Sym *sy = (const Elf64_Sym *)ds_scratch.p;
		for (uint64_t i = 0; pass == 0 && i < nsy; i++) {
			unsigned type = ELF64_ST_TYPE(sy[i].st_info);
			nobj += type == STT_OBJECT || type == STT_TLS;
		}
	}
	const Elf64_Sym *sy = (const Elf64_Sym *)ds_scratch.p;
	const char *strs = (const char *)ds_scratch.p + at_str;
	struct ds_cand *c = (struct ds_cand *)(ds_scratch.p + at_cand);

	uint64_t n = ds_candidates(sy, nsy, strs, str->sh_size, c);
	ds_sort_cands(c, (size_t)n);
	uint64_t kept = ds_dedupe(c, n), nstatic = 0;
	while (nstatic < kept && !c[nstatic].tls) /* the static ones sort first */
		nstatic++;
	uint64_t ntls = kept - nstatic;
	f->syms = ds_copy_syms(c, nstatic);
	f->tsyms = ds_copy_syms(c + nstatic, ntls);
	if ((nstatic && !f->syms) || (ntls && !f->tsyms))
		return -ENOMEM;
	f->nsyms = (uint32_t)nstatic;
	f->ntsyms = (uint32_t)ntls;
	return 0;
}

/* The non-code SHF_ALLOC sections (section headers in the scratch) into
 * f; TLS ones as offsets in the TLS segment. */
static int ds_read_sections(const struct ds_elf *e, uint64_t tls_vaddr, struct ds_file *f)
{
	const Elf64_Shdr *sh = (const Elf64_Shdr *)ds_scratch.p;
	uint64_t n[2] = {0, 0};
	struct ds_sec *secs[2] = {NULL, NULL};
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t i = 0; i < e->nsh; i++) {
			const Elf64_Shdr *s = &sh[i];
			if (!(s->sh_flags & SHF_ALLOC) || (s->sh_flags & SHF_EXECINSTR) ||
			    s->sh_size == 0 || s->sh_type == SHT_NULL)
				continue;
			int tls = (s->sh_flags & SHF_TLS) != 0;
			if (pass == 1)
				secs[tls][n[tls]] = (struct ds_sec){
					tls ? s->sh_addr - tls_vaddr : s->sh_addr, s->sh_size};
			n[tls]++;
		}
		for (int k = 0; pass == 0 && k < 2; k++) {
			if (n[k] && !(secs[k] = ds_alloc(n[k] * sizeof(struct ds_sec))))
				return -ENOMEM;
			n[k] = 0;
		}
	}
	for (int k = 0; k < 2; k++)
		ds_sort_secs(secs[k], n[k]);
	f->secs = secs[0];
	f->nsecs = (uint32_t)n[0];
	f->tsecs = secs[1];
	f->ntsecs = (uint32_t)n[1];
	return 0;
}

/* The file at fd into f: PT_LOADs, sections, symbols (.symtab, else the
 * debug file's, else .dynsym). */
static int ds_read_file(int fd, struct ds_file *f)
{
	struct ds_elf e, dbg;
	Elf64_Phdr ph[DS_PHDRS_MAX];
	int rc = ds_elf_open(fd, &e);
	if (rc < 0)
		return rc;
	if (e.eh.e_phnum > DS_PHDRS_MAX ||
	    ds_pread(fd, ph, (uint64_t)e.eh.e_phnum * sizeof(Elf64_Phdr), e.eh.e_phoff) < 0)
		return -ENOEXEC;
	uint64_t tls_vaddr = 0;
	for (unsigned i = 0; i < e.eh.e_phnum; i++) {
		if (ph[i].p_type == PT_TLS)
			tls_vaddr = ph[i].p_vaddr;
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (f->nloads >= DS_LOADS)
			return -E2BIG;
		f->loads[f->nloads++] = (struct ds_load){ph[i].p_vaddr, ph[i].p_memsz, ph[i].p_flags};
	}
	if ((rc = ds_elf_shdrs(&e)) < 0 || (rc = ds_read_sections(&e, tls_vaddr, f)) < 0)
		return rc;

	Elf64_Shdr sym, str;
	if (ds_pick_symtab(&e, SHT_SYMTAB, &sym, &str) == 0)
		return ds_read_symbols(fd, &sym, &str, f);
	int have_dyn = ds_pick_symtab(&e, SHT_DYNSYM, &sym, &str) == 0;
	char dpath[256];
	if (ds_debug_path(&e, ph, dpath, sizeof(dpath)) == 0) {
		int dfd = open(dpath, O_RDONLY | O_CLOEXEC);
		Elf64_Shdr dsym, dstr;
		if (dfd >= 0 && ds_elf_open(dfd, &dbg) == 0 && ds_elf_shdrs(&dbg) == 0 &&
		    ds_pick_symtab(&dbg, SHT_SYMTAB, &dsym, &dstr) == 0) {
			rc = ds_read_symbols(dfd, &dsym, &dstr, f);
			close(dfd);
			return rc;
		}
		if (dfd >= 0)
			close(dfd);
	}
	return have_dyn ? ds_read_symbols(fd, &sym, &str, f) : 0;
}

/* The index of the file open at fd (cached by identity and path), or NULL
 * (unreadable, not ELF, the arena full). */
static const struct ds_file *ds_file_get(int fd, const char *path)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return NULL;
	uint64_t mt = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	for (struct ds_file *f = ds_files; f; f = f->next)
		if (f->dev == st.st_dev && f->ino == st.st_ino && f->fsize == (uint64_t)st.st_size &&
		    f->mtime_ns == mt && strcmp(f->path, path) == 0)
			return f;

	size_t mark = ds_arena.used; /* nothing published points past it: undone on failure */
	struct ds_file *f = ds_alloc(sizeof(*f));
	size_t plen = strlen(path) + 1;
	char *p = f ? ds_alloc(plen) : NULL;
	if (!p) {
		ds_arena.used = mark;
		return NULL;
	}
	memset(f, 0, sizeof(*f));
	memcpy(p, path, plen);
	f->path = p;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->fsize = (uint64_t)st.st_size;
	f->mtime_ns = mt;
	if (ds_read_file(fd, f) < 0) {
		ds_arena.used = mark;
		return NULL;
	}
	f->next = ds_files;
	ds_files = f;
	ds_count(&ds_st.files, 1);
	ds_count(&ds_st.symbols, f->nsyms + f->ntsyms);
	__atomic_store_n(&ds_st.bytes, ds_arena.used, __ATOMIC_RELAXED);
	return f;
}

/* ---- the module slots ---- */

static void ds_slot_write(struct ds_slot *s, const struct ds_body *in)
{
	uint64_t seq = s->seq;
	__atomic_store_n(&s->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	const uint64_t *src = (const uint64_t *)in;
	uint64_t *dst = (uint64_t *)&s->b;
	for (size_t i = 0; i < sizeof(*in) / sizeof(uint64_t); i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
}

/* A consistent copy of a live slot: 0, or -EAGAIN while it changes (the
 * caller skips it: no spinning in a handler), -ENOENT when not live. */
static int ds_slot_read(const struct ds_slot *s, struct ds_body *out)
{
	uint64_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	if (seq & 1)
		return -EAGAIN;
	const uint64_t *src = (const uint64_t *)&s->b;
	uint64_t *dst = (uint64_t *)out;
	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) != seq)
		return -EAGAIN;
	return out->live ? 0 : -ENOENT;
}

static void ds_add_range(struct ds_body *b, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return;
	/* Sections of one code segment that touch (or nearly: alignment) join. */
	if (b->nranges && lo >= b->range[b->nranges - 1][1] && lo - b->range[b->nranges - 1][1] < 64) {
		b->range[b->nranges - 1][1] = hi;
	} else {
		if (b->nranges >= DS_RANGES)
			return;
		b->range[b->nranges][0] = lo;
		b->range[b->nranges][1] = hi;
		b->nranges++;
	}
	if (!b->lo || lo < b->lo)
		b->lo = lo;
	if (hi > b->hi)
		b->hi = hi;
}

/* The loaded image is the file's: the same PT_LOADs. */
static int ds_image_matches(const struct dl_phdr_info *info, const struct ds_file *f)
{
	uint32_t k = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		if (k >= f->nloads || f->loads[k].vaddr != ph->p_vaddr ||
		    f->loads[k].memsz != ph->p_memsz || f->loads[k].flags != ph->p_flags)
			return 0;
		k++;
	}
	return k == f->nloads;
}

/* The module's static TLS block in the calling thread, if it has one:
 * within the static area below tp (not a malloc'd block). */
static int ds_tls_at(const struct dl_phdr_info *info, struct ds_body *b)
{
	uint64_t tp = ds_thread_pointer(), data = (uint64_t)(uintptr_t)info->dlpi_tls_data;
	if (!data || data >= tp || tp - data > ds_tls_bound)
		return -ENOENT;
	b->tls_static = 1;
	b->tls_off = data - tp;
	return 0;
}

/* The body of a module's slot: its data ranges and static TLS block. */
static void ds_body_fill(const struct dl_phdr_info *info, const struct ds_file *f, int initial,
			 struct ds_body *b)
{
	memset(b, 0, sizeof(*b));
	b->live = 1;
	b->base = info->dlpi_addr;
	b->file = (uint64_t)(uintptr_t)f;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_TLS)
			b->tls_size = ph->p_memsz;
		if (ph->p_type != PT_LOAD)
			continue;
		if (!(ph->p_flags & PF_X)) {
			ds_add_range(b, lo, hi);
			continue;
		}
		/* A code segment's non-code sections (.rodata without -z separate-code). */
		for (uint32_t k = 0; k < f->nsecs; k++) {
			uint64_t slo = info->dlpi_addr + f->secs[k].addr, shi = slo + f->secs[k].size;
			if (slo >= lo && shi <= hi)
				ds_add_range(b, slo, shi);
		}
	}
	/* A later module's block: ds_probe_tls, in a new thread. */
	if (b->tls_size && initial)
		ds_tls_at(info, b);
}

struct ds_walk {
	int initial;     /* datasym_init's walk: the modules loaded at start */
	int index;
	int unchanged;   /* no module came or went since the last walk */
	uint64_t adds, subs;
	uint32_t npending; /* new modules with TLS, for ds_probe_tls */
	struct ds_slot *pending[DS_PROBE_MAX];
};

/* A slot for a new module: a dead one, else the next; NULL when full. */
static struct ds_slot *ds_slot_new(int *append)
{
	for (uint32_t i = 0; i < ds_nslots; i++)
		if (!ds_slots[i].b.live) {
			*append = 0;
			return &ds_slots[i];
		}
	*append = 1;
	return ds_nslots < DATASYM_SLOTS ? &ds_slots[ds_nslots] : NULL;
}

static void ds_module(struct dl_phdr_info *info, int is_main, struct ds_walk *w)
{
	for (uint32_t i = 0; i < ds_nslots; i++) {
		struct ds_slot *s = &ds_slots[i];
		const struct ds_file *f = (const struct ds_file *)(uintptr_t)s->b.file;
		/* The same place and file: a library loaded where a closed one was is new. */
		if (s->b.live && s->phdr == info->dlpi_phdr && s->b.base == info->dlpi_addr &&
		    (is_main || !f || !info->dlpi_name || strcmp(f->path, info->dlpi_name) == 0)) {
			s->seen = ds_gen;
			return;
		}
	}
	const char *name = info->dlpi_name;
	char exe[4096];
	const char *open_path = name;
	if (is_main) {
		ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (len <= 0)
			return;
		exe[len] = 0;
		name = exe;
		open_path = "/proc/self/exe"; /* even if the file was moved or deleted */
	} else if (!name || !strchr(name, '/')) {
		return; /* the vDSO: no file */
	}

	int append;
	struct ds_slot *s = ds_slot_new(&append);
	if (!s) {
		ds_count(&ds_st.unindexed, 1);
		return;
	}
	struct ds_body b;
	memset(&b, 0, sizeof(b));
	int fd = open(open_path, O_RDONLY | O_CLOEXEC);
	const struct ds_file *f = fd >= 0 ? ds_file_get(fd, name) : NULL;
	if (fd >= 0)
		close(fd);
	if (f && ds_image_matches(info, f)) {
		ds_body_fill(info, f, w->initial, &b);
		ds_count(&ds_st.modules, 1);
	} else {
		/* A slot with no ranges: counted once, not retried at every walk. */
		b.live = 1;
		ds_count(&ds_st.unindexed, 1);
	}
	s->phdr = info->dlpi_phdr;
	s->seen = ds_gen;
	ds_slot_write(s, &b);
	if (!w->initial && b.tls_size && w->npending < DS_PROBE_MAX)
		w->pending[w->npending++] = s;
	if (append)
		__atomic_store_n(&ds_nslots, ds_nslots + 1, __ATOMIC_RELEASE);
}

static int ds_walk_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ds_walk *w = arg;
	if (w->index == 0 && size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		w->adds = info->dlpi_adds;
		w->subs = info->dlpi_subs;
		if (ds_walked && w->adds == ds_adds && w->subs == ds_subs) {
			w->unchanged = 1;
			return 1;
		}
	}
	int is_main = w->index++ == 0 && info->dlpi_name && !info->dlpi_name[0];
	ds_module(info, is_main, w);
	return 0;
}

/* The static TLS area's size bound: the TLS segments of the modules
 * loaded now, aligned, and the surplus later modules' static TLS takes. */
static int ds_tls_size_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint64_t *sum = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_TLS)
			*sum += ph->p_memsz + (ph->p_align > 1 ? ph->p_align : 1);
	}
	return 0;
}

/* ---- static TLS of modules loaded after start ----
 *
 * The indexing thread's block of a module dlopen'd since it started is
 * not there yet (dlpi_tls_data NULL until the thread's dtv catches up)
 * or was malloc'd (dynamic TLS).  A new thread's dtv is current, and the
 * C library fills in only the static blocks at its creation: a module
 * with a block there has static TLS, at that offset in every thread. */

struct ds_probe {
	uint32_t n;
	struct {
		const void *phdr;
		uint64_t base;
		struct ds_body b; /* tls_static, tls_off found */
	} m[DS_PROBE_MAX];
};

typedef int (*ds_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static ds_create_fn ds_real_create; /* not the runtime's wrapper: this thread is not the program's */

static int ds_probe_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ds_probe *p = arg;
	for (uint32_t i = 0; i < p->n; i++)
		if (p->m[i].phdr == info->dlpi_phdr && p->m[i].base == info->dlpi_addr)
			ds_tls_at(info, &p->m[i].b);
	return 0;
}

static void *ds_probe_main(void *arg)
{
	dl_iterate_phdr(ds_probe_cb, arg);
	return NULL;
}

static void ds_probe_tls(struct ds_walk *w)
{
	struct ds_probe p;
	pthread_t th;
	sigset_t all, old;

	if (!ds_real_create)
		return;
	p.n = w->npending;
	for (uint32_t i = 0; i < p.n; i++) {
		p.m[i].phdr = w->pending[i]->phdr;
		p.m[i].base = w->pending[i]->b.base;
		memset(&p.m[i].b, 0, sizeof(p.m[i].b));
	}
	/* The probe takes no signal of the program's (it inherits this mask). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = ds_real_create(&th, NULL, ds_probe_main, &p);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return;
	pthread_join(th, NULL);
	for (uint32_t i = 0; i < p.n; i++) {
		struct ds_slot *s = w->pending[i];
		if (!p.m[i].b.tls_static || !s->b.live || s->phdr != p.m[i].phdr)
			continue;
		struct ds_body b = s->b; /* the writer's own copy: no tearing */
		b.tls_static = 1;
		b.tls_off = p.m[i].b.tls_off;
		ds_slot_write(s, &b);
	}
}

/* Under ds_lock. */
static void ds_walk(int initial)
{
	if (initial) {
		uint64_t sum = DS_TLS_SURPLUS;
		dl_iterate_phdr(ds_tls_size_cb, &sum);
		ds_tls_bound = sum;
	}
	struct ds_walk w = {.initial = initial};
	ds_gen++;
	dl_iterate_phdr(ds_walk_cb, &w);
	ds_scratch_release();
	if (w.unchanged)
		return;
	/* Not found this walk: unloaded (the module's memory may be gone; a
	 * slot holds only copies, so nothing of it was read after). */
	for (uint32_t i = 0; i < ds_nslots; i++) {
		struct ds_slot *s = &ds_slots[i];
		if (s->b.live && s->seen != ds_gen) {
			struct ds_body dead;
			memset(&dead, 0, sizeof(dead));
			ds_slot_write(s, &dead);
		}
	}
	ds_adds = w.adds;
	ds_subs = w.subs;
	ds_walked = 1;
	if (w.npending)
		ds_probe_tls(&w);
}

int datasym_init(void)
{
	if (ds_slots)
		return 0;
	int rc = arena_init(&ds_arena, DATASYM_ARENA);
	if (rc < 0)
		return rc;
	void *p = mmap(NULL, DATASYM_SLOTS * sizeof(struct ds_slot), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		rc = -errno;
		arena_destroy(&ds_arena);
		return rc;
	}
	ds_real_create = (ds_create_fn)dlsym(RTLD_NEXT, "pthread_create");
	pthread_mutex_lock(&ds_lock);
	__atomic_store_n(&ds_slots, (struct ds_slot *)p, __ATOMIC_RELEASE);
	ds_walk(1);
	pthread_mutex_unlock(&ds_lock);
	return 0;
}

void datasym_refresh(void)
{
	if (!__atomic_load_n(&ds_slots, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&ds_lock);
	ds_walk(0);
	pthread_mutex_unlock(&ds_lock);
}

/* ---- lookups (async-signal-safe) ---- */

/* The last entry whose start is <= key, or -1. */
static long ds_floor_sym(const struct ds_sym *s, uint32_t n, uint64_t key)
{
	long lo = 0, hi = (long)n - 1, best = -1;
	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;
		if (s[mid].value <= key) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return best;
}

static long ds_floor_sec(const struct ds_sec *s, uint32_t n, uint64_t key)
{
	long lo = 0, hi = (long)n - 1, best = -1;
	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;
		if (s[mid].addr <= key) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return best;
}

/* The symbol, else the section holding key (link-time address or TLS
 * offset); 0 and *start, *size, *name, or -ENOENT. */
static int ds_find(const struct ds_sym *syms, uint32_t nsyms, const struct ds_sec *secs,
		   uint32_t nsecs, uint64_t key, struct datasym_hit *hit)
{
	long i = ds_floor_sym(syms, nsyms, key);
	if (i >= 0 && (key - syms[i].value < syms[i].size ||
		       (syms[i].size == 0 && key == syms[i].value))) {
		hit->start = syms[i].value;
		hit->size = syms[i].size;
		hit->name = syms[i].name;
		return 0;
	}
	hit->name = NULL;
	/* Sections may nest (.tbss inside nothing, .data.rel.ro pieces):
	 * a few back from the floor. */
	i = ds_floor_sec(secs, nsecs, key);
	for (long k = i; k >= 0 && k > i - 4; k--) {
		if (key - secs[k].addr < secs[k].size) {
			hit->start = secs[k].addr;
			hit->size = secs[k].size;
			return 0;
		}
	}
	return -ENOENT;
}

int datasym_static(uint64_t addr, struct datasym_hit *hit)
{
	struct ds_slot *slots = __atomic_load_n(&ds_slots, __ATOMIC_ACQUIRE);
	uint32_t n = __atomic_load_n(&ds_nslots, __ATOMIC_ACQUIRE);
	struct ds_body b;

	for (uint32_t i = 0; slots && i < n; i++) {
		const struct ds_slot *s = &slots[i];
		if (addr < __atomic_load_n(&s->b.lo, __ATOMIC_RELAXED) ||
		    addr >= __atomic_load_n(&s->b.hi, __ATOMIC_RELAXED))
			continue;
		if (ds_slot_read(s, &b) < 0)
			continue;
		for (uint64_t r = 0; r < b.nranges && r < DS_RANGES; r++) {
			if (addr < b.range[r][0] || addr >= b.range[r][1])
				continue;
			const struct ds_file *f = (const struct ds_file *)(uintptr_t)b.file;
			hit->module = f->path;
			if (ds_find(f->syms, f->nsyms, f->secs, f->nsecs, addr - b.base, hit) == 0) {
				hit->start += b.base;
			} else {
				hit->name = NULL;
				hit->start = b.range[r][0];
				hit->size = b.range[r][1] - b.range[r][0];
			}
			return 0;
		}
	}
	return -ENOENT;
}

int datasym_tls(uint64_t addr, uint64_t tp, struct datasym_hit *hit)
{
	struct ds_slot *slots = __atomic_load_n(&ds_slots, __ATOMIC_ACQUIRE);
	uint32_t n = __atomic_load_n(&ds_nslots, __ATOMIC_ACQUIRE);
	struct ds_body b;

	for (uint32_t i = 0; slots && i < n; i++) {
		const struct ds_slot *s = &slots[i];
		if (!__atomic_load_n(&s->b.tls_static, __ATOMIC_RELAXED) || ds_slot_read(s, &b) < 0 ||
		    !b.tls_static)
			continue;
		uint64_t block = tp + b.tls_off, off = addr - block;
		if (off >= b.tls_size)
			continue;
		const struct ds_file *f = (const struct ds_file *)(uintptr_t)b.file;
		hit->module = f->path;
		if (ds_find(f->tsyms, f->ntsyms, f->tsecs, f->ntsecs, off, hit) < 0) {
			hit->name = NULL;
			hit->start = 0;
			hit->size = b.tls_size;
		}
		return 0;
	}
	return -ENOENT;
}

void datasym_stats(struct datasym_stats *st)
{
	st->modules = __atomic_load_n(&ds_st.modules, __ATOMIC_RELAXED);
	st->unindexed = __atomic_load_n(&ds_st.unindexed, __ATOMIC_RELAXED);
	st->files = __atomic_load_n(&ds_st.files, __ATOMIC_RELAXED);
	st->symbols = __atomic_load_n(&ds_st.symbols, __ATOMIC_RELAXED);
	st->bytes = __atomic_load_n(&ds_st.bytes, __ATOMIC_RELAXED);
}

void datasym_prefork(void)
{
	pthread_mutex_lock(&ds_lock);
}

void datasym_postfork_parent(void)
{
	pthread_mutex_unlock(&ds_lock);
}

void datasym_postfork_child(void)
{
	pthread_mutex_init(&ds_lock, NULL);
}
