/* elfdata: one ELF file's data symbols and sections, read without malloc (see elfdata.h). */
#include "witch/elfdata.h"
#include "witch/lockguard.h"
#include "witch/fdio.h"
#include "witch/filepages.h"
#include "witch/log.h"
#include "witch/arena.h"
#include "witch/fdguard.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define DS_DEBUG_DIR "/usr/lib/debug/.build-id/"

static struct arena ds_arena;
static struct elfdata_file *ds_files; /* the cache: files read so far */
static uint64_t ds_nfiles, ds_nsymbols, ds_bytes;

int elfdata_init(size_t arena_bytes)
{
	return arena_init(&ds_arena, arena_bytes);
}

void elfdata_destroy(void)
{
	arena_destroy(&ds_arena);
	ds_files = NULL;
}

static uint64_t ds_nin_image; /* symbol tables read where their module is loaded */

void elfdata_stats(uint64_t *files, uint64_t *symbols, uint64_t *bytes, uint64_t *in_image)
{
	*in_image = __atomic_load_n(&ds_nin_image, __ATOMIC_RELAXED);
	*files = __atomic_load_n(&ds_nfiles, __ATOMIC_RELAXED);
	*symbols = __atomic_load_n(&ds_nsymbols, __ATOMIC_RELAXED);
	*bytes = __atomic_load_n(&ds_bytes, __ATOMIC_RELAXED);
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

static int ds_sec_cmp(const struct elfdata_sec *a, const struct elfdata_sec *b)
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
static void ds_sort_secs(struct elfdata_sec *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct elfdata_sec x = v[i];
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

void elfdata_scratch_release(void)
{
	if (ds_scratch.p)
		(void)lockguard_unmap(ds_scratch.p, ds_scratch.size);
	ds_scratch.p = NULL;
	ds_scratch.size = 0;
}

/* At least size bytes of scratch; what it held is lost.  It starts at
 * what the first read needs, not at a fixed 256 KiB: a small program's
 * headers and symbols fit in 16, and 256 KiB populated and unmapped took
 * 110-240 us of its first tick here (16 KiB: 20-50). */
#define DS_SCRATCH_MIN (16u << 10)
static int ds_scratch_need(size_t size)
{
	if (size <= ds_scratch.size)
		return 0;
	size_t want = ds_scratch.size ? ds_scratch.size : DS_SCRATCH_MIN;
	while (want < size)
		want *= 2;
	elfdata_scratch_release();
	void *p = lockguard_map(want, MAP_POPULATE);
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
	    fdio_pread_all(fd, &e->eh, sizeof(e->eh), 0) < 0)
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
	    fdio_pread_all(e->fd, &sh0, sizeof(sh0), eh->e_shoff) < 0)
		return 0;
	uint64_t num = eh->e_shnum ? eh->e_shnum : sh0.sh_size; /* >= SHN_LORESERVE sections */
	if (num == 0 || num > (e->fsize - eh->e_shoff) / sizeof(Elf64_Shdr))
		return 0;
	int rc = ds_scratch_need(num * sizeof(Elf64_Shdr));
	if (rc < 0)
		return rc;
	if (fdio_pread_all(e->fd, ds_scratch.p, num * sizeof(Elf64_Shdr), eh->e_shoff) < 0)
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
		    fdio_pread_all(e->fd, buf, ph[i].p_filesz, ph[i].p_offset) < 0)
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
static const struct elfdata_sym *ds_copy_syms(const struct ds_cand *c, uint64_t n)
{
	if (n == 0)
		return NULL;
	size_t bytes = 0;
	for (uint64_t i = 0; i < n; i++)
		bytes += ds_name_len(c[i].name) + 1;
	struct elfdata_sym *s = ds_alloc(n * sizeof(*s));
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

static int ds_keep_symbols(const Elf64_Sym *sy, uint64_t nsy, const char *strs, uint64_t strsize,
			   struct ds_cand *c, struct elfdata_file *f);

/* A loaded image's copy of section sh (SHF_ALLOC, all of it in one
 * read-only PT_LOAD's file-backed bytes at the file's own offset), or
 * NULL.  Read-only: its pages are the file's, as filepages_release needs. */
static const void *ds_in_image(const struct elfdata_image *img, const Elf64_Phdr *ph, unsigned phnum,
			       const Elf64_Shdr *sh)
{
	if (!img || !(sh->sh_flags & SHF_ALLOC))
		return NULL;
	for (unsigned i = 0; i < phnum; i++) {
		const Elf64_Phdr *p = &ph[i];
		if (p->p_type != PT_LOAD || !(p->p_flags & PF_R) || (p->p_flags & PF_W) ||
		    sh->sh_addr < p->p_vaddr ||
		    sh->sh_addr - p->p_vaddr > p->p_filesz ||
		    sh->sh_size > p->p_filesz - (sh->sh_addr - p->p_vaddr) ||
		    sh->sh_offset - p->p_offset != sh->sh_addr - p->p_vaddr)
			continue;
		return (const void *)(uintptr_t)(img->base + sh->sh_addr);
	}
	return NULL;
}

/* The image's PT_LOADs are the file's (ph), as ds_in_image needs. */
static int ds_image_is_file(const struct elfdata_image *img, const Elf64_Phdr *ph, unsigned phnum)
{
	const Elf64_Phdr *iph = img->phdr;
	unsigned k = 0;
	for (unsigned i = 0; i < phnum; i++) {
		if (ph[i].p_type != PT_LOAD)
			continue;
		while (k < img->phnum && iph[k].p_type != PT_LOAD)
			k++;
		if (k == img->phnum || iph[k].p_vaddr != ph[i].p_vaddr || iph[k].p_offset != ph[i].p_offset ||
		    iph[k].p_filesz != ph[i].p_filesz || iph[k].p_flags != ph[i].p_flags)
			return 0;
		k++;
	}
	while (k < img->phnum && iph[k].p_type != PT_LOAD)
		k++;
	return k == img->phnum;
}

/* One symbol table (sym, its strings str, of the file at fd) into f;
 * from msym and mstr where the loaded image has them (both non-NULL). */
static int ds_read_symbols(int fd, const Elf64_Shdr *sym, const Elf64_Shdr *str, const void *msym,
			   const void *mstr, struct elfdata_file *f)
{
	uint64_t nsy = sym->sh_size / sizeof(Elf64_Sym), nobj = 0;
	if (msym && mstr) {
		/* In memory already (cc1 exports 1.3 MiB of names for plugins):
		 * the scratch holds only the candidates. */
		const Elf64_Sym *sy = msym;
		for (uint64_t i = 0; i < nsy; i++) {
			unsigned type = ELF64_ST_TYPE(sy[i].st_info);
			nobj += type == STT_OBJECT || type == STT_TLS;
		}
		int rc = ds_scratch_need(nobj * sizeof(struct ds_cand) + 16);
		if (rc < 0)
			return rc;
		__atomic_add_fetch(&ds_nin_image, 1, __ATOMIC_RELAXED);
		rc = ds_keep_symbols(sy, nsy, mstr, str->sh_size, (struct ds_cand *)ds_scratch.p, f);
		/* the kept names are copies (cc1: 0.8 MiB of its peak) */
		if (filepages_release(msym, sym->sh_size) < 0 || filepages_release(mstr, str->sh_size) < 0)
			log_verbose(2, "elfdata: symbol table pages not given back (pagemap unreadable)");
		return rc;
	}
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
		if (fdio_pread_all(fd, ds_scratch.p, sym->sh_size, sym->sh_offset) < 0 ||
		    fdio_pread_all(fd, ds_scratch.p + at_str, str->sh_size, str->sh_offset) < 0)
			return 0; /* unreadable symbols: sections and segments only */
		const Elf64_Sym *sy = (const Elf64_Sym *)ds_scratch.p;
		for (uint64_t i = 0; pass == 0 && i < nsy; i++) {
			unsigned type = ELF64_ST_TYPE(sy[i].st_info);
			nobj += type == STT_OBJECT || type == STT_TLS;
		}
	}
	return ds_keep_symbols((const Elf64_Sym *)ds_scratch.p, nsy, (const char *)ds_scratch.p + at_str,
			       str->sh_size, (struct ds_cand *)(ds_scratch.p + at_cand), f);
}

