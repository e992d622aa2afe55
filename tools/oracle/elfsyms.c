/* elfsyms: a function's preferred alias, and data symbols Valgrind drops,
 * from a module's .dynsym; see elfsyms.h. */
#include "elfsyms.h"
#include "msort.h"

#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vki.h"

#include <elf.h>

struct fsym {
	Addr value;
	SizeT size;
	UInt name;	/* offset in strtab */
	UChar bind;
};

struct load_seg {
	Off64T offset;
	Addr vaddr;
	SizeT filesz;
};

#define MAX_LOADS 16

struct module_syms {
	HChar *path;
	struct fsym *syms; /* STT_FUNC */
	UInt n;
	struct fsym *dsyms; /* STT_OBJECT with a size, by value */
	UInt nd;
	struct load_seg loads[MAX_LOADS]; /* PT_LOAD: file offset -> vaddr */
	UInt nloads;
	HChar *strtab;
	SizeT strsize;
};

#define MAX_MODULES 128
static struct module_syms mods[MAX_MODULES];
static UInt nmods;

static Bool read_at(Int fd, Off64T off, void *buf, SizeT len)
{
	if (VG_(lseek)(fd, off, VKI_SEEK_SET) != off)
		return False;
	for (SizeT done = 0; done < len;) {
		Int n = VG_(read)(fd, (HChar *)buf + done, (Int)(len - done));
		if (n <= 0)
			return False;
		done += (SizeT)n;
	}
	return True;
}

static Int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;
	return x->value < y->value ? -1 : x->value > y->value;
}

/* The FUNC and OBJECT symbols of path's .dynsym, their names and its
 * PT_LOAD segments; m->n = m->nd = 0 when it has none or cannot be read
 * (names are then Valgrind's). */
static void load(struct module_syms *m, const HChar *path)
{
	m->path = VG_(strdup)("oracle.elfsyms.path", path);
	SysRes sr = VG_(open)(path, VKI_O_RDONLY, 0);
	if (sr_isError(sr))
		return;
	Int fd = (Int)sr_Res(sr);
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	Elf64_Sym *raw = NULL;
	if (!read_at(fd, 0, &eh, sizeof(eh)) || VG_(memcmp)(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    eh.e_shnum == 0 || eh.e_shnum > 4096)
		goto out;
	if (eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum > 0 && eh.e_phnum < 256) {
		Elf64_Phdr ph[256];
		if (read_at(fd, (Off64T)eh.e_phoff, ph, eh.e_phnum * sizeof(*ph)))
			for (UInt i = 0; i < eh.e_phnum && m->nloads < MAX_LOADS; i++)
				if (ph[i].p_type == PT_LOAD)
					m->loads[m->nloads++] = (struct load_seg){ (Off64T)ph[i].p_offset,
										   ph[i].p_vaddr,
										   ph[i].p_filesz };
	}
	sh = VG_(malloc)("oracle.elfsyms.sh", eh.e_shnum * sizeof(*sh));
	if (!read_at(fd, (Off64T)eh.e_shoff, sh, eh.e_shnum * sizeof(*sh)))
		goto out;
	for (UInt i = 0; i < eh.e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh.e_shnum ||
		    sh[i].sh_entsize != sizeof(Elf64_Sym))
			continue;
		const Elf64_Shdr *str = &sh[sh[i].sh_link];
		UInt count = (UInt)(sh[i].sh_size / sizeof(Elf64_Sym));
		raw = VG_(malloc)("oracle.elfsyms.raw", (count + 1) * sizeof(*raw));
		m->strtab = VG_(malloc)("oracle.elfsyms.str", str->sh_size + 1);
		if (!read_at(fd, (Off64T)sh[i].sh_offset, raw, count * sizeof(*raw)) ||
		    !read_at(fd, (Off64T)str->sh_offset, m->strtab, str->sh_size)) {
			VG_(free)(m->strtab);
			m->strtab = NULL;
			break;
		}
		m->strtab[str->sh_size] = 0;
		m->strsize = str->sh_size;
		m->syms = VG_(malloc)("oracle.elfsyms.syms", (count + 1) * sizeof(*m->syms));
		m->dsyms = VG_(malloc)("oracle.elfsyms.dsyms", (count + 1) * sizeof(*m->dsyms));
		for (UInt k = 0; k < count; k++) {
			UInt type = ELF64_ST_TYPE(raw[k].st_info);
			struct fsym f = { raw[k].st_value, raw[k].st_size, raw[k].st_name,
					  ELF64_ST_BIND(raw[k].st_info) };
			if (!raw[k].st_value || raw[k].st_name == 0 || raw[k].st_name >= str->sh_size)
				continue;
			if (type == STT_FUNC)
				m->syms[m->n++] = f;
			else if (type == STT_OBJECT && raw[k].st_size && raw[k].st_shndx != SHN_UNDEF &&
				 raw[k].st_shndx < SHN_LORESERVE)
				m->dsyms[m->nd++] = f;
		}
		msort(m->dsyms, m->nd, sizeof(*m->dsyms), fsym_cmp);
		break;
	}
out:
	if (raw)
		VG_(free)(raw);
	if (sh)
		VG_(free)(sh);
	VG_(close)(fd);
}

