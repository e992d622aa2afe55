/* handler: the runtime's signal-handler path (see handler.h). */
#include "witch/handler.h"
#include "witch/log.h"
#include "witch/cct.h"
#include "witch/decode.h"
#include "witch/emulate.h"
#include "witch/pairtab.h"
#include "witch/reservoir.h"
#include "witch/thread.h"
#include "witch/unwind.h"
#include "witch/watchpoint.h"

#include <errno.h>
#include <string.h>
#include <ucontext.h>

#define EFLAGS_TF 0x100ull
#define RED_ZONE 128

static const struct witch_config *h_cfg;
static const struct craft *h_craft;
static uint64_t h_runtime_lo, h_runtime_hi;
volatile sig_atomic_t handler_off;

void handler_set_runtime_text(uint64_t lo, uint64_t hi)
{
	h_runtime_lo = lo;
	h_runtime_hi = hi;
}

static int path_in_runtime(const uint64_t *pcs, int n)
{
	for (int i = 0; i < n; i++)
		if (pcs[i] >= h_runtime_lo && pcs[i] < h_runtime_hi)
			return 1;
	return 0;
}

void handler_init(const struct witch_config *cfg, const struct craft *craft)
{
	h_cfg = cfg;
	h_craft = craft;
}

/* --- helpers ------------------------------------------------------------- */

static void regs_of(const struct witch_thread *t, const ucontext_t *uc, struct decode_regs *r)
{
	decode_regs_from_ucontext(uc, t->fs_base, t->gs_base, r);
}

static const struct decode_access *wanted_access(const struct decode_insn *in)
{
	for (int i = 0; i < in->n_access; i++) {
		const struct decode_access *a = &in->access[i];
		if (!(a->kind & h_craft->sample_kind))
			continue;
		if (!h_craft->sample_stack_ops && (in->flags & DECODE_F_STACK) &&
		    (a->flags & DECODE_ACC_IMPLICIT))
			continue;
		return a;
	}
	return NULL;
}

static uint32_t armed_mask(const struct witch_thread *t)
{
	uint32_t m = 0;
	for (int i = 0; i < t->wps.n; i++)
		if (t->wps.wp[i].armed)
			m |= 1u << i;
	return m;
}

/* The unwinder reads the program's stack: pause read-write watchpoints on
 * it so the profiler's own reads do not trap (Witch 4.5). */
static uint32_t pause_stack_watchpoints(struct witch_thread *t, uint64_t sp)
{
	uint64_t lo = sp - RED_ZONE, hi = t->stack_hi ? t->stack_hi : sp + (8u << 20);
	uint32_t paused = 0;
	for (int i = 0; i < t->wps.n; i++) {
		const struct watchpoint *w = &t->wps.wp[i];
		if (w->armed && w->type == WATCHPOINT_RW && w->addr + w->len > lo && w->addr < hi &&
		    watchpoint_pause(&t->wps, i) == 0)
			paused |= 1u << i;
	}
	return paused;
}

static void resume_watchpoints(struct witch_thread *t, uint32_t paused)
{
	for (int i = 0; i < t->wps.n; i++)
		if ((paused & (1u << i)) && t->wps.wp[i].armed)
			watchpoint_resume(&t->wps, i);
}

/* Calling context: pcs[0] = leaf, then the callers; `skip` drops frames
 * that are not the accessing code's (the callee entry of a trapping call). */
static int context_of(struct witch_thread *t, ucontext_t *uc, uint64_t leaf, int skip,
		      uint64_t *pcs, int max)
{
	uint32_t paused = pause_stack_watchpoints(t, (uint64_t)uc->uc_mcontext.gregs[REG_RSP]);
	int n = unwind_context(uc, pcs, max, NULL);
	resume_watchpoints(t, paused);
	if (n <= 0)
		return n < 0 ? n : -EINVAL;
	if (skip > 0) {
		if (n <= skip)
			return -EINVAL;
		memmove(pcs, pcs + skip, sizeof(pcs[0]) * (size_t)(n - skip));
		n -= skip;
	}
	pcs[0] = leaf;
	return n;
}

