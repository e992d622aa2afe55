/* elfsyms: a function's preferred alias, and data symbols Valgrind drops,
 * from a module's .dynsym; see elfsyms.h. */
#include "elfsyms.h"
#include "msort.h"

#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
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
#define MAX_PLTS 4

struct plt_sec {
	Addr vaddr;
	SizeT size;
	Off64T offset;
};

struct plt_slot {
	Addr got;  /* the GOT slot's vaddr (the relocation's offset) */
	UInt name; /* its symbol's name, offset in strtab */
};

struct module_syms {
	HChar *path;
	struct fsym *syms; /* STT_FUNC */
	UInt n;
	struct fsym *dsyms; /* STT_OBJECT with a size, by value */
	UInt nd;
	struct load_seg loads[MAX_LOADS]; /* PT_LOAD: file offset -> vaddr */
	UInt nloads;
	struct plt_sec plts[MAX_PLTS]; /* .plt, .plt.sec */
	UInt nplts;
	struct plt_slot *slots; /* .rela.plt's JUMP_SLOTs */
	UInt nslots;
	UInt nraw; /* .dynsym's count, while loading */
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

/* The PLT sections and the .rela.plt slots (a relocation's symbol is a
 * .dynsym index: raw, read already), for naming PLT stubs. */
static void load_plt(struct module_syms *m, Int fd, const Elf64_Ehdr *eh, const Elf64_Shdr *sh,
		     const Elf64_Sym *raw)
{
	if (eh->e_shstrndx == SHN_UNDEF || eh->e_shstrndx >= eh->e_shnum)
		return;
	const Elf64_Shdr *names = &sh[eh->e_shstrndx];
	if (names->sh_size == 0 || names->sh_size > (1 << 20))
		return;
	HChar *shstr = VG_(malloc)("oracle.elfsyms.shstr", names->sh_size + 1);
	if (!read_at(fd, (Off64T)names->sh_offset, shstr, names->sh_size))
		goto out;
	shstr[names->sh_size] = 0;
	for (UInt i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_name >= names->sh_size)
			continue;
		const HChar *nm = shstr + sh[i].sh_name;
		if ((!VG_(strcmp)(nm, ".plt") || !VG_(strcmp)(nm, ".plt.sec")) && m->nplts < MAX_PLTS)
			m->plts[m->nplts++] = (struct plt_sec){ sh[i].sh_addr, sh[i].sh_size,
								(Off64T)sh[i].sh_offset };
		if (sh[i].sh_type == SHT_RELA && !VG_(strcmp)(nm, ".rela.plt") && !m->slots &&
		    sh[i].sh_entsize == sizeof(Elf64_Rela) && sh[i].sh_size < (64u << 20)) {
			UInt count = (UInt)(sh[i].sh_size / sizeof(Elf64_Rela));
			Elf64_Rela *r = VG_(malloc)("oracle.elfsyms.rela", (count + 1) * sizeof(*r));
			if (read_at(fd, (Off64T)sh[i].sh_offset, r, count * sizeof(*r))) {
				m->slots = VG_(malloc)("oracle.elfsyms.slots",
						       (count + 1) * sizeof(*m->slots));
				for (UInt k = 0; k < count; k++) {
					UInt sym = (UInt)ELF64_R_SYM(r[k].r_info);
					if (sym && sym < m->nraw && raw[sym].st_name < m->strsize)
						m->slots[m->nslots++] = (struct plt_slot){
							r[k].r_offset, raw[sym].st_name };
				}
			}
			VG_(free)(r);
		}
	}
out:
	VG_(free)(shstr);
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
		m->nraw = count;
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
	if (m->strtab)
		load_plt(m, fd, &eh, sh, raw);
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

/* File offset off of module m as a vaddr, through its PT_LOADs. */
static Bool vaddr_of(const struct module_syms *m, Off64T off, Addr *vaddr)
{
	for (UInt i = 0; i < m->nloads; i++)
		if (off >= m->loads[i].offset && off < m->loads[i].offset + (Off64T)m->loads[i].filesz) {
			*vaddr = m->loads[i].vaddr + (Addr)(off - m->loads[i].offset);
			return True;
		}
	return False;
}

Bool elfsyms_data(const HChar *path, Off64T off, const HChar **name, Addr *sym_off, SizeT *size)
{
	if (!path || !*path)
		return False;
	const struct module_syms *m = module(path);
	if (!m || !m->nd)
		return False;
	Addr vaddr;
	if (!vaddr_of(m, off, &vaddr))
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

Bool elfsyms_plt(const HChar *path, Off64T off, HChar *fn, SizeT size)
{
	if (!path || !*path)
		return False;
	const struct module_syms *m = module(path);
	Addr vaddr;
	if (!m || !m->nslots || !vaddr_of(m, off, &vaddr))
		return False;
	const struct plt_sec *p = NULL;
	for (UInt i = 0; i < m->nplts && !p; i++)
		if (vaddr >= m->plts[i].vaddr && vaddr < m->plts[i].vaddr + m->plts[i].size)
			p = &m->plts[i];
	if (!p)
		return False;
	/* The stub's jump through its GOT slot: the pc is the jump itself (the
	 * GOT load's) or the stub's start ([endbr64] [bnd] jmp *disp32(%rip)). */
	UChar b[16];
	Off64T at = p->offset + (Off64T)(vaddr - p->vaddr);
	SysRes sr = VG_(open)(path, VKI_O_RDONLY, 0);
	if (sr_isError(sr))
		return False;
	Int fd = (Int)sr_Res(sr);
	Bool got = read_at(fd, at, b, sizeof(b));
	VG_(close)(fd);
	if (!got)
		return False;
	UInt i = 0;
	if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
		i = 4;
	if (b[i] == 0xf2)
		i++;
	if (b[i] != 0xff || b[i + 1] != 0x25)
		return False;
	Int disp;
	VG_(memcpy)(&disp, b + i + 2, sizeof(disp));
	Addr slot = vaddr + i + 6 + (Addr)(Long)disp;
	for (UInt k = 0; k < m->nslots; k++)
		if (m->slots[k].got == slot) {
			VG_(snprintf)(fn, size, "%s@plt", m->strtab + m->slots[k].name);
			return True;
		}
	return False;
}
