/* look: from a tick to the access it samples (see look.h). */
#include "witch/look.h"
#include "witch/context.h"
#include "witch/cost.h"
#include "witch/memlat.h"
#include "witch/bulk.h"
#include "witch/costmodel.h"
#include "witch/decode_zydis.h"
#include "witch/heap.h"
#include "witch/heap_sites.h"
#include "witch/emulate_vec.h"
#include "witch/log.h"
#include "witch/peek.h"
#include "witch/watchpoint.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#define MIN_WINDOW_CYCLES 8.0 /* a window cut short (a syscall) still spans this */
#define BULK_BYTES_PER_CYCLE 32.0 /* a counted memcpy/memset: a vector store a cycle */
#define REACH_MAX_INSNS 512   /* run ahead to the pick, at most */
#define WRAPPER_FRAME_BYTES 1024 /* the most stack a bulk.c wrapper touches */
#define DECIDE_PROBE_FIRST 8 /* a site whose verdict lay past reach is tried again after */
#define DECIDE_PROBE_MOST 128 /* ... picks, twice as many after each miss, up to this */

void look_end(struct look *l)
{
	l->stepping = 0;
	l->step_to = 0;
	l->skip_left = 0;
}

void look_tick_skipped(struct look *l)
{
	pace_forget(&l->pace);
}

/* Earlier runs of the instruction at pc that touched [addr, addr + len). */
static uint32_t trace_self_runs(const struct look_trace *tr, uint64_t pc, uint64_t addr,
				uint32_t len)
{
	uint32_t runs = 0;
	for (uint32_t i = 0; i < tr->n; i++)
		runs += tr->a[i].pc == pc && tr->a[i].addr < addr + len && addr < tr->a[i].addr + tr->a[i].len;
	return runs;
}

int look_trace_hits(const struct look_trace *trace, uint32_t pos, uint64_t addr, uint32_t len,
		    uint8_t kinds)
{
	int hits = 0;
	int last = -1;
	if (pos > trace->complete || pos > trace->n)
		return -1;
	for (uint32_t i = 0; i < pos; i++) {
		const struct look_trace_access *e = &trace->a[i];
		if (!(e->kind & kinds) || e->addr >= addr + len || addr >= e->addr + e->len)
			continue;
		if (e->unsure)
			return -1;
		if (e->insn != last)
			hits++;
		last = e->insn;
	}
	return hits;
}

const struct look_trace_access *look_trace_next(const struct look_trace *tr, uint32_t pos,
						uint64_t addr, uint32_t len, uint8_t kinds)
{
	uint32_t end = tr->n < tr->complete ? tr->n : tr->complete;
	if (pos >= end)
		return NULL;
	uint16_t own = tr->a[pos].insn;
	for (uint32_t i = pos; i < end; i++) {
		const struct look_trace_access *e = &tr->a[i];
		if (e->insn == own || !(e->kind & kinds))
			continue;
		if (e->unsure)
			return NULL; /* it may touch them: the program must tell */
		if (e->addr < addr + len && addr < e->addr + e->len)
			return e;
	}
	return NULL;
}

/* The frame the run is in, kept in tr->frames when it changed. */
static uint8_t trace_frame(struct look_trace *tr, const struct emulate *emu)
{
	if (tr->n_frames > 0 && emu->frame_gen == tr->frame_gen)
		return tr->frame_now;
	tr->frame_gen = emu->frame_gen;
	tr->frame_now = LOOK_FRAME_UNKNOWN;
	if (tr->n_frames < LOOK_TRACE_FRAMES) {
		emulate_frame_of(emu, &tr->frames[tr->n_frames]);
		tr->frame_now = (uint8_t)tr->n_frames++;
	}
	return tr->frame_now;
}

/* The exact part of the window runs in: note its accesses. */
static void trace_insn(struct look_trace *tr, const struct decode_insn *in, int n, uint8_t frame)
{
	if (tr->n + in->n_access > LOOK_TRACE_MAX) {
		tr->complete = tr->n < tr->complete ? tr->n : tr->complete;
		return;
	}
	for (int i = 0; i < in->n_access; i++) {
		const struct decode_access *a = &in->access[i];
		struct look_trace_access *e = &tr->a[tr->n++];
		e->pc = in->pc;
		e->addr = a->addr;
		e->len = a->len;
		e->insn = (uint16_t)n;
		e->kind = a->kind;
		e->frame = frame;
		e->elem = a->elem;
		e->value_known = 0;
		e->unsure = (a->flags & (DECODE_ACC_MASKED | DECODE_ACC_UNKNOWN_ADDR)) ||
			    (in->flags & DECODE_F_REP);
	}
}

/* The program will touch [addr, addr + len) in ways the window does not
 * run: a watched range there cannot count its hits. */
