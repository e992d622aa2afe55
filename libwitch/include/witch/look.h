/* look: from a software-sampler tick to the access it samples, and the
 * bytes that sample stands for.
 *
 * A tick stands for the CPU time since the one before; the answer is in
 * bytes.  So a tick looks at a window of the code about to run: it runs the
 * code ahead on a register copy (emulate.h) for LOOK_WINDOW_CYCLES of
 * modelled time (costmodel.h), adding up the bytes of the client's accesses
 * there, and picks one of them with a chance in proportion to its bytes.
 * The sample stands for  bytes in the window / window cycles * cycles per
 * tick:  the bytes the program accesses in the time the tick stands for.
 * Summed over ticks that estimates every context's bytes whatever the
 * density of the code around it: a vector memset and a scalar loop weigh
 * by the bytes they store, not by their CPU time (docs/sampler.md).
 * A window with no access stands for no bytes: the time
 * a tick stands for is never dropped.
 *
 * Where two ticks land in one run of a loop, its measured speed replaces
 * the model's (pace.h).
 *
 * Past the window's end the run ahead goes on for the kept picks' verdicts
 * alone (no bytes counted, no time modelled): until the accesses after
 * each pick have touched all the bytes a watch of it may watch, in ways the
 * client judges from the trace (sample.c decides it then, as its trap
 * would, with no watchpoint, no hits and no trap), the emulator stops, or
 * the pick's site's reach is spent.  A site reaches twice as far as its
 * last verdict lay (and 16 more), LOOK_DECIDE_INSNS when not seen before,
 * and not at all after a miss, but for a try after 8 of its picks, twice as
 * many after each further miss (up to 128).
 *
 * A pick's watchpoint is armed at once, so the program's accesses to its
 * bytes before the pick, and the pick's own, hit it first.  The window
 * traces every access its exact part makes (look_trace), so the sample can
 * count those hits and have the kernel let them by (sample.c,
 * watchpoint_arm_after).  Where it cannot, they trap (traps_early: the
 * client's copy is read again; earlier runs of the picked instruction on
 * the same bytes are counted in self_skip).  Where the emulator
 * stops (an instruction it does not run, a load of bytes an emulated store
 * wrote whose value it does not know), the window goes on by decoding alone (register
 * values may then be stale, so it counts accesses but cannot watch them;
 * a conditional branch goes backward-taken, forward-not-taken).  A pick
 * there is reached by single-stepping:
 *
 *   tick --window--> pick run ahead exactly ---------------> LOOK_SAMPLE
 *              \---> no access in the window --------------> LOOK_NONE
 *               \--> pick past the stop: step to the stop -> LOOK_STEP
 *   step (look_step) --> at the stop: run ahead again, passing skip_left
 *                        accesses --> LOOK_SAMPLE, or LOOK_STEP over the
 *                        next stop, or LOOK_NONE when WITCH_MAX_STEPS is spent
 *
 * Async-signal-safe: no malloc, no locks, no stdio.
 */
#ifndef WITCH_LOOK_H
#define WITCH_LOOK_H

#include <stdint.h>

#include "witch/bpred.h"
#include "witch/decode.h"
#include "witch/decode_zcache.h"
#include "witch/emulate.h"
#include "witch/emulate_vec.h"
#include "witch/pace.h"
#include "witch/rng.h"
#include "witch/stats.h"
#include "witch/unwind_rules.h"

#define LOOK_WINDOW_CYCLES 64.0
#define LOOK_MAX_INSNS 256 /* instructions in a window, at most */
#define LOOK_MAX_PICKS 4   /* samples one tick may take */
/* Picks a tick keeps on average (at the thread's mean byte rate).  The
 * tick's handler (the window, the unwind, the run's first breakpoint ioctl
 * at ~20 us) is most of a sample's cost: 146 of 197 us a tick on lz at the
 * 1% budget, with 0.86 samples a tick; a further pick adds an ioctl (1-2
 * us), its hits and its trap.  1 -> 3: samples a CPU-second at the budget
 * +18-88% on bench/programs (bench/results/picks_ab.md). */
#define LOOK_PICKS_PER_TICK 3.0
/* Past the window, the run ahead goes on for its picks' verdicts, this far
 * at most: a verdict found saves a watchpoint, its hits and its trap (~40-60
 * us here) and an instruction run ahead ~0.1-0.4; of the verdicts found
 * within 256 (bench/programs, dead, 183), 53% lay within 32, 74% within
 * 64, 90% within 128. */
#define LOOK_DECIDE_INSNS 128
#define LOOK_DECIDE_SITES 64
#define LOOK_TRACE_MAX ((LOOK_MAX_INSNS + LOOK_DECIDE_INSNS) * DECODE_MAX_ACCESS)

/* Every access the exact part of a window makes, in program order: how many
 * times the program touches a watched range before a pick's own access is
 * then known, so the watchpoint can let those hits pass in the kernel
 * (watchpoint.h, period) instead of trapping on each. */
struct look_trace_access {
	uint64_t pc;
	uint64_t addr;
	uint32_t len;
	uint16_t insn;   /* the instruction's place in the window: one hit each */
	uint8_t kind;    /* enum decode_kind */
	uint8_t unsure;  /* masked, rep, or address unknown: may or may not touch */
	uint8_t frame;   /* the frame it ran in: look_trace.frames[], or LOOK_FRAME_UNKNOWN */
	uint8_t elem;    /* enum decode_elem */
	uint8_t value_known;
	uint64_t value;  /* what a store writes (little-endian), when value_known */
};