static const struct module_syms *module(const HChar *path)
{
	for (UInt i = 0; i < nmods; i++)
		if (!VG_(strcmp)(mods[i].path, path))
			return &mods[i];
	if (nmods == MAX_MODULES)
		return NULL;
	load(&mods[nmods], path);
	return &mods[nmods++];
}

/* The answers for the last pcs asked, direct-mapped: the scans below
 * read every symbol of the module (libc's ~3,000), and frames are named
 * again and again for the same pcs (sort: a fifth of the oracle's time). */
#define PREFER_RECENT 4096
static struct {
	const struct module_syms *m;
	Addr vaddr;
	const struct fsym *global; /* the alias to take, or NULL: keep fn */
} recent[PREFER_RECENT];

static const struct fsym *global_alias(const struct module_syms *m, Addr vaddr, const HChar *fn);

void elfsyms_prefer(const HChar *obj, Addr vaddr, HChar *fn, SizeT size)
{
	if (!obj || !*obj || !*fn)
		return;
	const struct module_syms *m = module(obj);
	if (!m || !m->n)
		return;
	UInt r = (UInt)((vaddr ^ (vaddr >> 12) ^ (Addr)m) & (PREFER_RECENT - 1));
	if (recent[r].m != m || recent[r].vaddr != vaddr) {
		recent[r].m = m;
		recent[r].vaddr = vaddr;
		recent[r].global = global_alias(m, vaddr, fn);
	}
	if (recent[r].global) {
		VG_(strncpy)(fn, m->strtab + recent[r].global->name, size - 1);
		fn[size - 1] = 0;
	}
}

/* The global symbol at the start of the function holding vaddr whose name
 * is fn, when fn is not global itself; else NULL. */
static const struct fsym *global_alias(const struct module_syms *m, Addr vaddr, const HChar *fn)
{
	/* The function holding vaddr whose name is fn: its start. */
	const struct fsym *mine = NULL;
	for (UInt i = 0; i < m->n && !mine; i++) {
		const struct fsym *s = &m->syms[i];
		if (s->value <= vaddr && vaddr < s->value + (s->size ? s->size : 1) &&
		    !VG_(strcmp)(m->strtab + s->name, fn))
			mine = s;
	}
	if (!mine || mine->bind == STB_GLOBAL)
		return NULL;
	for (UInt i = 0; i < m->n; i++) {
		const struct fsym *s = &m->syms[i];
		if (s->value == mine->value && s->bind == STB_GLOBAL)
			return s;
	}
	return NULL;
}

Bool elfsyms_data(const HChar *path, Off64T off, const HChar **name, Addr *sym_off, SizeT *size)
{
	if (!path || !*path)
		return False;
	const struct module_syms *m = module(path);
	if (!m || !m->nd)
		return False;
	Addr vaddr = 0;
	Bool in_load = False;
	for (UInt i = 0; i < m->nloads && !in_load; i++)
		if (off >= m->loads[i].offset && off < m->loads[i].offset + (Off64T)m->loads[i].filesz) {
			vaddr = m->loads[i].vaddr + (Addr)(off - m->loads[i].offset);
			in_load = True;
		}
	if (!in_load)
		return False;
	/* The last symbol starting at or below vaddr; aliases share a start, and
	 * one that ends before vaddr may hide none that holds it (no nesting in
	 * .dynsym's data worth naming). */
	UInt lo = 0, hi = m->nd;
	while (lo < hi) {
		UInt mid = lo + (hi - lo) / 2;
		if (m->dsyms[mid].value <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return False;
	const struct fsym *s = &m->dsyms[lo - 1];
	if (vaddr >= s->value + s->size)
		return False;
	*name = m->strtab + s->name;
	*sym_off = vaddr - s->value;
	*size = s->size;
	return True;
}
