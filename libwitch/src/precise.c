/* precise: the access behind a watchpoint trap (see precise.h). */
#include "witch/precise.h"
#include "witch/decode_zcache.h"
#include "witch/emulate.h"
#include "witch/peek.h"
#include "witch/unwind.h"

#include <errno.h>
#include <string.h>


struct watched {
	uint64_t addr;
	uint32_t len;
};

static int overlap(uint64_t a, uint32_t alen, const struct watched *w, struct precise_access *out)
{
	uint64_t lo = a > w->addr ? a : w->addr;
	uint64_t hi = a + alen < w->addr + w->len ? a + alen : w->addr + w->len;
	if (hi <= lo)
		return 0;
	out->overlap_addr = lo;
	out->overlap_len = (uint32_t)(hi - lo);
	return 1;
}

static int match_access(const struct decode_insn *in, const struct watched *w,
			struct precise_access *out)
{
	for (int i = 0; i < in->n_access; i++) {
		const struct decode_access *a = &in->access[i];
		if ((a->flags & DECODE_ACC_UNKNOWN_ADDR) || !overlap(a->addr, a->len, w, out))
			continue;
		out->kind = a->kind;
		out->elem = a->elem;
		out->addr = a->addr;
		out->len = a->len;
		return 1;
	}
	return 0;
}

static int match_stack_slot(uint64_t slot, uint8_t kind, const struct watched *w,
			    struct precise_access *out)
{
	if (!overlap(slot, 8, w, out))
		return 0;
	out->kind = kind;
	out->elem = DECODE_ELEM_INT;
	out->addr = slot;
	out->len = 8;
	return 1;
}

/* Whether the bytes at pc may be a rep/repne string instruction: its
 * prefixes, a REX, then one of the string opcodes.  Read in place (pc is
 * where the program resumes, so its page is mapped); 1 where the bytes run
 * to the page's end.  Spares nearly every trap a full decode (~2-5 us cold). */
static int may_be_rep_string(uint64_t pc)
{
	const uint8_t *b = (const uint8_t *)(uintptr_t)pc;
	uint64_t left = 4096 - (pc & 4095);
	int rep = 0;
	for (uint64_t i = 0; i < left && i < 15; i++) {
		uint8_t x = b[i];
		if (x == 0xf2 || x == 0xf3) {
			rep = 1;
			continue;
		}
		if (x == 0xf0 || x == 0x2e || x == 0x36 || x == 0x3e || x == 0x26 || x == 0x64 ||
		    x == 0x65 || x == 0x66 || x == 0x67 || (x >= 0x40 && x <= 0x4f))
			continue; /* (a REX not last is ignored by the CPU, as here) */
		return rep && ((x >= 0x6c && x <= 0x6f) || (x >= 0xa4 && x <= 0xa7) || x >= 0xaa) &&
		       x <= 0xaf;
	}
	return 1;
}

/* The rep string instruction at pc, its pointers moved past the access:
 * in flight (iterations left, rip still on it) or done (rcx 0, rip past
 * it; until stop 91 a trap on its last element went unresolved, 2-8 a run
 * on strings, its rep movsq and rep stosq).  One element on AMD and where
 * fast strings are off; on Intel cores with fast strings a breakpoint is
 * reported once the current group of iterations is done (SDM vol. 3,
 * 18.3.1.2), the pointers up to a group past it (on an Emerald Rapids VM
 * realloc's rep movsb went unmatched, and 52 of 312 watches on the bytes
 * it copied were decided by the next store instead: dead).  group = 0
 * asks for the element just done; else the element, within `group` bytes
 * behind the pointer, that last touched the watched bytes. */
#define REP_GROUP_BYTES 4096u

