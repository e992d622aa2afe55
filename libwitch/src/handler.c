/* handler: the runtime's signal-handler path (see handler.h).
 *
 * Entry points first, then the two paths, each top to bottom:
 *   tick:  look (look.c: window, picks, weights, trace) -> sample (sample.c:
 *          context, client; a verdict from the window's trace, or the
 *          reservoir and a watchpoint)
 *   trap:  precise PC (precise.c) -> verdict (client) -> context -> pair
 *          (sample_verdict, 4.4.2)
 */
#include "witch/handler.h"
#include "witch/heap.h"
#include "witch/iocount.h"
#include "witch/log.h"
#include "witch/budget.h"
#include "witch/bulk.h"
#include "witch/cct.h"
#include "witch/context.h"
#include "witch/costmodel.h"
#include "witch/decode.h"
#include "witch/deps.h"
#include "witch/look.h"
#include "witch/peek.h"
#include "witch/phdrs.h"
#include "witch/precise.h"
#include "witch/rescue.h"
#include "witch/runspace.h"
#include "witch/runtime.h"
#include "witch/sample.h"
#include "witch/sigguard.h"
#include "witch/sysret.h"
#include "witch/thread.h"

#include <errno.h>
#include <string.h>
#include <ucontext.h>
#include <x86intrin.h>

#define EFLAGS_TF 0x100ull


static void tick_soft(struct witch_thread *t, ucontext_t *uc);
static void tick_pmu(struct witch_thread *t, ucontext_t *uc);
static void step_soft(struct witch_thread *t, ucontext_t *uc);
static void trap(struct witch_thread *t, int slot, ucontext_t *uc);
static void step_traps(struct witch_thread *t, ucontext_t *uc, const struct decode_regs *regs);

/* --- entry points ------------------------------------------------------------ */

/* Around every use of the thread's tables: the periodic flush pauses the
 * thread and waits for in_handler to clear (thread_flush_all), and a stop
 * (the exit, an exec, a sandbox's seal) sets off and waits the same way.
 * The run takes its workspace from the process's pool (runspace.h).
 * 1: a run; 0: paused or stopped, do nothing; -1: no workspace free
 * (counted): the tables may be used, but nothing that needs the workspace,
 * and handler_leave ends it (handler_enter_run, for the paths that need
 * one). */
static int handler_enter(struct witch_thread *t)
{
	__atomic_store_n(&t->in_handler, 1, __ATOMIC_SEQ_CST);
	/* Read after in_handler is set, before anything else (drcost_enter
	 * makes a system call): a stopper that set these, then read in_handler
	 * as 0, has no run begin behind it.  Past a sandbox's filter that run
	 * was the program's death (sandboxguard.h). */
	if (__atomic_load_n(&t->paused, __ATOMIC_SEQ_CST) || witch_rt.off || !t->active) {
		__atomic_store_n(&t->in_handler, 0, __ATOMIC_SEQ_CST);
		return 0;
	}
	cost_enter(&t->cost);
	peek_run_begin();
	struct drcost_sums dr = {0};
	drcost_enter(&t->drcost, &dr);
	t->stats.dr_bytes_armed += dr.bytes_armed;
	t->stats.dr_faults_armed += dr.faults_armed;
	t->stats.cost_dr_ns += dr.cost_ns;
	t->back_soon = t->back_step = 0;
	if ((t->rs = runspace_take()) != NULL)
		return 1;
	t->stats.skip_no_runspace++;
	return -1;
}

/* Under a budget, the I/O count at which the armed watchpoints have cost
 * the program's reads and writes their share of the interval (drcost.h):
 * handler_io_over runs there. */
static void handler_io_limit(const struct witch_thread *t)
{
	double allowance = witch_rt.cfg->budget * DRCOST_IO_SHARE * (double)t->sampler.period_ns;
	iocount_set_limit(witch_rt.cfg->budget > 0 ? drcost_io_limit(&t->drcost, allowance)
						    : UINT64_MAX);
}

static void handler_leave(struct witch_thread *t, enum cost_entry entry)
{
	cost_leave(&t->cost, t->back_step, entry, t->bulk.active ? t->bulk.enter_tsc : 0);
	drcost_leave(&t->drcost, watchpoint_set_armed(&t->wps) != 0, t->back_soon);
	handler_io_limit(t);
	runspace_give(t->rs);
	t->rs = NULL;
	peek_run_end();
	__atomic_store_n(&t->in_handler, 0, __ATOMIC_SEQ_CST);
}

/* handler_enter for a path that needs the workspace: 1, or 0 (nothing to
 * leave) when paused or none is free. */
static int handler_enter_run(struct witch_thread *t, enum cost_entry entry)
{
	int in = handler_enter(t);
	if (in < 0)
		handler_leave(t, entry);
	return in > 0;
}

/* A fault ended the run (rescue.h): undo what it may have left half done.
 * Faults come from reading the program's memory (decoding, unwinding),
 * which every path does before it changes a table or a watchpoint. */
static void handler_rescued(struct witch_thread *t, ucontext_t *uc)
{
	t->stats.handler_faults++;
	phdrs_rescue();
	look_end(&t->look);
	t->back_soon = t->back_step = 0;
	if (uc)
		uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)EFLAGS_TF;
}

/* One handler run under a return point (rescue.h): the point lives in this
 * frame while run runs.  uc: the context to clear the trap flag of if a
 * fault ends the run (NULL: none). */
typedef void (*handler_run_fn)(struct witch_thread *t, ucontext_t *uc, void *arg);

static void handler_run(struct witch_thread *t, ucontext_t *uc, handler_run_fn run, void *arg)
{
	struct rescue_point rp;
	if (RESCUE_SET(&rp, uc)) {
		handler_rescued(t, uc);
		return;
	}
	run(t, uc, arg);
	rescue_disarm();
}

