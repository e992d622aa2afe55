/* frames: the source frames of one code address; see frames.h. */
#include "frames.h"

#include "elfsyms.h"

#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"

static const HChar *base_name(const HChar *path)
{
	const HChar *s = VG_(strrchr)(path, '/');
	return s ? s + 1 : path;
}

static void copy(HChar *dst, const HChar *src, SizeT size)
{
	VG_(strncpy)(dst, src, size - 1);
	dst[size - 1] = 0;
}

void frames_drop_version(HChar *fn)
{
	HChar *at_sign = VG_(strchr)(fn, '@');
	if (at_sign && at_sign != fn)
		*at_sign = 0;
}

/* A PLT stub, which Valgrind leaves unnamed: "SYMBOL@plt" (elfsyms.h). */
static void plt_function(Addr at, HChar *fn, SizeT size)
{
	const NSegment *seg = VG_(am_find_nsegment)(at);
	if (seg && seg->kind == SkFileC)
		elfsyms_plt(VG_(am_get_filename)(seg), (Off64T)(at - seg->start) + seg->offset, fn,
			    size);
}

void frames_function(DiEpoch ep, Addr at, HChar *fn, SizeT size)
{
	const HChar *s, *obj;
	if (!VG_(get_fnname)(ep, at, &s) || !*s) {
		plt_function(at, fn, size);
		return;
	}
	copy(fn, s, size);
	frames_drop_version(fn);
	DebugInfo *di = VG_(find_DebugInfo)(ep, at);
	if (di && VG_(get_objname)(ep, at, &obj))
		elfsyms_prefer(obj, at - (Addr)VG_(DebugInfo_get_text_bias)(di), fn, size);
}

Addr frames_site(Addr pc, Bool leaf)
{
	return leaf ? pc : pc - 1;
}

/* One level of VG_(describe_IP)'s human form, "0xADDR: FN (FILE:LINE)",
 * "0xADDR: FN (in OBJ)" or "0xADDR: FN": the tool API gives the inlined
 * levels' names and call sites only through it. */
static void parse_level(const HChar *s, struct src_frame *f)
{
	const HChar *rest = VG_(strstr)(s, ": ");
	rest = rest ? rest + 2 : s;
	SizeT len = VG_(strlen)(rest);
	const HChar *open = NULL;
	if (len && rest[len - 1] == ')')
		for (const HChar *p = rest; (p = VG_(strstr)(p, " (")) != NULL; p++)
			open = p;
	SizeT fnlen = open ? (SizeT)(open - rest) : len;
	if (fnlen >= sizeof(f->fn))
		fnlen = sizeof(f->fn) - 1;
	VG_(memcpy)(f->fn, rest, fnlen);
	f->fn[fnlen] = 0;
	if (!VG_(strcmp)(f->fn, "???") || !fnlen)
		copy(f->fn, "??", sizeof(f->fn));
	f->file[0] = 0;
	f->line = 0;
	if (!open || !VG_(strncmp)(open, " (in ", 5))
		return;
	const HChar *loc = open + 2, *end = rest + len - 1, *colon = NULL;
	for (const HChar *p = loc; p < end; p++)
		if (*p == ':')
			colon = p;
	if (!colon)
		return;
	SizeT flen = (SizeT)(colon - loc);
	if (flen >= sizeof(f->file))
		flen = sizeof(f->file) - 1;
	VG_(memcpy)(f->file, loc, flen);
	f->file[flen] = 0;
	f->line = (UInt)VG_(strtoll10)(colon + 1, NULL);
}

Int frames_of_pc(DiEpoch ep, Addr pc, Bool leaf, struct src_frame *out, Int max)
{
	Addr at = frames_site(pc, leaf);
	const HChar *s, *dir, *obj;
	if (max <= 0)
		return 0;
	if (!VG_(get_objname)(ep, at, &obj))
		obj = "";
	InlIPCursor *iipc = VG_(new_IIPC)(ep, at);
	Int n = 0;
	Bool more;
	do {
		struct src_frame *f = &out[n < max ? n : max - 1];
		parse_level(VG_(describe_IP)(ep, at, iipc), f);
		copy(f->obj, obj, sizeof(f->obj));
		more = VG_(next_IIPC)(iipc);
		f->inlined = more;
		if (n < max)
			n++;
	} while (more);
	VG_(delete_IIPC)(iipc);
	/* The innermost level's source line is the line table's: with its
	 * directory, as before inline frames were shown. */
	UInt line = 0;
	if (VG_(get_filename_linenum)(ep, at, &s, &dir, &line)) {
		if (dir && *dir && *s != '/')
			VG_(snprintf)(out[0].file, sizeof(out[0].file), "%s/%s", dir, s);
		else
			copy(out[0].file, s, sizeof(out[0].file));
		out[0].line = line;
	}
	/* The physical function by its symbol (a C++ name's parentheses would
	 * confuse parse_level). */
	frames_function(ep, at, out[n - 1].fn, sizeof(out[n - 1].fn));
	return n;
}

/* The language runtimes' libraries (tools/witch/object_view.c's list) and
 * Valgrind's preloads, where the oracle's malloc runs. */
static const HChar *const runtime_libs[] = {
	"libc.so", "libstdc++.so", "libgcc_s.so", "ld-linux", "libm.so", "libc++.so",
	"libc++abi.so", "libpthread.so", "libdl.so", "vgpreload_",
};

static const HChar *const system_dirs[] = {
	"/usr/include/", "/usr/local/include/", "/usr/lib/gcc/", "/usr/lib/llvm-",
};

Bool frames_library(const struct src_frame *f)
{
	const HChar *base = base_name(f->obj);
	for (UInt i = 0; i < sizeof(runtime_libs) / sizeof(runtime_libs[0]); i++)
		if (!VG_(strncmp)(base, runtime_libs[i], VG_(strlen)(runtime_libs[i])))
			return True;
	for (UInt i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		if (!VG_(strncmp)(f->file, system_dirs[i], VG_(strlen)(system_dirs[i])))
			return True;
	return False;
}
