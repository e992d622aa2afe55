/* objects: the object of every access; see objects.h. */
#include "objects.h"

#include "callstack.h"
#include "elfsyms.h"
#include "frames.h"
#include "requests.h"

#include "pub_tool_aspacemgr.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_vkiscnums.h"
#include "pub_tool_wordfm.h"

#include "libvex_guest_amd64.h"

const HChar *const object_kind_name[OBJ_KINDS] = {
	[OBJ_UNKNOWN] = "unknown", [OBJ_HEAP] = "heap", [OBJ_STATIC] = "static",
	[OBJ_TLS] = "tls", [OBJ_STACK] = "stack",
};

/* Static TLS sits just below the thread pointer (x86-64 TLS variant II);
 * its size is the loader's secret, so the block is taken as this much. */
#define TLS_GUESS 8192

/* --- the object table: <kind, key> -> id ----------------------------------------- */

static struct object *objs;  /* by id; 0 = unknown */
static UInt n_objs, cap_objs;
static UInt *obj_slots;      /* open addressing on <kind, key>; 0 = empty */
static UInt n_obj_slots;

static UInt hash_kk(UInt kind, Addr key)
{
	ULong h = ((ULong)key * 0x9E3779B97F4A7C15ULL) ^ ((ULong)kind * 0xC2B2AE3D27D4EB4FULL);
	return (UInt)(h >> 32) ^ (UInt)h;
}

static void obj_slots_grow(void)
{
	UInt n = n_obj_slots ? n_obj_slots * 2 : 1024;
	UInt *s = VG_(calloc)("oracle.objects.slots", n, sizeof(UInt));
	for (UInt id = 1; id < n_objs; id++) {
		UInt i = hash_kk(objs[id].kind, objs[id].key) & (n - 1);
		while (s[i])
			i = (i + 1) & (n - 1);
		s[i] = id;
	}
	if (obj_slots)
		VG_(free)(obj_slots);
	obj_slots = s;
	n_obj_slots = n;
}

/* The id of <kind, key>, or 0 when there is none yet. */
static UInt object_find(enum object_kind kind, Addr key)
{
	if (!n_obj_slots)
		return 0;
	for (UInt i = hash_kk(kind, key) & (n_obj_slots - 1); obj_slots[i];
	     i = (i + 1) & (n_obj_slots - 1)) {
		struct object *o = &objs[obj_slots[i]];
		if (o->kind == kind && o->key == key)
			return obj_slots[i];
	}
	return 0;
}

/* A new object (name is copied). */
static UInt object_new(enum object_kind kind, Addr key, const HChar *name, UInt alloc_ctx,
		       ULong size)
{
	if ((n_objs + 1) * 2 > n_obj_slots)
		obj_slots_grow();
	if (n_objs == cap_objs) {
		cap_objs = cap_objs ? cap_objs * 2 : 256;
		objs = VG_(realloc)("oracle.objects", objs, cap_objs * sizeof(*objs));
	}
	UInt id = n_objs++;
	objs[id] = (struct object){ .kind = kind, .name = VG_(strdup)("oracle.objects.name", name),
				    .alloc_ctx = alloc_ctx, .size = size, .key = key };
	UInt i = hash_kk(kind, key) & (n_obj_slots - 1);
	while (obj_slots[i])
		i = (i + 1) & (n_obj_slots - 1);
	obj_slots[i] = id;
	return id;
}

UInt objects_count(void)
{
	return n_objs;
}

const struct object *objects_get(UInt id)
{
	return &objs[id < n_objs ? id : 0];
}

static const HChar *base_name(const HChar *path)
{
	const HChar *s = VG_(strrchr)(path, '/');
	return s ? s + 1 : path;
}

/* The executable's file name, its symlinks followed: Valgrind names a
 * module by the file it mapped (python3.11) where the command may name a
 * link to it (/usr/bin/python3), and the runtime knows the executable by
 * /proc/self/exe, the file too.  A bare command name stays as given. */