static void trace_unsure(struct look_trace *tr, uint64_t addr, uint32_t len)
{
	if (tr->n >= LOOK_TRACE_MAX) {
		tr->complete = tr->n < tr->complete ? tr->n : tr->complete;
		return;
	}
	struct look_trace_access *e = &tr->a[tr->n++];
	e->pc = 0;
	e->addr = addr;
	e->len = len;
	e->insn = UINT16_MAX;
	e->kind = DECODE_RMW;
	e->unsure = 1;
}

/* On past in by decoding alone: the next pc, or 0 where the path cannot be
 * told (a return, an indirect branch, unmapped code). */
static uint64_t next_pc_decoded(struct emulate *emu, const struct decode_insn *in)
{
	uint64_t next = in->pc + in->len;
	if (in->flags & DECODE_F_BRANCH) {
		if ((in->flags & DECODE_F_RET) || in->branch_target == 0)
			return 0;
		/* Loops branch back: backward taken, forward not taken. */
		if (!(in->flags & DECODE_F_COND) || in->branch_target < in->pc)
			next = in->branch_target;
	}
	return emulate_code_readable(emu, next) ? next : 0;
}

/* A rep string instruction's access is decoded as its first element; a pick
 * of it stands for all rep of them (access_bytes), so it watches one drawn
 * uniformly, as a count-based sampler meets each element alike.  Always the
 * first was biased: a memset's (rep stosq's) first qword is where the
 * string written after it starts (strings' format_record: its digits). */
static void rep_pick_element(struct decode_access *a, uint64_t rep, uint64_t rflags,
			     struct rng *rng)
{
	uint64_t k = rng_next(rng) % rep;
	if (rflags & DECODE_RFLAGS_DF) /* the elements go down */
		a->addr -= k * a->len;
	else
		a->addr += k * a->len;
}

/* The bytes the picked element of a rep string store writes (the run ahead
 * stops at a rep instruction, so note_stored never sees them): stos's
 * from rax, movs's from its source element as the program will read it,
 * where no earlier element can have written that (the two strings apart).
 * Forward strings only (DF clear), as the C library's are.  0, or -ENOENT
 * when not known. */
static int rep_pick_stored(struct emulate *emu, const struct decode_insn *in,
			   const struct decode_access *orig, const struct decode_access *pa,
			   const struct decode_regs *regs, uint64_t rep, uint8_t *out)
{
	if (!(pa->kind & DECODE_STORE) || (pa->kind & DECODE_LOAD) || pa->len > 8 ||
	    (regs->rflags & DECODE_RFLAGS_DF) || rep == 0)
		return -ENOENT;
	const struct decode_access *src = NULL;
	for (int i = 0; i < in->n_access; i++)
		if (&in->access[i] != orig && (in->access[i].kind & DECODE_LOAD))
			src = &in->access[i];
	if (!src) { /* stos: al, ax, eax or rax, every element */
		uint64_t v = regs->gpr[DECODE_RAX];
		memcpy(out, &v, pa->len);
		return 0;
	}
	if (src->len != pa->len)
		return -ENOENT;
	uint64_t span = rep * pa->len;
	if (src->addr < orig->addr + span && orig->addr < src->addr + span)
		return -ENOENT; /* overlapping strings: an earlier element may feed this one */
	return emulate_read_stored(emu, src->addr + (pa->addr - orig->addr), out, pa->len) == 0
		       ? 0
		       : -ENOENT;
}

static uint64_t access_bytes(const struct decode_insn *in, const struct decode_access *a,
			     const struct decode_regs *regs)
{
	return (in->flags & DECODE_F_REP) ? (uint64_t)a->len * regs->gpr[DECODE_RCX] : a->len;
}

/* The window reached a wrapper of bulk.c (the program called memcpy) or
 * an allocation interposer (heap.c: malloc, free): run on as the program
 * will, into the C library's function for a call the wrapper only passes
 * on, or past a call whose bytes bulk.c counts (its time modelled at a
 * vector copy's store rate).  Stopping there instead would weigh the
 * stores just before such calls by a window cut short (spills, the return
 * address): several times their share (a store d cycles before the cut
 * weighs ~1 + ln(64 / d)). */
struct window_malloc {
	uint64_t slot; /* where the call pushed its return address; 0: none */
	uint64_t ret, size;
	uint32_t site;
};

static int look_past_wrapper(struct emulate *emu, struct costmodel *cm, struct decode_regs *r,
			     struct look_trace *tr, struct window_malloc *wm)
{
	struct bulk_call call;
	uint64_t real, rsp = r->gpr[DECODE_RSP];
	int rc;