/* The slot's sample no longer counts as armed in its context. */
static void forget_slot(struct witch_thread *t, int slot)
{
	struct watchpoint *w = &t->wps.wp[slot];
	struct cct_node *c = cct_node(&t->cct, w->ctx);
	if (w->armed && c->armed > 0)
		c->armed--;
}

static void release_slot(struct witch_thread *t, int slot)
{
	forget_slot(t, slot);
	watchpoint_disarm(&t->wps, slot);
}

/* --- sampling -------------------------------------------------------------- */

/* An armed slot takes what the runtime and the client keep with a sample;
 * the watchpoint module's own fields (fd, armed, range) stay. */
static void watch_take_owner(struct watchpoint *w, const struct watchpoint *cand)
{
	w->ctx = cand->ctx;
	w->sample_pc = cand->sample_pc;
	w->sample_addr = cand->sample_addr;
	w->sample_len = cand->sample_len;
	w->sample_elem = cand->sample_elem;
	w->pending_self = cand->pending_self;
	w->last_trap_hash = 0;
	w->value_len = cand->value_len;
	w->value_addr = cand->value_addr;
	memcpy(w->value, cand->value, cand->value_len);
	memcpy(w->shadow, cand->shadow, cand->value_len);
}

/* Sample access a of instruction in: calling context, client, reservoir,
 * watchpoint.  ran: the access has already happened (a PMU sample), so the
 * client sees it run at once instead of at the instruction's own trap.
 * emu: the calls and returns run ahead from uc to get there, or NULL. */
static void sample_take(struct witch_thread *t, ucontext_t *uc, const struct decode_insn *in,
			const struct decode_access *a, int ran, const struct emulate *emu)
{
	uint64_t pcs[CONFIG_MAX_DEPTH];

	if (a->flags & DECODE_ACC_UNKNOWN_ADDR) {
		t->stats.skip_unknown_addr++;
		return;
	}
	if (thread_owns_address(t, a->addr)) {
		t->stats.skip_runtime_addr++;
		return;
	}
	t->stats.samples++;
	log_verbose(2, "sample pc %lx addr %lx len %u steps %u", (unsigned long)in->pc,
		    (unsigned long)a->addr, a->len, h_cfg->max_steps - t->steps_left);

	int n = context_of(t, uc, in->pc, 0, pcs, (int)h_cfg->depth);
	if (n > 0 && emu)
		n = emulate_context(emu, pcs, n, (int)h_cfg->depth);
	if (n <= 0) {
		t->stats.skip_unwind++;
		return;
	}
	if (path_in_runtime(pcs, n)) {
		t->stats.skip_runtime_addr++; /* a store the runtime made, e.g. in its pthread_create */
		return;
	}
	int64_t node = cct_insert_path(&t->cct, pcs, n);
	if (node < 0) {
		t->stats.skip_cct_full++;
		return;
	}
	struct cct_node *c = cct_node(&t->cct, (uint32_t)node);
	c->mu += 1; /* Witch 4.4.2: every sample counts in its context */

	struct watchpoint cand;
	memset(&cand, 0, sizeof(cand));
	watchpoint_align(a->addr, a->len, &cand.addr, &cand.len);
	cand.ctx = (uint32_t)node;
	cand.sample_pc = in->pc;
	cand.sample_addr = a->addr;
	cand.sample_len = a->len;
	cand.sample_elem = a->elem;
	cand.pending_self = !ran;
	if (h_craft->on_sample(&cand) < 0 || (ran && h_craft->on_self(&cand) < 0)) {
		t->stats.skip_unreadable++;
		return;
	}

	int slot = reservoir_pick_slot(&t->reservoir, armed_mask(t), t->wps.n, &t->rng);
	if (slot < 0) {
		t->stats.not_monitored++;
		return;
	}
	forget_slot(t, slot); /* re-arming replaces the victim: no disarm needed */
	if (watchpoint_arm(&t->wps, slot, cand.addr, cand.len, h_craft->watch_type) < 0) {
		watchpoint_disarm(&t->wps, slot); /* the victim may still be live */
		return;
	}
	watch_take_owner(&t->wps.wp[slot], &cand);
	c->armed++;
	t->stats.watchpoints_armed++;
}