/* A signal's run, once handler_enter let it in: errno as the program
 * left it, and the kernel's part priced as entry. */
static void handler_run_signal(struct witch_thread *t, ucontext_t *uc, handler_run_fn run,
			       void *arg, enum cost_entry entry)
{
	int saved_errno = errno;
	handler_run(t, uc, run, arg);
	errno = saved_errno;
	handler_leave(t, entry);
}

struct signal_run {
	siginfo_t *si;
	int tick;
};

static void run_signal(struct witch_thread *t, ucontext_t *uc, void *arg)
{
	const struct signal_run *s = arg;
	int slot;
	if (s->tick && t->sampler.clock == SAMPLER_PMU)
		tick_pmu(t, uc);
	else if (s->tick)
		tick_soft(t, uc);
	else if ((slot = watchpoint_slot_of_fd(&t->wps, s->si->si_fd)) >= 0)
		trap(t, slot, uc);
}

static void run_step(struct witch_thread *t, ucontext_t *uc, void *arg)
{
	(void)arg;
	t->stats.steps++;
	step_soft(t, uc);
}

/* Ours: this thread's sampler ticks, and anything else the kernel raised
 * on this signal (perf_event fds signal with si_code POLL_*; only the
 * runtime points fds at it).  Signals a process sent (kill, sigqueue, a
 * program's timer: si_code <= 0) are the program's: return 0. */
int handler_on_signal(int sig, siginfo_t *si, void *ucv)
{
	if (thread_child_on_signal(si)) /* a fork child's start, not a sample */
		return 1;
	struct witch_thread *t = thread_self();
	int tick = t && sampler_is_tick(&t->sampler, si);
	if (!tick && si->si_code <= 0)
		return 0;
	if (witch_rt.off || !t || !t->active)
		return 1;
	/* (before the run: the tick may hand the clock to the other kind) */
	enum cost_entry entry = !tick				       ? COST_TRIP
				: sampler_on_timer(&t->sampler)	       ? COST_SIGNAL
				: sampler_perf_interval_ns(&t->sampler) ? COST_TICK
									: COST_TRIP;
	if (!handler_enter_run(t, entry))
		return 1;
	struct signal_run s = {si, tick};
	handler_run_signal(t, ucv, run_signal, &s, entry);
	return 1;
}

struct trap_run {
	int slot;
	int late; /* watchpoint_trap_is_async */
};

/* A trap that came late (the thread blocked SIGTRAP as it fired): the
 * context it interrupts is not the access's, so no PC judges it. */
static void trap_late(struct witch_thread *t, int slot)
{
	if (!t->wps.wp[slot].armed) {
		t->stats.traps_spurious++;
		return;
	}
	t->stats.traps++;
	t->stats.traps_async++;
	sample_release_trapped(t, slot);
}

static void run_trap(struct witch_thread *t, ucontext_t *uc, void *arg)
{
	const struct trap_run *r = arg;
	if (r->late)
		trap_late(t, r->slot);
	else
		trap(t, r->slot, uc);
}

/* A trap with no workspace to judge it in (runspace.h): the watch ends, as
 * a late trap's does.  Left armed, it would trap on every access after. */
static void trap_without_space(struct witch_thread *t, int slot)
{
	if (t->wps.wp[slot].armed)
		sample_release_trapped(t, slot);
}

/* A watchpoint's trap as a perf SIGTRAP (watchpoint_probe): the kernel
 * raises it on the way back to the program, no interrupt to itself. */
static int handler_on_perf_trap(struct witch_thread *t, siginfo_t *si, ucontext_t *uc)
{
	struct trap_run r = {watchpoint_slot_of_trap(&t->wps, si), watchpoint_trap_is_async(si)};
	if (r.slot < 0)
		return 0;
	if (witch_rt.off || !t->active)
		return 1;
	if (!watchpoint_set_uses_sigtrap(&t->wps)) {
		/* Raised before the set's traps were queued (tick_route_traps):
		 * its slot holds another watch now. */
		t->stats.traps_spurious++;
		return 1;
	}
	int in = handler_enter(t);
	if (in > 0) {
		handler_run_signal(t, uc, run_trap, &r, COST_WATCH);
	} else if (in < 0) {
		trap_without_space(t, r.slot);
		handler_leave(t, COST_WATCH);
	}
	return 1;
}

int handler_on_sigtrap(siginfo_t *si, void *ucv)
{
	struct witch_thread *t = thread_self();
	if (!t)
		return 0;
	if (si->si_code != TRAP_TRACE)
		return handler_on_perf_trap(t, si, ucv);
	if (!t->look.stepping)
		return 0;
	ucontext_t *uc = ucv;
	if (witch_rt.off || !t->active || !handler_enter_run(t, COST_TRIP)) {
		look_end(&t->look);
		uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)EFLAGS_TF;
	} else {
		handler_run_signal(t, uc, run_step, NULL, COST_TRIP);
	}
	return 1;
}

void handler_on_lost_trap(void)
{
	struct witch_thread *t = thread_self();
	if (t)
		t->stats.traps_lost++;
}

/* The program's context here, for the unwind: this frame is live while
 * sample_take runs. */
static void run_call(struct witch_thread *t, ucontext_t *no_uc, void *arg)
{
	ucontext_t uc;
	(void)no_uc;
	cost_part(&t->cost, COST_PART_PICKS); /* (a counted call's sample needs no look) */
	if (getcontext(&uc) == 0)
		sample_take(t, &uc, arg);
}

/* A byte-counted sample of the program's call of fn (bulk.h), outside any
 * signal handler: the runtime's signals wait while the thread's tables
 * change. */
