/* look: from a tick to the access it samples (see look.h). */
#include "witch/look.h"
#include "witch/bulk.h"
#include "witch/costmodel.h"
#include "witch/decode_zydis.h"
#include "witch/emulate_vec.h"
#include "witch/log.h"

#include <string.h>

#define MIN_WINDOW_CYCLES 8.0 /* a window cut short (a syscall) still spans this */
#define BULK_BYTES_PER_CYCLE 32.0 /* a counted memcpy/memset: a vector store a cycle */
#define REACH_MAX_INSNS 512   /* run ahead to the pick, at most */
#define LOOK_SEEN 32          /* wanted accesses a window remembers */

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

static uint64_t access_bytes(const struct decode_insn *in, const struct decode_access *a,
			     const struct decode_regs *regs)
{
	return (in->flags & DECODE_F_REP) ? (uint64_t)a->len * regs->gpr[DECODE_RCX] : a->len;
}

/* The window reached a wrapper of bulk.c (the program called memcpy):
 * run on as the program will, into the C library's function for a call
 * the wrapper only passes on, or past a call whose bytes bulk.c counts
 * (its time modelled at a vector copy's store rate).  Stopping there
 * instead would weigh the stores just before such calls by a window cut
 * short (spills, the return address): several times their share. */
static int look_past_wrapper(struct emulate *emu, struct costmodel *cm, struct decode_regs *r)
{
	struct bulk_call call;
	int rc;

	if ((rc = bulk_window_call(r->rip, r->gpr, &call)) < 0)
		return rc;
	if (call.real) {
		r->rip = call.real;
		return 0;
	}
	if ((rc = emulate_return_from_call(emu, r)) < 0)
		return rc;
	r->gpr[DECODE_RAX] = call.result;
	costmodel_add_busy(cm, (double)call.bytes / BULK_BYTES_PER_CYCLE);
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

/* The window (look.h): count the wanted bytes over LOOK_WINDOW_CYCLES of
 * modelled time and draw picks in proportion to their bytes; then keep as
 * many as the window's byte rate asks for (look_tick). */
static double look_window(const struct look_env *env, struct pace *pace,
			  const struct decode_regs *regs, struct draw *draws, double *cycles_out)
{
	struct decode_regs ahead = *regs;
	struct decode_insn in;
	struct decode_zydis z;
	struct emulate emu;
	struct costmodel cm;
	double bytes = 0;
	int exact = 1;            /* registers still known */
	uint64_t stop_pc = 0;     /* where they stopped being known */
	uint32_t after_stop = 0;  /* wanted accesses seen from stop_pc on */
	uint32_t stop_n = 0;      /* instructions from the tick to stop_pc */
	struct { uint64_t pc, addr; uint32_t len; } seen[LOOK_SEEN]; /* wanted accesses run ahead */
	uint32_t n_seen = 0;
	uint32_t written = 0;     /* registers the exact part writes (pace.h) */

	if (env->vec)
		emulate_vec_begin(env->vec, env->fpregs);
	emulate_begin(&emu, regs->rip, env->vec);
	costmodel_begin(&cm);
	for (int n = 0; n < LOOK_MAX_INSNS && costmodel_cycles(&cm) < LOOK_WINDOW_CYCLES; n++) {
		if (ahead.rip >= env->runtime_lo && ahead.rip < env->runtime_hi &&
		    (!exact || look_past_wrapper(&emu, &cm, &ahead) < 0))
			break; /* the runtime's own code */
		if (decode_at_zydis(ahead.rip, &ahead, &in, &z) < 0) {
			if (n == 0)
				env->stats->skip_decode++;
			break;
		}
		if (in.flags & DECODE_F_NO_STEP)
			break; /* a syscall */
		uint64_t rep = (in.flags & DECODE_F_REP) ? ahead.gpr[DECODE_RCX] : 0;
		costmodel_add(&cm, &in, &z, rep);
		const struct decode_access *a = env->wanted(&in);
		if (a && (a->flags & DECODE_ACC_UNKNOWN_ADDR))
			a = NULL;
		/* A masked store or load with its mask known: the bytes the
		 * mask enables, none at all for an empty mask. */
		int masked = a && exact && (a->flags & DECODE_ACC_MASKED)
				     ? emulate_vec_access(&emu, &z, &in.access[a - in.access])
				     : -1;
		if (masked == 0)
			a = NULL;
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
					draws[d].pick.emu = emu;
					draws[d].pick.self_skip = 0;
					/* The same instruction on the same bytes earlier
					 * in the window (a loop): its traps come first
					 * and are not the pick's own. */
					for (uint32_t i = 0; i < n_seen && i < LOOK_SEEN; i++)
						draws[d].pick.self_skip +=
						    seen[i].pc == in.pc && a->addr < seen[i].addr + seen[i].len &&
						    seen[i].addr < a->addr + a->len;
				} else {
					/* Registers are unknown: the program must run to it. */
					draws[d].picked = 2;
					draws[d].reach_pc = stop_pc;
					draws[d].reach_rank = after_stop;
					draws[d].reach_insns = stop_n;
				}
			}
			if (exact) {
				seen[n_seen % LOOK_SEEN].pc = in.pc;
				seen[n_seen % LOOK_SEEN].addr = a->addr;
				seen[n_seen % LOOK_SEEN].len = a->len;
				n_seen++;
			} else {
				after_stop++;
			}
		}
		if (exact) {
			if (emulate_insn(&emu, &ahead, &in, &z) == 0) {
				env->stats->emulated++;
				written |= in.regs_written;
				if ((in.flags & DECODE_F_BRANCH) &&
				    !(in.flags & (DECODE_F_CALL | DECODE_F_RET)) && ahead.rip <= in.pc)
					pace_back_edge(pace, in.pc, &ahead, costmodel_cycles(&cm), written);
				continue;
			}
			exact = 0;
			stop_pc = ahead.rip;
			stop_n = (uint32_t)n;
			after_stop = a ? 1 : 0;
			log_verbose(2, "look: emulation stops at %lx (%s)", (unsigned long)ahead.rip,
				    ZydisMnemonicGetString(z.insn.mnemonic));
		}
		uint64_t next = next_pc_decoded(&emu, &in);
		if (!next)
			break;
		ahead.rip = next;
	}
	double cycles = costmodel_cycles(&cm);
	*cycles_out = cycles < MIN_WINDOW_CYCLES ? MIN_WINDOW_CYCLES : cycles;
	return bytes;
}