	if ((rc = heap_window_call(r->rip, &real)) >= 0) {
		/* A block it will track: its stores ahead are the block's */
		if (rc == HEAP_WINDOW_ALLOCATES && emu->n_calls > 0 &&
		    emu->call_slot[emu->n_calls - 1] == rsp) {
			uint64_t ret = emu->call_ret[emu->n_calls - 1];
			struct heap_stack_overlay ov = {
				.n = emu->n_calls, .slot = emu->call_slot, .val = emu->call_ret};
			uint32_t site = heap_window_site(r->gpr[DECODE_RDI], ret, rsp + 8, &ov);
			if (site)
				*wm = (struct window_malloc){
					.slot = rsp, .ret = ret, .size = r->gpr[DECODE_RDI], .site = site};
		}
		r->rip = real; /* what the interposer adds is the runtime's time */
		return 0;
	}
	if ((rc = bulk_window_call(r->rip, r->gpr, &call)) < 0)
		return rc;
	if (call.real) {
		/* The wrapper's own frame is below the caller's stack pointer. */
		trace_unsure(tr, r->gpr[DECODE_RSP] - WRAPPER_FRAME_BYTES, WRAPPER_FRAME_BYTES);
		r->rip = call.real;
		return 0;
	}
	if ((rc = emulate_return_from_call(emu, r)) < 0)
		return rc;
	r->gpr[DECODE_RAX] = call.result;
	tr->complete = tr->n; /* the call's accesses are not traced */
	costmodel_add_busy(cm, (double)call.bytes / BULK_BYTES_PER_CYCLE);
	return 0;
}

/* The window, from a tick inside the allocator's malloc, returned into the
 * tracked malloc's interposer that called it: on in the program, where
 * the interposer returns (heap_window_return), as the program will.
 * Stopping there instead weighed malloc's last stores by windows cut
 * short (alloc_churn: _int_malloc 1.3-2.5x fill's bytes for 0.75). */
static int look_past_interposer_return(struct emulate *emu, struct decode_regs *r)
{
	static const int kept[6] = {DECODE_RBX, DECODE_RBP, DECODE_R12,
				    DECODE_R13, DECODE_R14, DECODE_R15};
	struct heap_frame_regs f;
	int rc;

	if ((rc = heap_window_return(r->gpr[DECODE_RSP], r->gpr[DECODE_RAX], &f)) < 0)
		return rc;
	if ((rc = emulate_frame_left(emu)) < 0)
		return rc;
	for (int i = 0; i < 6; i++)
		r->gpr[kept[i]] = f.kept[i];
	r->gpr[DECODE_RSP] = f.sp;
	r->rip = f.ip;
	return 0;
}

/* One of LOOK_MAX_PICKS independent draws over the window's accesses, each
 * with a chance in proportion to the access's bytes (a weighted reservoir
 * of one). */
struct draw {
	int picked;         /* 0: nothing yet; 1: exact (pick holds it); 2: reach */
	uint64_t reach_pc;  /* where the program must run to */
	uint32_t reach_rank;
	uint32_t reach_insns; /* single steps to get there */
	struct look_pick pick;
};

/* *to = *from, the emulator's state by its used part (emulate_copy). */
static void look_pick_copy(struct look_pick *to, const struct look_pick *from)
{
	memcpy(to, from, offsetof(struct look_pick, emu));
	emulate_copy(&to->emu, &from->emu);
}

/* What the instruction just run stored, where the run ahead knows it: on
 * its traced store (entries from first on), for verdicts on values. */
static void trace_stored(struct look_trace *tr, uint32_t first, const struct emulate *emu,
			 int stores_before)
{
	int i = emu->n_stores - 1;
	if (i < stores_before || !emu->store_known[i])
		return;
	for (uint32_t k = first; k < tr->n; k++) {
		struct look_trace_access *e = &tr->a[k];
		if ((e->kind & DECODE_STORE) && e->addr == emu->store_addr[i] &&
		    e->len == emu->store_len[i]) {
			e->value = emu->store_value[i];
			e->value_known = 1;
		}
	}
}

/* The picked store has run ahead: its bytes, where the emulator knows them
 * (a general or a vector register's), for a client that compares them. */
static void note_stored(const struct emulate *emu, int stores_before,
			const struct decode_access *a, struct draw *draws, uint32_t here)
{
	uint8_t bytes[sizeof(draws[0].pick.stored)];
	if (a->len > sizeof(bytes) || emulate_last_stored(emu, stores_before, a->addr, a->len, bytes) < 0)
		return;
	for (int d = 0; d < LOOK_MAX_PICKS; d++)
		if (here & (1u << d)) {
			draws[d].pick.stored_known = 1;
			memcpy(draws[d].pick.stored, bytes, a->len);
		}
}

/* The bytes of the pick's access a watch may watch (watch_word.h: a word
 * among its first WATCHPOINT_VALUE_MAX), and those of them e touches, as
 * bits of a mask from the access's first byte. */
_Static_assert(WATCHPOINT_VALUE_MAX <= 64, "a watch's span must fit a uint64_t mask");

static uint64_t low_bits(uint64_t n)
{
	return n >= 64 ? ~0ull : (1ull << n) - 1;
}

static uint64_t pick_span(const struct decode_access *a)
{
	return a->len < WATCHPOINT_VALUE_MAX ? a->len : WATCHPOINT_VALUE_MAX;
}

static uint64_t pick_span_bits(const struct decode_access *a)
{
	return low_bits(pick_span(a));
}

