/* cost: what the profiler spends in a thread, measured as it goes.
 *
 * Two parts: the handlers' own time (the TSC at entry and exit; a run the
 * TSC times far above the thread's mean lost the CPU meanwhile, and counts
 * at the mean), and the
 * kernel's round trip around each handler run (signal delivery and
 * sigreturn, a #DB exception), which no clock in the handler sees; a perf
 * clock's tick, dearer, is timed apart (COST_TICK).  The
 * round trip is measured, on the thread's CPU clock, for every handler run
 * after which the program runs only a few instructions before the next (a
 * single step): the gap is then nearly all kernel.  The median of the
 * last few timed (struct cost_timed) prices the other handler runs.  A
 * watchpoint's trap costs a hit as watchpoint_probe timed it and a signal
 * (COST_WATCH); hits a watchpoint lets by cost the hit alone
 * (cost_add_kernel).  The sampled instruction's
 * own trap right after the tick that armed it timed a round trip too,
 * until 2026-12-03: that gap read 36-76 us on an Emerald Rapids VM, where
 * a trap with an empty handler costs 28-30 us, a hit let by 26-27 and a
 * single step 28, and over dense_memset's run its traps and hits cost ~28
 * each (CPU time with watchpoints less without, less the handlers'); the
 * gap also held the tick's return after its arm.  dense_memset's estimate
 * of its kernel time was 1.37x what its CPU time showed.
 *
 * The software sampler's clocks count the thread's CPU time, the
 * profiler's handlers included and, in practice, the kernel round trips
 * it causes: a perf clock skips a tick due while the kernel runs with
 * interrupts on (a system call), but a #DB exception and a signal's
 * delivery run with them off, and the tick comes at the first user
 * instruction after (realloc_copy at 2000/s: 2351 ticks for 1.17 s of
 * intervals in 1.34 s of CPU, 0.3-0.5 s of it the kernel's round trips);
 * the timer's interval is the CPU clock's, kernel and all.  So a tick
 * stands for the program's time since the last one: the clock's interval
 * less the handler time and the priced round trips of traps and steps in
 * it (cost_take_interval).  Before (2026-12-03) the round trips were not
 * taken out, and on an Emerald Rapids VM, where a trap costs 28-38 us
 * (bench/trap_trip.c), realloc_copy's scalar fills weighed 0.37-0.41 of
 * its sampled bytes for 0.33.
 */
#ifndef WITCH_COST_H
#define WITCH_COST_H

#include <stdint.h>

/* Where the handlers' time goes (stats cost_part_*_ns): a run is in
 * COST_PART_OTHER from its entry until it names another part, and each
 * cost_part call ends the part before it.  A tick's look (its window and
 * run ahead, look.h) and its picks (their contexts, the client, the
 * watchpoints, sample.h; a counted call's or a PMU record's sample is a
 * pick too) apart from the rest: the tick's arrival checks, setting the
 * next interval, traps, steps' own work.  The TSC as read: unlike
 * cost_handler_ns, a preempted run is counted whole. */
enum cost_part { COST_PART_OTHER, COST_PART_LOOK, COST_PART_PICKS, COST_PARTS };

/* The last few timings of one kind and their median: a perf clock's tick
 * (cost_tick_arrived) and the round trip around a single step.  Either is
 * timed now and then, and one timing that held something else (the
 * scheduler's tick, ~50 us of the thread's CPU time here) would price them
 * all: a tick's price comes off every kept interval, and dense_memset read
 * 0.62 for 0.50 under ctest -j2 (2026-12-07) when its one timed tick of
 * the run, 282 us past its period, priced them all, against ~10 us in runs
 * beside it.  So the median of the last COST_TIMED_KEEP, once
 * COST_TIMED_MIN were timed; until then a guess. */
#define COST_TIMED_KEEP 5
#define COST_TIMED_MIN 3
struct cost_timed {
	double v[COST_TIMED_KEEP]; /* a ring */
	uint64_t n;                /* timed so far */
	double median;             /* of those kept, once COST_TIMED_MIN were */
};