/* The rep string instruction at pc, decoded at regs: 0, or -ENOENT. */
static int rep_decode(uint64_t pc, const struct decode_regs *regs, struct decode_insn *in)
{
	struct decode_regs r = *regs;
	r.gpr[DECODE_RCX] = 1; /* (its elements decode alike; a done one's rcx is 0) */
	if (!may_be_rep_string(pc) || decode_at(pc, &r, in) < 0 || !(in->flags & DECODE_F_REP))
		return -ENOENT;
	return 0;
}

/* Whether rep string instruction `decoded`, at pc, made the access (above). */
static int rep_match(const struct decode_insn *decoded, uint64_t pc, const struct decode_regs *regs,
		     const struct watched *w, uint32_t group, struct precise_access *out)
{
	struct decode_insn in = *decoded;
	int down = (regs->rflags & DECODE_RFLAGS_DF) != 0;
	uint64_t dist[DECODE_MAX_ACCESS] = {0};
	for (int i = 0; i < in.n_access; i++) {
		struct decode_access *a = &in.access[i];
		uint64_t p = a->addr, len = a->len, k;
		if (!len)
			continue;
		if (!group) {
			a->addr = down ? p + len : p - len;
			continue;
		}
		if (!down) { /* done: the elements below p; the last watched byte below it */
			uint64_t end = w->addr + w->len < p ? w->addr + w->len : p;
			k = end > w->addr ? (p - (end - 1) + len - 1) / len : 0;
			a->addr = p - k * len;
		} else { /* done: the elements from p + len up */
			uint64_t first = w->addr > p + len ? w->addr : p + len;
			k = first < w->addr + w->len ? (first - p) / len : 0;
			a->addr = p + k * len;
		}
		if (k == 0 || k * len > group)
			a->flags |= DECODE_ACC_UNKNOWN_ADDR; /* not within a group of it */
		else
			dist[i] = k * len;
	}
	/* Both pointers behind the watched bytes (a memmove within 4 KiB):
	 * the nearer touched them last. */
	if (group && in.n_access == 2 && !(in.access[0].flags & DECODE_ACC_UNKNOWN_ADDR) &&
	    !(in.access[1].flags & DECODE_ACC_UNKNOWN_ADDR))
		in.access[dist[0] <= dist[1] ? 1 : 0].flags |= DECODE_ACC_UNKNOWN_ADDR;
	if (!match_access(&in, w, out))
		return 0;
	out->pc = pc;
	return 1;
}

static int resolve_rep_in_flight(const struct decode_regs *regs, const struct watched *w,
				 uint32_t group, struct precise_access *out)
{
	struct decode_insn in;
	return regs->gpr[DECODE_RCX] && rep_decode(regs->rip, regs, &in) == 0 &&
	       rep_match(&in, regs->rip, regs, w, group, out);
}

/* The call that return address ret follows: found by decoding the caller
 * from its function start.  0 and *call_pc, or -ENOENT. */
static int call_before(struct decode_cache *cache, uint64_t ret, uint64_t *call_pc)
{
	uint64_t caller_start;
	if (unwind_proc_start(ret - 1, &caller_start) < 0 ||
	    decode_find_prev(cache, caller_start, ret, call_pc) < 0)
		return -ENOENT;
	return 0;
}

/* Where a `call rel32` (e8) just before return address ret went: 0 and
 * *target, or -ENOENT.  Read through peek_read: what looks like a return
 * address need not point at mapped code. */
static int direct_call_target(uint64_t ret, uint64_t *target)
{
	uint8_t call[5];
	int32_t rel;
	if (ret < 5 || peek_read(ret - 5, call, sizeof(call)) < 0 || call[0] != 0xe8)
		return -ENOENT;
	memcpy(&rel, call + 1, sizeof(rel));
	*target = ret + (uint64_t)(int64_t)rel;
	return 0;
}

/* Where the call just before return address ret went, if it just ran: rip
 * its target, regs as it left them (rsp 8 lower).  A direct call by its
 * rel32; `call *%reg` (a function pointer, a vtable) by the register, which
 * no instruction has changed since; `call *[m]` (-fno-plt, a PLT-less call
 * within a shared library) by the word it loaded.  0 and *target, or
 * -ENOENT: a return address that rip was not reached from. */