/* The data symbols of sy[nsy] (names in strs) into f, c the room for
 * their candidates. */
static int ds_keep_symbols(const Elf64_Sym *sy, uint64_t nsy, const char *strs, uint64_t strsize,
			   struct ds_cand *c, struct elfdata_file *f)
{
	uint64_t n = ds_candidates(sy, nsy, strs, strsize, c);
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
static int ds_read_sections(const struct ds_elf *e, uint64_t tls_vaddr, struct elfdata_file *f)
{
	const Elf64_Shdr *sh = (const Elf64_Shdr *)ds_scratch.p;
	uint64_t n[2] = {0, 0};
	struct elfdata_sec *secs[2] = {NULL, NULL};
	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t i = 0; i < e->nsh; i++) {
			const Elf64_Shdr *s = &sh[i];
			if (!(s->sh_flags & SHF_ALLOC) || (s->sh_flags & SHF_EXECINSTR) ||
			    s->sh_size == 0 || s->sh_type == SHT_NULL)
				continue;
			int tls = (s->sh_flags & SHF_TLS) != 0;
			if (pass == 1)
				secs[tls][n[tls]] = (struct elfdata_sec){
					tls ? s->sh_addr - tls_vaddr : s->sh_addr, s->sh_size};
			n[tls]++;
		}
		for (int k = 0; pass == 0 && k < 2; k++) {
			if (n[k] && !(secs[k] = ds_alloc(n[k] * sizeof(struct elfdata_sec))))
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

/* Where f's symbols are: table sym and strings str of the file open at fd
 * (opened as path), or of the image (msym, mstr non-NULL). */
static int ds_symsrc_set(struct elfdata_file *f, int fd, const char *path, const Elf64_Shdr *sym,
			 const Elf64_Shdr *str, const void *msym, const void *mstr)
{
	struct stat st;
	if (!msym && fstat(fd, &st) < 0)
		return -errno;
	struct elfdata_symsrc *src = &f->src;
	if (!msym) {
		size_t len = strlen(path) + 1;
		char *p = ds_alloc(len);
		if (!p)
			return -ENOMEM;
		memcpy(p, path, len);
		src->open_path = p;
		src->dev = st.st_dev;
		src->ino = st.st_ino;
		src->fsize = (uint64_t)st.st_size;
		src->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	}
	src->sym_off = sym->sh_offset;
	src->sym_size = sym->sh_size;
	src->str_off = str->sh_offset;
	src->str_size = str->sh_size;
	src->msym = msym;
	src->mstr = mstr;
	f->syms_state = ELFDATA_SYMS_UNREAD;
	return 0;
}

/* The file at fd (opened as open_path) into f: PT_LOADs, sections, and
 * where its symbols are (.symtab, else the debug file's, else .dynsym). */
static int ds_read_file(int fd, const char *open_path, const struct elfdata_image *img,
			struct elfdata_file *f)
{
	struct ds_elf e, dbg;
	Elf64_Phdr ph[DS_PHDRS_MAX];
	int rc = ds_elf_open(fd, &e);
	if (rc < 0)
		return rc;
	if (e.eh.e_phnum > DS_PHDRS_MAX ||
	    fdio_pread_all(fd, ph, (uint64_t)e.eh.e_phnum * sizeof(Elf64_Phdr), e.eh.e_phoff) < 0)
		return -ENOEXEC;
	uint64_t tls_vaddr = 0;
	for (unsigned i = 0; i < e.eh.e_phnum; i++) {
		if (ph[i].p_type == PT_TLS)
			tls_vaddr = ph[i].p_vaddr;
		if (ph[i].p_type != PT_LOAD)
			continue;
		if (f->nloads >= ELFDATA_LOADS)
			return -E2BIG;
		f->loads[f->nloads++] = (struct elfdata_load){ph[i].p_vaddr, ph[i].p_memsz, ph[i].p_flags};
	}
	if ((rc = ds_elf_shdrs(&e)) < 0 || (rc = ds_read_sections(&e, tls_vaddr, f)) < 0)
		return rc;

	f->syms_state = ELFDATA_SYMS_NONE;
	Elf64_Shdr sym, str;
	if (!open_path)
		open_path = f->real; /* not the link it was loaded by, which may go */
	if (ds_pick_symtab(&e, SHT_SYMTAB, &sym, &str) == 0)
		return ds_symsrc_set(f, fd, open_path, &sym, &str, NULL, NULL);
	int have_dyn = ds_pick_symtab(&e, SHT_DYNSYM, &sym, &str) == 0;
	char dpath[256];
	if (ds_debug_path(&e, ph, dpath, sizeof(dpath)) == 0) {
		int dfd = open(dpath, O_RDONLY | O_CLOEXEC);
		Elf64_Shdr dsym, dstr;
		if (dfd >= 0 && ds_elf_open(dfd, &dbg) == 0 && ds_elf_shdrs(&dbg) == 0 &&
		    ds_pick_symtab(&dbg, SHT_SYMTAB, &dsym, &dstr) == 0) {
			rc = ds_symsrc_set(f, dfd, dpath, &dsym, &dstr, NULL, NULL);
			fdguard_close(dfd);
			return rc;
		}
		if (dfd >= 0)
			fdguard_close(dfd);
	}
	if (!have_dyn)
		return 0;
	if (img && !ds_image_is_file(img, ph, e.eh.e_phnum))
		img = NULL;
	const void *msym = ds_in_image(img, ph, e.eh.e_phnum, &sym);
	const void *mstr = ds_in_image(img, ph, e.eh.e_phnum, &str);
	if (!msym || !mstr)
		return ds_symsrc_set(f, fd, open_path, &sym, &str, NULL, NULL);
	/* An image that may be unloaded is read now, while the loader
	 * holds it (a stripped library dlopen'd later: its .dynsym only). */
	if (!img->stays) {
		if ((rc = ds_read_symbols(fd, &sym, &str, msym, mstr, f)) < 0)
			return rc;
		f->syms_state = ELFDATA_SYMS_READ;
		return 0;
	}
	return ds_symsrc_set(f, fd, open_path, &sym, &str, msym, mstr);
}

int elfdata_file_symbols_done(const struct elfdata_file *f)
{
	return __atomic_load_n(&f->syms_state, __ATOMIC_ACQUIRE) != ELFDATA_SYMS_UNREAD;
}

/* The file src names, if it is still the one indexed: an fd, or -errno. */
static int ds_symsrc_open(const struct elfdata_symsrc *src)
{
	struct stat st;
	int fd = open(src->open_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_dev != src->dev || st.st_ino != src->ino ||
	    (uint64_t)st.st_size != src->fsize ||
	    (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec != src->mtime_ns) {
		fdguard_close(fd);
		return -ESTALE;
	}
	return fd;
}

int elfdata_file_symbols(const struct elfdata_file *cf)
{
	struct elfdata_file *f = (struct elfdata_file *)(uintptr_t)cf; /* ours, in the arena */
	if (f->syms_state != ELFDATA_SYMS_UNREAD)
		return 0;
	const struct elfdata_symsrc *src = &f->src;
	Elf64_Shdr sym = {.sh_offset = src->sym_off, .sh_size = src->sym_size};
	Elf64_Shdr str = {.sh_offset = src->str_off, .sh_size = src->str_size};
	int fd = -1, rc = 0;
	if (!src->msym) { /* from the file: the same one still */
		fd = ds_symsrc_open(src);
		rc = fd < 0 ? fd : 0;
	}
	if (rc == 0)
		rc = ds_read_symbols(fd, &sym, &str, src->msym, src->mstr, f);
	if (fd >= 0)
		fdguard_close(fd);
	elfdata_scratch_release();
	if (rc == 0)
		__atomic_add_fetch(&ds_nsymbols, f->nsyms + f->ntsyms, __ATOMIC_RELAXED);
	__atomic_store_n(&ds_bytes, ds_arena.used, __ATOMIC_RELAXED);
	__atomic_store_n(&f->syms_state, rc == 0 ? ELFDATA_SYMS_READ : ELFDATA_SYMS_NONE,
			 __ATOMIC_RELEASE);
	return rc;
}

int elfdata_fd_path(int fd, char *out, size_t size)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, out, size - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= size - 1)
		return -ENAMETOOLONG; /* perhaps cut short */
	if (n == 0 || out[0] != '/')
		return -ENOENT; /* not a file of the filesystem */
	out[n] = '\0';
	return 0;
}

/* The index of the file open at fd (cached by identity and path), or NULL
 * (unreadable, not ELF, the arena full). */
const struct elfdata_file *elfdata_file_get(int fd, const char *path, const char *open_path,
					    const struct elfdata_image *img)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return NULL;
	uint64_t mt = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	for (struct elfdata_file *f = ds_files; f; f = f->next)
		if (f->dev == st.st_dev && f->ino == st.st_ino && f->fsize == (uint64_t)st.st_size &&
		    f->mtime_ns == mt && strcmp(f->path, path) == 0)
			return f;

