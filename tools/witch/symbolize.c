/* symbolize: pcs to source frames with libdwfl; see symbolize.h. */
#include "symbolize.h"

#include "demangle.h"
#include "index_table.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char unknown[] = "??";
static const char jit_name[] = "[JIT]";

enum module_state {
	MODULE_UNTRIED,
	MODULE_USABLE,
	MODULE_UNUSABLE,	/* missing, unreadable or another build */
};

struct sym_module {
	enum module_state state;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	const char *unknown_name;	/* "[unknown in FILE]", made once */
};

struct sym_entry {
	uint32_t module;
	uint64_t offset;
	struct witch_frame *frames;
	size_t n;
};

struct witch_symbolizer {
	const struct witch_profile *p;
	struct sym_module *mods;	/* one per model module */
	struct sym_entry *entries;
	size_t nentries, capentries;
	struct index_table cache;	/* (module, offset) -> entry */
	char **strings;			/* names we had to copy */
	size_t nstrings, capstrings;
};

static const Dwfl_Callbacks offline_callbacks = {
	/* report_elf hands the file over, so find_elf is only a fallback. */
	.find_elf = dwfl_build_id_find_elf,
	/* Separate debuginfo: /usr/lib/debug by build-id or .gnu_debuglink. */
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

int witch_symbolizer_new(const struct witch_profile *p,
			 struct witch_symbolizer **out)
{
	struct witch_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->p = p;
	s->mods = calloc(p->nmodules ? p->nmodules : 1, sizeof(*s->mods));
	if (!s->mods) {
		free(s);
		return -ENOMEM;
	}
	index_table_init(&s->cache);
	*out = s;
	return 0;
}

void witch_symbolizer_free(struct witch_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->p->nmodules; i++)
		if (s->mods[i].dwfl)
			dwfl_end(s->mods[i].dwfl);
	free(s->mods);
	for (size_t i = 0; i < s->nentries; i++)
		free(s->entries[i].frames);
	free(s->entries);
	for (size_t i = 0; i < s->nstrings; i++)
		free(s->strings[i]);
	free(s->strings);
	index_table_free(&s->cache);
	free(s);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* str (malloc'd; NULL: out of memory), now owned by the symbolizer. */
static const char *keep_owned(struct witch_symbolizer *s, char *str)
{
	if (!str)
		return NULL;
	if (s->nstrings == s->capstrings) {
		size_t ncap = s->capstrings ? 2 * s->capstrings : 16;
		char **ns = realloc(s->strings, ncap * sizeof(*ns));

		if (!ns) {
			free(str);
			return NULL;
		}
		s->strings = ns;
		s->capstrings = ncap;
	}
	s->strings[s->nstrings++] = str;
	return str;
}

/* A copy of the first len bytes of str, owned by the symbolizer. */
static const char *keep_string(struct witch_symbolizer *s, const char *str,
			       size_t len)
{
	return keep_owned(s, strndup(str, len));
}

/* f named name as people read it: demangled when it is a mangled name
 * (the mangled one kept in raw). 0 or -ENOMEM. */
static int name_frame(struct witch_symbolizer *s, struct witch_frame *f,
		      const char *name)
{
	char *d = witch_demangle(name);

	f->raw = NULL;
	f->function = name;
	if (!d)
		return 0;
	f->function = keep_owned(s, d);
	if (!f->function)
		return -ENOMEM;
	f->raw = name;
	return 0;
}

/* The name of a frame nothing names: "[unknown in FILE]" once per module,
 * "[JIT]" outside every module. NULL: out of memory. */
static const char *unknown_name(struct witch_symbolizer *s, uint32_t mi)
{
	struct sym_module *m;
	char *n;

	if (mi == WITCH_NO_MODULE)
		return jit_name;
	m = &s->mods[mi];
	if (!m->unknown_name) {
		if (asprintf(&n, "[unknown in %s]", base_name(s->p->modules[mi].path)) < 0)
			return NULL;
		m->unknown_name = keep_owned(s, n);
	}
	return m->unknown_name;
}

/* Compare the file's GNU build-id note with the profile's hex string. */
static int check_build_id(Dwfl_Module *mod, const char *want, char *got,
			  size_t gotlen)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	Dwarf_Addr bias;
	int len;

	/* The build-id is only known once the main ELF has been loaded. */
	if (!dwfl_module_getelf(mod, &bias))
		return -EIO;
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len <= 0) {
		snprintf(got, gotlen, "none");
		return -ENOENT;
	}
	got[0] = '\0';
	for (int i = 0; i < len && (size_t)(2 * i + 2) < gotlen; i++)
		snprintf(got + 2 * i, 3, "%02x", bits[i]);
	return strcmp(got, want) ? -ESTALE : 0;
}