static const HChar *exe_file_base(void)
{
	static HChar path[1024];
	static Bool done;
	if (done)
		return base_name(path);
	done = True;
	const HChar *exe = VG_(args_the_exename);
	if (!exe)
		return path;
	VG_(strncpy)(path, exe, sizeof(path) - 1);
	HChar link[1024];
	for (Int hop = 0; hop < 16; hop++) {
		SSizeT n = VG_(readlink)(path, link, sizeof(link) - 1);
		if (n <= 0)
			break;
		link[n] = 0;
		HChar *slash = VG_(strrchr)(path, '/');
		SizeT dir = link[0] == '/' || !slash ? 0 : (SizeT)(slash - path + 1);
		if (dir + (SizeT)n >= sizeof(path))
			break;
		VG_(memcpy)(path + dir, link, (SizeT)n + 1);
	}
	return base_name(path);
}

/* A static symbol's name: SYMBOL in the executable, SYMBOL (MODULE)
 * elsewhere, as the runtime names it (docs/objects.md). */
static void static_name(HChar *name, SizeT size, const HChar *sym, const HChar *mod)
{
	const HChar *mb = mod ? base_name(mod) : "";
	if (!*mb || !VG_(strcmp)(mb, exe_file_base()))
		VG_(snprintf)(name, size, "%s", sym);
	else
		VG_(snprintf)(name, size, "%s (%s)", sym, mb);
}

static ULong hash_str(const HChar *s)
{
	ULong h = 0xcbf29ce484222325ULL; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (UChar)*s) * 0x100000001b3ULL;
	return h;
}

/* The object of this kind named name, keyed by the name's hash: found, or
 * made. */
static UInt object_by_name(enum object_kind kind, const HChar *name)
{
	Addr key = (Addr)hash_str(name);
	UInt id = object_find(kind, key);
	return id ? id : object_new(kind, key, name, 0, 0);
}

/* --- names --------------------------------------------------------------------------- */

/* "heap from FN (FILE:LINE)" of an allocation context, named by the
 * frame `witch report` names libwitch's by (frames.h): the leaf, the
 * program's call of the allocator, inlined calls included; when that is
 * library code (strdup, qsort's buffer, operator new, std::vector's
 * allocate from a header), the first frame of the program's own code. */
static UInt heap_object(UInt ctx)
{
	UInt id = object_find(OBJ_HEAP, ctx);
	if (id)
		return id;
	static Addr pcs[64];
	static struct src_frame f[FRAMES_PER_PC];
	struct src_frame pick;
	HChar name[512];
	DiEpoch ep = VG_(current_DiEpoch)();
	Int n = context_frames(ctx, pcs, 64);
	Bool found = False;
	/* The leaf pc is already the call (callstack_caller_context). */
	for (Int i = 0; i < n && !found; i++) {
		Int m = frames_of_pc(ep, pcs[i], i == 0, f, FRAMES_PER_PC);
		if (i == 0)
			pick = f[0];
		for (Int j = 0; j < m && !found; j++)
			if (!frames_library(&f[j])) {
				pick = f[j];
				found = True;
			}
	}
	if (n < 1)
		VG_(snprintf)(name, sizeof(name), "heap from ??");
	else if (pick.line && pick.file[0])
		VG_(snprintf)(name, sizeof(name), "heap from %s (%s:%u)", pick.fn,
			      base_name(pick.file), pick.line);
	else
		VG_(snprintf)(name, sizeof(name), "heap from %s", pick.fn);
	return object_new(OBJ_HEAP, ctx, name, ctx, 0);
}

/* --- heap blocks: an interval map of live blocks ------------------------------------- */

struct block {
	Addr start;
	SizeT size;
	UInt obj;
	Bool mapped; /* an anonymous mmap, not the allocator's */
};

static WordFM *blocks; /* struct block * -> unused; overlapping intervals compare equal */