static uint64_t touch_bits(const struct decode_access *a, const struct look_trace_access *e)
{
	uint64_t span = pick_span(a);
	if (e->addr + e->len <= a->addr || e->addr >= a->addr + span)
		return 0;
	uint64_t lo = e->addr > a->addr ? e->addr - a->addr : 0;
	uint64_t hi = e->addr + e->len < a->addr + span ? e->addr + e->len - a->addr : span;
	return low_bits(hi - lo) << lo;
}

/* The draws in open that the accesses traced from first on, after the
 * draw's own instruction, settle (env: what a watch traps on, what the
 * client judges).  covered[d]: the draw's bytes whose first touch the
 * client can judge from the trace; *decided, once that is all the bytes a
 * watch may watch; *undecidable, where the first touch of some byte is one
 * it cannot judge, or an unsure access comes first (look_trace_next then
 * says nothing), or the draw's own entry is missing (the trace was full). */
static void trace_settled(const struct look_env *env, const struct look_trace *tr, uint32_t first,
			  const struct draw *draws, uint32_t open, uint64_t *covered,
			  uint32_t *decided, uint32_t *undecidable)
{
	*decided = *undecidable = 0;
	for (int d = 0; d < LOOK_MAX_PICKS; d++) {
		if (!(open & (1u << d)))
			continue;
		const struct look_pick *p = &draws[d].pick;
		const struct decode_access *a = &p->in.access[p->access];
		if (p->trace_pos >= tr->n) {
			*undecidable |= 1u << d;
			continue;
		}
		uint16_t own = tr->a[p->trace_pos].insn;
		for (uint32_t i = first > p->trace_pos ? first : p->trace_pos; i < tr->n; i++) {
			const struct look_trace_access *e = &tr->a[i];
			if (e->insn == own || !(e->kind & env->watch_kinds))
				continue;
			uint64_t fresh = touch_bits(a, e) & ~covered[d];
			if (!e->unsure && !fresh)
				continue;
			/* LoadCraft's stores: the next load decides (craft.h) */
			if (!e->unsure && !(e->kind & env->decide_kinds) &&
			    (e->kind & env->decide_through) && e->value_known)
				continue;
			if (e->unsure || !(e->kind & env->decide_kinds) ||
			    (env->decide_values && !e->value_known)) {
				*undecidable |= 1u << d;
				break;
			}
			covered[d] |= fresh;
			if (covered[d] == pick_span_bits(a)) {
				*decided |= 1u << d;
				break;
			}
		}
	}
}

/* A store that misses waits in the store buffer, not in a chain: its line
 * is timed as a load's (memlat.h) the first time the window stores to it,
 * and its latency overlaps with the others' (costmodel_late_store). */
#define PROBED_LINES 32
static void probe_stores(struct costmodel *cm, const struct decode_insn *in, uint64_t *lines,
			 int *n_lines)
{
	if (in->flags & DECODE_F_REP)
		return;
	for (int i = 0; i < in->n_access; i++) {
		const struct decode_access *a = &in->access[i];
		if (!(a->kind & DECODE_STORE) || (a->flags & DECODE_ACC_UNKNOWN_ADDR))
			continue;
		uint64_t line = a->addr & ~63ull;
		int k;
		for (k = 0; k < *n_lines && lines[k] != line; k++)
			;
		if (k < *n_lines || *n_lines == PROBED_LINES)
			continue;
		lines[(*n_lines)++] = line;
		uint8_t byte;
		uint32_t ticks;
		if (peek_can_time(a->addr, 1) && peek_read_timed(a->addr, &byte, 1, a->addr, &ticks) == 0 && ticks)
			costmodel_late_store(cm, (float)(memlat_extra_ns(ticks) *
							 costmodel_cycles_per_ns()));
	}
}

/* Where a window's exact run ended (look_window), for the run past it. */
struct window_end {
	double cycles_missed;    /* its cycles with the loads' measured latencies */
	int exact;               /* the registers are still known there */
	int n;                   /* instructions run */
	struct decode_regs ahead;
	struct emulate emu;
};

/* How far past the window a pick at pc may run for its verdict: as far as
 * the site's last verdict lay (twice, and a little), all of
 * LOOK_DECIDE_INSNS for a site not seen, and none where the last run found
 * none, but for a try after DECIDE_PROBE_FIRST picks, twice as many after
 * each miss (a tick's picks run as far as the farthest). */
static struct look_decide_site *decide_site(struct look *l, uint64_t pc)
{
	struct look_decide_site *s = &l->decide[(pc ^ (pc >> 7)) % LOOK_DECIDE_SITES];
	if (s->pc != pc) {
		s->pc = pc;
		s->limit = LOOK_DECIDE_INSNS;
		s->probe_in = 0;
		s->probe_every = DECIDE_PROBE_FIRST / 2;
	}
	return s;
}

