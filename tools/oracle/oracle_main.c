/* witch-oracle: an exhaustive Valgrind tool for libwitch's three clients.
 *
 * Every load and store of the client is instrumented (instrument()) with a
 * call into access.c, which decides dead stores, silent stores and
 * redundant loads byte by byte against shadow memory (shadow.c); contexts
 * come from a shadow call stack kept at calls and returns (callstack.c).
 * Every access also gets its object (objects.c: heap block, static
 * symbol, stack frame, TLS), which the shadow keeps with its context.
 * At exit, output.c writes PREFIX.dead.json, PREFIX.silent.json and
 * PREFIX.load.json in `witch report --json`'s schema.  Witch 4.7 measured
 * its sampling against such exhaustive tools (DeadSpy, RedSpy, LoadSpy);
 * bench/accuracy.sh does the same for libwitch.
 *
 * Options: --depth=N (frames per context, default 128 as WITCH_DEPTH),
 * --tolerance=T (FP relative tolerance, default 0.01 as
 * WITCH_FP_TOLERANCE), --top=N (pairs written, default 1000; totals count
 * all), --out=PREFIX (default witch-oracle.PID).
 */
#include "pub_tool_basics.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_options.h"
#include "pub_tool_tooliface.h"

#include "access.h"
#include "callstack.h"
#include "insn_class.h"
#include "objects.h"
#include "output.h"
#include "shadow.h"
#include "simulate.h"

/* --- options ------------------------------------------------------------------- */

static Long opt_depth = 128;
static Long opt_top = 1000;
static const HChar *opt_tolerance = "0.01";
static const HChar *opt_out = NULL;
static Long opt_simulate = 3;
static Long opt_sim_store_period = 5000011;  /* libwitch's PMU_EVENT_STORE_PERIOD */
static Long opt_sim_load_period = 10000019;  /* PMU_EVENT_LOAD_PERIOD */
static const HChar *opt_attribution = "paper";

static Bool process_option(const HChar *arg)
{
	if VG_INT_CLO(arg, "--depth", opt_depth) {
		if (opt_depth < 1 || opt_depth > 512)
			VG_(fmsg_bad_option)(arg, "--depth must be 1 to 512\n");
	} else if VG_STR_CLO(arg, "--tolerance", opt_tolerance) {
		HChar *end;
		double t = VG_(strtod)(opt_tolerance, &end);
		if (*end || end == opt_tolerance || !(t >= 0 && t < 1))
			VG_(fmsg_bad_option)(arg, "--tolerance must be a number from 0 to below 1\n");
		access_tolerance = t;
	} else if VG_INT_CLO(arg, "--top", opt_top) {
		if (opt_top < 0)
			VG_(fmsg_bad_option)(arg, "--top must be 0 (all) or more\n");
	} else if VG_STR_CLO(arg, "--out", opt_out) {
	} else if VG_INT_CLO(arg, "--simulate", opt_simulate) {
		if (opt_simulate < 0 || opt_simulate > SIMULATE_MAX_SEEDS)
			VG_(fmsg_bad_option)(arg, "--simulate must be 0 (off) to 8 seeds\n");
	} else if VG_INT_CLO(arg, "--store-period", opt_sim_store_period) {
		if (opt_sim_store_period < 2)
			VG_(fmsg_bad_option)(arg, "--store-period must be 2 or more stores\n");
	} else if VG_STR_CLO(arg, "--attribution", opt_attribution) {
		if (!VG_(strcmp)(opt_attribution, "shared"))
			simulate_set_attribution(ATTR_SHARED);
		else if (!VG_(strcmp)(opt_attribution, "paper"))
			simulate_set_attribution(ATTR_PAPER);
		else if (!VG_(strcmp)(opt_attribution, "ht"))
			simulate_set_attribution(ATTR_HT);
		else
			VG_(fmsg_bad_option)(arg, "--attribution must be shared, paper or ht\n");
	} else if VG_INT_CLO(arg, "--load-period", opt_sim_load_period) {
		if (opt_sim_load_period < 2)
			VG_(fmsg_bad_option)(arg, "--load-period must be 2 or more loads\n");
	} else {
		return False;
	}
	return True;
}