struct cost {
	uint64_t entry_tsc, exit_tsc;
	uint64_t part_tsc;     /* the running part began here */
	enum cost_part part;   /* ... this one */
	uint64_t part_sum[COST_PARTS]; /* TSC ticks each, since the last cost_fold_parts */
	uint64_t restart_tsc;  /* the interval restarted inside this handler, here */
	int measuring;         /* the last exit expects the next entry at once: time it */
	double exit_cpu_ns;    /* the thread's CPU clock at that exit */
	struct cost_timed round_trip; /* one kernel round trip (a single step's) */
	double since_ns;       /* handler time inside the sampler's interval */
	double since_kernel_ns; /* the profiler's kernel round trips inside it */
	double since_all_ns;   /* handler time and round trips since cost_take_interval */
	double handler_ns, kernel_ns; /* spent since the last cost_fold */
	uint64_t round_trips;
	uint64_t entries;        /* handler runs begun */
	double tick_from_cpu_ns; /* a perf clock's period was set here (CPU clock), */
	double tick_period_ns;   /* ... to this, */
	uint64_t tick_from_entry; /* ... in this run: 0, none being timed */
	uint32_t tick_sets;      /* periods set at a call, to time one in COST_TICK_EVERY */
	struct cost_timed tick_trip; /* a perf clock's tick, past its period */
	uint64_t tick_trip_folded;  /* ticks timed counted in the stats */
	double handler_mean_ns;  /* running mean of the runs not preempted */
	uint64_t handler_runs;
	uint64_t preempted;      /* runs taken as preempted, counted at the mean */
};

/* The TSC's ticks a ns against the monotonic clock (~75 us; 0 where it
 * could not tell): each clock read bracketed by TSC reads, the narrowest
 * of three runs, so a thread that lost the CPU between the two reads does
 * not skew it.  Not async-signal-safe. */
double cost_measure_tsc_per_ns(void);

/* Once: the TSC rate, memlat's (tsc_per_ns: its ticks a ns, which a
 * process measures once a process tree, probes.h) or, where that is 0,
 * measured here (cost_measure_tsc_per_ns). */
int cost_init(double tsc_per_ns);
/* A TSC difference in ns (the rate cost_init measured). */
double cost_tsc_ns(uint64_t tsc);
/* The calling thread's CPU clock, in ns (a system call, ~1 us here). */
double cost_thread_cpu_ns(void);
/* A thread starts. */
void cost_begin(struct cost *c);
/* At every handler entry. */
void cost_enter(struct cost *c);
/* How the run was entered, which prices the kernel's part of it. */
enum cost_entry {
	COST_CALL,   /* a call from the program (bulk.c): nothing */
	COST_TRIP,   /* a signal from an interrupt or exception (a trap, a
		      * step, a PMU overflow): the measured round trip */
	COST_SIGNAL, /* a signal riding an interrupt that came anyway (a timer
		      * tick, sampler.h): its delivery and return only */
	COST_TICK,   /* a perf clock's tick: its own interrupts and signal, as
		      * timed (cost_tick_from); the round trip until then */
	COST_WATCH,  /* a watchpoint's SIGTRAP: a hit (cost_price_hit) and a
		      * signal's delivery and return (COST_SIGNAL_RETURN_NS) */
};
/* What a signal adds to a hit: a trap with an empty handler less a hit let
 * by, 1.0-2.7 us on an Emerald Rapids VM (2026-12-03, 3 x 20,000 each),
 * a tgkill to self and its delivery 1.5 there. */
#define COST_SIGNAL_RETURN_NS 2000.0
/* Once, after watchpoint_probe: the price of a hit the kernel handles
 * (a #DB; ~26 us in these VMs, ~1 us on bare metal). */
void cost_price_hit(double hit_ns);
/* A timer tick's signal, over the program's own time: 1-21 us here, median
 * 8 over 7 runs (bench/tick_cost.c, 2026-11-27; a tgkill to self, hot, 2.6
 * us).  Not timed in the handler: the timer fires at the scheduler tick
 * after its value, a jiffy's uncertainty.  On 2026-12-02 tick_cost.c read
 * 12-33 us: this price was that much low then. */
