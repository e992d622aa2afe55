/* simulate: Witch's algorithm run on the exhaustive access stream, as a
 * machine with a precise store/load sampler (PEBS, IBS) would run it.
 *
 * A sample every N-th store (load for the load client) by count, N drawn
 * uniformly from [P/2, 3P/2) as libwitch's samplers draw their periods; four
 * debug registers per thread, armed on an aligned word of the sampled
 * access drawn uniformly (watch_word.h, as libwitch draws it); reservoir
 * replacement (Witch 4.4.1) and
 * proportional attribution mu/eta (4.4.2, Eq. 4.1) per calling context, as
 * libwitch's sample.c and handler.c do them; verdicts as crafts/ give them.
 * Each sample weighs P times its access's bytes, so totals estimate bytes.
 *
 * Its error against the exhaustive answer is what the algorithm costs; the
 * rest of libwitch's error is what time-based software sampling adds
 * (bench/accuracy.sh shows all three).  Several seeds run side by side in
 * one pass, each an independent simulated run.
 */
#ifndef ORACLE_SIMULATE_H
#define ORACLE_SIMULATE_H

#include "pub_tool_basics.h"
#include "objects.h"
#include "pairs.h"

#define SIMULATE_MAX_SEEDS 8
#define SIMULATE_WATCHPOINTS 4

enum simulate_client { SIM_DEAD, SIM_SILENT, SIM_LOAD, SIM_CLIENTS };

struct simulate_stats {
	ULong period;		/* P, events per sample on average */
	ULong seed;
	ULong samples;		/* sampled accesses (stack ops skipped by silent, load) */
	ULong armed;		/* samples that took a debug register */
	ULong not_monitored;	/* samples the reservoir turned away */
	ULong traps;		/* watchpoints that decided */
};

/* seeds independent runs (1..SIMULATE_MAX_SEEDS, seeds 1..seeds); periods
 * for stores (dead, silent) and loads.  0 or -1 (bad arguments). */
Int simulate_init(UInt seeds, ULong store_period, ULong load_period);
UInt simulate_seeds(void);
/* How a trap's weight is found: the paper's and libwitch's (4.4.2: a trap
 * takes all of its context's mu - eta; the default); mu - eta shared among
 * the context's armed samples (libwitch before 2026-11-25); or each sample's
 * own P x bytes over its probability of being watched until it trapped
 * (Horvitz-Thompson over the reservoir's choices: unbiased, but its
 * variance is several times the others'). */
enum simulate_attribution { ATTR_PAPER, ATTR_SHARED, ATTR_HT };
void simulate_set_attribution(enum simulate_attribution a);
/* The thread whose accesses follow (watchpoints are per thread, as
 * perf_event breakpoints opened for one thread are). */
void simulate_switch_thread(ThreadId tid);
/* Every access, after the exhaustive decision, with its context id
 * (callstack.h), its object (objects.h: a sample's watchpoint carries it to
 * the trap, and its pair's watch side is <ctx, obj>) and insn_class_of()
 * class.  Loads: memory holds the value being read.  Stores: old and now
 * are the access's bytes before and after. */
void simulate_load(Addr a, UInt n, UInt cls, UInt ctx, UInt obj);
void simulate_store(Addr a, UInt n, UInt cls, UInt ctx, UInt obj, const UChar *old,
		    const UChar *now);
/* Run `seed` (0-based) of one client: its pairs and counters. */
const struct pairs *simulate_pairs(UInt seed, enum simulate_client c);
const struct simulate_stats *simulate_stats_of(UInt seed, enum simulate_client c);
/* What run `seed`'s samples of client c stand for (P x bytes), by object. */
const struct object_bytes *simulate_object_sampled(UInt seed, enum simulate_client c);
/* A forked child starts its runs afresh, as its own profile would. */
void simulate_clear(void);

#endif