/* Single steps run on the thread's CPU clock: restart the interval when
 * they end, or code that needs more steps per sample would get more
 * samples (the next tick would come early by the time spent stepping). */
static void stop_stepping(struct witch_thread *t, ucontext_t *uc)
{
	if (t->stepping)
		sampler_next_period(&t->sampler, rng_next(&t->rng));
	t->stepping = 0;
	t->step_to = 0;
	uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)EFLAGS_TF;
}

/* One more single step, if the budget allows. */
static void step_on(struct witch_thread *t, ucontext_t *uc)
{
	if (t->steps_left == 0) {
		t->stats.skip_steps++;
		stop_stepping(t, uc);
		return;
	}
	t->steps_left--;
	t->stepping = 1;
	uc->uc_mcontext.gregs[REG_EFL] |= (greg_t)EFLAGS_TF;
}

#define LOOKAHEAD_MAX 24
#define LOOK_MAX 512 /* instructions run ahead per look, at most */
#define REACH_BUDGET 96

/* Can a wanted access be reached from pc?  Explore the code without
 * running it: both sides of conditional branches, into direct calls and
 * on after them.  A return or an indirect branch ends a path: the ticks of
 * a load-only loop (that could only reach a store after it returns) are
 * skipped rather than single-stepped in vain.  The software sampler thus
 * samples the stores reachable from where the tick lands. */
static int reach_explore(uint64_t start)
{
	uint64_t work[32], seen[REACH_BUDGET];
	int n_work = 0, n_seen = 0, budget = REACH_BUDGET;
	struct decode_regs regs;
	struct decode_insn in;

	memset(&regs, 0, sizeof(regs));
	regs.gpr[DECODE_RCX] = 1; /* rep ops: report their access */
	work[n_work++] = start;
	while (n_work > 0 && budget > 0) {
		uint64_t pc = work[--n_work];
		for (;;) {
			int visited = 0;
			for (int i = 0; i < n_seen; i++)
				visited |= seen[i] == pc;
			if (visited || budget-- <= 0)
				break;
			seen[n_seen++] = pc;
			if (decode_at(pc, &regs, &in) < 0)
				break;
			if (wanted_access(&in))
				return 1;
			if (in.flags & DECODE_F_NO_STEP)
				break;
			if (!(in.flags & DECODE_F_BRANCH)) {
				pc += in.len;
				continue;
			}
			if ((in.flags & (DECODE_F_COND | DECODE_F_CALL)) && n_work < 32)
				work[n_work++] = pc + in.len;
			if ((in.flags & DECODE_F_RET) || in.branch_target == 0)
				break;
			pc = in.branch_target;
		}
	}
	return 0;
}

static int reach_cached(struct witch_thread *t, uint64_t pc)
{
	unsigned slot = (unsigned)((pc * 0x9e3779b97f4a7c15ull) >> 56);
	if (t->reach_cache[slot].pc != pc) {
		t->reach_cache[slot].pc = pc;
		t->reach_cache[slot].verdict = reach_explore(pc);
	}
	return t->reach_cache[slot].verdict;
}

/* Look at the code about to run: run it ahead on a copy of the registers
 * (emulate.h) and sample the k-th wanted access it reaches (k - 1 =
 * t->skip_left, drawn per tick in [0, WITCH_SPREAD)).  A tick lands in the
 * stretch of code before an access with a chance that grows with that
 * stretch's CPU time; passing a random number of accesses spreads the
 * chance over the accesses near it, so accesses in one loop weigh alike
 * however their time falls between them.  Where the emulator stops (an
 * instruction it does not know, a load of bytes an emulated store wrote),
 * single-step the program to there and over it, then look again.  Each
 * access must come within WITCH_MAX_STEPS + LOOKAHEAD_MAX instructions of
 * the one before (or of the tick), as if every instruction were stepped. */