void handler_sample_call(uint64_t fn, uint64_t addr, uint8_t kind, double weight, int ran)
{
	struct witch_thread *t = thread_self();
	sigset_t ours, old;

	if (witch_rt.off || !t || !t->active)
		return;
	sigguard_handler_mask(&ours); /* as in a signal handler's run */
	if (sigguard_mask(SIG_BLOCK, &ours, &old) != 0)
		return;
	if (handler_enter_run(t, COST_CALL)) {
		struct decode_access a = {.addr = addr, .len = 1, .kind = kind, .elem = DECODE_ELEM_INT};
		struct sample_req r = {.leaf = fn, .a = &a, .weight = weight, .ran = ran};
		t->stats.ticks_bulk++;
		if (deps_ready())
			handler_run(t, NULL, run_call, &r);
		else
			t->stats.ticks_deps_wait++; /* (no tick's context to load them in: deps.h) */
		handler_leave(t, COST_CALL);
	}
	sigguard_mask(SIG_SETMASK, &old, NULL);
}

/* iocount's hook: the program's read or write call took the thread's
 * armed I/O past its share of the interval (handler_io_limit).  Every
 * waiting sample goes now, as an expired one does at a tick (its weight
 * waits in mu, 4.4.2), and the rest of the interval's I/O runs unarmed. */
void handler_io_over(void)
{
	struct witch_thread *t = thread_self();
	sigset_t ours, old;

	if (witch_rt.off || !t || !t->active || t->in_handler)
		return;
	sigguard_handler_mask(&ours); /* as in a signal handler's run */
	if (sigguard_mask(SIG_BLOCK, &ours, &old) != 0)
		return;
	if (handler_enter(t) != 0) { /* (no workspace needed: -1 will do) */
		t->stats.watch_expired_io += (uint64_t)sample_expire(t, UINT64_MAX);
		handler_leave(t, COST_CALL);
	}
	sigguard_mask(SIG_SETMASK, &old, NULL);
}

int handler_in_run(void)
{
	const struct witch_thread *t = thread_self();
	return t && __atomic_load_n(&t->in_handler, __ATOMIC_RELAXED);
}

/* --- helpers both paths use -------------------------------------------------- */

static void regs_of(const struct witch_thread *t, const ucontext_t *uc, struct decode_regs *r)
{
	decode_regs_from_ucontext(uc, t->fs_base, t->gs_base, r);
}

/* --- tick path: sample -> look -> context -> client -> watchpoint ---------- */

/* rep_fast: no watchpoint was armed in the stretch the look stands for
 * (armed ones slow the program's rep string instructions on AMD,
 * costmodel.h; not on Intel, drcost.h). */
static void look_env_of(const struct witch_thread *t, const ucontext_t *uc, int rep_fast,
			struct look_env *env)
{
	env->zcache = &t->rs->zcache;
	env->trace = &t->rs->trace;
	env->vec = &t->rs->vec;
	env->fpregs = uc->uc_mcontext.fpregs;
	env->wanted = sample_wanted;
	env->rng = (struct rng *)&t->rng;
	env->stats = (struct witch_stats *)&t->stats;
	env->max_steps = witch_rt.cfg->max_steps;
	env->tick_ns = 0;
	env->rep_fast = rep_fast || drcost_armed_strings_fast();
	env->watch_kinds = sample_watch_kinds();
	env->decide_kinds =
		witch_rt.cfg->verdicts == CONFIG_VERDICTS_NONE ? 0 : witch_rt.craft->traced_kinds;
	env->decide_values = witch_rt.craft->traced_values;
	env->decide_through = witch_rt.craft->traced_through;
	context_runtime_text(&env->runtime_lo, &env->runtime_hi);
}

static void sample_pick(struct witch_thread *t, ucontext_t *uc, const struct look_pick *pick,
			struct sample_tick_ctx *tick_ctx)
{
	struct sample_req r = {.leaf = pick->in.pc,
			       .self_pc = pick->in.pc,
			       .a = &pick->in.access[pick->access],
			       .weight = pick->weight,
			       .emu = &pick->emu,
			       .self_skip = pick->self_skip,
			       .trace = pick->trace,
			       .trace_pos = pick->trace_pos,
			       .stored_known = pick->stored_known,
			       .stored = pick->stored,
			       .tick_ctx = tick_ctx};
	bulk_note_pick(&t->bulk, pick->weight); /* (counted calls weigh as picks do) */
	sample_take(t, uc, &r);
}

/* A thread this handler run left inactive (its watchpoints could not
 * open: thread_watchpoints_open) has no next interval: its sampler
 * stops, as a quiesced thread's. */
static int interval_ended(struct witch_thread *t)
{
	if (t->active)
		return 0;
	if (sampler_stop(&t->sampler) < 0)
		t->stats.clock_errors++;
	return 1;
}

/* The sampler's next interval starts as this handler ends: a handler that
 * costs more than an interval must not starve the program of ticks' time. */
static void interval_restart(struct witch_thread *t)
{
	if (interval_ended(t))
		return;
	int rc = sampler_next_period(&t->sampler, rng_next(&t->rng));
	if (rc < 0)
		t->stats.clock_errors++;
	cost_restart_interval(&t->cost);
	cost_tick_from(&t->cost, rc < 0 ? 0 : (double)sampler_perf_interval_ns(&t->sampler));
}

/* At a tick's end: or, when this handler took under a quarter of the
 * interval, the next began as the tick arrived (sampler.h), and all of
 * this handler is in it. */
