/* look: from a tick to the access it samples (see look.h). */
#include "witch/look.h"
#include "witch/costmodel.h"
#include "witch/decode_zydis.h"

#include <string.h>

#define MIN_WINDOW_CYCLES 8.0 /* a window cut short (a syscall) still spans this */
#define REACH_MAX_INSNS 512   /* run ahead to the pick, at most */

void look_end(struct look *l)
{
	l->stepping = 0;
	l->step_to = 0;
	l->skip_left = 0;
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

/* The window (look.h): count the wanted bytes over LOOK_WINDOW_CYCLES of
 * modelled time, pick one access in proportion to its bytes (a reservoir of
 * one, weighted), and say what the pick stands for. */
enum look_next look_tick(struct look *l, const struct look_env *env,
			 const struct decode_regs *regs, struct look_pick *pick)
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
	enum { NO_PICK, PICK_EXACT, PICK_REACH } picked = NO_PICK;
	uint64_t reach_pc = 0;
	uint32_t reach_rank = 0;

	look_end(l);
	emulate_begin(&emu, regs->rip);
	costmodel_begin(&cm);
	for (int n = 0; n < LOOK_MAX_INSNS && costmodel_cycles(&cm) < LOOK_WINDOW_CYCLES; n++) {
		if (decode_at_zydis(ahead.rip, &ahead, &in, &z) < 0) {
			if (n == 0)
				env->stats->skip_decode++;
			break;
		}
		if (in.flags & DECODE_F_NO_STEP)
			break;
		uint64_t rep = (in.flags & DECODE_F_REP) ? ahead.gpr[DECODE_RCX] : 0;
		costmodel_add(&cm, &in, &z, rep);
		const struct decode_access *a = env->wanted(&in);
		if (a && (a->flags & DECODE_ACC_UNKNOWN_ADDR))
			a = NULL;
		if (a) {
			double b = (double)access_bytes(&in, a, &ahead);
			bytes += b;
			if (b > 0 && rng_unit(env->rng) * bytes < b) {
				if (exact && !emulate_stored(&emu, a->addr, a->len)) {
					picked = PICK_EXACT;
					pick->in = in;
					pick->access = (int)(a - in.access);
					pick->emu = emu;
				} else {
					/* The program must run to it: its bytes hold an
					 * emulated store, or registers are unknown. */
					picked = PICK_REACH;
					reach_pc = exact ? ahead.rip : stop_pc;
					reach_rank = exact ? 0 : after_stop;
				}
			}
			if (!exact)
				after_stop++;
		}
		if (exact) {
			if (emulate_insn(&emu, &ahead, &in, &z) == 0) {
				env->stats->emulated++;
				continue;
			}
			exact = 0;
			stop_pc = ahead.rip;
			after_stop = a ? 1 : 0;
		}
		uint64_t next = next_pc_decoded(&emu, &in);
		if (!next)
			break;
		ahead.rip = next;
	}
	if (picked == NO_PICK) {
		env->stats->skip_no_access++; /* a tick that stands for no bytes */
		return LOOK_NONE;
	}
	double cycles = costmodel_cycles(&cm);
	if (cycles < MIN_WINDOW_CYCLES)
		cycles = MIN_WINDOW_CYCLES;
	double weight = bytes / cycles * costmodel_cycles_per_ns() * env->tick_ns;
	if (picked == PICK_EXACT) {
		pick->weight = weight;
		return LOOK_SAMPLE;
	}
	env->stats->look_reach++;
	l->stepping = 1;
	l->steps_left = env->max_steps;
	l->step_to = reach_pc != regs->rip ? reach_pc : 0;
	l->skip_left = reach_rank;
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
	emulate_begin(&emu, regs->rip);
	for (int n = 0; n < REACH_MAX_INSNS; n++) {
		struct decode_insn *in = &pick->in;
		if (decode_at_zydis(ahead.rip, &ahead, in, &z) < 0 || (in->flags & DECODE_F_NO_STEP))
			break;
		const struct decode_access *a = env->wanted(in);
		int usable = a && !(a->flags & DECODE_ACC_UNKNOWN_ADDR);
		if (usable && l->skip_left == 0 && !emulate_stored(&emu, a->addr, a->len)) {
			pick->access = (int)(a - in->access);
			pick->emu = emu;
			pick->weight = l->weight;
			look_end(l);
			return LOOK_SAMPLE;
		}
		if ((usable && l->skip_left == 0) || emulate_insn(&emu, &ahead, in, &z) < 0) {
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
