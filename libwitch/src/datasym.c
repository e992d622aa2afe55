/* datasym: data symbols of the loaded modules (see datasym.h). */
#include "witch/datasym.h"
#include "witch/arena.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
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
#define DS_TLS_STATIC_MAX (1u << 20) /* a later module's static TLS block is this close below tp */
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

/* ---- reading a file ---- */

/* A symbol while the file is parsed: name points into the mapped file. */
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

struct ds_map {
	const unsigned char *p;
	size_t size;
};

static int ds_map_file(int fd, struct ds_map *m)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(Elf64_Ehdr))
		return -ENOEXEC;
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	m->p = p;
	m->size = (size_t)st.st_size;
	return 0;
}

/* The ELF header and section headers, bounds-checked; NULL if not ours. */
static const Elf64_Ehdr *ds_ehdr(const struct ds_map *m)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m->p;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return NULL;
	return eh;
}

static int ds_in_file(const struct ds_map *m, uint64_t off, uint64_t size)
{
	return off <= m->size && size <= m->size - off;
}

static const Elf64_Shdr *ds_shdrs(const struct ds_map *m, const Elf64_Ehdr *eh, uint64_t *n)
{
	*n = 0;
	if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !ds_in_file(m, eh->e_shoff, sizeof(Elf64_Shdr)))
		return NULL;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(m->p + eh->e_shoff);
	uint64_t num = eh->e_shnum ? eh->e_shnum : sh[0].sh_size; /* >= SHN_LORESERVE sections */
	if (num == 0 || num > (m->size - eh->e_shoff) / sizeof(Elf64_Shdr))
		return NULL;
	*n = num;
	return sh;
}

/* The file's symbol table: SHT_SYMTAB, else (want_symtab == 0) SHT_DYNSYM.
 * Gives the symbols and their string table, bounds-checked. */
static int ds_symtab(const struct ds_map *m, int want_symtab, const Elf64_Sym **syms,
		     uint64_t *nsyms, const char **str, uint64_t *strsize)
{
	const Elf64_Ehdr *eh = ds_ehdr(m);
	uint64_t nsh;
	const Elf64_Shdr *sh = eh ? ds_shdrs(m, eh, &nsh) : NULL;
	if (!sh)
		return -ENOENT;
	for (int pass = 0; pass < (want_symtab ? 1 : 2); pass++) {
		uint32_t type = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
		for (uint64_t i = 0; i < nsh; i++) {
			const Elf64_Shdr *s = &sh[i];
			if (s->sh_type != type || s->sh_size == 0 || s->sh_entsize != sizeof(Elf64_Sym) ||
			    s->sh_link >= nsh || !ds_in_file(m, s->sh_offset, s->sh_size))
				continue;
			const Elf64_Shdr *ss = &sh[s->sh_link];
			if (ss->sh_type != SHT_STRTAB || !ds_in_file(m, ss->sh_offset, ss->sh_size))
				continue;
			*syms = (const Elf64_Sym *)(m->p + s->sh_offset);
			*nsyms = s->sh_size / sizeof(Elf64_Sym);
			*str = (const char *)(m->p + ss->sh_offset);
			*strsize = ss->sh_size;
			return 0;
		}
	}
	return -ENOENT;
}

/* /usr/lib/debug/.build-id/xx/yyyy.debug from the file's GNU build-id
 * note; 0 or -ENOENT. */