static void print_usage(void)
{
	VG_(printf)("    --depth=N         frames per calling context [128]\n"
		    "    --tolerance=T     FP relative tolerance of silent/load [0.01]\n"
		    "    --top=N           pairs written per file, largest waste first; 0 = all [1000]\n"
		    "    --out=PREFIX      write PREFIX.{dead,silent,load}.json "
		    "[witch-oracle.PID]\n"
		    "    --simulate=K      also run Witch's algorithm by count, seeds 1..K:\n"
		    "                      PREFIX.CLIENT.count.SEED.json; 0 = off [3]\n"
		    "    --store-period=N  simulated stores per sample [5000011]\n"
		    "    --load-period=N   simulated loads per sample [10000019]\n"
		    "    --attribution=A   simulated weights: paper (libwitch's), shared\n"
		    "                      (4.4.2) or ht (inverse watch probability) [paper]\n");
}

static void print_debug_usage(void)
{
}

/* --- helpers called from instrumented code -------------------------------------- */

#define SIZE_CLS(size, cls) ((HWord)(size) | (HWord)(cls) << 16)
#define SIZE_OF(sc) ((UInt)((sc) & 0xffff))
#define CLS_OF(sc) ((UInt)((sc) >> 16))

/* The bytes each context accessed, as the samplers draw them (keyed
 * <ctx, ctx> in a pairs table, the bytes as its waste): stores for dead,
 * stores other than push/call for silent, loads other than pop/ret for
 * load.  What a sampler's weights should add up to, by context: the
 * files' "sampled" lists. */
static struct pairs bytes_by_ctx[SIM_CLIENTS];
/* The same by object: the "objects" lists' "sampled". */
static struct object_bytes bytes_by_obj[SIM_CLIENTS];

/* Every access goes to the exhaustive decision and to the simulation, with
 * its context and the object of its first byte now. */
static void on_load(Addr a, UInt n, UInt cls, Addr pc)
{
	UInt ctx = callstack_context(pc);
	UInt obj = objects_classify(a, pc);
	if (!(cls & INSN_STACK)) {
		pairs_add(&bytes_by_ctx[SIM_LOAD], ctx, ctx, n, 0, 0, 0);
		object_bytes_add(&bytes_by_obj[SIM_LOAD], obj, n);
	}
	access_load(a, n, cls, ctx, objects_key(ctx, obj));
	simulate_load(a, n, cls, ctx, obj);
}

static void on_store(Addr a, UInt n, UInt cls, Addr pc, const UChar *old, const UChar *now)
{
	UInt ctx = callstack_context(pc);
	UInt obj = objects_classify(a, pc);
	pairs_add(&bytes_by_ctx[SIM_DEAD], ctx, ctx, n, 0, 0, 0);
	object_bytes_add(&bytes_by_obj[SIM_DEAD], obj, n);
	if (!(cls & INSN_STACK)) {
		pairs_add(&bytes_by_ctx[SIM_SILENT], ctx, ctx, n, 0, 0, 0);
		object_bytes_add(&bytes_by_obj[SIM_SILENT], obj, n);
	}
	access_store(a, n, cls, ctx, objects_key(ctx, obj), old, now);
	simulate_store(a, n, cls, ctx, obj, old, now);
}

static VG_REGPARM(3) void h_load(Addr a, HWord size_cls, Addr pc)
{
	on_load(a, SIZE_OF(size_cls), CLS_OF(size_cls), pc);
}

/* A store of up to 8 bytes whose value IR hands over widened to 64 bits;
 * called before it, so memory still holds the old bytes. */
static void h_store(Addr a, HWord size_cls, Addr pc, ULong value)
{
	UChar old[8];
	UInt n = SIZE_OF(size_cls);
	VG_(memcpy)(old, (const void *)a, n);
	on_store(a, n, CLS_OF(size_cls), pc, old, (const UChar *)&value);
}

/* Wider stores (vectors, CAS, helpers' memory effects): the old bytes are
 * copied before the statement, compared with memory after it.  Threads run
 * one at a time and switch only between blocks, so one buffer serves. */