static int call_target(struct decode_cache *cache, uint64_t ret, const struct decode_regs *regs,
		       uint64_t *target)
{
	struct decode_regs before = *regs;
	struct decode_insn in;
	uint64_t call_pc;
	if (direct_call_target(ret, target) == 0)
		return 0;
	before.gpr[DECODE_RSP] += 8; /* as the call found it */
	if (call_before(cache, ret, &call_pc) < 0 || decode_at(call_pc, &before, &in) < 0 ||
	    !(in.flags & DECODE_F_CALL) || call_pc + in.len != ret)
		return -ENOENT;
	if (in.branch_reg) {
		*target = before.gpr[in.branch_reg - 1];
		return 0;
	}
	for (int i = 0; i < in.n_access; i++)
		if (in.access[i].kind == DECODE_LOAD && in.access[i].len == sizeof(*target))
			return peek_read(in.access[i].addr, target, sizeof(*target)) < 0 ? -ENOENT : 0;
	return -ENOENT;
}

/* rip is a function's first instruction: a call stored its return address
 * into the watched slot.  The call is the leaf (a sampled call must know its
 * own trap, or the ret that reads the slot is taken for it). */
static int resolve_call_store(struct decode_cache *cache, const struct decode_regs *regs,
			      const struct watched *w, struct precise_access *out)
{
	uint64_t rsp = regs->gpr[DECODE_RSP], ret, call_pc, target;
	if (peek_read(rsp, &ret, sizeof(ret)) < 0 ||
	    !match_stack_slot(rsp, DECODE_STORE, w, out) ||
	    call_target(cache, ret, regs, &target) < 0 || target != regs->rip)
		return -ENOENT;
	out->pc = call_before(cache, ret, &call_pc) == 0 ? call_pc : ret - 1;
	out->skip_frames = 1;
	return 0;
}

/* The instruction before rip moved a pointer register (push, pop, string
 * op, two-operand moves): try its accesses with the pointers moved back. */
static int match_moved_pointers(const struct decode_insn *in, const struct decode_regs *regs,
				const struct watched *w, struct precise_access *out)
{
	static const int64_t moves[] = {8, -8, 16, -16};
	for (unsigned m = 0; m < sizeof(moves) / sizeof(moves[0]); m++) {
		struct decode_regs r2 = *regs;
		struct decode_insn in2;
		if (in->flags & DECODE_F_STACK) {
			r2.gpr[DECODE_RSP] += (uint64_t)moves[m];
		} else {
			r2.gpr[DECODE_RSI] += (uint64_t)moves[m];
			r2.gpr[DECODE_RDI] += (uint64_t)moves[m];
		}
		if (decode_at(in->pc, &r2, &in2) == 0 && match_access(&in2, w, out))
			return 1;
	}
	return 0;
}

/* Whether rip is where a direct call just went: the return address at rsp
 * follows a `call rel32` (e8) to rip.  Catches call stores whose target has
 * no function start of its own in the unwind tables (a PLT stub: its FDE
 * covers the whole .plt).  Whatever is at rsp need not be a return
 * address. */

/* The access of prev, the instruction that ended at rip: decoded through
 * the windows' cache, as a cold Zydis decode takes 3-9 us here. */