static void sample_look(struct witch_thread *t, ucontext_t *uc)
{
	struct decode_regs regs, ahead;
	struct decode_insn in;
	struct decode_zydis z;
	struct emulate emu;

	regs_of(t, uc, &regs);
	if (t->stepping && t->step_to && regs.rip != t->step_to) {
		step_on(t, uc);
		return;
	}
	t->step_to = 0;
	ahead = regs;
	emulate_begin(&emu, regs.rip);
	uint32_t skip = t->skip_left, since = 0, total = 0;
	int stopped = 0; /* at ahead.rip, before the budget ran out */
	while (since < t->steps_left + LOOKAHEAD_MAX && total < LOOK_MAX) {
		if (decode_at_zydis(ahead.rip, &ahead, &in, &z) < 0) {
			if (total == 0) {
				t->stats.skip_decode++;
				stop_stepping(t, uc);
				return;
			}
			stopped = 1;
			break;
		}
		const struct decode_access *a = wanted_access(&in);
		if (a && skip == 0 && !emulate_stored(&emu, a->addr, a->len)) {
			stop_stepping(t, uc);
			sample_take(t, uc, &in, a, 0, &emu);
			return;
		}
		if (total == 0 && (in.flags & DECODE_F_NO_STEP)) {
			t->stats.skip_no_step++;
			stop_stepping(t, uc);
			return;
		}
		/* The access to sample, whose bytes hold a store not made yet, or
		 * an instruction the emulator does not run: the program runs there. */
		if ((a && skip == 0) || emulate_insn(&emu, &ahead, &in, &z) < 0) {
			if (a && skip > 0 && total == 0)
				skip--; /* the step runs this access: it is passed */
			stopped = 1;
			break;
		}
		t->stats.emulated++;
		total++;
		since++;
		if (a) {
			skip--;
			since = 0;
		}
	}
	if (!stopped) {
		t->stats.skip_steps++; /* ran the whole budget ahead: no access in reach */
		stop_stepping(t, uc);
		return;
	}
	if (!t->stepping && !reach_cached(t, regs.rip)) {
		t->stats.skip_no_access++;
		return;
	}
	t->skip_left = skip; /* the accesses passed run before ahead.rip */
	t->step_to = ahead.rip != regs.rip ? ahead.rip : 0;
	step_on(t, uc);
}

static void sample_tick(struct witch_thread *t, ucontext_t *uc)
{
	t->stats.ticks++;
	log_verbose(2, "tick pc %lx", (unsigned long)uc->uc_mcontext.gregs[REG_RIP]);
	sampler_next_period(&t->sampler, rng_next(&t->rng));
	if (t->stepping)
		return; /* still looking for the last tick's access */
	t->steps_left = h_cfg->max_steps;
	t->skip_left = rng_below(&t->rng, h_cfg->spread);
	sample_look(t, uc);
}

/* A PMU sample: the instruction and data address are exact, the access
 * has retired.  Only its width and element type come from decoding it; the
 * calling context is the one the overflow signal interrupted, with the
 * sampled instruction as its leaf (as Witch and HPCToolkit do). */
struct pmu_visit {
	struct witch_thread *t;
	ucontext_t *uc;
};

static void sample_pmu(const struct pmu_sample *s, void *arg)
{
	struct pmu_visit *v = arg;
	struct witch_thread *t = v->t;
	struct decode_regs regs;
	struct decode_insn in;

	t->stats.ticks++;
	memset(&regs, 0, sizeof(regs));
	regs.gpr[DECODE_RCX] = 1; /* rep ops: report their access */
	if (decode_at(s->ip, &regs, &in) < 0) {
		t->stats.skip_decode++;
		return;
	}
	const struct decode_access *a = wanted_access(&in);
	if (!a) {
		t->stats.skip_no_access++;
		return;
	}
	struct decode_access acc = *a;
	acc.addr = s->addr;
	acc.flags &= (uint8_t)~DECODE_ACC_UNKNOWN_ADDR;
	sample_take(t, v->uc, &in, &acc, 1, NULL);
}