static UChar pre_bytes[8192];

static VG_REGPARM(2) void h_store_pre(Addr a, HWord size)
{
	VG_(memcpy)(pre_bytes, (const void *)a, size < sizeof(pre_bytes) ? size : sizeof(pre_bytes));
}

static VG_REGPARM(3) void h_store_post(Addr a, HWord size_cls, Addr pc)
{
	UInt n = SIZE_OF(size_cls);
	if (n > sizeof(pre_bytes)) {
		access_totals.bytes_untracked += n - sizeof(pre_bytes);
		n = sizeof(pre_bytes);
	}
	on_store(a, n, CLS_OF(size_cls), pc, pre_bytes, (const UChar *)a);
}

static VG_REGPARM(2) void h_call(Addr ret, Addr sp)
{
	callstack_call(ret, sp);
}

static VG_REGPARM(1) void h_ret(Addr sp)
{
	callstack_ret(sp);
}

/* --- instrumentation ------------------------------------------------------------- */

static void add_call(IRSB *sb, const HChar *name, void *fn, Int regparms, IRExpr **args,
		     IRExpr *guard)
{
	IRDirty *di = unsafeIRDirty_0_N(regparms, name, VG_(fnptr_to_fnentry)(fn), args);
	if (guard)
		di->guard = guard;
	addStmtToIRSB(sb, IRStmt_Dirty(di));
}

static void add_load(IRSB *sb, IRExpr *addr, UInt size, UInt cls, Addr pc, IRExpr *guard)
{
	add_call(sb, "h_load", h_load, 3,
		 mkIRExprVec_3(addr, mkIRExpr_HWord(SIZE_CLS(size, cls)), mkIRExpr_HWord(pc)),
		 guard);
}

static void add_store_pre(IRSB *sb, IRExpr *addr, UInt size, IRExpr *guard)
{
	add_call(sb, "h_store_pre", h_store_pre, 2, mkIRExprVec_2(addr, mkIRExpr_HWord(size)),
		 guard);
}

static void add_store_post(IRSB *sb, IRExpr *addr, UInt size, UInt cls, Addr pc, IRExpr *guard)
{
	add_call(sb, "h_store_post", h_store_post, 3,
		 mkIRExprVec_3(addr, mkIRExpr_HWord(SIZE_CLS(size, cls)), mkIRExpr_HWord(pc)),
		 guard);
}

/* The stored value as a 64-bit integer atom, or NULL when it is wider (or
 * a type IR cannot reinterpret) and the store goes through pre/post. */
static IRExpr *value_as_i64(IRSB *sb, IRExpr *data, IRType ty)
{
	IROp widen;
	switch (ty) {
	case Ity_I8: widen = Iop_8Uto64; break;
	case Ity_I16: widen = Iop_16Uto64; break;
	case Ity_I32: widen = Iop_32Uto64; break;
	case Ity_I64: return data;
	case Ity_F64: widen = Iop_ReinterpF64asI64; break;
	case Ity_F32: {
		IRTemp bits = newIRTemp(sb->tyenv, Ity_I32);
		addStmtToIRSB(sb, IRStmt_WrTmp(bits, IRExpr_Unop(Iop_ReinterpF32asI32, data)));
		data = IRExpr_RdTmp(bits);
		widen = Iop_32Uto64;
		break;
	}
	default:
		return NULL;
	}
	IRTemp t = newIRTemp(sb->tyenv, Ity_I64);
	addStmtToIRSB(sb, IRStmt_WrTmp(t, IRExpr_Unop(widen, data)));
	return IRExpr_RdTmp(t);
}

static IROp cmp_eq_of(IRType ty)
{
	switch (ty) {
	case Ity_I8: return Iop_CmpEQ8;
	case Ity_I16: return Iop_CmpEQ16;
	case Ity_I32: return Iop_CmpEQ32;
	default: return Iop_CmpEQ64;
	}
}