static Word block_cmp(UWord x, UWord y)
{
	const struct block *a = (const struct block *)x, *b = (const struct block *)y;
	Addr ae = a->start + (a->size ? a->size : 1), be = b->start + (b->size ? b->size : 1);
	if (ae <= b->start)
		return -1;
	if (be <= a->start)
		return 1;
	return 0;
}

static struct block *block_at(Addr a, SizeT len)
{
	struct block fake = { .start = a, .size = len };
	UWord k, v;
	return VG_(lookupFM)(blocks, &k, &v, (UWord)&fake) ? (struct block *)k : NULL;
}

/* --- the lookup cache ------------------------------------------------------------------ */

/* Direct-mapped by 64-byte line: the range an object covers (heap block,
 * static symbol) and its id.  Blocks born or freed clear their lines. */
#define CACHE_BITS 12
#define CACHE_LINE 6
static struct {
	Addr lo, hi;
	UInt obj;
} cache[1u << CACHE_BITS];

/* The last range found, in front of the lines: a loop over a big block
 * stays in it for millions of accesses. */
static Addr last_lo, last_hi;
static UInt last_obj;

static UInt line_slot(Addr a)
{
	Addr l = a >> CACHE_LINE;
	return (UInt)(l ^ (l >> CACHE_BITS)) & ((1u << CACHE_BITS) - 1);
}

static void cache_forget(Addr a, SizeT len)
{
	last_hi = 0;
	if (len >> CACHE_LINE >= (1u << CACHE_BITS)) {
		VG_(memset)(cache, 0, sizeof(cache));
		return;
	}
	for (Addr l = a >> CACHE_LINE; l <= (a + (len ? len : 1) - 1) >> CACHE_LINE; l++)
		cache[line_slot(l << CACHE_LINE)].hi = 0;
}

static void block_remove(struct block *b)
{
	UWord k, v;
	VG_(delFromFM)(blocks, &k, &v, (UWord)b);
	cache_forget(b->start, b->size);
	VG_(free)(b);
}

static void block_add(Addr a, SizeT size, UInt obj, Bool mapped)
{
	struct block *old;
	/* A mapping over older ones (MAP_FIXED): the new one wins; the map's
	 * intervals must never overlap. */
	while ((old = block_at(a, size)) != NULL)
		block_remove(old);
	struct block *b = VG_(malloc)("oracle.block", sizeof(*b));
	*b = (struct block){ .start = a, .size = size, .obj = obj, .mapped = mapped };
	VG_(addToFM)(blocks, (UWord)b, 0);
	cache_forget(a, size);
}

/* --- the allocator (the C library's, wrapped: preload_wrap.c, requests.h) --------------- */

#define MAX_TID 1024

/* A calloc or realloc under way, by thread: the new block's object takes
 * what the call touches outside any object (objects_classify), and a
 * realloc's old block waits in `held` until the call says it failed. */
static struct fill {
	UInt obj;
	Bool held;
	struct block old;
} fills[MAX_TID];

static struct fill *fill_of(ThreadId tid)
{
	return &fills[tid < MAX_TID ? tid : 0];
}

static void heap_alloc(Addr p, SizeT n)
{
	if (p && (Long)n >= 0)
		block_add(p, n, heap_object(callstack_caller_context()), False);
}

static void heap_free(Addr p)
{
	struct block *b = p ? block_at(p, 1) : NULL;
	if (b && b->start == p && !b->mapped)
		block_remove(b);
}

static void heap_fill_begin(ThreadId tid, Addr old)
{
	struct fill *f = fill_of(tid);
	UInt ctx = callstack_caller_context();
	struct block *b = old ? block_at(old, 1) : NULL;
	f->held = b && b->start == old && !b->mapped;
	if (f->held) {
		f->old = *b;
		block_remove(b);
	}
	f->obj = ctx ? heap_object(ctx) : 0;
}

static void heap_fill_end(ThreadId tid, Addr p, SizeT n)
{
	struct fill *f = fill_of(tid);
	if (p)
		heap_alloc(p, n);
	else if (f->held && n)
		block_add(f->old.start, f->old.size, f->old.obj, False);
	f->obj = 0;
	f->held = False;
}