static int resolve_at_prev(struct decode_zcache *zc, uint64_t prev, const struct decode_regs *regs,
			   const struct watched w, struct precise_access *out)
{
	uint64_t watch_addr = w.addr;
	uint32_t watch_len = w.len;
	struct decode_insn in;
	const struct decode_zydis *z;

	memset(out, 0, sizeof(*out));
	if (decode_at_zydis_cached(zc, prev, regs, &in, &z) < 0)
		return -ENOENT;
	out->pc = prev;
	if (in.flags & DECODE_F_CALL) /* rip is a return site: the callee's ret read the slot */
		return match_stack_slot(regs->gpr[DECODE_RSP] - 8, DECODE_LOAD, &w, out) ? 0 : -ENOENT;
	if (match_access(&in, &w, out))
		return 0;
	/* A rep string instruction done (rcx 0): rip is past it, its last
	 * element (or group) behind its pointers, as in flight. */
	struct decode_insn rep;
	if ((in.flags & DECODE_F_REP) && rep_decode(prev, regs, &rep) == 0 &&
	    (rep_match(&rep, prev, regs, &w, 0, out) ||
	     rep_match(&rep, prev, regs, &w, REP_GROUP_BYTES, out)))
		return 0;
	if ((in.flags & (DECODE_F_STACK | DECODE_F_REP) || in.n_access == 2) &&
	    match_moved_pointers(&in, regs, &w, out))
		return 0;
	if (in.n_access == 1 && !(in.access[0].flags & DECODE_ACC_UNKNOWN_ADDR) &&
	    (in.regs_written & in.access[0].addr_regs)) {
		out->kind = in.access[0].kind;
		out->elem = in.access[0].elem;
		out->addr = out->overlap_addr = watch_addr;
		out->len = out->overlap_len = watch_len;
		return 0;
	}
	return -ENOENT;
}

/* The instruction before rip: the cache's when it knows (most traps are in
 * code a window decoded), else by a scan from the function's start. */
static int resolve_before_rip(struct decode_zcache *zc, const struct decode_regs *regs,
			      const struct watched w, struct precise_access *out)
{
	struct decode_cache *cache = zc->prev;
	uint64_t fn_start, prev, known = 0;

	memset(out, 0, sizeof(*out));
	if (resolve_rep_in_flight(regs, &w, 0, out))
		return 0;
	/* A known prev that does not explain the trap: the function's start
	 * decides (rip may be one, reached by a call that pushed onto w). */
	if (decode_cache_prev(cache, regs->rip, &known) == 0 &&
	    resolve_at_prev(zc, known, regs, w, out) == 0)
		return 0;
	memset(out, 0, sizeof(*out));
	if (unwind_proc_start(regs->rip, &fn_start) == 0) {
		if (fn_start == regs->rip) {
			if (resolve_call_store(cache, regs, &w, out) == 0)
				return 0;
		} else if (decode_find_prev(cache, fn_start, regs->rip, &prev) == 0 &&
			   prev != known && resolve_at_prev(zc, prev, regs, w, out) == 0) {
			return 0;
		}
	}
	/* Last, as the instruction before explains a trap first: a group of
	 * fast-string iterations. */
	memset(out, 0, sizeof(*out));
	return resolve_rep_in_flight(regs, &w, REP_GROUP_BYTES, out) ? 0 : -ENOENT;
}

/* Whether branch in read its target from the watched bytes
 * and that target is rip: the load of `call *[m]` or `jmp *[m]`. */
static int match_branch_load(const struct decode_insn *in, uint64_t rip, const struct watched *w,
			     struct precise_access *out)
{
	uint64_t target;
	if (!(in->flags & DECODE_F_BRANCH) || !match_access(in, w, out) || out->kind != DECODE_LOAD ||
	    out->len != sizeof(target) || peek_read(out->addr, &target, sizeof(target)) < 0)
		return 0;
	return target == rip;
}

/* rip was reached by a branch that loaded its target from the watched
 * bytes (x86 reports the trap at the target):
 *   - `call *[m]` (-fno-plt, a function pointer in memory): the call before
 *     the return address at rsp; the call is the leaf, the callee's frame
 *     dropped, as for its store;
 *   - `jmp *[m]` in a stub the caller called directly (a PLT entry:
 *     `endbr64; bnd jmp *GOT`): the jmp is the leaf, in the caller's stack.
 * Without this, every redundant GOT load a PLT call makes (LoadCraft)
 * trapped in the callee and was dropped unresolved. */