/* One input statement, with its accesses around it, into sb. */
static void instrument_stmt(IRSB *sb, IRStmt *st, Addr pc, UInt cls)
{
	IRTypeEnv *tyenv = sb->tyenv;

	switch (st->tag) {
	case Ist_WrTmp:
		if (st->Ist.WrTmp.data->tag == Iex_Load) {
			IRExpr *ld = st->Ist.WrTmp.data;
			add_load(sb, ld->Iex.Load.addr, sizeofIRType(ld->Iex.Load.ty), cls, pc, NULL);
		}
		addStmtToIRSB(sb, st);
		return;
	case Ist_LoadG: {
		IRLoadG *lg = st->Ist.LoadG.details;
		IRType res, arg;
		typeOfIRLoadGOp(lg->cvt, &res, &arg);
		add_load(sb, lg->addr, sizeofIRType(arg), cls, pc, lg->guard);
		addStmtToIRSB(sb, st);
		return;
	}
	case Ist_Store: {
		IRExpr *addr = st->Ist.Store.addr, *data = st->Ist.Store.data;
		IRType ty = typeOfIRExpr(tyenv, data);
		UInt size = sizeofIRType(ty);
		IRExpr *value = value_as_i64(sb, data, ty);
		if (value) {
			IRDirty *di = unsafeIRDirty_0_N(0, "h_store", VG_(fnptr_to_fnentry)(h_store),
						       mkIRExprVec_4(addr,
								     mkIRExpr_HWord(SIZE_CLS(size, cls)),
								     mkIRExpr_HWord(pc), value));
			addStmtToIRSB(sb, IRStmt_Dirty(di));
			addStmtToIRSB(sb, st);
		} else {
			add_store_pre(sb, addr, size, NULL);
			addStmtToIRSB(sb, st);
			add_store_post(sb, addr, size, cls, pc, NULL);
		}
		return;
	}
	case Ist_StoreG: {
		IRStoreG *sg = st->Ist.StoreG.details;
		UInt size = sizeofIRType(typeOfIRExpr(tyenv, sg->data));
		add_store_pre(sb, sg->addr, size, sg->guard);
		addStmtToIRSB(sb, st);
		add_store_post(sb, sg->addr, size, cls, pc, sg->guard);
		return;
	}
	case Ist_CAS: {
		/* A compare-and-swap reads, and writes only when it matched. */
		IRCAS *cas = st->Ist.CAS.details;
		IRType ty = typeOfIRExpr(tyenv, cas->expdLo);
		UInt size = sizeofIRType(ty) * (cas->dataHi ? 2 : 1);
		add_load(sb, cas->addr, size, cls, pc, NULL);
		add_store_pre(sb, cas->addr, size, NULL);
		addStmtToIRSB(sb, st);
		IRTemp ok = newIRTemp(tyenv, Ity_I1);
		addStmtToIRSB(sb, IRStmt_WrTmp(ok, IRExpr_Binop(cmp_eq_of(ty),
							       IRExpr_RdTmp(cas->oldLo),
							       cas->expdLo)));
		add_store_post(sb, cas->addr, size, cls, pc, IRExpr_RdTmp(ok));
		return;
	}
	case Ist_Dirty: {
		/* Helpers with memory effects (fxsave, xrstor, cpuid-free ones). */
		IRDirty *d = st->Ist.Dirty.details;
		Bool reads = d->mFx == Ifx_Read || d->mFx == Ifx_Modify;
		Bool writes = d->mFx == Ifx_Write || d->mFx == Ifx_Modify;
		if (reads)
			add_load(sb, d->mAddr, (UInt)d->mSize, cls, pc, d->guard);
		if (writes)
			add_store_pre(sb, d->mAddr, (UInt)d->mSize, d->guard);
		addStmtToIRSB(sb, st);
		if (writes)
			add_store_post(sb, d->mAddr, (UInt)d->mSize, cls, pc, d->guard);
		return;
	}
	default:
		addStmtToIRSB(sb, st);
		return;
	}
}

/* The tool's preload (preload_wrap.c: the malloc family's wrappers, their
 * client requests' argument blocks) is not the program: its accesses are
 * left out, as libwitch leaves its interposers' out.  Asked at translation
 * time only; its text range is cached once found. */