/* --- traps ----------------------------------------------------------------- */

static int overlap_of(uint64_t a, uint32_t alen, uint64_t b, uint32_t blen, uint64_t *oaddr,
		      uint32_t *olen)
{
	uint64_t lo = a > b ? a : b;
	uint64_t hi = a + alen < b + blen ? a + alen : b + blen;
	if (hi <= lo)
		return 0;
	*oaddr = lo;
	*olen = (uint32_t)(hi - lo);
	return 1;
}

static int match_access(const struct decode_insn *in, const struct watchpoint *w,
			struct craft_trap *ct)
{
	for (int i = 0; i < in->n_access; i++) {
		const struct decode_access *a = &in->access[i];
		if (a->flags & DECODE_ACC_UNKNOWN_ADDR)
			continue;
		if (overlap_of(a->addr, a->len, w->addr, w->len, &ct->overlap_addr, &ct->overlap_len)) {
			ct->kind = a->kind;
			ct->elem = a->elem;
			ct->addr = a->addr;
			ct->len = a->len;
			return 1;
		}
	}
	return 0;
}

static int match_stack_slot(uint64_t slot, uint8_t kind, const struct watchpoint *w,
			    struct craft_trap *ct)
{
	if (!overlap_of(slot, 8, w->addr, w->len, &ct->overlap_addr, &ct->overlap_len))
		return 0;
	ct->kind = kind;
	ct->elem = DECODE_ELEM_INT;
	ct->addr = slot;
	ct->len = 8;
	return 1;
}

/* The access behind a trap.  x86 traps after the access, so the context pc
 * is one instruction late (Witch 4.5, precise PC): find the instruction
 * ending there and check that one of its accesses touches the watched bytes
 * (registers are post-execution, so stack and string instructions are
 * re-tried with their pointer register moved back). */
static int trap_resolve(struct witch_thread *t, const struct watchpoint *w, ucontext_t *uc,
			uint64_t *leaf, int *skip, struct craft_trap *ct)
{
	struct decode_regs regs;
	struct decode_insn in;
	uint64_t fn_start, prev;

	*skip = 0;
	regs_of(t, uc, &regs);
	uint64_t pc = regs.rip;
	uint64_t rsp = regs.gpr[DECODE_RSP];

	/* A rep string instruction with iterations left traps with rip on itself. */
	if (decode_at(pc, &regs, &in) == 0 && (in.flags & DECODE_F_REP) && regs.gpr[DECODE_RCX]) {
		int64_t back = (regs.rflags & 0x400) ? 1 : -1;
		for (int i = 0; i < in.n_access; i++) {
			struct decode_access *a = &in.access[i];
			a->addr += (uint64_t)(back * (int64_t)a->len);
		}
		if (match_access(&in, w, ct)) {
			*leaf = pc;
			return 0;
		}
	}
	if (unwind_proc_start(pc, &fn_start) < 0)
		return -ENOENT;
	if (fn_start == pc) {
		/* A call stored its return address into the watched slot; the
		 * trap lands on the callee's first instruction. */
		uint64_t ret, caller_start, call_pc;
		if (decode_read_memory(rsp, &ret, sizeof(ret)) < 0 ||
		    !match_stack_slot(rsp, DECODE_STORE, w, ct))
			return -ENOENT;
		/* The call itself is the leaf: a sampled call must know its own
		 * trap, or the ret that reads the slot is taken for it. */
		*leaf = ret - 1;
		if (unwind_proc_start(ret - 1, &caller_start) == 0 &&
		    decode_find_prev(t->dcache, caller_start, ret, &call_pc) == 0)
			*leaf = call_pc;
		*skip = 1;
		return 0;
	}
	if (decode_find_prev(t->dcache, fn_start, pc, &prev) < 0)
		return -ENOENT;
	if (decode_at(prev, &regs, &in) < 0)
		return -ENOENT;
	*leaf = prev;
	if (in.flags & DECODE_F_CALL) {
		/* pc is a return site: the callee's ret read the return-address slot. */
		return match_stack_slot(rsp - 8, DECODE_LOAD, w, ct) ? 0 : -ENOENT;
	}
	if (match_access(&in, w, ct))
		return 0;
	if (in.flags & (DECODE_F_STACK | DECODE_F_REP) || in.n_access == 2) {
		static const int64_t moves[] = {8, -8, 16, -16};
		for (unsigned m = 0; m < sizeof(moves) / sizeof(moves[0]); m++) {
			struct decode_regs r2 = regs;
			struct decode_insn in2;
			if (in.flags & DECODE_F_STACK)
				r2.gpr[DECODE_RSP] += (uint64_t)moves[m];
			else {
				r2.gpr[DECODE_RSI] += (uint64_t)moves[m];
				r2.gpr[DECODE_RDI] += (uint64_t)moves[m];
			}
			if (decode_at(prev, &r2, &in2) == 0 && match_access(&in2, w, ct))
				return 0;
		}
	}
	/* One memory operand whose address register the instruction itself
	 * overwrote (mov rax, [rax]): it must be the access. */
	if (in.n_access == 1 && !(in.access[0].flags & DECODE_ACC_UNKNOWN_ADDR)) {
		ct->kind = in.access[0].kind;
		ct->elem = in.access[0].elem;
		ct->addr = w->addr;
		ct->len = w->len;
		ct->overlap_addr = w->addr;
		ct->overlap_len = w->len;
		return 0;
	}
	return -ENOENT;
}