/* Open module mi once; on failure warn once and mark it unusable. */
static void open_module(struct witch_symbolizer *s, uint32_t mi)
{
	const struct witch_module *pm = &s->p->modules[mi];
	struct sym_module *m = &s->mods[mi];
	char got[256];

	m->state = MODULE_UNUSABLE;
	/* The kernel's vDSO has no file to open: its frames (clock_gettime
	 * interrupted) are [unknown in linux-vdso.so.1], without a warning. */
	if (strncmp(base_name(pm->path), "linux-vdso.so", 13) == 0 ||
	    strncmp(base_name(pm->path), "linux-gate.so", 13) == 0)
		return;
	m->dwfl = dwfl_begin(&offline_callbacks);
	if (!m->dwfl) {
		fprintf(stderr,
			"witch: warning: cannot symbolize %s: %s; its frames are shown as [unknown in %s]\n",
			pm->path, dwfl_errmsg(-1), base_name(pm->path));
		return;
	}
	dwfl_report_begin(m->dwfl);
	/*
	 * The profile's base is the load bias (dlpi_addr): file vaddr v is at
	 * base + v. That is add_p_vaddr = true; with false, libdwfl would take
	 * base as the address of the first PT_LOAD segment, which differs from
	 * the bias whenever that segment's p_vaddr is not 0 (prelinked or
	 * oddly linked objects). For ET_EXEC libdwfl ignores base.
	 */
	m->mod = dwfl_report_elf(m->dwfl, base_name(pm->path), pm->path, -1,
				 pm->base, true);
	if (!m->mod) {
		fprintf(stderr,
			"witch: warning: cannot open module %s: %s; its frames are shown as [unknown in %s]\n",
			pm->path, dwfl_errmsg(-1), base_name(pm->path));
		dwfl_report_end(m->dwfl, NULL, NULL);
		return;
	}
	if (dwfl_report_end(m->dwfl, NULL, NULL) != 0) {
		fprintf(stderr,
			"witch: warning: cannot load module %s: %s; its frames are shown as [unknown in %s]\n",
			pm->path, dwfl_errmsg(-1), base_name(pm->path));
		return;
	}
	if (pm->build_id) {
		int rc = check_build_id(m->mod, pm->build_id, got, sizeof(got));

		if (rc == -EIO) {
			fprintf(stderr,
				"witch: warning: cannot read ELF of %s: %s; its frames are shown as [unknown in %s]\n",
				pm->path, dwfl_errmsg(-1), base_name(pm->path));
			return;
		}
		if (rc) {
			/* Another build would map pcs to the wrong code. */
			fprintf(stderr,
				"witch: warning: %s has build-id %s but the profile recorded %s (rebuilt since the run?); its frames are shown as [unknown in %s]\n",
				pm->path, got, pm->build_id, base_name(pm->path));
			return;
		}
	}
	m->state = MODULE_USABLE;
}

/* The linkage (mangled) name, else DW_AT_name, following
 * abstract_origin/specification (inlined copies): C++ DW_AT_name is the
 * bare "bar" of ns::Foo<int>::bar, the linkage name says all of it. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *n;

	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return n;
}

/* The source file of an inlined call: DW_AT_call_file indexes its CU's table. */
static const char *call_file(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx;
	Dwarf_Files *files;
	size_t nfiles;
	Dwarf_Die cu;

	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &idx))
		return NULL;
	if (!dwarf_diecu(die, &cu, NULL, NULL) ||
	    dwarf_getsrcfiles(&cu, &files, &nfiles) || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static unsigned call_line(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word line;

	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &line))
		return 0;
	return line > UINT32_MAX ? 0 : (unsigned)line;
}

static int push_frame(struct sym_entry *e, size_t *cap,
		      const struct witch_frame *f)
{
	if (e->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4;
		struct witch_frame *nf = realloc(e->frames, ncap * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		e->frames = nf;
		*cap = ncap;
	}
	e->frames[e->n++] = *f;
	return 0;
}

/* *die becomes the innermost inlined call or function that contains it
 * in the concrete tree; *found false when there is none (or libdw failed:
 * the frame of the symbol ends the list then). */
static void next_function_scope(Dwarf_Die *die, bool *found)
{
	Dwarf_Die *chain = NULL;
	int n = dwarf_getscopes_die(die, &chain);

	*found = false;
	for (int j = 1; j < n && !*found; j++) {
		int tag = dwarf_tag(&chain[j]);

		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
			*die = chain[j];
			*found = true;
		}
	}
	free(chain);
}