static Bool in_own_preload(Addr pc)
{
	static Addr lo, hi;
	if (hi)
		return pc >= lo && pc < hi;
	const DebugInfo *di = VG_(find_DebugInfo)(VG_(current_DiEpoch)(), pc);
	const HChar *file = di ? VG_(DebugInfo_get_filename)(di) : NULL;
	const HChar *base = file ? VG_(strrchr)(file, '/') : NULL;
	static const HChar own[] = "vgpreload_witch-oracle";
	if (!base || VG_(strncmp)(base + 1, own, sizeof(own) - 1))
		return False;
	lo = VG_(DebugInfo_get_text_avma)(di);
	hi = lo + VG_(DebugInfo_get_text_size)(di);
	return pc >= lo && pc < hi;
}

static IRSB *instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
			const VexGuestExtents *vge, const VexArchInfo *archinfo_host,
			IRType gWordTy, IRType hWordTy)
{
	IRSB *sb = deepCopyIRSBExceptStmts(in);
	Addr pc = 0, next_pc = 0;
	UInt cls = 0;
	Bool own = False;
	Int i = 0;

	/* The preamble before the first IMark is copied as it is. */
	for (; i < in->stmts_used && in->stmts[i]->tag != Ist_IMark; i++)
		addStmtToIRSB(sb, in->stmts[i]);
	for (; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];
		if (st == NULL || st->tag == Ist_NoOp)
			continue;
		if (st->tag == Ist_IMark) {
			pc = (Addr)st->Ist.IMark.addr;
			next_pc = pc + st->Ist.IMark.len;
			cls = insn_class_of((const UChar *)pc);
			own = in_own_preload(pc);
			addStmtToIRSB(sb, st);
			continue;
		}
		if (own)
			addStmtToIRSB(sb, st);
		else
			instrument_stmt(sb, st, pc, cls);
	}
	/* Calls end a block (guest chasing is off): the shadow stack follows the
	 * block's exit, with rsp as the call or return left it.  An indirect
	 * jump may be longjmp's: frames below its rsp are gone too. */
	Bool leaves = in->jumpkind == Ijk_Ret ||
		      (in->jumpkind == Ijk_Boring && in->next->tag != Iex_Const);
	if (in->jumpkind == Ijk_Call || leaves) {
		IRTemp sp = newIRTemp(sb->tyenv, Ity_I64);
		addStmtToIRSB(sb, IRStmt_WrTmp(sp, IRExpr_Get(layout->offset_SP, Ity_I64)));
		if (in->jumpkind == Ijk_Call)
			add_call(sb, "h_call", h_call, 2,
				 mkIRExprVec_2(mkIRExpr_HWord(next_pc), IRExpr_RdTmp(sp)), NULL);
		else
			add_call(sb, "h_ret", h_ret, 1, mkIRExprVec_1(IRExpr_RdTmp(sp)), NULL);
	}
	return sb;
}

/* --- threads, fork, start and end ------------------------------------------------- */

static void start_client_code(ThreadId tid, ULong blocks_dispatched)
{
	callstack_switch_thread(tid);
	objects_switch_thread(tid);
	simulate_switch_thread(tid);
}

static Int main_pid;
static UInt start_ms;

/* A forked child writes its own files: what it decides from now on. */
static void atfork_child(ThreadId tid)
{
	pairs_clear(&access_dead);
	pairs_clear(&access_silent);
	pairs_clear(&access_load_pairs);
	for (UInt c = 0; c < SIM_CLIENTS; c++) {
		pairs_clear(&bytes_by_ctx[c]);
		object_bytes_clear(&bytes_by_obj[c]);
	}
	VG_(memset)(&access_totals, 0, sizeof(access_totals));
	simulate_clear();
}

static void post_clo_init(void)
{
	/* A call must end its block, or the shadow stack misses it. */
	VG_(clo_vex_control).guest_chase = False;
	main_pid = VG_(getpid)();
	start_ms = VG_(read_millisecond_timer)();
	VG_(atfork)(NULL, NULL, atfork_child);
	if (simulate_init((UInt)opt_simulate, (ULong)opt_sim_store_period,
			  (ULong)opt_sim_load_period) < 0)
		VG_(fmsg_bad_option)("--simulate", "cannot set up the simulation\n");
}