static uint64_t context_hash(const ucontext_t *uc)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (int i = REG_R8; i <= REG_EFL; i++) /* the registers, rip and flags */
		h = (h ^ (uint64_t)uc->uc_mcontext.gregs[i]) * 0x100000001b3ull;
	return h;
}

static void trap(struct witch_thread *t, int slot, ucontext_t *uc)
{
	struct watchpoint *w = &t->wps.wp[slot];
	struct craft_trap ct;
	uint64_t leaf = 0, pcs[CONFIG_MAX_DEPTH];
	int skip = 0, approx = 0;

	if (!w->armed) {
		t->stats.traps_spurious++; /* queued before it was disarmed */
		return;
	}
	/* Two traps with the program's registers unchanged: it ran nothing in
	 * between, so the access was the runtime's own (a word its handlers or
	 * libraries touch); watching on would trap on every handler run. */
	uint64_t hash = context_hash(uc);
	if (hash == w->last_trap_hash) {
		t->stats.traps_runtime++;
		release_slot(t, slot);
		return;
	}
	w->last_trap_hash = hash;
	memset(&ct, 0, sizeof(ct));
	int rc = trap_resolve(t, w, uc, &leaf, &skip, &ct);
	if (w->pending_self) {
		/* The sampled instruction runs after the watchpoint is armed and
		 * traps on itself first; accesses before it are not the answer.
		 * The kind tells them apart where the pc does not: a ret's read
		 * resolves to the call before its return site, which may be the
		 * sampled call (armed while running ahead, before that ret). */
		if (rc < 0 || (leaf == w->sample_pc && (ct.kind & h_craft->sample_kind))) {
			w->pending_self = 0;
			t->stats.traps_self++;
			if (h_craft->on_self(w) < 0) {
				t->stats.skip_unreadable++;
				release_slot(t, slot);
			}
		} else {
			t->stats.traps_early++;
		}
		return;
	}
	if (rc < 0) {
		t->stats.traps++;
		t->stats.traps_unresolved++;
		release_slot(t, slot);
		return;
	}
	/* The client first: a trap that is no verdict yet (a store under
	 * LoadCraft) or cannot be judged needs no calling context. */
	ct.tolerance = h_cfg->fp_tolerance;
	enum craft_verdict v = h_craft->on_trap(w, &ct, &approx);
	if (v == CRAFT_KEEP || v == CRAFT_DROP) {
		t->stats.traps++;
		if (v == CRAFT_KEEP) {
			t->stats.traps_kept++;
		} else {
			t->stats.traps_unreadable++;
			release_slot(t, slot);
		}
		return;
	}
	int n = context_of(t, uc, leaf, skip, pcs, (int)h_cfg->depth);
	if (n <= 0) {
		t->stats.skip_unwind++;
		return;
	}
	if (path_in_runtime(pcs, n)) {
		t->stats.traps_runtime++; /* the profiler's own access: keep watching */
		return;
	}
	t->stats.traps++;

	/* Witch 4.4.2: this trap stands for every sample taken in C_watch
	 * since the last trap there, shared among the watchpoints armed from
	 * it; an access wider than the watched part counts in full. */
	uint32_t watch_ctx = w->ctx;
	struct cct_node *c = cct_node(&t->cct, watch_ctx);
	double weight = (c->mu - c->eta) / (c->armed ? c->armed : 1);
	c->eta += weight;
	double bytes = (double)ct.overlap_len * ((double)w->sample_len / (double)w->len);
	release_slot(t, slot);

	int64_t trap_ctx = cct_insert_path(&t->cct, pcs, n);
	if (trap_ctx < 0) {
		t->stats.skip_cct_full++;
		return;
	}
	double amount = weight * bytes;
	if (pairtab_add(&t->pairs, watch_ctx, (uint32_t)trap_ctx, v == CRAFT_WASTE ? amount : 0,
			v == CRAFT_USE ? amount : 0, v == CRAFT_WASTE && approx ? amount : 0) < 0)
		t->stats.skip_pairs_full++;
}