	/* The file's own name, as the profile names modules (profile.c): the
	 * open fd's link is the path with every symlink resolved. */
	char real[4096];
	const char *shown = elfdata_fd_path(fd, real, sizeof(real)) == 0 ? real : path;

	size_t mark = ds_arena.used; /* nothing published points past it: undone on failure */
	struct elfdata_file *f = ds_alloc(sizeof(*f));
	size_t plen = strlen(path) + 1, rlen = strlen(shown) + 1;
	char *p = f ? ds_alloc(plen) : NULL;
	char *r = p ? ds_alloc(rlen) : NULL;
	if (!r) {
		ds_arena.used = mark;
		return NULL;
	}
	memset(f, 0, sizeof(*f));
	memcpy(p, path, plen);
	memcpy(r, shown, rlen);
	f->path = p;
	f->real = r;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->fsize = (uint64_t)st.st_size;
	f->mtime_ns = mt;
	if (ds_read_file(fd, open_path, img, f) < 0) {
		ds_arena.used = mark;
		return NULL;
	}
	f->next = ds_files;
	ds_files = f;
	__atomic_add_fetch(&ds_nfiles, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&ds_nsymbols, f->nsyms + f->ntsyms, __ATOMIC_RELAXED);
	__atomic_store_n(&ds_bytes, ds_arena.used, __ATOMIC_RELAXED);
	return f;
}