/* How many picks a tick keeps, and what each stands for.  A tick stands for
 * W = rate * tick time bytes (rate: the window's bytes per cycle).  Keeping
 * k picks with E[k] = rate / (the thread's mean rate), each standing for
 * W / E[k], leaves the estimate unbiased and spends samples where the
 * bytes are, as a count-based sampler does: a dense memset gets several,
 * a sparse stretch sometimes none (probability proportional to size). */
enum look_next look_tick(struct look *l, const struct look_env *env,
			 const struct decode_regs *regs, struct look_pick *picks, int *n_picks)
{
	struct draw draws[LOOK_MAX_PICKS];
	double cycles;

	look_end(l);
	*n_picks = 0;
	for (int d = 0; d < LOOK_MAX_PICKS; d++)
		draws[d].picked = 0;
	pace_window_begin(&l->pace, regs, env->tick_ns, costmodel_cycles_per_ns());
	double bytes = look_window(env, &l->pace, regs, draws, &cycles);
	struct pace_result pr = pace_window_end(&l->pace);
	env->stats->pace_measured += pr.measured;
	/* The window's bytes per cycle of real time where the loop's progress
	 * since the last tick measured it, of modelled time elsewhere. */
	double rate = bytes / (cycles * pr.factor);
	l->mean_rate = l->mean_rate > 0 ? l->mean_rate + (rate - l->mean_rate) / 32 : rate;
	if (bytes <= 0) {
		env->stats->skip_no_access++; /* a tick that stands for no bytes */
		return LOOK_NONE;
	}
	double want = l->mean_rate > 0 ? rate / l->mean_rate : 1;
	if (want > LOOK_MAX_PICKS)
		want = LOOK_MAX_PICKS;
	int keep = (int)want + (rng_unit(env->rng) < want - (int)want);
	double weight = rate * costmodel_cycles_per_ns() * env->tick_ns / want;
	int reach = -1;
	for (int d = 0; d < keep; d++) {
		if (draws[d].picked == 1) {
			picks[*n_picks] = draws[d].pick;
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
	struct decode_zydis z;
	struct emulate emu;

	if (l->step_to && regs->rip != l->step_to)
		return step_on(l, env);
	l->step_to = 0;
	if (env->vec)
		emulate_vec_begin(env->vec, env->fpregs);
	emulate_begin(&emu, regs->rip, env->vec);
	for (int n = 0; n < REACH_MAX_INSNS; n++) {
		struct decode_insn *in = &pick->in;
		if (decode_at_zydis(ahead.rip, &ahead, in, &z) < 0 || (in->flags & DECODE_F_NO_STEP))
			break;
		const struct decode_access *a = env->wanted(in);
		int usable = a && !(a->flags & DECODE_ACC_UNKNOWN_ADDR);
		if (usable && l->skip_left == 0) {
			pick->access = (int)(a - in->access);
			if (a->flags & DECODE_ACC_MASKED) /* watch the bytes the mask writes */
				emulate_vec_access(&emu, &z, &in->access[pick->access]);
			pick->emu = emu;
			pick->weight = l->weight;
			pick->self_skip = 0;
			look_end(l);
			return LOOK_SAMPLE;
		}
		if (emulate_insn(&emu, &ahead, in, &z) < 0) {
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