#define STUB_MAX_INSNS 4
static int resolve_branch_load(struct decode_cache *cache, const struct decode_regs *regs,
			       const struct watched *w, struct precise_access *out)
{
	uint64_t rsp = regs->gpr[DECODE_RSP], ret, call_pc, pc;
	struct decode_regs before = *regs;
	struct decode_insn in;

	if (peek_read(rsp, &ret, sizeof(ret)) < 0 || ret < 5)
		return -ENOENT;
	before.gpr[DECODE_RSP] = rsp + 8; /* as the call found it */
	if (call_before(cache, ret, &call_pc) == 0 &&
	    decode_at(call_pc, &before, &in) == 0 && (in.flags & DECODE_F_CALL) &&
	    match_branch_load(&in, regs->rip, w, out)) {
		out->pc = call_pc;
		out->skip_frames = 1;
		return 0;
	}
	if (direct_call_target(ret, &pc) < 0)
		return -ENOENT;
	for (int i = 0; i < STUB_MAX_INSNS && decode_at(pc, regs, &in) == 0; i++) {
		if (in.flags & DECODE_F_BRANCH) {
			if ((in.flags & DECODE_F_CALL) || !match_branch_load(&in, regs->rip, w, out))
				return -ENOENT;
			out->pc = pc;
			out->skip_frames = 0;
			return 0;
		}
		pc += in.len;
	}
	return -ENOENT;
}

int precise_resolve(struct decode_zcache *zc, const struct decode_regs *regs,
		    uint64_t watch_addr, uint32_t watch_len, struct precise_access *out)
{
	const struct watched w = {watch_addr, watch_len};
	struct decode_cache *cache = zc->prev;
	decode_zcache_begin(zc); /* a run of its own: kept decodings are checked once */
	int rc = resolve_before_rip(zc, regs, w, out);
	if (rc < 0) {
		memset(out, 0, sizeof(*out));
		rc = resolve_call_store(cache, regs, &w, out);
	}
	if (rc < 0) {
		memset(out, 0, sizeof(*out));
		rc = resolve_branch_load(cache, regs, &w, out);
	}
	return rc;
}

int precise_resolve_branch_at(const struct decode_regs *regs, uint64_t watch_addr,
			      uint32_t watch_len, uint64_t pc, struct precise_access *out)
{
	const struct watched w = {watch_addr, watch_len};
	struct decode_insn in;
	memset(out, 0, sizeof(*out));
	if (pc == 0 || decode_at(pc, regs, &in) < 0 || (in.flags & DECODE_F_CALL) ||
	    !match_branch_load(&in, regs->rip, &w, out))
		return -ENOENT;
	out->pc = pc;
	out->skip_frames = 0; /* a jump: in the frame rip's unwind starts from */
	return 0;
}

int precise_stored_value(struct decode_zcache *zc, struct emulate_vec *vec,
			 const struct decode_regs *regs, const struct precise_access *p,
			 uint64_t *value)
{
	struct decode_regs at = *regs;
	struct decode_insn in;
	const struct decode_zydis *z;
	struct emulate e;

	if (p->kind != DECODE_STORE || p->len == 0 || p->len > sizeof(*value))
		return -ENOENT;
	at.rip = p->pc;
	if (decode_at_zydis_cached(zc, p->pc, &at, &in, &z) < 0 || in.n_access != 1 ||
	    in.access[0].kind != DECODE_STORE || in.access[0].addr != p->addr ||
	    in.access[0].len != p->len || in.regs_written != 0 || (in.flags & DECODE_F_REP))
		return -ENOENT;
	emulate_begin(&e, p->pc, vec);
	if (emulate_insn(&e, &at, &in, z) < 0 || e.n_stores != 1 || !e.store_known[0] ||
	    e.store_addr[0] != p->addr || e.store_len[0] != p->len)
		return -ENOENT;
	*value = e.store_value[0];
	return 0;
}