static void interval_next(struct witch_thread *t)
{
	if (interval_ended(t))
		return;
	double in_handler_ns = cost_in_handler_ns(&t->cost);
	if (in_handler_ns >= t->sampler.current_ns / 4) {
		interval_restart(t);
		return;
	}
	int rc = sampler_next_period_or_keep(&t->sampler, rng_next(&t->rng),
					     (uint64_t)in_handler_ns);
	if (rc < 0)
		t->stats.clock_errors++;
	if (rc == SAMPLER_FROM_ARRIVAL) {
		/* kept: no period set to time; a perf clock's ran on from the
		 * tick's own period, its delivery in it */
		double tick_ns = sampler_perf_interval_ns(&t->sampler) ? cost_tick_ns(&t->cost) : 0;
		cost_restart_interval_at_entry(&t->cost, tick_ns);
	} else {
		cost_restart_interval(&t->cost); /* it began at the call */
		cost_tick_from(&t->cost, rc < 0 ? 0 : (double)sampler_perf_interval_ns(&t->sampler));
	}
}

/* The instruction a step would run accesses bytes a watchpoint of ours
 * watches, on a machine where such a step never ends (watchpoint.h); one
 * it cannot decode is taken to.  0 everywhere else, at the cost of a load. */
static int step_meets_watch(struct witch_thread *t, ucontext_t *uc)
{
	if (!watchpoint_step_over_hangs() || !watchpoint_set_armed(&t->wps))
		return 0;
	struct decode_regs regs;
	struct decode_insn in;
	regs_of(t, uc, &regs);
	if (decode_at(regs.rip, &regs, &in) < 0)
		return 1;
	for (int i = 0; i < in.n_access; i++)
		if (watchpoint_set_overlaps(&t->wps, in.access[i].addr, in.access[i].len))
			return 1;
	return 0;
}

/* Step on, or not.  Single steps run on the thread's CPU clock: restart the
 * interval when they end, or code that needs more steps per sample would
 * get more samples. */
static enum look_next look_apply(struct witch_thread *t, ucontext_t *uc, enum look_next next,
				 int was_stepping)
{
	if (next == LOOK_STEP) {
		/* No step where the program blocks SIGTRAP (the kernel would
		 * force the step's trap through at SIGTRAP's default action,
		 * ending it), nor one that would never end (step_meets_watch):
		 * the pick is lost, counted by why. */
		uint64_t *lost = sigismember(&uc->uc_sigmask, SIGTRAP) == 1 ? &t->stats.skip_no_step
				 : step_meets_watch(t, uc)		   ? &t->stats.skip_step_watched
									   : NULL;
		if (lost) {
			(*lost)++;
			look_end(&t->look);
			next = LOOK_NONE;
		}
	}
	if (next == LOOK_STEP) {
		uc->uc_mcontext.gregs[REG_EFL] |= (greg_t)EFLAGS_TF;
		t->back_soon = t->back_step = 1;
		return next;
	}
	uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)EFLAGS_TF;
	if (was_stepping)
		interval_restart(t); /* the steps were before the new interval */
	return next;
}

/* drcost_price's watchpoint: slot 0 on a word nothing touches, or none. */
static int handler_price_arm(void *ctx, int on)
{
	static uint64_t untouched;
	struct witch_thread *t = ctx;
	if (thread_watchpoints_open(t) < 0 || t->wps.n < 1)
		return -ENOSPC;
	return on ? watchpoint_arm(&t->wps, 0, (uint64_t)(uintptr_t)&untouched, sizeof(untouched),
				   WATCHPOINT_W)
		  : watchpoint_disarm(&t->wps, 0);
}

/* Armed watchpoints slow the program's system calls and page faults
 * (drcost.h): what they cost since the last tick is part of what ticks
 * cost, and over budget the samples that waited a whole interval go. */
static double tick_kernel_cost(struct witch_thread *t, double program_ns)
{
	double ns = drcost_tick(&t->drcost, program_ns);
	if (!drcost_priced() && config_arms_watchpoints(witch_rt.cfg) &&
	    !watchpoint_set_armed(&t->wps)) {
		/* (failed: the default prices, and no dr_priced_* stat is 1) */
		(void)drcost_price(handler_price_arm, t, DRCOST_AT_TICK);
	}
	if (witch_rt.cfg->budget > 0 && drcost_over(&t->drcost, witch_rt.cfg->budget))
		t->stats.watch_expired += (uint64_t)sample_expire(t, t->drcost.ticks);
	return ns;
}

/* Copies that went in pieces while a watchpoint was armed cost the program
 * over whole ones (bulk.c: sort's 32 KiB-1 MiB memmoves, ~1% of its time
 * were it armed throughout): the profiler's spending, in the estimate and
 * the budget.  Timed by no handler, priced by size. */
static double tick_pieces_cost(struct witch_thread *t)
{
	double ns = bulk_take_pieces_ns(&t->bulk);
	t->stats.cost_pieces_ns += (uint64_t)ns;
	return ns;
}

/* A tick that interrupted the runtime's own code (the allocation
 * interposers, the bulk wrappers' fast paths: run inline in the program's
 * calls, timed by no handler) samples that code's share of CPU time: its
 * interval is counted as the runtime's (cost.h's estimate).  1 if so; 0
 * outside the runtime's code; -1 in it, but raised on a system call's way
 * out (sysret.h) or anywhere in the I/O wrappers (iocount.h): the kernel's
 * time, not theirs (a pread loop on this PVM guest: 24-30% of its ticks
 * there had been counted as the runtime's, a quarter of its CPU). */
static int tick_in_runtime(struct witch_thread *t, const struct decode_regs *regs,
			   double program_ns)
{
	if (!context_pc_runtime(regs->rip))
		return 0; /* (bulk.c's small copies are the program's work) */
	if (iocount_holds_pc(regs->rip) || sysret_tick(regs))
		return -1;
	/* (Recording a block is timed on its own: cost_heap_ns.) */
	if (program_ns > 0 && !heap_recording())
		t->stats.cost_inline_ns += (uint64_t)program_ns;
	log_verbose(2, "tick in the runtime's code at tick_in_runtime + %ld (%ld us since the last)",
		    (long)(regs->rip - (uint64_t)(uintptr_t)&tick_in_runtime), (long)(program_ns / 1e3));
	return 1;
}