/* --- entry points ------------------------------------------------------------ */

/* Around every use of the thread's tables: the periodic flush pauses the
 * thread and waits for in_handler to clear (thread_flush_all).  0: paused,
 * do nothing. */
static int handler_enter(struct witch_thread *t)
{
	__atomic_store_n(&t->in_handler, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&t->paused, __ATOMIC_SEQ_CST))
		return 1;
	__atomic_store_n(&t->in_handler, 0, __ATOMIC_SEQ_CST);
	return 0;
}

static void handler_leave(struct witch_thread *t)
{
	__atomic_store_n(&t->in_handler, 0, __ATOMIC_SEQ_CST);
}

/* Ours: this thread's sampler ticks, and anything else the kernel raised
 * on this signal (perf_event fds signal with si_code POLL_*; only the
 * runtime points fds at it).  Signals a process sent (kill, sigqueue, a
 * program's timer: si_code <= 0) are the program's: return 0. */
int handler_on_signal(int sig, siginfo_t *si, void *ucv)
{
	struct witch_thread *t = thread_self();
	int tick = t && sampler_is_tick(&t->sampler, si);
	if (!tick && si->si_code <= 0)
		return 0;
	if (handler_off || !t || !t->active || !handler_enter(t))
		return 1;
	int saved_errno = errno;
	ucontext_t *uc = ucv;
	if (tick) {
		if (t->sampler.clock == SAMPLER_PMU) {
			struct pmu_visit v = {t, uc};
			pmu_drain(&t->sampler.pmu, sample_pmu, &v);
		} else {
			sample_tick(t, uc);
		}
	} else {
		int slot = watchpoint_slot_of_fd(&t->wps, si->si_fd);
		if (slot >= 0)
			trap(t, slot, uc);
	}
	errno = saved_errno;
	handler_leave(t);
	return 1;
}

int handler_on_sigtrap(siginfo_t *si, void *ucv)
{
	struct witch_thread *t = thread_self();
	if (!t || !t->stepping || si->si_code != TRAP_TRACE)
		return 0;
	int saved_errno = errno;
	ucontext_t *uc = ucv;
	if (handler_off || !t->active || !handler_enter(t)) {
		stop_stepping(t, uc);
	} else {
		t->stats.steps++;
		sample_look(t, uc);
		handler_leave(t);
	}
	errno = saved_errno;
	return 1;
}