static Bool heap_request(ThreadId tid, UWord *arg, UWord *ret)
{
	if (!VG_IS_TOOL_USERREQ('W', 'O', arg[0]))
		return False;
	switch (arg[0]) {
	case ORACLE_REQ_ALLOC:
		heap_alloc(arg[1], arg[2]);
		break;
	case ORACLE_REQ_FREE:
		heap_free(arg[1]);
		break;
	case ORACLE_REQ_FILL_BEGIN:
		heap_fill_begin(tid, arg[1]);
		break;
	case ORACLE_REQ_FILL_END:
		heap_fill_end(tid, arg[2], arg[3]);
		break;
	default:
		return False;
	}
	*ret = 0;
	return True;
}

/* --- anonymous mappings ----------------------------------------------------------------- */

/* Inside an mremap: a new mapping right after a block is that block grown. */
static Bool in_mremap;

static void pre_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs)
{
	in_mremap = sysno == __NR_mremap;
}

static void post_syscall(ThreadId tid, UInt sysno, UWord *args, UInt nargs, SysRes res)
{
	in_mremap = False;
}

/* A mapping the C library or the loader makes for itself (a thread's stack
 * and TLS, the loader's tables) is nobody's block: libwitch's heap module
 * sees only the calls that reach mmap's symbol, and those never do. */
static Bool mapped_by_program(UInt ctx)
{
	Addr pc;
	const HChar *mod;
	if (context_frames(ctx, &pc, 1) < 1)
		return False;
	if (!VG_(get_objname)(VG_(current_DiEpoch)(), pc, &mod))
		return True;
	const HChar *base = base_name(mod);
	return VG_(strncmp)(base, "libc.so", 7) && VG_(strncmp)(base, "ld-linux", 8);
}

static void on_mmap(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di_handle)
{
	const NSegment *seg = VG_(am_find_nsegment)(a);
	if (seg == NULL || seg->kind != SkAnonC || di_handle) {
		/* A module may now be where another was: its symbols are new. */
		VG_(memset)(cache, 0, sizeof(cache));
		last_hi = 0;
		return;
	}
	UInt ctx = callstack_caller_context();
	if (ctx == 0 || !mapped_by_program(ctx))
		return;
	struct block *grown = in_mremap && a ? block_at(a - 1, 1) : NULL;
	if (grown && grown->mapped && grown->start + grown->size == a) {
		/* mremap grew a block in place: the whole of it is the call's now */
		Addr start = grown->start;
		SizeT size = grown->size + len;
		block_remove(grown);
		block_add(start, size, heap_object(ctx), True);
		return;
	}
	block_add(a, len, heap_object(ctx), True);
}

static void on_munmap(Addr a, SizeT len)
{
	struct block *b;
	while (len && (b = block_at(a, len)) != NULL && b->mapped)
		block_remove(b);
	cache_forget(a, len);
}

/* mremap moved a mapping (its growth, if any, comes as a new mapping from
 * the same call): like realloc, the block is the mremap call's now. */
static void on_remap(Addr from, Addr to, SizeT len)
{
	struct block *b = block_at(from, 1);
	if (b == NULL || !b->mapped || b->start != from)
		return;
	UInt ctx = callstack_caller_context();
	UInt obj = ctx ? heap_object(ctx) : b->obj;
	block_remove(b);
	block_add(to, len, obj, True);
}

/* --- stack, tls, static --------------------------------------------------------------- */

static ThreadId cur_tid;
static Addr stack_lo, stack_hi; /* the running thread's stack [lo, hi) */

void objects_switch_thread(ThreadId tid)
{
	/* Every time: a dead thread's id may come back with another stack. */
	cur_tid = tid;
	Addr max = VG_(thread_get_stack_max)(tid);
	SizeT size = VG_(thread_get_stack_size)(tid);
	stack_hi = max ? max + 1 : 0;
	stack_lo = max && size < max ? stack_hi - size : 0;
}