#define LOOK_TRACE_FRAMES 16
#define LOOK_FRAME_UNKNOWN 255

struct look_trace {
	uint32_t n;
	uint32_t complete; /* entries before this are every access the program makes
			    * (a byte-counted call run past is not traced) */
	struct look_trace_access a[LOOK_TRACE_MAX];
	uint32_t n_frames, frame_gen; /* frames[] so far; the run's frame_gen at the last */
	uint8_t frame_now;
	struct emulate_frame frames[LOOK_TRACE_FRAMES];
};
/* The access that decides a watch of [addr, addr + len) for kinds (a
 * watchpoint's: stores, or loads and stores) set before the instruction
 * traced at pos: the first access of those kinds after that instruction's
 * own to touch the bytes, when the trace is sure it is the first (no unsure
 * access of those kinds before it).  NULL: none the window saw, or not sure. */
const struct look_trace_access *look_trace_next(const struct look_trace *tr, uint32_t pos,
						uint64_t addr, uint32_t len, uint8_t kinds);


/* How far past the window a site's picks run for their verdicts (look.c). */
struct look_decide_site {
	uint64_t pc;
	uint16_t limit;       /* instructions; 0: its last verdict lay past reach */
	uint16_t probe_in;    /* while limit is 0: picks until it is tried again */
	uint16_t probe_every; /* ... after its last miss */
};

/* A thread's look: where its single steps are going. */
struct look {
	int stepping;         /* a pick is being reached by single steps */
	uint32_t steps_left;
	uint64_t step_to;     /* step on to this pc (0: one step) */
	uint32_t skip_left;   /* wanted accesses to pass before the pick */
	double weight;        /* bytes the pick stands for */
	double mean_rate;     /* the thread's bytes per cycle, averaged over ticks */
	struct pace pace;     /* loops' measured speed (pace.h) */
	struct bpred bpred;   /* which branches the CPU mispredicts (bpred.h) */
	/* The last window's return out of the interrupted frame, while its
	 * registers were exact: that frame's caller (unwind_rules.h). */
	struct unwind_caller caller;
	struct look_decide_site decide[LOOK_DECIDE_SITES];
};

/* What a look needs from its thread. */
struct look_env {
	/* The client's access of in that samples take, or NULL. */
	const struct decode_access *(*wanted)(const struct decode_insn *in);
	struct rng *rng;
	struct witch_stats *stats;
	uint32_t max_steps;
	double tick_ns;       /* CPU time a tick stands for */
	int rep_fast;         /* no debug register was armed before the tick (costmodel.h) */
	/* Verdicts from the trace: the accesses a watchpoint traps on, those of
	 * them the client judges from the trace (0: none, and no run past the
	 * window; WITCH_WATCHPOINTS=0), and whether it needs their values
	 * (craft.h). */
	uint8_t watch_kinds, decide_kinds, decide_values;
	uint8_t decide_through; /* kinds a verdict waits past, their values known (craft.h) */
	uint64_t runtime_lo, runtime_hi; /* the runtime's code: a window ends there */
	/* The run's workspace (runspace.h): its decodings, the window's
	 * accesses (look_tick's picks point into them), its vector registers
	 * (NULL: none). */
	struct decode_zcache *zcache;
	struct look_trace *trace;
	struct emulate_vec *vec;
	const void *fpregs;      /* the signal frame's XSAVE area (emulate_vec.h) */
};

/* The access to sample: in.access[access], with the calls and returns run
 * ahead to reach it (emu) and the bytes it stands for. */
struct look_pick {
	struct decode_insn in;
	int access;
	double weight;
	uint32_t self_skip;   /* the same instruction's traps on these bytes before it */
	const struct look_trace *trace; /* accesses before it: trace->a[0..trace_pos), or NULL */
	uint32_t trace_pos;
	int stored_known;     /* a store whose value the run ahead knows: */
	uint8_t stored[64];   /* its in.access[access].len bytes */
	struct emulate emu;   /* last: look.c copies the fields before it, then its used part */
};

enum look_next { LOOK_NONE, LOOK_SAMPLE, LOOK_STEP };

/* A tick at regs (not stepping): picks[0..*n_picks) to sample now (at most
 * LOOK_MAX_PICKS), and LOOK_STEP when one more is to be reached by steps. */
enum look_next look_tick(struct look *l, const struct look_env *env,
			 const struct decode_regs *regs, struct look_pick *picks, int *n_picks);
/* A single step ended at regs (stepping). */
enum look_next look_step(struct look *l, const struct look_env *env,
			 const struct decode_regs *regs, struct look_pick *pick);
/* How many instructions among trace->a[0..pos) touch [addr, addr + len) with
 * an access of one of kinds (a data breakpoint's hits: one per instruction),
 * or -1 when that cannot be told (an unsure access overlaps, or the trace
 * is incomplete there). */
int look_trace_hits(const struct look_trace *trace, uint32_t pos, uint64_t addr, uint32_t len,
		    uint8_t kinds);
/* Stepping is over (a pick, a stop, or the thread is leaving). */
void look_end(struct look *l);
/* A tick that ran no window (stepping, a byte-counted call): the next
 * tick's loop cannot be measured against the last one's (pace.h). */
void look_tick_skipped(struct look *l);

#endif