static uint32_t decide_limit(struct look_decide_site *s)
{
	if (s->limit > 0)
		return s->limit;
	if (s->probe_in > 0 && --s->probe_in > 0)
		return 0;
	return LOOK_DECIDE_INSNS;
}

static void decide_found(struct look_decide_site *s, uint32_t k)
{
	uint32_t reach = 2 * k + 16;
	s->limit = (uint16_t)(reach < LOOK_DECIDE_INSNS ? reach : LOOK_DECIDE_INSNS);
	s->probe_every = DECIDE_PROBE_FIRST / 2;
}

static void decide_missed(struct look_decide_site *s)
{
	s->limit = 0;
	if (s->probe_every < DECIDE_PROBE_MOST)
		s->probe_every *= 2;
	s->probe_in = s->probe_every;
}

/* Past the window's end, for its picks' verdicts alone (look.h): the run
 * ahead goes on (no bytes counted, no time modelled) until each pick's
 * bytes are settled (trace_settled), the emulator stops, or the pick's
 * site's reach (decide_site) is spent.  A verdict found there costs no watchpoint, no
 * hits and no trap (sample.c; LOOK_DECIDE_INSNS says what each costs).
 * keep: the draws the tick keeps. */
static void look_decide_ahead(const struct look_env *env, struct look *l, struct window_end *end,
			      const struct draw *draws, int keep)
{
	struct look_trace *tr = env->trace;
	struct emulate *emu = &end->emu;
	struct decode_regs *ahead = &end->ahead;
	struct look_decide_site *site[LOOK_MAX_PICKS];
	uint32_t limit[LOOK_MAX_PICKS], most = 0, open = 0;
	uint64_t covered[LOOK_MAX_PICKS] = {0};
	int n = end->n;
	for (int d = 0; d < keep; d++)
		if (draws[d].picked == 1 && (!env->decide_values || draws[d].pick.stored_known))
			open |= 1u << d;
	uint32_t decided, undecidable;
	trace_settled(env, tr, 0, draws, open, covered, &decided, &undecidable);
	open &= ~(decided | undecidable);
	if (tr->complete != UINT32_MAX)
		return; /* the window ran past a counted call: the trace ends there */
	for (int d = 0; d < LOOK_MAX_PICKS; d++) {
		if (!(open & (1u << d)))
			continue;
		site[d] = decide_site(l, draws[d].pick.in.pc);
		limit[d] = decide_limit(site[d]);
		most = limit[d] > most ? limit[d] : most;
		if (limit[d] == 0)
			open &= ~(1u << d);
	}
	for (uint32_t k = 1; open && k <= most; k++, n++) {
		struct decode_insn in;
		const struct decode_zydis *z;
		uint64_t real;
		/* through the allocation interposers as the window goes (not
		 * past a call bulk.c counts: its accesses are not traced) */
		if (ahead->rip >= env->runtime_lo && ahead->rip < env->runtime_hi) {
			if (heap_window_call(ahead->rip, &real) >= 0)
				ahead->rip = real;
			else if (!context_pc_program(ahead->rip) &&
				 look_past_interposer_return(emu, ahead) < 0)
				break; /* the runtime's own code (its small copies are the program's) */
		}
		if (decode_at_zydis_cached(env->zcache, ahead->rip, ahead, &in, &z) < 0 ||
		    (in.flags & DECODE_F_NO_STEP))
			break; /* a syscall, no code */
		int stores = emu->n_stores;
		uint32_t traced = tr->n;
		trace_insn(tr, &in, n, trace_frame(tr, emu));
		if (tr->n == traced && in.n_access > 0)
			break; /* the trace is full */
		int stopped = emulate_insn(emu, ahead, &in, z) != 0;
		if (!stopped) {
			env->stats->emulated_ahead++;
			trace_stored(tr, traced, emu, stores);
		}
		trace_settled(env, tr, traced, draws, open, covered, &decided, &undecidable);
		for (int d = 0; d < LOOK_MAX_PICKS; d++) {
			if (decided & (1u << d))
				decide_found(site[d], k);
			else if ((open & (1u << d)) && k >= limit[d])
				undecidable |= 1u << d; /* not within reach */
			if (undecidable & (1u << d))
				decide_missed(site[d]);
		}
		open &= ~(decided | undecidable);
		if (stopped)
			break;
	}
	/* Where the run ahead ended before a verdict, it ends there again. */
	for (int d = 0; d < LOOK_MAX_PICKS; d++)
		if (open & (1u << d))
			decide_missed(site[d]);
}

/* The window (look.h): count the wanted bytes over LOOK_WINDOW_CYCLES of
 * modelled time and draw picks in proportion to their bytes; then keep as
 * many as the window's byte rate asks for (look_tick). */