/* The fault log opened or closed in this run, from tsc on: either may turn
 * the kernel's page-fault static key on or off (1-12 ms here, text
 * patching), the log's cost, which the budget's running cost of a tick
 * would have taken for every tick's. */
static void tick_faultlog_set_aside(struct witch_thread *t, uint64_t tsc)
{
	uint64_t took = __rdtsc() - tsc;
	cost_set_aside(&t->cost, took);
	t->stats.cost_faultlog_ns += (uint64_t)cost_tsc_ns(took);
}

/* The page-fault log's own price, paid in the program's faults since the
 * last tick (returned, ns: the profiler's spending, in the estimate and
 * the budget), and its period for the next (faultlog_thin). */
static double tick_count_faults(struct witch_thread *t)
{
	uint64_t logged = faultlog_records_since(&t->faults), faults;
	uint64_t period = t->faults.period;
	if (faultlog_thin(&t->faults, logged, &faults) < 0)
		t->stats.faultlog_errors++;
	t->stats.faultlog_period_sets += t->faults.period != period;
	t->stats.faults_logged += logged;
	double ns = faultlog_cost_ns(logged, faults);
	t->stats.cost_faultlog_ns += (uint64_t)ns;
	uint64_t tsc = __rdtsc();
	if (witch_rt.cfg->budget > 0 &&
	    faultlog_keep_within(&t->faults, ns, witch_rt.cfg->budget * (double)t->sampler.current_ns)) {
		tick_faultlog_set_aside(t, tsc);
		t->stats.faultlog_closed++;
	}
	return ns;
}

/* The budget's share left to the ticks: the fault log's cost goes with
 * the program's faults, not with the ticks, so fewer ticks would not pay
 * it; it comes off the share instead, down to FAULTLOG_BUDGET_SHARE of it
 * (past that for long the log closes: faultlog_keep_within). */
static double tick_budget(const struct witch_thread *t, double faultlog_ns)
{
	double budget = witch_rt.cfg->budget, interval = (double)t->sampler.current_ns;
	double left = interval > 0 ? budget - faultlog_ns / interval : budget;
	return left > (1 - FAULTLOG_BUDGET_SHARE) * budget ? left
							    : (1 - FAULTLOG_BUDGET_SHARE) * budget;
}

/* The tick arrived from a page fault (faultlog.h): at the instruction of
 * the last fault since the last tick, or at the one after it.  Only a
 * tick of perf's clock can: it ends an interval of CPU time wherever the
 * thread is.  The user-time timer's (sampler.h) is raised by a scheduler
 * tick that found the thread in user mode, where the kernel counts user
 * time by ticks (CONFIG_TICK_CPU_ACCOUNTING, every kernel without
 * nohz_full CPUs), and arrives where that tick interrupted it.  So the log
 * opens at a thread's first tick of perf's clock: at the default budget's
 * rates, on the timer, most threads never pay for it (its counts, and the
 * kernel's static key turned on and off, 1-12 ms a process here). */
static int tick_in_fault(struct witch_thread *t, const ucontext_t *uc)
{
	uint64_t ip, pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	int on_timer = sampler_on_timer(&t->sampler);
	if (on_timer && t->faults.fd < 0)
		return 0;
	int was_open = t->faults.fd >= 0;
	uint64_t tsc = __rdtsc();
	int rc = faultlog_since_tick(&t->faults, &ip);
	if (!was_open && t->faults.fd >= 0)
		tick_faultlog_set_aside(t, tsc); /* opened at this tick */
	if (rc < 0)
		t->stats.faultlog_errors++;
	if (rc <= 0 || on_timer)
		return 0; /* (an open log's head kept current on the timer) */
	if (pc == ip)
		return 1;
	if (pc <= ip || pc - ip > 15)
		return 0;
	struct decode_regs regs;
	struct decode_insn in;
	uint8_t byte;
	regs_of(t, uc, &regs);
	/* decode_at reads in place: ip's page may be the one before pc's */
	return peek_read(ip, &byte, 1) == 0 && decode_at(ip, &regs, &in) == 0 && pc == ip + in.len;
}

/* The decoder and unwinder, loaded by the first tick whose interrupted
 * code holds nothing their loading needs (deps.h).  1 ready, else the
 * tick is skipped. */
static int tick_deps(struct witch_thread *t, const ucontext_t *uc)
{
	if (deps_ready())
		return 1;
	uint64_t load_tsc;
	int rc = deps_load_at_tick(uc, &load_tsc);
	cost_set_aside(&t->cost, load_tsc); /* (counted as start-up: profile.c) */
	t->stats.ticks_deps_wait += rc <= 0;
	return rc > 0;
}

/* A thread that blocks SIGTRAP would keep a perf SIGTRAP waiting while its
 * breakpoint, still armed, takes a #DB at every hit
 * (watchpoint_set_queue_traps): from the first tick that finds SIGTRAP in
 * the mask the program runs on with, before anything is armed, its traps
 * come as the runtime's own signal, which the program's masks leave open
 * (sigguard.h). */
static void tick_route_traps(struct witch_thread *t, const ucontext_t *uc)
{
	if (!config_arms_watchpoints(witch_rt.cfg) || !watchpoint_set_uses_sigtrap(&t->wps) ||
	    sigismember(&uc->uc_sigmask, SIGTRAP) != 1)
		return;
	t->stats.sigtrap_blocked++;
	if (watchpoint_set_queue_traps(&t->wps) < 0) {
		/* As a set that cannot open at the first arm (thread.h). */
		t->stats.watchpoint_open_errors++;
		t->active = 0;
	}
}