/* pc -> "stack of FN": a function's name does not change while it is loaded. */
#define PC_CACHE 1024
static struct {
	Addr pc;
	UInt obj;
} pc_cache[PC_CACHE];

static UInt stack_object(Addr fpc)
{
	UInt i = (UInt)(fpc ^ (fpc >> 10)) & (PC_CACHE - 1);
	if (pc_cache[i].obj && pc_cache[i].pc == fpc)
		return pc_cache[i].obj;
	HChar fn[256] = "??", name[300];
	frames_function(VG_(current_DiEpoch)(), fpc, fn, sizeof(fn));
	VG_(snprintf)(name, sizeof(name), "stack of %s", fn);
	UInt id = object_by_name(OBJ_STACK, name);
	pc_cache[i].pc = fpc;
	pc_cache[i].obj = id;
	return id;
}

static Bool in_tls(Addr a)
{
	ULong fs = 0;
	VG_(get_shadow_regs_area)(cur_tid, (UChar *)&fs, 0,
				  offsetof(VexGuestAMD64State, guest_FS_CONST), sizeof(fs));
	return fs > TLS_GUESS && a < fs && a >= fs - TLS_GUESS;
}

/* Where symbol `name` (at start) ends: the first offset past it, probing
 * the symbol table (the tool interface gives no symbol sizes). */
static SizeT symbol_size(DiEpoch ep, Addr start, const HChar *name)
{
	HChar want[256];
	VG_(strncpy)(want, name, sizeof(want) - 1);
	want[sizeof(want) - 1] = 0;
	const HChar *n;
	PtrdiffT off;
	SizeT lo = 0, hi = 1; /* start+lo is in the symbol; start+hi is not */
	while (hi < (1ul << 32) && VG_(get_datasym_and_offset)(ep, start + hi, &n, &off) &&
	       off == (PtrdiffT)hi && !VG_(strcmp)(n, want)) {
		lo = hi;
		hi *= 2;
	}
	while (hi - lo > 1) {
		SizeT mid = lo + (hi - lo) / 2;
		if (VG_(get_datasym_and_offset)(ep, start + mid, &n, &off) && off == (PtrdiffT)mid &&
		    !VG_(strcmp)(n, want))
			lo = mid;
		else
			hi = mid;
	}
	return lo + 1;
}

/* "[data in MODULE]" by the module's name string (Valgrind keeps one per
 * loaded file): its object, without formatting and hashing the name for
 * every 8 bytes of unnamed data (interp, hashtab: a tenth of the oracle's
 * time). */
#define DATA_IN_RECENT 64
static struct {
	const HChar *mod;
	HChar base[128]; /* checked too: a name's storage may be reused */
	UInt id;
} data_in_recent[DATA_IN_RECENT];

static UInt data_in_object(const HChar *dmod)
{
	UInt r = (UInt)(((Addr)dmod >> 4) & (DATA_IN_RECENT - 1));
	const HChar *base = base_name(dmod);
	if (data_in_recent[r].mod == dmod && data_in_recent[r].id &&
	    !VG_(strcmp)(data_in_recent[r].base, base))
		return data_in_recent[r].id;
	HChar name[600];
	VG_(snprintf)(name, sizeof(name), "[data in %s]", base);
	UInt id = object_by_name(OBJ_STATIC, name);
	data_in_recent[r].mod = dmod;
	VG_(strncpy)(data_in_recent[r].base, base, sizeof(data_in_recent[r].base) - 1);
	data_in_recent[r].base[sizeof(data_in_recent[r].base) - 1] = 0;
	data_in_recent[r].id = id;
	return id;
}