static double look_window(const struct look_env *env, struct look *l,
			  const struct decode_regs *regs, struct draw *draws, double *cycles_out,
			  struct window_end *end)
{
	struct decode_regs ahead = *regs;
	struct decode_insn in;
	const struct decode_zydis *z;
	struct emulate emu;
	struct costmodel cm;
	double bytes = 0;
	int exact = 1;            /* registers still known */
	uint64_t stop_pc = 0;     /* where they stopped being known */
	uint32_t after_stop = 0;  /* wanted accesses seen from stop_pc on */
	uint32_t stop_n = 0;      /* instructions from the tick to stop_pc */
	uint32_t written = 0;     /* registers the exact part writes (pace.h) */
	struct look_trace *tr = env->trace;
	struct decode_zcache *zc = env->zcache;
	struct window_malloc wm = {.slot = 0};

	heap_window_block(0, 0, 0);
	if (env->vec)
		emulate_vec_begin(env->vec, env->fpregs);
	emulate_begin(&emu, regs->rip, env->vec);
	costmodel_begin(&cm, env->rep_fast);
	bpred_window_begin(&l->bpred);
	tr->n = 0;
	tr->n_frames = 0;
	tr->complete = UINT32_MAX;
	decode_zcache_begin(zc);
	l->caller = (struct unwind_caller){.from_ip = regs->rip, .from_sp = regs->gpr[DECODE_RSP]};
	uint64_t lines[PROBED_LINES];
	int n_lines = 0;
	int n;
	for (n = 0; n < LOOK_MAX_INSNS && costmodel_span(&cm) < LOOK_WINDOW_CYCLES; n++) {
		if (ahead.rip >= env->runtime_lo && ahead.rip < env->runtime_hi &&
		    (!exact || (look_past_wrapper(&emu, &cm, &ahead, tr, &wm) < 0 &&
				look_past_interposer_return(&emu, &ahead) < 0)) &&
		    !context_pc_program(ahead.rip))
			break; /* the runtime's own code (its small copies are the program's) */
		if (decode_at_zydis_cached(zc, ahead.rip, &ahead, &in, &z) < 0) {
			if (n == 0)
				env->stats->skip_decode++;
			break;
		}
		if (in.flags & DECODE_F_NO_STEP)
			break; /* a syscall */
		uint64_t rep = (in.flags & DECODE_F_REP) ? ahead.gpr[DECODE_RCX] : 0;
		costmodel_add(&cm, &in, z, rep);
		if (exact && costmodel_forward(&cm, &in))
			env->stats->loads_unforwarded++;
		const struct decode_access *a = env->wanted(&in);
		if (a && (a->flags & DECODE_ACC_UNKNOWN_ADDR))
			a = NULL;
		/* A masked store or load with its mask known: the bytes the
		 * mask enables, none at all for an empty mask. */
		int masked = a && exact && (a->flags & DECODE_ACC_MASKED)
				     ? emulate_vec_access(&emu, z, &in.access[a - in.access])
				     : -1;
		if (masked == 0)
			a = NULL;
		uint32_t here = 0; /* draws that picked this instruction */
		if (a) {
			double b = masked > 0 ? (double)masked : (double)access_bytes(&in, a, &ahead);
			bytes += b;
			for (int d = 0; d < LOOK_MAX_PICKS && b > 0; d++) {
				if (rng_unit(env->rng) * bytes >= b)
					continue;
				if (exact) {
					draws[d].picked = 1;
					draws[d].pick.in = in;
					draws[d].pick.access = (int)(a - in.access);
					struct decode_access *pa = &draws[d].pick.in.access[draws[d].pick.access];
					if (rep > 1)
						rep_pick_element(pa, rep, ahead.rflags, env->rng);
					draws[d].pick.stored_known =
						rep && rep_pick_stored(&emu, &in, a, pa, &ahead, rep,
								       draws[d].pick.stored) == 0;
					emulate_copy(&draws[d].pick.emu, &emu);
					/* The same instruction on the same bytes earlier
					 * in the window (a loop): its traps come first
					 * and are not the pick's own. */
					draws[d].pick.self_skip = trace_self_runs(tr, in.pc, pa->addr, pa->len);
					draws[d].pick.trace = tr;
					draws[d].pick.trace_pos = tr->n;
					here |= 1u << d;
				} else {
					/* Registers are unknown: the program must run to it. */
					draws[d].picked = 2;
					draws[d].reach_pc = stop_pc;
					draws[d].reach_rank = after_stop;
					draws[d].reach_insns = stop_n;
				}
			}
			if (!exact)
				after_stop++;
		}
		if (exact) {
			int stores = emu.n_stores;
			uint32_t traced = tr->n;
			trace_insn(tr, &in, n, trace_frame(tr, &emu));
			uint64_t rsp_before = ahead.gpr[DECODE_RSP];
			int left_before = emu.frames_left;
			if (here)
				emulate_vstore_forget(&emu);
			if (emulate_insn(&emu, &ahead, &in, z) == 0) {
				env->stats->emulated++;
				if (left_before == 0 && emu.frames_left == 1 && !l->caller.known) {
					l->caller.to = (struct unwind_regs){
						.ip = ahead.rip, .sp = rsp_before + 8, .bp = ahead.gpr[DECODE_RBP]};
					l->caller.known = 1;
				}
				if (emu.late_ns > 0) {
					costmodel_late(&cm, emu.late_ns * (float)costmodel_cycles_per_ns());
					env->stats->loads_late++;
				}
				probe_stores(&cm, &in, lines, &n_lines);
				trace_stored(tr, traced, &emu, stores);
				if (wm.slot && ahead.rip == wm.ret &&
				    ahead.gpr[DECODE_RSP] == wm.slot + 8) {
					heap_window_block(ahead.gpr[DECODE_RAX], wm.size, wm.site);
					wm.slot = 0;
				}
				int taken = ahead.rip != in.pc + in.len;
				if (taken)
					costmodel_taken(&cm, (in.flags & (DECODE_F_CALL | DECODE_F_RET)) != 0);
				if ((in.flags & DECODE_F_COND) &&
				    bpred_mispredicted(&l->bpred, in.pc, in.branch_target, taken))
					costmodel_mispredict(&cm);
				if (here)
					note_stored(&emu, stores, a, draws, here);
				written |= in.regs_written;
				if ((in.flags & DECODE_F_BRANCH) &&
				    !(in.flags & (DECODE_F_CALL | DECODE_F_RET)) && ahead.rip <= in.pc)
					pace_back_edge(&l->pace, in.pc, &ahead, costmodel_cycles(&cm), written);
				continue;
			}
			exact = 0;
			stop_pc = ahead.rip;
			stop_n = (uint32_t)n;
			after_stop = a ? 1 : 0;
			log_verbose(2, "look: emulation stops at %lx (%s)", (unsigned long)ahead.rip,
				    ZydisMnemonicGetString(z->insn.mnemonic));
		}
		uint64_t next = next_pc_decoded(&emu, &in);
		if (!next)
			break;
		if (next != in.pc + in.len)
			costmodel_taken(&cm, (in.flags & DECODE_F_CALL) != 0);
		ahead.rip = next;
	}
	pace_window_stored(&l->pace, emu.store_addr, emu.store_len, emu.n_stores, emu.spill_lo,
			   emu.spill_hi);
	end->exact = exact;
	if (exact && env->decide_kinds) {
		end->n = n;
		end->ahead = ahead;
		emulate_copy(&end->emu, &emu);
	}
	double cycles = costmodel_cycles(&cm);
	end->cycles_missed = costmodel_cycles_missed(&cm);
	log_verbose(2, "look: window %lx: %u mispredicted, %d cycles, %d with misses, %d bytes",
		    (unsigned long)regs->rip, cm.mispredicts, (int)cycles, (int)end->cycles_missed,
		    (int)bytes);
	*cycles_out = cycles < MIN_WINDOW_CYCLES ? MIN_WINDOW_CYCLES : cycles;
	if (end->cycles_missed < *cycles_out)
		end->cycles_missed = *cycles_out;
	return bytes;
}