static void tick_soft(struct witch_thread *t, ucontext_t *uc)
{
	struct decode_regs regs;
	struct look_env env;
	struct look_pick *picks = t->rs->scratch.picks;
	int n = 0;

	if (sampler_tick_arrive(&t->sampler)) {
		t->stats.ticks_stale++;
		return;
	}
	cost_tick_arrived(&t->cost);
	/* First, before the handler's own first touches fault. */
	int in_fault = tick_in_fault(t, uc);
	double faultlog_ns = tick_count_faults(t);
	tick_route_traps(t, uc);
	/* The tick stands for the program's CPU time since the last: the
	 * clock's interval less what the profiler spent in it, its fault
	 * log's records too. */
	double spent_ns;
	double program_ns = (double)t->sampler.current_ns - cost_take_interval(&t->cost, &spent_ns) -
			    bulk_take_excluded_ns(&t->bulk) - faultlog_ns;
	int armed_before = watchpoint_set_armed(&t->wps) != 0; /* (the kernel cost may release) */
	spent_ns += tick_kernel_cost(t, program_ns) + tick_pieces_cost(t);
	t->stats.clock_ns += t->sampler.current_ns;
	t->stats.ticks++;
	t->stats.ticks_timer += sampler_on_timer(&t->sampler);
	regs_of(t, uc, &regs);
	int in_runtime = in_fault ? 0 : tick_in_runtime(t, &regs, program_ns);
	if (t->stats.ticks % COSTMODEL_REMEASURE_TICKS == 0)
		costmodel_remeasure(); /* the machine's speed moves under the model */
	if (witch_rt.cfg->budget > 0) {
		t->sampler.period_ns = budget_next_period(&t->budget, tick_budget(t, faultlog_ns), spent_ns,
							  (double)t->sampler.current_ns,
							  t->sampler.period_ns);
		bulk_set_period(&t->bulk, t->sampler.period_ns);
	}
	if (t->look.stepping || t->bulk.active) {
		/* Still reaching the last tick's pick, or in a byte-counted call (bulk.h). */
		t->stats.skip_bulk += t->bulk.active && !t->look.stepping;
		look_tick_skipped(&t->look);
		interval_restart(t);
		bulk_tick_skipped(&t->bulk);
		return;
	}
	/* Its time fell in a page fault or a system call, the kernel's, or in
	 * the runtime's own code (alloc_churn: 72% of its ticks in the heap
	 * wrappers, whose windows ran on into malloc and weighed it for them):
	 * no bytes of the program's. */
	int in_syscall = !in_fault && (in_runtime < 0 || (in_runtime == 0 && sysret_tick(&regs)));
	in_runtime = in_runtime > 0;
	if (in_fault || in_syscall || in_runtime) {
		t->stats.ticks_in_fault += in_fault;
		t->stats.ticks_in_syscall += in_syscall;
		t->stats.ticks_in_runtime += in_runtime;
		look_tick_skipped(&t->look);
		interval_next(t);
		return;
	}
	if (!tick_deps(t, uc)) {
		look_tick_skipped(&t->look);
		interval_next(t);
		return;
	}
	look_env_of(t, uc, !armed_before, &env);
	env.tick_ns = program_ns > 0 ? program_ns : 0;
	cost_part(&t->cost, COST_PART_LOOK);
	enum look_next next = look_tick(&t->look, &env, &regs, picks, &n);
	cost_part(&t->cost, COST_PART_PICKS);
	struct sample_tick_ctx *tick_ctx = &t->rs->scratch.tick;
	tick_ctx->n = 0;
	/* The picks' walk starts at the frame the window may have returned
	 * out of; no later walk may take its caller from it. */
	unwind_rules_expect_caller(&t->unwind_rules, &t->look.caller);
	for (int i = 0; i < n; i++)
		sample_pick(t, uc, &picks[i], tick_ctx);
	unwind_rules_expect_caller(&t->unwind_rules, &(struct unwind_caller){.known = 0});
	cost_part(&t->cost, COST_PART_OTHER);
	next = look_apply(t, uc, next, 0);
	if (next == LOOK_STEP)
		interval_restart(t); /* (again when the steps end) */
	else
		interval_next(t);
}

static void step_soft(struct witch_thread *t, ucontext_t *uc)
{
	struct decode_regs regs;
	struct look_env env;
	struct look_pick pick;

	regs_of(t, uc, &regs);
	step_traps(t, uc, &regs);
	look_env_of(t, uc, watchpoint_set_armed(&t->wps) == 0, &env);
	cost_part(&t->cost, COST_PART_LOOK);
	enum look_next next = look_step(&t->look, &env, &regs, &pick);
	cost_part(&t->cost, COST_PART_PICKS);
	if (next == LOOK_SAMPLE)
		sample_pick(t, uc, &pick, NULL);
	cost_part(&t->cost, COST_PART_OTHER);
	(void)look_apply(t, uc, next, 1);
}

/* A PMU sample: the instruction and data address are exact, the access
 * has retired.  Only its width and element type come from decoding it; the
 * calling context is the one the overflow signal interrupted, with the
 * sampled instruction as its leaf (as Witch and HPCToolkit do).  Samples
 * come every N events, so each stands for its access's bytes alike. */
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
	const struct decode_access *a = sample_wanted(&in);
	if (!a) {
		t->stats.skip_no_access++;
		return;
	}
	struct decode_access acc = *a;
	acc.addr = s->addr;
	acc.flags &= (uint8_t)~DECODE_ACC_UNKNOWN_ADDR;
	struct sample_req r = {.leaf = in.pc, .self_pc = in.pc, .a = &acc, .weight = (double)acc.len,
			       .ran = 1};
	sample_take(t, v->uc, &r);
}