/* Fill e with the frames of pc in a usable module. */
/* The bytes of the module's executable section at file address addr:
 * *data and *n (what is left of the section from there), or NULL. */
static const uint8_t *section_bytes(Elf *elf, GElf_Addr addr, size_t *n, const char **name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || addr < sh.sh_addr ||
		    addr >= sh.sh_addr + sh.sh_size)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || addr - sh.sh_addr >= d->d_size)
			return NULL;
		*n = d->d_size - (addr - sh.sh_addr);
		*name = elf_strptr(elf, shstrndx, sh.sh_name);
		return (const uint8_t *)d->d_buf + (addr - sh.sh_addr);
	}
	return NULL;
}

/* The symbol a dynamic relocation at file address slot binds, or NULL. */
static const char *reloc_symbol_at(Elf *elf, GElf_Addr slot)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_entsize == 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			Elf_Data *symd;
			Elf_Scn *symscn;
			GElf_Shdr symsh;
			if (!gelf_getrela(d, (int)i, &r) || r.r_offset != slot ||
			    GELF_R_SYM(r.r_info) == 0 ||
			    (symscn = elf_getscn(elf, sh.sh_link)) == NULL ||
			    !gelf_getshdr(symscn, &symsh) || (symd = elf_getdata(symscn, NULL)) == NULL ||
			    !gelf_getsym(symd, (int)GELF_R_SYM(r.r_info), &sym))
				continue;
			return elf_strptr(elf, symsh.sh_link, sym.st_name);
		}
	}
	return NULL;
}

/*
 * A PLT entry has no symbol of its own: name it after the function its GOT
 * slot binds, "memcpy@plt", as perf and objdump do.  pc is the entry's
 * start or its jump (the leaf of a trap on its GOT load): [endbr64] [bnd]
 * jmp *disp32(%rip), whose slot's relocation names the function.  NULL
 * when pc is not such an entry (PLT0 has no relocation).
 */
static const char *plt_name(struct witch_symbolizer *s, Dwfl_Module *mod, Dwarf_Addr pc)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	const char *sec = NULL, *fn;
	size_t n = 0, i = 0;
	char *name;
	int32_t disp;

	if (!elf)
		return NULL;
	const uint8_t *b = section_bytes(elf, pc - bias, &n, &sec);
	if (!b || !sec || strncmp(sec, ".plt", 4) != 0)
		return NULL;
	if (n >= 4 && memcmp(b, endbr64, 4) == 0)
		i = 4;
	if (i < n && b[i] == 0xf2) /* bnd */
		i++;
	if (i + 6 > n || b[i] != 0xff || b[i + 1] != 0x25)
		return NULL;
	memcpy(&disp, b + i + 2, sizeof(disp));
	fn = reloc_symbol_at(elf, pc - bias + i + 6 + (GElf_Addr)(int64_t)disp);
	if (!fn || !*fn || asprintf(&name, "%s@plt", fn) < 0)
		return NULL;
	return keep_owned(s, name);
}