/* How many picks a tick keeps, and what each stands for.  A tick stands for
 * W = rate * tick time bytes (rate: the window's bytes per cycle).  Keeping
 * k picks with E[k] = LOOK_PICKS_PER_TICK * rate / (the thread's mean
 * rate), at most LOOK_MAX_PICKS, each standing for W / E[k], leaves the
 * estimate unbiased and spends samples where the bytes are, as a
 * count-based sampler does: a dense memset gets several, a sparse stretch
 * sometimes none (probability proportional to size). */
enum look_next look_tick(struct look *l, const struct look_env *env,
			 const struct decode_regs *regs, struct look_pick *picks, int *n_picks)
{
	struct draw draws[LOOK_MAX_PICKS];
	double cycles;

	look_end(l);
	*n_picks = 0;
	for (int d = 0; d < LOOK_MAX_PICKS; d++)
		draws[d].picked = 0;
	pace_window_begin(&l->pace, regs, env->tick_ns, costmodel_cycles_per_ns(), peek_read);
	struct window_end end;
	const struct decode_zcache *zc = env->zcache;
	uint64_t hits0 = zc->hits, misses0 = zc->misses, shared0 = zc->shared_hits;
	uint64_t busy0 = zc->shared_busy, decode_tsc0 = zc->decode_tsc;
	int grown0 = decode_zcache_grown(zc);
	double bytes = look_window(env, l, regs, draws, &cycles, &end);
	env->stats->decode_hits += zc->hits - hits0;
	env->stats->decode_shared_hits += zc->shared_hits - shared0;
	env->stats->decode_shared_busy += zc->shared_busy - busy0;
	env->stats->cost_decode_ns += (uint64_t)cost_tsc_ns(zc->decode_tsc - decode_tsc0);
	env->stats->decode_misses += zc->misses - misses0 - (zc->shared_hits - shared0);
	env->stats->decode_grown += (uint64_t)(decode_zcache_grown(zc) - grown0);
	struct pace_result pr = pace_window_end(&l->pace);
	env->stats->pace_measured += pr.measured;
	env->stats->pace_other_call += pr.other_call;
	/* The window's bytes per cycle of real time where the loop's progress
	 * since the last tick measured it (its factor: real time over the
	 * model's, misses not), of modelled time with the measured misses
	 * elsewhere. */
	double rate = pr.measured ? bytes / (cycles * pr.factor) : bytes / end.cycles_missed;
	l->mean_rate = l->mean_rate > 0 ? l->mean_rate + (rate - l->mean_rate) / 32 : rate;
	if (bytes <= 0) {
		env->stats->skip_no_access++; /* a tick that stands for no bytes */
		return LOOK_NONE;
	}
	double want = LOOK_PICKS_PER_TICK * (l->mean_rate > 0 ? rate / l->mean_rate : 1);
	if (want > LOOK_MAX_PICKS)
		want = LOOK_MAX_PICKS;
	int keep = (int)want + (rng_unit(env->rng) < want - (int)want);
	if (end.exact && env->decide_kinds)
		look_decide_ahead(env, l, &end, draws, keep);
	double weight = rate * costmodel_cycles_per_ns() * env->tick_ns / want;
	int reach = -1;
	for (int d = 0; d < keep; d++) {
		if (draws[d].picked == 1) {
			look_pick_copy(&picks[*n_picks], &draws[d].pick);
			picks[(*n_picks)++].weight = weight;
		} else if (draws[d].picked == 2 && draws[d].reach_insns > env->max_steps) {
			env->stats->skip_reach_far++; /* more single steps away than allowed */
		} else if (draws[d].picked == 2 && reach < 0) {
			reach = d;
		} else if (draws[d].picked == 2) {
			env->stats->skip_reach_busy++; /* one pick at a time is stepped to */
		}
	}
	if (keep == 0)
		env->stats->skip_sparse++;
	if (reach < 0)
		return *n_picks ? LOOK_SAMPLE : LOOK_NONE;
	env->stats->look_reach++;
	l->stepping = 1;
	l->steps_left = env->max_steps;
	l->step_to = draws[reach].reach_pc != regs->rip ? draws[reach].reach_pc : 0;
	l->skip_left = draws[reach].reach_rank;
	l->weight = weight;
	return LOOK_STEP;
}