static void tick_pmu(struct witch_thread *t, ucontext_t *uc)
{
	struct pmu_visit v = {t, uc};
	tick_route_traps(t, uc);
	if (!tick_deps(t, uc))
		return; /* (the records wait in the ring for the next tick) */
	cost_part(&t->cost, COST_PART_PICKS); /* (a PMU sample needs no look) */
	pmu_drain(&t->sampler.pmu, sample_pmu, &v);
}

/* --- trap path: precise PC -> verdict -> context -> pair -------------------- */

static uint64_t context_hash(const ucontext_t *uc)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (int i = REG_R8; i <= REG_EFL; i++) /* the registers, rip and flags */
		h = (h ^ (uint64_t)uc->uc_mcontext.gregs[i]) * 0x100000001b3ull;
	return h;
}

/* What the trapped store p wrote, where the client would otherwise read
 * it under its still-armed watchpoint, through the kernel: SilentCraft at
 * the sample's own trap, LoadCraft at a store it keeps watching through
 * (a decided trap reads in place: decided_kinds).  0 and *stored, or
 * -ENOENT (the client reads). */
static int trap_stored_value(struct witch_thread *t, const ucontext_t *uc,
			     const struct decode_regs *regs, const struct watchpoint *w,
			     const struct precise_access *p, uint64_t *stored)
{
	const struct craft *c = witch_rt.craft;
	if (p->kind != DECODE_STORE || c->self == CRAFT_SELF_NOTHING)
		return -ENOENT;
	int self = w->own.pending_self > 0;
	if (self ? c->self != CRAFT_SELF_STORED : (p->kind & c->decided_kinds) != 0)
		return -ENOENT;
	emulate_vec_begin(&t->rs->vec, uc->uc_mcontext.fpregs);
	return precise_stored_value(&t->rs->zcache, &t->rs->vec, regs, p, stored);
}

/* Other accesses a pick's word may trap on before the pick's own: a
 * loop's other loads and stores of it, iterations apart (a dozen is many). */
#define TRAP_EARLY_MAX 64

/* The sampled instruction runs after its watchpoint is armed and traps on
 * itself first; accesses before it are not the answer.  The kind tells them
 * apart where the pc does not: a ret's read resolves to the call before its
 * return site, which may be the sampled call (armed while running ahead). */
static void trap_pending_self(struct witch_thread *t, int slot, int resolved,
			      const struct precise_access *p, int stored_known, uint64_t stored)
{
	struct watchpoint *w = &t->wps.wp[slot];
	int own_pc = w->own.sample_pc == 0 || p->pc == w->own.sample_pc;
	int own = resolved && own_pc && (p->kind & witch_rt.craft->sample_kind);
	if (w->own.checking) {
		/* The hits the run ahead counted went by: this should be the own. */
		w->own.checking = 0;
		own ? t->stats.predict_ok++ : t->stats.predict_miss++;
		if (!own)
			log_verbose(2, "count miss: sample %lx addr %lx, trap %lx kind %d resolved %d",
				    (unsigned long)w->own.sample_pc, (unsigned long)w->addr,
				    (unsigned long)p->pc, p->kind, resolved);
		if (watchpoint_signal_each(&t->wps, slot) < 0) {
			sample_release_trapped(t, slot);
			return;
		}
	}
	if (resolved && !own) {
		/* An access before the pick's own: the client reads again what
		 * the pick will find.  A pick whose own access never comes (its
		 * pc modelled wrong) would trap on every access to the word for
		 * as long as it stayed armed: it goes after TRAP_EARLY_MAX. */
		t->stats.traps_early++;
		if (++w->own.early > TRAP_EARLY_MAX) {
			t->stats.traps_early_dropped++;
			sample_release_trapped(t, slot);
			return;
		}
		if (witch_rt.craft->on_sample(w) < 0) {
			t->stats.skip_unreadable++;
			sample_release_trapped(t, slot);
		}
		return;
	}
	if (--w->own.pending_self > 0) {
		t->stats.traps_early++; /* an earlier run of the picked instruction */
		return;
	}
	t->stats.traps_self++;
	if (w->own.value_predicted && own) {
		uint8_t now[WATCHPOINT_VALUE_MAX];
		int same = craft_read_location(w, now) == 0 &&
			   memcmp(now, w->own.value, w->own.value_len) == 0;
		same ? t->stats.predict_value_ok++ : t->stats.predict_value_miss++;
	}
	w->own.value_predicted = 0;
	int rc = stored_known && witch_rt.craft->self == CRAFT_SELF_STORED &&
			 w->own.sample_len <= sizeof(stored)
			 ? witch_rt.craft->on_self_value(w, (const uint8_t *)&stored)
			 : witch_rt.craft->on_self(w);
	if (rc < 0) {
		t->stats.skip_unreadable++;
		sample_release_trapped(t, slot);
	}
}

/* SIGTRAPs do not queue (watchpoint_probe): when one instruction hit two
 * watchpoints, or a single step hit one, the kernel keeps the first signal
 * and drops the rest.  Whether armed slot i, which the instruction just
 * run touched, trapped there too: where it signals on every hit, or where
 * its hits to let by ran out at this one (the kernel's count says; a read).
 * One whose signal went unseen at an earlier hit is released: the access
 * that decided it is gone. */
static int sibling_trapped(struct witch_thread *t, int i)
{
	const struct watchpoint *w = &t->wps.wp[i];
	int out = w->pass == 0 ? 1 : watchpoint_period_ran_out(&t->wps, i);
	if (out == 1) {
		t->stats.siblings_counted += w->pass > 0;
		return 1;
	}
	if (out < 0) {
		t->stats.siblings_lost++;
		sample_release_trapped(t, i);
	}
	return 0;
}