/* One file; its fraction in tenths of a percent, or -1 when it was not written. */
static Int write_file(const HChar *path, const struct output_client *c)
{
	Int rc = output_write(path, c);
	if (rc < 0) {
		VG_(printf)("witch-oracle: cannot write %s (error %d); check the --out directory\n",
			    path, -rc);
		return -1;
	}
	ULong den = c->pairs->waste + c->pairs->use;
	return den ? (Int)((c->pairs->waste * 1000 + den / 2) / den) : 0;
}

/* The exhaustive answer and the simulated runs of one client; one line. */
static void write_client(const HChar *prefix, const HChar *name, enum simulate_client sc,
			 const struct pairs *p, ULong decidable, Bool values)
{
	HChar path[4096], line[512];
	struct output_client c = {
		.name = name, .pairs = p, .totals = &access_totals, .decidable = decidable,
		.values = values, .tolerance = opt_tolerance, .depth = (UInt)opt_depth,
		.top = (UInt)opt_top, .by_ctx = &bytes_by_ctx[sc], .by_obj = &bytes_by_obj[sc],
		.shadow_bytes = shadow_bytes_allocated(),
		.wall_ms = VG_(read_millisecond_timer)() - start_ms,
	};
	VG_(snprintf)(path, sizeof(path), "%s.%s.json", prefix, name);
	Int pct10 = write_file(path, &c);
	if (pct10 < 0)
		return;
	Int len = VG_(snprintf)(line, sizeof(line), "witch-oracle: %-6s %d.%d%% waste of %llu decided bytes",
				name, pct10 / 10, pct10 % 10, p->waste + p->use);
	for (UInt seed = 0; seed < simulate_seeds(); seed++) {
		HChar spath[4096];
		c.pairs = simulate_pairs(seed, sc);
		c.sim = simulate_stats_of(seed, sc);
		c.by_ctx = NULL;
		c.by_obj = simulate_object_sampled(seed, sc);
		VG_(snprintf)(spath, sizeof(spath), "%s.%s.count.%u.json", prefix, name, seed + 1);
		Int s10 = write_file(spath, &c);
		if (s10 >= 0 && len < (Int)sizeof(line) - 40)
			len += VG_(snprintf)(line + len, sizeof(line) - (UInt)len, "%s%d.%d%%",
					     seed ? " " : "; by count ", s10 / 10, s10 % 10);
	}
	VG_(printf)("%s -> %s\n", line, path);
}

static void fini(Int exitcode)
{
	HChar prefix[4000];
	Int pid = VG_(getpid)();

	if (opt_out == NULL)
		VG_(snprintf)(prefix, sizeof(prefix), "witch-oracle.%d", pid);
	else if (pid != main_pid)
		VG_(snprintf)(prefix, sizeof(prefix), "%s.%d", opt_out, pid);
	else
		VG_(snprintf)(prefix, sizeof(prefix), "%s", opt_out);
	write_client(prefix, "dead", SIM_DEAD, &access_dead, access_totals.bytes_stored, False);
	write_client(prefix, "silent", SIM_SILENT, &access_silent, access_totals.bytes_stored, True);
	write_client(prefix, "load", SIM_LOAD, &access_load_pairs, access_totals.bytes_loaded, True);
}

static void pre_clo_init(void)
{
	VG_(details_name)("witch-oracle");
	VG_(details_version)("0.1");
	VG_(details_description)("exhaustive dead/silent/load detector for libwitch");
	VG_(details_copyright_author)("the libwitch developers");
	VG_(details_bug_reports_to)("the libwitch issue tracker");
	VG_(details_avg_translation_sizeB)(640);
	VG_(basic_tool_funcs)(post_clo_init, instrument, fini);
	VG_(needs_command_line_options)(process_option, print_usage, print_debug_usage);
	VG_(track_start_client_code)(start_client_code);
	objects_init();
}

VG_DETERMINE_INTERFACE_VERSION(pre_clo_init)