static enum look_next step_on(struct look *l, const struct look_env *env)
{
	if (l->steps_left == 0) {
		env->stats->skip_steps++;
		look_end(l);
		return LOOK_NONE;
	}
	l->steps_left--;
	return LOOK_STEP;
}

/* After a step: on to step_to, then run ahead to the pick (the skip_left-th
 * wanted access from here), stepping over what the emulator stops at. */
enum look_next look_step(struct look *l, const struct look_env *env,
			 const struct decode_regs *regs, struct look_pick *pick)
{
	struct decode_regs ahead = *regs;
	const struct decode_zydis *z;
	struct emulate emu;

	if (l->step_to && regs->rip != l->step_to)
		return step_on(l, env);
	l->step_to = 0;
	if (env->vec)
		emulate_vec_begin(env->vec, env->fpregs);
	emulate_begin(&emu, regs->rip, env->vec);
	decode_zcache_begin(env->zcache);
	for (int n = 0; n < REACH_MAX_INSNS; n++) {
		struct decode_insn *in = &pick->in;
		if (decode_at_zydis_cached(env->zcache, ahead.rip, &ahead, in, &z) < 0 ||
		    (in->flags & DECODE_F_NO_STEP))
			break;
		const struct decode_access *a = env->wanted(in);
		int usable = a && !(a->flags & DECODE_ACC_UNKNOWN_ADDR);
		if (usable && l->skip_left == 0) {
			pick->access = (int)(a - in->access);
			if (a->flags & DECODE_ACC_MASKED) /* watch the bytes the mask writes */
				emulate_vec_access(&emu, z, &in->access[pick->access]);
			if ((in->flags & DECODE_F_REP) && ahead.gpr[DECODE_RCX] > 1)
				rep_pick_element(&in->access[pick->access], ahead.gpr[DECODE_RCX],
						 ahead.rflags, env->rng);
			emulate_copy(&pick->emu, &emu);
			pick->weight = l->weight;
			pick->self_skip = 0;
			pick->stored_known = 0;
			pick->trace = NULL; /* steps ran before it: the own trap tells */
			pick->trace_pos = 0;
			look_end(l);
			return LOOK_SAMPLE;
		}
		if (emulate_insn(&emu, &ahead, in, z) < 0) {
			/* The program runs this one: step over it (its access, if
			 * wanted, is passed), then look again. */
			if (usable && n == 0 && l->skip_left > 0)
				l->skip_left--;
			l->step_to = n > 0 ? ahead.rip : 0;
			return step_on(l, env);
		}
		env->stats->emulated++;
		if (usable)
			l->skip_left--;
	}
	env->stats->skip_steps++;
	look_end(l);
	return LOOK_NONE;
}