/* A data symbol's object, and the range it covers (lo == hi: do not cache). */
static UInt static_object(Addr a, Addr *lo, Addr *hi)
{
	DiEpoch ep = VG_(current_DiEpoch)();
	const HChar *sym, *mod;
	PtrdiffT off;
	HChar name[600];
	*lo = *hi = a;
	if (VG_(get_datasym_and_offset)(ep, a, &sym, &off) && off >= 0) {
		Addr start = a - (Addr)off;
		UInt id = object_find(OBJ_STATIC, start);
		if (!id) {
			/* A new symbol: its module decides its name (get_objname
			 * knows the mapped files, the section kind .bss too). */
			if (!VG_(get_objname)(ep, a, &mod) &&
			    VG_(DebugInfo_sect_kind)(&mod, a) == Vg_SectUnknown)
				mod = NULL;
			static_name(name, sizeof(name), sym, mod);
			id = object_new(OBJ_STATIC, start, name, 0, 0);
			objs[id].size = symbol_size(ep, start, sym);
		}
		*lo = start;
		*hi = start + (objs[id].size ? objs[id].size : 1);
		return id;
	}
	/* A symbol Valgrind does not name, in a section it does not know (the
	 * runtime names any symbol in a loaded segment): the module's own. */
	const NSegment *fseg = VG_(am_find_nsegment)(a);
	const HChar *ffile = fseg && fseg->kind == SkFileC && !fseg->hasX ? VG_(am_get_filename)(fseg)
									 : NULL;
	SizeT dsize;
	Addr doff;
	if (ffile && elfsyms_data(ffile, (Off64T)(a - fseg->start) + fseg->offset, &sym, &doff, &dsize)) {
		Addr start = a - doff;
		UInt id = object_find(OBJ_STATIC, start);
		if (!id) {
			static_name(name, sizeof(name), sym, ffile);
			id = object_new(OBJ_STATIC, start, name, 0, 0);
			objs[id].size = dsize;
		}
		*lo = start;
		*hi = start + dsize;
		return id;
	}
	const HChar *dmod;
	VgSectKind k = VG_(DebugInfo_sect_kind)(&dmod, a);
	/* Any non-code mapping of a file with no symbol on it (.rodata comes
	 * back as Unknown): [data in FILE], as the runtime names a module's
	 * unnamed data (datasym.c: every non-executable PT_LOAD). */
	if (k == Vg_SectUnknown && ffile) {
		k = Vg_SectData;
		dmod = ffile;
	}
	if (k == Vg_SectData || k == Vg_SectBSS || k == Vg_SectGOT || k == Vg_SectGOTPLT)
		return data_in_object(dmod);
	return 0;
}

static UInt classify(Addr a, Addr pc)
{
	if (a >= stack_lo && a < stack_hi)
		return stack_object(callstack_frame_pc(a, pc));
	if (a >= last_lo && a < last_hi)
		return last_obj;
	UInt i = line_slot(a);
	if (a >= cache[i].lo && a < cache[i].hi) {
		last_lo = cache[i].lo;
		last_hi = cache[i].hi;
		return last_obj = cache[i].obj;
	}
	struct block *b = block_at(a, 1);
	if (b) {
		struct object *o = &objs[b->obj];
		if (b->size > o->size)
			o->size = b->size;
		cache[i].lo = b->start;
		cache[i].hi = b->start + b->size;
		cache[i].obj = b->obj;
		return b->obj;
	}
	Addr lo, hi;
	UInt id;
	if (in_tls(a)) {
		id = object_find(OBJ_TLS, 0);
		if (!id)
			id = object_new(OBJ_TLS, 0, "tls", 0, 0);
		lo = hi = a;
	} else {
		id = static_object(a, &lo, &hi);
	}
	/* tls, unknown and unnamed data by their aligned 8 bytes: a block or
	 * a symbol never starts inside 8 bytes nobody's block holds. */
	if (hi == lo) {
		lo = a & ~(Addr)7;
		hi = lo + 8;
	}
	cache[i].lo = lo;
	cache[i].hi = hi;
	cache[i].obj = id;
	return id;
}

UInt objects_classify(Addr a, Addr pc)
{
	UInt id = classify(a, pc);
	return id == 0 ? fill_of(cur_tid)->obj : id;
}

/* --- keys: <context, object> ------------------------------------------------------------ */