#define COST_SIGNAL_NS 8000.0
/* What a perf clock's tick costs the thread past its interval, which no
 * clock in the handler sees: the clock's hrtimer interrupt, the irq_work
 * self-IPI that raises the signal, the signal's delivery and return.  On
 * this VM 51-88 us a tick on 2026-12-02 (bench/tick_latency.c: a task
 * clock set in the handler, the thread's CPU clock read there and on the
 * next tick's arrival, the time past the period), the whole of what
 * bench/tick_cost.c measures a tick (46-71 us that day, 33 on 2026-11-27),
 * where a single step's round trip, which priced every tick before, is
 * ~15-20 us (bench/results/tick_price.md).  Timed on one period in
 * COST_TICK_EVERY set at a call (a kept one runs from the last overflow,
 * which no clock saw), two reads of the CPU clock (a system call each). */
#define COST_TICK_EVERY 4
/* The sampler's next interval was just set at this call: on the perf
 * clock to period_ns, now and then read the CPU clock to time the tick
 * ending it; 0: not on the perf clock (nothing is timed). */
void cost_tick_from(struct cost *c, double period_ns);
/* A perf clock's tick arrived, before its handler reads any other clock:
 * when the period it ends was being timed and no other handler run came
 * between, the CPU time past the period since cost_tick_from is the
 * tick's.  A time past a whole period is not a tick's (a period ended in
 * the kernel, where the clock raises none, and the next one ticked). */
void cost_tick_arrived(struct cost *c);
/* The price of a kernel round trip: the median of the last single steps'
 * timed, from COST_TIMED_MIN on; until then a guess (10 us, a VM's). */
double cost_round_trip_ns(const struct cost *c);
/* The price of a perf clock's tick: the median of the last ticks timed,
 * from COST_TIMED_MIN on; until then the round trip's. */
double cost_tick_ns(const struct cost *c);
/* At exit.  soon: the program is expected back at once by a single step.
 * covered_from_tsc: from this TSC on, time is already left out of the
 * interval by another (a timed counted call the run came inside, bulk.h),
 * so the run's time after it, and its round trip when it all came after,
 * are not counted in the interval again; 0: none. */
void cost_leave(struct cost *c, int soon, enum cost_entry entry, uint64_t covered_from_tsc);
/* Kernel time the profiler caused outside any handler run (hits a
 * watchpoint let by, watchpoint_arm_after). */
void cost_add_kernel(struct cost *c, double ns);
/* Inside a handler: the sampler's interval starts again now, so only the rest
 * of this handler counts in it. */
void cost_restart_interval(struct cost *c);
/* Inside a handler: the sampler's interval began before it (a kept
 * interval, sampler.h), so all of this handler counts in it, and so do
 * before_ns of the kernel's before the entry (a kept perf clock's interval
 * began where the tick's own period ended: the tick's delivery is in it). */
void cost_restart_interval_at_entry(struct cost *c, double before_ns);
/* Inside a handler: tsc ticks of this run, just spent, are not the
 * sampler's (the decoder's load at a first tick, deps.h, a start-up cost
 * of the process): left out of the run's time, so out of the budget's
 * and the handler's counts. */
void cost_set_aside(struct cost *c, uint64_t tsc);
/* Inside a handler: its time so far. */
double cost_in_handler_ns(const struct cost *c);
/* The profiler's ns inside the interval, handler runs and the round trips
 * of traps and steps (see above); *all_ns: everything spent since the last
 * call, every round trip included (for the budget). */
double cost_take_interval(struct cost *c, double *all_ns);
/* Inside a handler: the part of it that runs from now (see enum cost_part). */
void cost_part(struct cost *c, enum cost_part p);
/* Add each part's time since the last call, in ns, to part_ns[part]. */
void cost_fold_parts(struct cost *c, uint64_t part_ns[COST_PARTS]);
/* Add what was spent since the last fold to the counters. */
void cost_fold(struct cost *c, uint64_t *handler_ns, uint64_t *kernel_ns, uint64_t *round_trips,
	       uint64_t *preempted);

#endif
