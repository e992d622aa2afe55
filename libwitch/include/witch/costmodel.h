/* costmodel: how many cycles a stretch of straight-line code takes, from its
 * instructions alone.
 *
 * The software sampler ticks on CPU time, but the answer is in bytes: a
 * tick must stand for the bytes accessed in the CPU time around it, so the
 * sampler needs the rate at which the code it lands in accesses memory.
 * It counts the accesses by running the code ahead (emulate.h) and takes
 * the time from this model (docs/sampler.md).
 *
 * The estimate is the larger of two bounds, as static loop analysers
 * (llvm-mca, uiCA) bound a loop: the throughput of the core's front end
 * (instructions per cycle, taken branches), integer ALUs and memory
 * ports, and the
 * longest chain of dependent instructions through registers and flags.
 * A branch the caller finds mispredicted (bpred.h) restarts the front end
 * after it resolves: the instructions after it start no earlier, and their
 * throughput is counted from there.  Cache misses are measured, not
 * modelled: the run ahead times its first read of each load's bytes
 * (memlat.h), and a second chain of dependent instructions carries those
 * latencies (costmodel_late, costmodel_cycles_missed); the window's length
 * is still measured without them, so a miss changes what the window's
 * bytes stand for, not which bytes it sees.  Memory dependencies through
 * stores are modelled where forwarding fails (costmodel_forward): a load
 * of bytes a recent store wrote only in part waits for the store.
 * Accesses by one instruction a power-of-two stride of 1 KiB or more apart
 * (a column of 4 KiB rows) keep to a few cache sets and miss each time,
 * unhidden by prefetchers: each costs a measured few ns in a bound of its
 * own (costmodel.c, CONFLICT_*).
 * An atomic read-modify-write (lock prefix, xchg with memory) drains the
 * store buffer: it costs what costmodel_init measured a `lock add` to take
 * (~20 cycles here), as a unit that does not pipeline.
 * `rep` string instructions cost a cycle per element while a debug register
 * is armed (the CPU runs them without its fast-string microcode then,
 * bench/dr_fast_string.c), and their bytes at the fast-string rate
 * costmodel_init measured when none is: a window is modelled as the code
 * ran in the stretch its tick ended (costmodel_begin's rep_fast).
 *
 * Everything but costmodel_init is async-signal-safe.
 */
#ifndef WITCH_COSTMODEL_H
#define WITCH_COSTMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "witch/decode.h"
#include "witch/decode_zydis.h"

#define COSTMODEL_NREGS DECODE_DEP_NREGS /* 16 general, 32 vector, the flags */

#define COSTMODEL_STREAMS 8 /* memory instructions a window follows the strides of */
#define COSTMODEL_STORES 8  /* stores a window keeps for the loads after them */

struct costmodel {
	float ready[COSTMODEL_NREGS]; /* cycle each register's value is ready */
	float chain;                  /* the latest of them: the dependency bound */
	/* The same with the loads' measured latencies (costmodel_late). */
	float ready_missed[COSTMODEL_NREGS];
	float chain_missed;           /* the latest start of a load */
	float restart_missed, last_done_missed;
	float missed;                 /* the measured latencies, summed */
	uint64_t last_writes;         /* the last instruction's registers written */
	float alu;                    /* integer ALU operations: a port bound */
	float loads, stores, store_bytes; /* port bounds */
	float busy;                   /* cycles of units that do not pipeline (div, rep) */
	float frontend;               /* fetch blocks ended by taken branches, in cycles */
	uint32_t block_insns;         /* instructions in the block still open */
	uint32_t insns;               /* since the last restart, as the bounds above */
	float last_done;              /* the last instruction's result is ready */
	float restart;                /* the front end started again (a mispredict) */
	float before_restart;         /* the instructions before it are done */
	uint32_t mispredicts;
	int last_fusable;             /* the last instruction fuses with a jcc after it */
	int rep_fast;                 /* rep string ops at the fast-string rate */
	float inv_width;              /* 1 / the issue width, as the run began */
	float inv_alu;                /* 1 / the ALU operations a cycle, the same */
	float inv_store_bytes;        /* 1 / the stored bytes a cycle, the same */
	float conflict_store_cycles, conflict_load_cycles; /* an access at such a stride */
	/* Each memory instruction's last address (keyed by pc and operand),
	 * for the strides that keep to a few cache sets. */
	struct {
		uint64_t key, addr;
	} streams[COSTMODEL_STREAMS];
	uint32_t n_streams;
	float conflict_loads, conflict_stores; /* accesses at such a stride */
	/* The latest stores, for the loads after them (costmodel_forward). */
	struct {
		uint64_t addr;
		uint32_t len;
		uint32_t added; /* the instruction's number (m->added) */
		float done;     /* costmodel_cycles when it was added */
	} stored[COSTMODEL_STORES];
	uint32_t n_stored;            /* stores noted, the ring's next is n % COSTMODEL_STORES */
	uint32_t added;               /* instructions added */
	float cycles_per_ns;          /* the clock, as the run began */
};

/* Once per process, before any other call and before any debug register
 * is armed: the clock's cycles per nanosecond, rep stosb's bytes per cycle,
 * a vector store loop's, a locked op's cycles and a failed store forward's
 * (measured: ~0.1 ms).
 * 0 or -errno. */