/* The slots besides `slot` that the access p touched and that trapped with it. */
static uint32_t trap_siblings(struct witch_thread *t, int slot, const struct precise_access *p)
{
	uint32_t m = 0;
	if (!watchpoint_set_uses_sigtrap(&t->wps))
		return 0;
	for (int i = 0; i < t->wps.n; i++) {
		const struct watchpoint *w = &t->wps.wp[i];
		if (i != slot && w->armed && w->addr < p->addr + p->len &&
		    p->addr < w->addr + w->len && sibling_trapped(t, i))
			m |= 1u << i;
	}
	return m;
}

/* also: where to put the slots that trapped with this one (NULL: do not
 * look for them). */
static void trap_slot(struct witch_thread *t, int slot, ucontext_t *uc, uint32_t *also)
{
	struct watchpoint *w = &t->wps.wp[slot];
	struct decode_regs regs;
	struct precise_access p;
	uint64_t *pcs = t->rs->scratch.trap_pcs;
	int approx = 0;

	if (!w->armed) {
		t->stats.traps_spurious++; /* queued before it was disarmed */
		return;
	}
	/* Two traps with the program's registers unchanged: it ran nothing in
	 * between, so the access was the runtime's own (a word its handlers or
	 * libraries touch); watching on would trap on every handler run. */
	uint64_t hash = context_hash(uc);
	if (hash == w->own.last_trap_hash) {
		t->stats.traps_runtime++;
		sample_release_trapped(t, slot);
		return;
	}
	w->own.last_trap_hash = hash;
	regs_of(t, uc, &regs);
	int resolved = precise_resolve(&t->rs->zcache, &regs, w->addr, w->len, &p) == 0 ||
		       precise_resolve_branch_at(&regs, w->addr, w->len, w->own.sample_pc, &p) == 0;
	if (resolved && also)
		*also = trap_siblings(t, slot, &p);
	uint64_t stored = 0;
	int stored_known = resolved && trap_stored_value(t, uc, &regs, w, &p, &stored) == 0;
	if (w->own.pending_self) {
		trap_pending_self(t, slot, resolved, &p, stored_known, stored);
		return;
	}
	if (!resolved) {
		t->stats.traps++;
		t->stats.traps_unresolved++;
		sample_release_trapped(t, slot);
		return;
	}
	/* The client first: a trap that is no verdict yet (a store under
	 * LoadCraft) or cannot be judged needs no calling context.  One it
	 * will decide is released first, so what it reads of the location is
	 * read in place. */
	struct craft_trap ct = {p.kind, p.elem, p.addr, p.len, p.overlap_addr, p.overlap_len,
				witch_rt.cfg->fp_tolerance, stored_known, stored};
	int released = (p.kind & witch_rt.craft->decided_kinds) != 0;
	if (released)
		sample_release_trapped(t, slot);
	enum craft_verdict v = witch_rt.craft->on_trap(w, &ct, &approx);
	if (v == CRAFT_KEEP && released)
		v = CRAFT_DROP; /* (decided_kinds said otherwise: nothing to keep) */
	if (v == CRAFT_KEEP) {
		t->stats.traps++;
		t->stats.traps_kept++;
		if (watchpoint_signal_each(&t->wps, slot) < 0)
			sample_release_trapped(t, slot);
		return;
	}
	uint32_t watch_ctx = w->own.ctx, watch_obj = w->own.obj;
	/* Every verdict, for a machine where the answers look wrong (which
	 * hits went by, what decided). */
	log_verbose(2, "verdict %s: sample %lx watch %lx+%u passed %u armed at tick %lu, trap %lx kind %d",
		    v == CRAFT_WASTE ? "waste" : "use", (unsigned long)w->own.sample_pc,
		    (unsigned long)w->addr, w->len, w->pass, (unsigned long)w->own.armed_tick,
		    (unsigned long)p.pc, p.kind);
	/* Decided: released before the unwind, which would otherwise pause and
	 * resume it (two ioctls) if it watches the stack. */
	if (!released)
		sample_release_trapped(t, slot);
	if (v == CRAFT_DROP) {
		t->stats.traps++;
		t->stats.traps_unreadable++;
		return;
	}
	int n = context_of_signal(t, uc, p.pc, p.skip_frames, pcs, NULL, (int)witch_rt.cfg->depth);
	if (n <= 0) {
		t->stats.skip_unwind++;
		return;
	}
	if (context_in_runtime(pcs, n)) {
		/* The profiler's own access (at exit): no verdict; the sample's
		 * weight waits in mu for its context's next trap. */
		t->stats.traps_runtime++;
		return;
	}
	t->stats.traps++;
	sample_verdict(t, watch_ctx, watch_obj, pcs, n, v, approx);
}

/* The slots in mask whose SIGTRAP the kernel dropped (trap_siblings). */
static void trap_coalesced(struct witch_thread *t, uint32_t mask, ucontext_t *uc)
{
	for (int i = 0; mask; i++, mask >>= 1)
		if (mask & 1) {
			t->stats.traps_coalesced++;
			trap_slot(t, i, uc, NULL);
		}
}

static void trap(struct witch_thread *t, int slot, ucontext_t *uc)
{
	uint32_t also = 0;
	trap_slot(t, slot, uc, &also);
	trap_coalesced(t, also, uc);
}

/* A single step's SIGTRAP hides a watchpoint's the same instruction raised
 * (trap_siblings): the armed slots it touched trap here.  regs: uc's. */
static void step_traps(struct witch_thread *t, ucontext_t *uc, const struct decode_regs *regs)
{
	struct precise_access p;
	uint32_t m = 0;
	if (!watchpoint_set_uses_sigtrap(&t->wps))
		return;
	for (int i = 0; i < t->wps.n; i++) {
		const struct watchpoint *w = &t->wps.wp[i];
		if (w->armed && precise_resolve(&t->rs->zcache, regs, w->addr, w->len, &p) == 0 &&
		    sibling_trapped(t, i))
			m |= 1u << i;
	}
	trap_coalesced(t, m, uc);
}