static int ds_debug_path(const struct ds_map *m, char *out, size_t outsize)
{
	static const char hex[] = "0123456789abcdef";
	const Elf64_Ehdr *eh = ds_ehdr(m);
	if (!eh || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !ds_in_file(m, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
		return -ENOENT;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(m->p + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE || !ds_in_file(m, ph[i].p_offset, ph[i].p_filesz))
			continue;
		const unsigned char *n = m->p + ph[i].p_offset, *end = n + ph[i].p_filesz;
		while (end - n >= (long)sizeof(Elf64_Nhdr)) {
			const Elf64_Nhdr *nh = (const Elf64_Nhdr *)n;
			uint64_t namesz = (nh->n_namesz + 3) & ~3u, descsz = (nh->n_descsz + 3) & ~3u;
			const unsigned char *name = n + sizeof(*nh), *desc = name + namesz;
			if ((uint64_t)(end - name) < namesz || (uint64_t)(end - desc) < descsz)
				break;
			size_t plen = sizeof(DS_DEBUG_DIR) - 1;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && nh->n_descsz >= 2 &&
			    plen + 2 * nh->n_descsz + 8 < outsize) {
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

/* The kept symbols of one table into a scratch mapping; the count, or
 * -errno. */
static long ds_candidates(const Elf64_Sym *sy, uint64_t nsy, const char *str, uint64_t strsize,
			  struct ds_cand **out, size_t *mapsize)
{
	uint64_t n = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t i = 0; i < nsy; i++) {
			unsigned type = ELF64_ST_TYPE(sy[i].st_info);
			if ((type != STT_OBJECT && type != STT_TLS) || sy[i].st_shndx == SHN_UNDEF ||
			    sy[i].st_shndx >= SHN_LORESERVE || sy[i].st_name == 0 ||
			    sy[i].st_name >= strsize)
				continue;
			const char *name = str + sy[i].st_name;
			if (!memchr(name, 0, strsize - sy[i].st_name) || !name[0] || name[0] == '@')
				continue;
			if (pass == 1) {
				struct ds_cand *c = &(*out)[n];
				c->value = sy[i].st_value;
				c->size = sy[i].st_size;
				c->name = name;
				c->tls = type == STT_TLS;
				c->rank = ds_rank(name, ELF64_ST_BIND(sy[i].st_info));
			}
			n++;
		}
		if (pass == 0) {
			if (n == 0)
				return 0;
			*mapsize = n * sizeof(struct ds_cand);
			void *p = mmap(NULL, *mapsize, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				return -errno;
			*out = p;
			n = 0;
		}
	}
	return (long)n;
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
	struct ds_sym *s = arena_alloc(&ds_arena, n * sizeof(*s));
	char *names = s ? arena_alloc(&ds_arena, bytes) : NULL;
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

/* The symbols of the file (or of its debug file) into f. */
static int ds_read_symbols(const struct ds_map *m, struct ds_file *f)
{
	const Elf64_Sym *sy;
	const char *str;
	uint64_t nsy, strsize;
	struct ds_map dbg = {NULL, 0};
	char dpath[256];

	int rc = ds_symtab(m, 1, &sy, &nsy, &str, &strsize);
	if (rc < 0 && ds_debug_path(m, dpath, sizeof(dpath)) == 0) {
		int fd = open(dpath, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			if (ds_map_file(fd, &dbg) == 0 && (!ds_ehdr(&dbg) ||
							  ds_symtab(&dbg, 1, &sy, &nsy, &str, &strsize) < 0)) {
				munmap((void *)dbg.p, dbg.size);
				dbg.p = NULL;
			}
			close(fd);
		}
		rc = dbg.p ? 0 : -ENOENT;
	}
	if (rc < 0)
		rc = ds_symtab(m, 0, &sy, &nsy, &str, &strsize);
	if (rc < 0)
		return 0; /* no symbols: sections and segments only */

	struct ds_cand *c = NULL;
	size_t csize = 0;
	long n = ds_candidates(sy, nsy, str, strsize, &c, &csize);
	if (n > 0) {
		ds_sort_cands(c, (size_t)n);
		uint64_t kept = ds_dedupe(c, (uint64_t)n), nstatic = 0;
		while (nstatic < kept && !c[nstatic].tls) /* the static ones sort first */
			nstatic++;
		uint64_t ntls = kept - nstatic;
		f->syms = ds_copy_syms(c, nstatic);
		f->tsyms = ds_copy_syms(c + nstatic, ntls);
		if ((nstatic && !f->syms) || (ntls && !f->tsyms))
			rc = -ENOMEM;
		f->nsyms = (uint32_t)nstatic;
		f->ntsyms = (uint32_t)ntls;
		munmap(c, csize);
	} else if (n < 0) {
		rc = (int)n;
	}
	if (dbg.p)
		munmap((void *)dbg.p, dbg.size);
	return rc;
}

/* The file's PT_LOADs and its non-code sections into f. */
static int ds_read_layout(const struct ds_map *m, struct ds_file *f)
{
	const Elf64_Ehdr *eh = ds_ehdr(m);
	if (!eh || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    !ds_in_file(m, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
		return -ENOEXEC;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(m->p + eh->e_phoff);
	uint64_t tls_vaddr = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_TLS)
			tls_vaddr = ph[i].p_vaddr;
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (f->nloads >= DS_LOADS)
			return -E2BIG;
		f->loads[f->nloads++] = (struct ds_load){ph[i].p_vaddr, ph[i].p_memsz, ph[i].p_flags};
	}

	uint64_t nsh;
	const Elf64_Shdr *sh = ds_shdrs(m, eh, &nsh);
	uint64_t n[2] = {0, 0};
	struct ds_sec *secs[2] = {NULL, NULL};
	for (int pass = 0; sh && pass < 2; pass++) {
		for (uint64_t i = 0; i < nsh; i++) {
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
			if (n[k] && !(secs[k] = arena_alloc(&ds_arena, n[k] * sizeof(struct ds_sec))))
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

	struct ds_map m;
	if (ds_map_file(fd, &m) < 0)
		return NULL;
	size_t mark = ds_arena.used; /* nothing published points past it: undone on failure */
	struct ds_file *f = arena_alloc(&ds_arena, sizeof(*f));
	size_t plen = strlen(path) + 1;
	char *p = f ? arena_alloc(&ds_arena, plen) : NULL;
	int rc = p ? 0 : -ENOMEM;
	if (rc == 0) {
		memset(f, 0, sizeof(*f));
		memcpy(p, path, plen);
		f->path = p;
		f->dev = st.st_dev;
		f->ino = st.st_ino;
		f->fsize = (uint64_t)st.st_size;
		f->mtime_ns = mt;
		if (!ds_ehdr(&m))
			rc = -ENOEXEC;
	}
	if (rc == 0)
		rc = ds_read_layout(&m, f);
	if (rc == 0)
		rc = ds_read_symbols(&m, f);
	munmap((void *)m.p, m.size);
	if (rc < 0) {
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

static int ds_static_tls_flag(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_DYNAMIC)
			continue;
		for (const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
		     d->d_tag != DT_NULL; d++)
			if (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_STATIC_TLS))
				return 1;
	}
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
	if (b->tls_size && info->dlpi_tls_data) {
		uint64_t tp = ds_thread_pointer(), data = (uint64_t)(uintptr_t)info->dlpi_tls_data;
		if (data < tp && (initial || (tp - data <= DS_TLS_STATIC_MAX && ds_static_tls_flag(info)))) {
			b->tls_static = 1;
			b->tls_off = data - tp;
		}
	}
}

struct ds_walk {
	int initial;     /* datasym_init's walk: every TLS block is static */
	int index;
	int unchanged;   /* no module came or went since the last walk */
	uint64_t adds, subs;
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

/* Under ds_lock. */
static void ds_walk(int initial)
{
	struct ds_walk w = {.initial = initial};
	ds_gen++;
	dl_iterate_phdr(ds_walk_cb, &w);
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