int costmodel_init(void);
/* What costmodel_init measured, as numbers, for the processes this one
 * starts (probes.h): the clock, the dispatch width and its 8 offsets'
 * widths, the ALU rate, rep stos's bytes a cycle and start, a locked op's
 * cycles, a failed forward's, a vector store loop's bytes a cycle. */
#define COSTMODEL_PROBES 16
void costmodel_probes_get(double v[COSTMODEL_PROBES]);
/* Instead of costmodel_init: numbers costmodel_probes_get gave on this
 * machine.  0, or -EINVAL (one outside its probe's range: none set). */
int costmodel_probes_set(const double v[COSTMODEL_PROBES]);
/* Measure the clock and the dispatch width again and follow them (~15 us;
 * from handlers now and then: a VM's core is as fast as its sibling thread
 * leaves it, and that moves). */
void costmodel_remeasure(void);
#define COSTMODEL_REMEASURE_TICKS 64 /* a thread's ticks between re-measures */

/* A window begins; rep_fast: no debug register was armed in the stretch
 * it stands for, so rep string instructions ran at their fast rate. */
void costmodel_begin(struct costmodel *m, int rep_fast);

/* Add instruction in (decoded with z); rep_elems: the elements a rep string
 * instruction has left (rcx), else 0. */
void costmodel_add(struct costmodel *m, const struct decode_insn *in,
		   const struct decode_zydis *z, uint64_t rep_elems);

/* The instruction just added transferred control (its next instruction is
 * not the one after it).  The front end fetches up to the issue width of
 * instructions a cycle from one block, and a taken branch ends the block:
 * each costs at least a cycle, a call or a ret two (measured on this EPYC:
 * 1.0 cycle a taken jmp; a call, ret and loop branch 5 cycles an
 * iteration). */
void costmodel_taken(struct costmodel *m, int call_or_ret);
/* The instruction just added is a branch the CPU mispredicts (bpred.h). */
void costmodel_mispredict(struct costmodel *m);
/* Cycles the instructions added so far take, loads as L1 hits. */
double costmodel_cycles(const struct costmodel *m);
/* How far a window has come, for where it ends: costmodel_cycles, but
 * where the dependency chain leads the throughput bounds by more than
 * R / W cycles, the chain less those.  An out-of-order core runs a chain
 * that no later iteration waits for (a libm exp per call: ~60 cycles of FP
 * latency, ~15 a call measured in a loop) under the calls after it, as far
 * as its reorder buffer reaches (R = COSTMODEL_ROB_ENTRIES instructions
 * dispatched at the width W); a window of one call weighed exp's loads
 * 0.2x.  So such a window runs on until a longer chain or the instruction
 * limit ends it, and the chain it ends with, counted whole, is spread over
 * the calls it ran.  A chain that leads by less (a loop-carried one a
 * little slower than the loop's dispatch) ends it as before: a longer
 * window would cost the handler time for the same answer. */
#define COSTMODEL_ROB_ENTRIES 320.0f /* Zen 4's (Zen 3: 256; Golden Cove: 512) */
double costmodel_span(const struct costmodel *m);
/* The instruction just added, its access addresses known: a load of bytes
 * a store among the last COSTMODEL_STORES (within 64 instructions) wrote
 * only in part cannot take them from the store buffer and waits for the
 * store to reach the cache: its results come no sooner than the cycles
 * the window had taken at the store plus a failed forward's latency,
 * measured at start (~14 cycles here; a forwarded load ~1).  strings'
 * upcase_in_place stores a byte and calls strlen, whose 32-byte load
 * reads it back: ~27 cycles an iteration, modelled at ~15 without this
 * (its loads weighed 1.7x).  Then notes the instruction's stores.
 * 1 if a load waited so. */
int costmodel_forward(struct costmodel *m, const struct decode_insn *in);
/* The failed forward's cycles costmodel_init measured (or its default). */
float costmodel_forward_fail_cycles(void);
/* The instruction just added waited cycles longer for its loads than an L1
 * hit (memlat.h): its results, and what depends on them, come that late. */
void costmodel_late(struct costmodel *m, float cycles);
/* A store of the instruction just added found its line cycles away (memlat.h):
 * it waits in the store buffer, overlapping with the other misses. */
void costmodel_late_store(struct costmodel *m, float cycles);
/* Cycles the instructions added so far take, the late loads included: a
 * load whose address waits for a miss starts that late (a chase: misses
 * one after another), other misses overlap, MEMLAT_PARALLEL at a time, and
 * a mispredicted branch that waited for one restarts the front end late. */
double costmodel_cycles_missed(const struct costmodel *m);
/* Cycles of work the window does not run instruction by instruction (a
 * counted bulk call, look.c), added as a unit that does not pipeline. */
void costmodel_add_busy(struct costmodel *m, double cycles);

/* Core cycles per nanosecond of CPU time, as costmodel_init measured it. */
double costmodel_cycles_per_ns(void);
/* Instructions the core dispatches a cycle, as costmodel_init measured it. */
float costmodel_issue_width(void);
/* Integer ALU operations it runs a cycle, the same. */
float costmodel_alu_rate(void);

#endif
