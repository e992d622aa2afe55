/* sample: one sample, from a chosen access to an armed watchpoint (see sample.h). */
#include "witch/sample.h"
#include "witch/peek.h"
#include "witch/runspace.h"
#include "witch/cct.h"
#include "witch/context.h"
#include "witch/cost.h"
#include "witch/log.h"
#include "witch/objects.h"
#include "witch/objpend.h"
#include "witch/pairtab.h"
#include "witch/reservoir.h"
#include "witch/runtime.h"
#include "witch/thread.h"

#include <errno.h>
#include <string.h>
#include <x86intrin.h>

#define SELF_CHECK_EVERY 16

/* The slot's sample is no longer watched (its weight waits in mu). */
void sample_release(struct witch_thread *t, int slot)
{
	watchpoint_disarm(&t->wps, slot);
}

void sample_release_trapped(struct witch_thread *t, int slot)
{
	watchpoint_disarm_signalled(&t->wps, slot);
}

int sample_expire(struct witch_thread *t, uint64_t before_tick)
{
	int n = 0;
	for (int i = 0; i < t->wps.n; i++)
		if (t->wps.wp[i].armed && t->wps.wp[i].own.armed_tick < before_tick) {
			sample_release(t, i);
			n++;
		}
	return n;
}

const struct decode_access *sample_wanted(const struct decode_insn *in)
{
	for (int i = 0; i < in->n_access; i++) {
		const struct decode_access *a = &in->access[i];
		if (!(a->kind & witch_rt.craft->sample_kind))
			continue;
		if (!witch_rt.craft->sample_stack_ops && (in->flags & DECODE_F_STACK) &&
		    (a->flags & DECODE_ACC_IMPLICIT))
			continue;
		return a;
	}
	return NULL;
}

/* The data the sample falls on, decided now (docs/objects.md): its bytes
 * count there, and a trap's verdict goes to it.  *dropped: the object
 * table was full. */