static UInt *key_ctx, *key_obj, *key_slots;
static UInt n_keys = 1, cap_keys, n_key_slots;

#define KEY_CACHE 8192
static struct {
	UInt ctx, obj, key;
} key_cache[KEY_CACHE];

static void key_slots_grow(void)
{
	UInt n = n_key_slots ? n_key_slots * 2 : 4096;
	UInt *s = VG_(calloc)("oracle.keys.slots", n, sizeof(UInt));
	for (UInt k = 1; k < n_keys; k++) {
		UInt i = hash_kk(key_obj[k], key_ctx[k]) & (n - 1);
		while (s[i])
			i = (i + 1) & (n - 1);
		s[i] = k;
	}
	if (key_slots)
		VG_(free)(key_slots);
	key_slots = s;
	n_key_slots = n;
}

UInt objects_key(UInt ctx, UInt obj)
{
	UInt c = (ctx * 2654435761u ^ obj * 40503u) & (KEY_CACHE - 1);
	if (key_cache[c].key && key_cache[c].ctx == ctx && key_cache[c].obj == obj)
		return key_cache[c].key;
	if ((n_keys + 1) * 2 > n_key_slots)
		key_slots_grow();
	UInt i = hash_kk(obj, ctx) & (n_key_slots - 1);
	for (; key_slots[i]; i = (i + 1) & (n_key_slots - 1)) {
		UInt k = key_slots[i];
		if (key_ctx[k] == ctx && key_obj[k] == obj)
			goto found;
	}
	if (n_keys >= cap_keys) {
		cap_keys = cap_keys ? cap_keys * 2 : 4096;
		key_ctx = VG_(realloc)("oracle.keys.ctx", key_ctx, cap_keys * sizeof(UInt));
		key_obj = VG_(realloc)("oracle.keys.obj", key_obj, cap_keys * sizeof(UInt));
	}
	key_ctx[n_keys] = ctx;
	key_obj[n_keys] = obj;
	key_slots[i] = n_keys++;
found:
	key_cache[c].ctx = ctx;
	key_cache[c].obj = obj;
	key_cache[c].key = key_slots[i];
	return key_slots[i];
}

UInt objects_key_ctx(UInt key)
{
	return key && key < n_keys ? key_ctx[key] : 0;
}

UInt objects_key_obj(UInt key)
{
	return key && key < n_keys ? key_obj[key] : 0;
}

/* --- byte counts per object -------------------------------------------------------------- */

void object_bytes_add(struct object_bytes *b, UInt obj, ULong n)
{
	if (obj >= b->cap) {
		UInt cap = b->cap ? b->cap : 64;
		while (cap <= obj)
			cap *= 2;
		b->v = VG_(realloc)("oracle.objects.bytes", b->v, cap * sizeof(ULong));
		VG_(memset)(b->v + b->cap, 0, (cap - b->cap) * sizeof(ULong));
		b->cap = cap;
	}
	b->v[obj] += n;
}

ULong object_bytes_get(const struct object_bytes *b, UInt obj)
{
	return b && obj < b->cap ? b->v[obj] : 0;
}

void object_bytes_clear(struct object_bytes *b)
{
	if (b->v)
		VG_(memset)(b->v, 0, b->cap * sizeof(ULong));
}

/* --- start ---------------------------------------------------------------------------------- */

static Word blocks_cmp(UWord x, UWord y)
{
	return block_cmp(x, y);
}

void objects_init(void)
{
	object_new(OBJ_UNKNOWN, 0, "unknown", 0, 0);
	blocks = VG_(newFM)(VG_(malloc), "oracle.blocks", VG_(free), blocks_cmp);
	VG_(needs_client_requests)(heap_request);
	VG_(needs_syscall_wrapper)(pre_syscall, post_syscall);
	VG_(track_new_mem_mmap)(on_mmap);
	VG_(track_die_mem_munmap)(on_munmap);
	VG_(track_copy_mem_remap)(on_remap);
}