static int frames_of(struct witch_symbolizer *s, Dwfl_Module *mod,
		     struct sym_entry *e, const struct witch_frame *proto,
		     Dwarf_Addr pc, const char *unknown_fn)
{
	struct witch_frame f = *proto;
	const char *symname, *file = NULL;
	Dwarf_Die *cudie, *scopes = NULL;
	Dwarf_Addr bias;
	Dwfl_Line *line;
	GElf_Off symoff;
	GElf_Sym sym;
	size_t cap = 0;
	bool outer_done = false, have = false;
	const char *cf;
	Dwarf_Die cur;
	int lineno = 0, nscopes = 0, rc = 0;

	symname = dwfl_module_addrinfo(mod, pc, &symoff, &sym, NULL, NULL,
				       NULL);
	if (symname && strchr(symname, '@') && symname[0] != '@') {
		/* Drop the symbol version (__libc_start_main@@GLIBC_2.34):
		 * noise in a report, and not part of the function's name. */
		symname = keep_string(s, symname, strcspn(symname, "@"));
		if (!symname)
			return -ENOMEM;
	}
	if (!symname)
		symname = plt_name(s, mod, pc);
	/*
	 * libdwfl takes the compile unit whose first range starts below pc,
	 * and its line table's last row before pc, even when pc is in a gap
	 * between the unit's ranges (crt1's _start after a main of a few
	 * bytes in .text.startup): such a pc has no line, as addr2line says.
	 * A unit that states no ranges is taken at its word (aranges').
	 */
	cudie = dwfl_module_addrdie(mod, pc, &bias);
	if (cudie && (dwarf_hasattr(cudie, DW_AT_ranges) || dwarf_hasattr(cudie, DW_AT_high_pc)) &&
	    dwarf_haspc(cudie, pc - bias) == 0)
		cudie = NULL;
	line = cudie ? dwfl_module_getsrc(mod, pc) : NULL;
	if (line)
		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	f.file = file ? file : unknown;
	f.line = file && lineno > 0 ? (unsigned)lineno : 0;

	if (cudie)
		nscopes = dwarf_getscopes(cudie, pc - bias, &scopes);
	/* nscopes < 0: no usable DWARF here; fall back to the symbol alone. */
	for (int i = 0; i < nscopes && !have; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_inlined_subroutine || tag == DW_TAG_subprogram) {
			cur = scopes[i];
			have = true;
		}
	}
	/*
	 * Outward from the innermost function scope. What contains an inlined
	 * call is found among its concrete parents (dwarf_getscopes_die), as
	 * eu-addr2line -i finds it: after an inlined instance dwarf_getscopes
	 * goes on with the scopes of its abstract definition, which can skip
	 * the callers (rustc's inlined generics lost a frame that addr2line
	 * -i shows).
	 */
	while (have && !outer_done) {
		const char *name = die_name(&cur);

		f.unknown = !name;
		if (dwarf_tag(&cur) == DW_TAG_subprogram) {
			/* The symbol keeps clone suffixes (.constprop.0 ...),
			 * which tell which copy of the code ran. */
			name = symname ? symname : name;
			f.unknown = !name;
			outer_done = true;
		}
		f.raw = NULL;
		f.function = unknown_fn;
		if (name && (rc = name_frame(s, &f, name)))
			goto out;
		f.inlined = !outer_done;
		if ((rc = push_frame(e, &cap, &f)))
			goto out;
		if (outer_done)
			break;
		/* The next frame out is located at this call site. */
		cf = call_file(&cur);
		f.file = cf ? cf : unknown;
		f.line = cf ? call_line(&cur) : 0;
		next_function_scope(&cur, &have);
	}
	if (!outer_done) {
		f.unknown = !symname;
		f.inlined = false;
		if (symname)
			rc = name_frame(s, &f, symname);
		else
			f.function = unknown_fn, f.raw = NULL;
		if (!rc)
			rc = push_frame(e, &cap, &f);
	}
out:
	free(scopes);
	return rc;
}

static uint64_t entry_hash(uint32_t module, uint64_t offset)
{
	return index_hash_mix(index_hash_u64(module), offset);
}

int witch_symbolize_node(struct witch_symbolizer *s, uint32_t node,
			 const struct witch_frame **frames, size_t *n)
{
	const struct witch_node *wn;
	struct witch_frame proto = { 0 };
	struct index_probe pr;
	struct sym_entry *e;
	uint64_t h;
	uint32_t idx;
	int rc;

	if (node == 0 || node >= s->p->nnodes)
		return -EINVAL;
	wn = &s->p->nodes[node];
	h = entry_hash(wn->module, wn->offset);
	index_table_probe_start(&s->cache, h, &pr);
	while (index_table_probe_next(&s->cache, &pr, &idx)) {
		e = &s->entries[idx];
		if (e->module == wn->module && e->offset == wn->offset) {
			*frames = e->frames;
			*n = e->n;
			return 0;
		}
	}

	if (s->nentries == s->capentries) {
		size_t ncap = s->capentries ? s->capentries * 2 : 64;
		struct sym_entry *ne = realloc(s->entries, ncap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		s->entries = ne;
		s->capentries = ncap;
	}
	e = &s->entries[s->nentries];
	memset(e, 0, sizeof(*e));
	e->module = wn->module;
	e->offset = wn->offset;

	proto.function = unknown_name(s, wn->module);
	if (!proto.function)
		return -ENOMEM;
	proto.unknown = true;
	proto.file = unknown;
	proto.address = wn->pc;
	proto.offset = wn->offset;
	proto.module = wn->module == WITCH_NO_MODULE ?
			       unknown : s->p->modules[wn->module].path;
	if (wn->module != WITCH_NO_MODULE &&
	    s->mods[wn->module].state == MODULE_UNTRIED)
		open_module(s, wn->module);
	if (wn->module != WITCH_NO_MODULE &&
	    s->mods[wn->module].state == MODULE_USABLE) {
		rc = frames_of(s, s->mods[wn->module].mod, e, &proto, wn->pc,
			       proto.function);
	} else {
		size_t cap = 0;

		rc = push_frame(e, &cap, &proto);
	}
	if (!rc)
		rc = index_table_insert(&s->cache, h, (uint32_t)s->nentries);
	if (rc) {
		free(e->frames);
		return rc;
	}
	s->nentries++;
	*frames = e->frames;
	*n = e->n;
	return 0;
}