static uint32_t sample_object(struct witch_thread *t, const ucontext_t *uc,
			      const struct sample_req *r, const uint64_t *pcs, const uint64_t *sps,
			      int n, int *dropped)
{
	/* The run-ahead's pcs[0] owns the innermost frame; else the
	 * interrupted function does (pcs[0] is then the leaf the caller set). */
	uint64_t owner = r->emu ? 0 : (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	struct objects_where w = {owner, pcs, sps, n, t->stack_hi, t->fs_base, &t->rng, &t->fnrange};
	*dropped = 0;
	return objects_enabled() ? objects_classify(r->a->addr, &w, dropped) : 0;
}

/* Hits of the program on the watched range before the sample's own access,
 * as the run ahead traced them (look.h), or -1. */
/* The accesses the client's watchpoint traps on. */
uint8_t sample_watch_kinds(void)
{
	return witch_rt.craft->watch_type == WATCHPOINT_W ? DECODE_STORE : DECODE_LOAD | DECODE_STORE;
}

static int sample_hits_before(const struct sample_req *r, const struct watchpoint *cand)
{
	uint8_t kinds = sample_watch_kinds();
	int hits = r->trace ? look_trace_hits(r->trace, r->trace_pos, cand->addr, cand->len, kinds) : -1;
	return hits < INT16_MAX ? hits : -1;
}

/* What LoadCraft's sample loads (w's value) and what its instruction
 * leaves (w's shadow: a read-modify-write's store, which the next load
 * reads back; judging that load against what the sample loaded without it
 * called a counter's increments waste), after on_sample read the location
 * as it is now.  Where the window stored there first, those bytes over the
 * program's (a string its caller just wrote, read 32 bytes at a time).
 * 0, or -EAGAIN when the run ahead does not know them. */
static int sample_self_loaded(const struct sample_req *r, struct watchpoint *w)
{
	const struct decode_access *a = r->a;
	uint8_t v[WATCHPOINT_VALUE_MAX];
	if (!(a->kind & DECODE_LOAD) || !r->emu || a->len > sizeof(v))
		return -EAGAIN;
	if (emulate_stored(r->emu, a->addr, a->len) &&
	    (peek_read(a->addr, v, a->len) < 0 ||
	     emulate_overlay_stored(r->emu, a->addr, v, a->len) < 0 ||
	     witch_rt.craft->on_self_value(w, v) < 0))
		return -EAGAIN;
	if (!(a->kind & DECODE_STORE))
		return 0;
	uint64_t stored = 0;
	if (!r->stored_known || a->len > sizeof(stored))
		return -EAGAIN; /* (a read-modify-write is a general register's) */
	memcpy(&stored, r->stored, a->len);
	craft_overlay(w, w->own.shadow, a->addr, a->len, stored);
	return 0;
}

/* Whether what the client reads at the own trap is known without it
 * (craft.h, enum craft_self); if so, tell the client now. */
static int sample_self_known(const struct sample_req *r, struct watchpoint *cand)
{
	switch (witch_rt.craft->self) {
	case CRAFT_SELF_NOTHING:
		return 1;
	case CRAFT_SELF_LOADED:
		return sample_self_loaded(r, cand) == 0;
	case CRAFT_SELF_STORED:
		return r->stored_known && witch_rt.craft->on_self_value(cand, r->stored) == 0;
	}
	return 0;
}

/* Witch 4.4.2, Eq. 4.1: a verdict on a sample from C_watch stands for
 * every sample taken there since its last verdict, mu - eta (in bytes); eta
 * catches up.  Not divided among C_watch's armed watchpoints: the parts of
 * those replaced before they trap were never attributed (oracle
 * --attribution=shared: dead_two_loops 0.40 for 0.50).  The first access
 * to touch the watched word decides all of it, though it may touch only
 * part: a 4-byte store into the watched 8 bytes of a 32-byte vector store
 * kills its neighbours too as a rule, and crediting only the touched part
 * would count every sample wider than the access after it short. */
/* A verdict's amounts into its pair, split over the objects the watched
 * context's pending weight stands for (objpend.h): the verdict is the
 * context's (4.4.2), and so is the weight.  Without parts, all to the
 * trapping watchpoint's object. */
static void pair_add_by_object(struct witch_thread *t, uint32_t watch_ctx, uint32_t trap_ctx,
			       uint32_t watch_obj,
			       const struct objpend_part *parts, int n_parts, double waste,
			       double use, double approx)
{
	double total = 0;
	for (int i = 0; i < n_parts; i++)
		total += parts[i].weight;
	if (total <= 0) {
		if (pairtab_add(&t->pairs, watch_ctx, trap_ctx, watch_obj, waste, use, approx) < 0)
			t->stats.skip_pairs_full++;
		return;
	}
	for (int i = 0; i < n_parts; i++) {
		double f = parts[i].weight / total;
		int rest = parts[i].obj == OBJPEND_REST;
		uint32_t obj = rest ? watch_obj : parts[i].obj;
		int rc = i == 0 ? pairtab_add(&t->pairs, watch_ctx, trap_ctx, obj, waste * f,
					      use * f, approx * f)
				: pairtab_add_share(&t->pairs, watch_ctx, trap_ctx, obj, waste * f,
						    use * f, approx * f);
		if (rc < 0)
			t->stats.skip_pairs_full++;
	}
}

void sample_verdict(struct witch_thread *t, uint32_t watch_ctx, uint32_t watch_obj,
		    const uint64_t *pcs, int n, enum craft_verdict v, int approx)
{
	struct cct_node *watch = cct_node(&t->cct, watch_ctx);
	double amount = watch->mu - watch->eta;
	watch->eta = watch->mu;
	struct objpend_part parts[OBJPEND_SLOTS + 1];
	int n_parts = objects_enabled() ? objpend_take(&t->arena, watch->objpend, parts) : 0;
	int64_t trap_ctx = cct_insert_path(&t->cct, pcs, n);
	if (trap_ctx < 0) {
		t->stats.skip_cct_full++;
		return;
	}
	pair_add_by_object(t, watch_ctx, (uint32_t)trap_ctx, watch_obj, parts, n_parts,
			   v == CRAFT_WASTE ? amount : 0, v == CRAFT_USE ? amount : 0,
			   v == CRAFT_WASTE && approx ? amount : 0);
}

/* What a traced LoadCraft verdict starts from (sample_self_loaded). */
static int sample_traced_loaded(const struct sample_req *r, struct watchpoint *w)
{
	if (!r->emu || witch_rt.craft->on_sample(w) < 0)
		return -EAGAIN;
	return sample_self_loaded(r, w);
}

/* The access e as the trap it would be on w's bytes. */
static struct craft_trap sample_traced_access(const struct watchpoint *w,
					      const struct look_trace_access *e)
{
	uint64_t o_lo = e->addr > w->addr ? e->addr : w->addr;
	uint64_t o_hi = e->addr + e->len < w->addr + w->len ? e->addr + e->len : w->addr + w->len;
	return (struct craft_trap){.kind = e->kind, .elem = e->elem, .addr = e->addr, .len = e->len,
				   .overlap_addr = o_lo, .overlap_len = (uint32_t)(o_hi - o_lo),
				   .tolerance = witch_rt.cfg->fp_tolerance,
				   .value_known = e->value_known, .value = e->value};
}

/* The window ran past the sample to the access that decides it: the
 * verdict now, as the trap would have given it, with no watchpoint, no hits
 * let by and no trap (dead: interp 75% of its samples, 150 -> 90 us a
 * tick).  The deciding access's context is the tick's (tick_pcs) with the
 * calls and returns run ahead to it (the trace's frame).  1: decided. */
static int sample_decide_traced(struct witch_thread *t, const struct sample_req *r,
				const struct watchpoint *cand, const uint64_t *tick_pcs, int tick_n)
{
	uint64_t *pcs = t->rs->scratch.decide_pcs;
	const struct craft *cr = witch_rt.craft;
	if (!cr->on_traced || !r->trace || tick_n <= 0)
		return 0;
	uint8_t kinds = sample_watch_kinds();
	const struct look_trace_access *e =
		look_trace_next(r->trace, r->trace_pos, cand->addr, cand->len, kinds);
	if (!e)
		return 0;
	struct watchpoint w = *cand;
	/* A client that remembers what the sample stores needs that value. */
	if (cr->self == CRAFT_SELF_STORED && (!r->stored_known || cr->on_self_value(&w, r->stored) < 0))
		return 0;
	if (cr->self == CRAFT_SELF_LOADED && sample_traced_loaded(r, &w) < 0)
		return 0;
	/* The accesses to the watched bytes in order, until one decides (a
	 * client passes those it can follow: craft.h, CRAFT_KEEP). */
	enum craft_verdict v;
	int approx = 0;
	for (;;) {
		struct craft_trap ct = sample_traced_access(&w, e);
		v = cr->on_traced(&w, &ct, &approx);
		if (v != CRAFT_KEEP)
			break;
		e = look_trace_next(r->trace, (uint32_t)(e - r->trace->a), cand->addr, cand->len, kinds);
		if (!e)
			return 0;
	}
	if ((v != CRAFT_WASTE && v != CRAFT_USE) || e->frame == LOOK_FRAME_UNKNOWN)
		return 0;
	memcpy(pcs, tick_pcs, sizeof(pcs[0]) * (size_t)tick_n);
	int n = emulate_context_frame(&r->trace->frames[e->frame], pcs, tick_n,
				      (int)witch_rt.cfg->depth);
	if (n <= 0)
		return 0;
	pcs[0] = context_leaf(e->pc);
	if (context_in_runtime(pcs, n))
		return 0; /* a wrapper's access: the trap path knows those */
	t->stats.verdicts_traced++;
	sample_verdict(t, cand->own.ctx, cand->own.obj, pcs, n, v, approx);
	return 1;
}

static int sample_watched_already(const struct witch_thread *t, const struct watchpoint *cand)
{
	for (int i = 0; i < t->wps.n; i++) {
		const struct watchpoint *w = &t->wps.wp[i];
		if (w->armed && w->addr < cand->addr + cand->len && cand->addr < w->addr + w->len)
			return 1;
	}
	return 0;
}

/* The calling context at the signal, timed (stat cost_unwind_ns). */
static int sample_walk(struct witch_thread *t, ucontext_t *uc, uint64_t leaf, uint64_t *pcs,
		       uint64_t *sps)
{
	uint64_t from = __rdtsc();
	int n = context_of_signal(t, uc, leaf, 0, pcs, sps, (int)witch_rt.cfg->depth);
	t->stats.cost_unwind_ns += (uint64_t)cost_tsc_ns(__rdtsc() - from);
	return n;
}

/* The sample's calling context, its leaf r->leaf: unwound, or copied from
 * the tick's first pick (the same signal context, the same stack). */
static int sample_context(struct witch_thread *t, ucontext_t *uc, const struct sample_req *r,
			  uint64_t *pcs, uint64_t *sps)
{
	struct sample_tick_ctx *c = r->tick_ctx;
	if (!c)
		return sample_walk(t, uc, r->leaf, pcs, sps);
	if (c->n == 0) { /* the tick's first pick walks for them all */
		c->n = sample_walk(t, uc, r->leaf, c->pcs, c->sps);
		if (c->n == 0)
			c->n = -EINVAL;
	}
	if (c->n < 0)
		return c->n;
	memcpy(pcs, c->pcs, sizeof(pcs[0]) * (size_t)c->n);
	memcpy(sps, c->sps, sizeof(sps[0]) * (size_t)c->n);
	pcs[0] = context_leaf(r->leaf);
	return c->n;
}

void sample_scratch_init(struct sample_scratch *s, void *mem, uint32_t depth)
{
	uint64_t *m = mem;
	memset(s, 0, sizeof(*s));
	uint64_t **arrays[SAMPLE_SCRATCH_ARRAYS] = {&s->tick.pcs, &s->tick.sps, &s->pcs, &s->sps,
						    &s->tick_pcs, &s->decide_pcs, &s->trap_pcs};
	for (int i = 0; i < SAMPLE_SCRATCH_ARRAYS; i++)
		*arrays[i] = m + (size_t)i * depth;
}

void sample_take(struct witch_thread *t, ucontext_t *uc, const struct sample_req *r)
{
	uint64_t *pcs = t->rs->scratch.pcs, *sps = t->rs->scratch.sps;
	const struct decode_access *a = r->a;

	if (thread_owns_address(t, a->addr)) {
		t->stats.skip_runtime_addr++;
		return;
	}
	t->stats.samples++;
	log_verbose(2, "sample pc %lx addr %lx len %u weight %lu bytes", (unsigned long)r->leaf,
		    (unsigned long)a->addr, a->len, (unsigned long)r->weight);
	int n = sample_context(t, uc, r, pcs, sps);
	/* The tick's context, for an access the window traced past the sample. */
	uint64_t *tick_pcs = t->rs->scratch.tick_pcs;
	int tick_n = 0;
	if (n > 0 && r->emu && r->trace && witch_rt.craft->on_traced &&
	    witch_rt.cfg->verdicts != CONFIG_VERDICTS_NONE) {
		memcpy(tick_pcs, pcs, sizeof(pcs[0]) * (size_t)n);
		tick_n = n;
	}
	/* Where the run-ahead stands: its calls and returns move the frames,
	 * and the stack frames the object is looked up in with them. */
	if (n > 0 && r->emu) {
		n = emulate_context(r->emu, pcs, sps, n, (int)witch_rt.cfg->depth);
		/* a call the window ran from a wrapper (a tick in heap.c's) */
		if (n > 0)
			n = context_drop_through(pcs, sps, n);
	}
	int obj_dropped = 0;
	uint32_t obj = n > 0 ? sample_object(t, uc, r, pcs, sps, n, &obj_dropped) : 0;
	if (n > 0 && !r->emu && r->self_pc == 0)
		n = context_of_call(pcs, n, r->leaf);
	if (n <= 0) {
		t->stats.skip_unwind++;
		return;
	}
	if (context_in_runtime(pcs, n)) {
		t->stats.skip_runtime_addr++; /* a store the runtime made, e.g. in its pthread_create */
		return;
	}
	int64_t node = cct_insert_path(&t->cct, pcs, n);
	if (node < 0) {
		t->stats.skip_cct_full++;
		return;
	}
	struct cct_node *c = cct_node(&t->cct, (uint32_t)node);
	c->mu += r->weight; /* Witch 4.4.2: every sample counts in its context (in bytes) */
	if (objects_enabled()) {
		objects_add_sampled(obj, r->weight);
		if (objpend_add(&t->arena, &c->objpend, obj, r->weight) < 0)
			t->stats.objects_dropped++; /* not kept by object: its trap's goes to one */
		t->stats.objects_unknown += obj == 0;
		t->stats.objects_dropped += (uint64_t)obj_dropped;
	}
	if (witch_rt.cfg->verdicts == CONFIG_VERDICTS_NONE)
		return; /* WITCH_WATCHPOINTS=0: the weights alone (the profile's `sampled`) */

	struct watchpoint cand;
	memset(&cand, 0, sizeof(cand));
	/* One word of the access, drawn uniformly (watchpoint.h). */
	watchpoint_pick_word(a->addr, a->len, rng_next(&t->rng), &cand.addr, &cand.len);
	cand.own.ctx = (uint32_t)node;
	cand.own.obj = obj;
	cand.own.sample_pc = r->self_pc;
	cand.own.sample_addr = a->addr;
	cand.own.sample_len = a->len;
	cand.own.sample_elem = a->elem;
	cand.own.armed_tick = t->drcost.ticks;
	/* Decided by the window when it ran to the deciding access already. */
	if (sample_decide_traced(t, r, &cand, tick_pcs, tick_n))
		return;
	/* No watchpoint to wait with: the weight waits in mu for a verdict the
	 * run-ahead finds on a later sample of this context (4.4.2). */
	if (witch_rt.cfg->verdicts == CONFIG_VERDICTS_WINDOW) {
		t->stats.verdicts_unreached++;
		return;
	}
	/* Bytes a watchpoint watches already: its verdict comes at or before
	 * this sample's own access, and two watchpoints on one word signal on
	 * one instruction, which SIGTRAP does not queue.  The weight is in mu. */
	if (sample_watched_already(t, &cand)) {
		t->stats.watch_overlap++;
		return;
	}
	/* The hits before the sample's own access go by in the kernel when the
	 * run ahead counted them, and so does the own access when the client
	 * needs nothing from its trap: a signal round trip each saved.  One
	 * such sample in SELF_CHECK_EVERY traps on its own access anyway: that
	 * checks the count (predict_ok, predict_miss).  Else every hit traps
	 * (pending_self). */
	int hits = r->ran ? -1 : sample_hits_before(r, &cand);
	if (witch_rt.craft->on_sample(&cand) < 0) {
		t->stats.skip_unreadable++;
		return;
	}
	int pass = 0;
	cand.own.pending_self = r->ran ? 0 : (uint8_t)(1 + (r->self_skip < 254 ? r->self_skip : 254));
	cand.own.checking = 0;
	if (hits >= 0 && ++t->self_checks % SELF_CHECK_EVERY == 0) {
		pass = hits;
		cand.own.pending_self = 1;
		cand.own.checking = 1;
		/* ... and the bytes the run ahead says it stores or loads,
		 * where the client takes them (a read-modify-write's
		 * location holds its store by the own trap, not its load) */
		cand.own.value_predicted =
			witch_rt.craft->self != CRAFT_SELF_NOTHING &&
			!(witch_rt.craft->self == CRAFT_SELF_LOADED && (r->a->kind & DECODE_STORE)) &&
			sample_self_known(r, &cand);
	} else if (hits >= 0 && sample_self_known(r, &cand)) {
		pass = hits + 1;
		cand.own.pending_self = 0;
	}
	if (r->ran && witch_rt.craft->on_self(&cand) < 0) {
		t->stats.skip_unreadable++;
		return;
	}
	if (thread_watchpoints_open(t) < 0) {
		t->stats.not_monitored++;
		return;
	}
	int slot = reservoir_pick_slot(&t->reservoir, watchpoint_set_armed(&t->wps), t->wps.n,
				       &t->rng);
	if (slot < 0) {
		t->stats.not_monitored++;
		return;
	}
	/* Re-arming replaces the victim (no disarm needed); its weight waits in mu. */
	if (watchpoint_arm_after(&t->wps, slot, cand.addr, cand.len, witch_rt.craft->watch_type,
				 (uint32_t)pass) < 0) {
		watchpoint_disarm(&t->wps, slot); /* the victim may still be live */
		return;
	}
	if (pass > 0) {
		t->stats.hits_passed += (uint64_t)pass;
		cost_add_kernel(&t->cost, pass * watchpoint_hit_ns());
	}
	t->wps.wp[slot].own = cand.own; /* the slot's fd, state and range stay */
	/* The own trap comes right back unless hits go by first (drcost.h:
	 * no program work to read the counters around). */
	t->back_soon |= cand.own.pending_self && pass == 0;
	t->stats.watchpoints_armed++;
}
