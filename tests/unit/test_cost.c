/* test_cost: a handler run that lost the CPU counts at the thread's mean;
 * a perf clock's tick is priced at what it was timed to cost.
 *
 * cost.c times handler runs with the TSC, which counts wall time; a run
 * preempted by another task would count that task's slice as profiler time
 * and leave its tick standing for no program time.  Each row spins through
 * a number of "handler runs" of a given length (busy loops on the TSC, as a
 * handler's own work) and checks the handler time cost_fold reports and the
 * runs taken as preempted.  Lengths are far apart (50 us against 3 ms), so a
 * slow or loaded machine does not move a row across the rule.
 *
 * Tick rows: sets periods as the handler does (cost_tick_from, one handler
 * run each), spins the thread's CPU clock through the last period and a
 * known time past it (the kernel's part of a tick, stood in for), and lets
 * the tick arrive (cost_tick_arrived), up to three times: the price of a
 * COST_TICK run is the median of the times past, or the round trip's while
 * fewer than COST_TICK_TIMED_MIN valid ones were timed.
 *
 * Round trip rows: the same for single steps' round trips, the gap between
 * an exit expecting the program back at once and the next entry.
 *
 * Interval rows: what a tick's interval leaves out as the profiler's
 * (cost_take_interval): the handler runs in it and the round trips of
 * traps and steps, not a tick's own (it comes before the interval it
 * starts), nor what a timed counted call already left out (bulk.h).
 *
 * Part rows: one handler run spins through a list of parts (cost_part),
 * each for a known time, maybe with time set aside (cost_set_aside, a
 * decoder's load): cost_fold_parts must give each part its own time (the
 * time before the first mark and after the last closing mark is OTHER's,
 * the part running at the exit ends there, set-aside time is in none).
 */
#include "witch/cost.h"
#include "check.h"

#include <time.h>
#include <x86intrin.h>

static double clock_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/* Busy for ns on a clock: wall time (a handler's own work, as the TSC
 * counts it) or the thread's CPU time (what a tick's period counts).
 * Returns the time it took: an interrupt in its last read overshoots
 * (this VM's scheduler tick costs ~50 us of the thread's CPU time). */
static double spin_on(clockid_t clock, double ns)
{
	double t0 = clock_ns(clock), t;
	while ((t = clock_ns(clock)) - t0 < ns)
		;
	return t - t0;
}

/* cost.c converts TSC ticks with a rate calibrated over 2 x 25 us at start:
 * good to ~0.1%, so a 3 ms run may read a few us over its wall time (one
 * run in 30 here read 3001 us for 3000). */
#define TSC_SLACK 1.01

/* short_runs runs of short_ns, then one of long_ns: is the long one taken
 * as preempted, and what does it count? */
static const struct {
	int line;
	int short_runs;
	double short_ns, long_ns;
	uint64_t want_preempted;
} rows[] = {
	/* A 3 ms run after 20 of 50 us: preempted, counted ~50 us. */
	{__LINE__, 20, 50e3, 3e6, 1},
	/* The same run before the mean has 16 runs behind it: counted whole. */
	{__LINE__, 4, 50e3, 3e6, 0},
	/* 400 us after 50 us runs: under PREEMPT_MIN_NS (0.5 ms), counted whole. */
	{__LINE__, 20, 50e3, 400e3, 0},
	/* 2 ms after 1 ms runs: within 6x the mean, a long run, counted whole. */
	{__LINE__, 20, 1e6, 2e6, 0},
};

/* One handler run of ns; what cost_fold reports for it. */
struct run {
	double wall_ns;
	uint64_t handler_ns, preempted;
};

static struct run one_run(struct cost *c, double ns)
{
	struct run r = {0, 0, 0};
	uint64_t kernel_ns = 0, trips = 0;
	double t0 = mono_ns();
	cost_enter(c);
	spin_on(CLOCK_MONOTONIC, ns);
	cost_leave(c, 0, COST_TRIP, 0);
	r.wall_ns = mono_ns() - t0;
	cost_fold(c, &r.handler_ns, &kernel_ns, &trips, &r.preempted);
	return r;
}

#define ROUND_TRIP_GUESS 10000.0 /* cost.c's until a round trip is measured */
#define PERIOD 300e3

/* Each row times up to three ticks in turn, every one the same way. */
static const struct {
	int line;
	int sets;        /* periods set at a call, the last one the tick ends */
	double period;   /* what the last was set to (0: not the perf clock) */
	int between;     /* handler runs between it and the tick (traps, steps) */
	int ticks;       /* ticks timed so, one after another */
	double past[3];  /* CPU time past the period before each tick arrives */
	int timed;       /* is the price the median of what was past? */
} tick_rows[] = {
	/* One set in COST_TICK_EVERY is timed: the 4th; three such, 40 us
	 * past their periods, price the tick. */
	{__LINE__, COST_TICK_EVERY, PERIOD, 0, 3, {40e3, 40e3, 40e3}, 1},
	/* Two timed are not enough (COST_TICK_TIMED_MIN): the round trip's. */
	{__LINE__, COST_TICK_EVERY, PERIOD, 0, 2, {40e3, 40e3}, 0},
	/* One late period among three is not the price: their median. */
	{__LINE__, COST_TICK_EVERY, PERIOD, 0, 3, {40e3, 40e3, 250e3}, 1},
	{__LINE__, COST_TICK_EVERY, PERIOD, 0, 3, {250e3, 40e3, 60e3}, 1},
	/* The 3rd set is not timed: the round trip's price stays. */
	{__LINE__, COST_TICK_EVERY - 1, PERIOD, 0, 3, {40e3, 40e3, 40e3}, 0},
	/* A trap between: its time is in the gap, nothing is timed. */
	{__LINE__, COST_TICK_EVERY, PERIOD, 1, 3, {40e3, 40e3, 40e3}, 0},
	/* 200 us past a 300 us period: a dear tick, timed. */
	{__LINE__, COST_TICK_EVERY, PERIOD, 0, 3, {200e3, 200e3, 200e3}, 1},
	/* More than a period past: a period ended in the kernel, unticked. */
	{__LINE__, COST_TICK_EVERY, PERIOD, 0, 3, {400e3, 400e3, 400e3}, 0},
	/* Not the perf clock (the timer's interval: 0). */
	{__LINE__, COST_TICK_EVERY, 0, 0, 3, {40e3, 40e3, 40e3}, 0},
};

static double median3(double a, double b, double c)
{
	if (a > b) {
		double t = a;
		a = b;
		b = t;
	}
	return c < a ? a : c > b ? b : c;
}

/* One try of row i: 1 when the tick was priced as the row wants; *got,
 * *want, *kernel: what it read. */
static int tick_try(int i, double *got, double *want, uint64_t *kernel)
{
	struct cost c;
	uint64_t handler_ns = 0, kernel_ns = 0, trips = 0, preempted = 0;
	double past[3] = {0, 0, 0};
	cost_begin(&c);
	for (int n = 0; n < tick_rows[i].ticks; n++) {
		for (int k = 0; k < tick_rows[i].sets; k++) {
			cost_enter(&c);
			cost_tick_from(&c, k + 1 < tick_rows[i].sets ? PERIOD : tick_rows[i].period);
			cost_leave(&c, 0, COST_TICK, 0);
		}
		for (int k = 0; k < tick_rows[i].between; k++) {
			cost_enter(&c);
			cost_leave(&c, 0, COST_TRIP, 0);
		}
		past[n] = spin_on(CLOCK_THREAD_CPUTIME_ID, PERIOD + tick_rows[i].past[n]) - PERIOD;
		cost_fold(&c, &handler_ns, &kernel_ns, &trips, &preempted);
		cost_enter(&c);
		cost_tick_arrived(&c);
		cost_leave(&c, 0, COST_TICK, 0);
		kernel_ns = 0; /* the last run's alone */
		cost_fold(&c, &handler_ns, &kernel_ns, &trips, &preempted);
	}
	*want = tick_rows[i].timed ? median3(past[0], past[1], past[2]) : ROUND_TRIP_GUESS;
	*got = cost_tick_ns(&c);
	*kernel = kernel_ns;
	/* Timed: the spins' past as they came out, and the clock reads and
	 * runs around them (a few us). */
	double slack = tick_rows[i].timed ? 30e3 : 0;
	return *got >= *want && *got <= *want + slack && kernel_ns == (uint64_t)*got;
}

/* A row passes in one of TICK_TRIES: this VM stalls a thread ~50-100 us
 * now and then (its scheduler tick; 1 try in ~100 here on 2026-12-02), and
 * a stall between the two clock reads outside the spin reads as the tick's
 * cost, or pushes the 200 us row past its period.  A wrong mechanism fails
 * every try. */
#define TICK_TRIES 3

static void tick_row(int i)
{
	double got = 0, want = 0;
	uint64_t kernel = 0;
	int ok = 0;
	for (int t = 0; t < TICK_TRIES && !ok; t++)
		ok = tick_try(i, &got, &want, &kernel);
	CHECK(tick_rows[i].line, ok,
	      "a tick priced %.1f us, want %.1f us; its run counted %llu ns of kernel, want its price",
	      got / 1e3, want / 1e3, (unsigned long long)kernel);
}

/* Round trip rows: single steps' exits (soon) with a known gap of the
 * thread's CPU time before the next entry (the kernel's part, stood in
 * for); the price of a COST_TRIP run is the median of the gaps timed,
 * once COST_TIMED_MIN were, gaps past ROUND_TRIP_MAX (a preemption) left
 * out; until then the guess. */
#define ROUND_TRIP_MAX 200e3 /* cost.c's ROUND_TRIP_MAX_NS */

static const struct {
	int line;
	int n;
	double gap[4];
} trip_rows[] = {
	{__LINE__, 3, {20e3, 20e3, 20e3}},
	/* two are not enough: the guess */
	{__LINE__, 2, {20e3, 20e3}},
	/* one stalled gap among three is not the price */
	{__LINE__, 3, {20e3, 20e3, 150e3}},
	{__LINE__, 3, {150e3, 20e3, 40e3}},
	/* past ROUND_TRIP_MAX: not timed at all */
	{__LINE__, 3, {20e3, 20e3, 250e3}},
	{__LINE__, 4, {20e3, 250e3, 30e3, 20e3}},
};

static int trip_try(int i, double *got, double *want)
{
	struct cost c;
	double kept[4];
	int n = 0;
	cost_begin(&c);
	for (int k = 0; k < trip_rows[i].n; k++) {
		cost_enter(&c);
		cost_leave(&c, 1, COST_TRIP, 0);
		double gap = spin_on(CLOCK_THREAD_CPUTIME_ID, trip_rows[i].gap[k]);
		if (trip_rows[i].gap[k] < ROUND_TRIP_MAX)
			kept[n++] = gap;
	}
	cost_enter(&c);
	cost_leave(&c, 0, COST_TRIP, 0);
	*got = cost_round_trip_ns(&c);
	*want = n == 3 ? median3(kept[0], kept[1], kept[2]) : ROUND_TRIP_GUESS;
	/* Timed: the spins' gaps as they came out, and the clock reads and
	 * runs around them (a few us). */
	double slack = n == 3 ? 30e3 : 0;
	return *got >= *want && *got <= *want + slack;
}

static void trip_row(int i)
{
	double got = 0, want = 0;
	int ok = 0;
	for (int t = 0; t < TICK_TRIES && !ok; t++)
		ok = trip_try(i, &got, &want);
	CHECK(trip_rows[i].line, ok, "a round trip priced %.1f us, want %.1f us", got / 1e3,
	      want / 1e3);
}

#define HIT_NS 25000.0 /* cost_price_hit's, in interval rows */
#define RUN_NS 40000.0 /* the handler run inside the interval */

enum covered { NOT_COVERED, COVERED_BEFORE, COVERED_MID };

static const struct {
	int line;
	int kept;              /* the interval began at the tick's entry (kept) */
	double before_ns;      /* ... and this much of the kernel's before it */
	enum cost_entry entry; /* the run inside the interval */
	enum covered covered;  /* a counted call's window: none, begun before the
				* run, begun in its middle */
	double want_trip_ns;   /* the run's round trip the interval leaves out */
	double want_run;       /* the part of the run it leaves out */
} interval_rows[] = {
	/* A watchpoint's trap: its run and a hit and a signal. */
	{__LINE__, 0, 0, COST_WATCH, NOT_COVERED, HIT_NS + COST_SIGNAL_RETURN_NS, 1},
	/* A step: its run and the round trip (unmeasured: the guess). */
	{__LINE__, 0, 0, COST_TRIP, NOT_COVERED, ROUND_TRIP_GUESS, 1},
	/* A tick (a stale one, say): its run only. */
	{__LINE__, 0, 0, COST_TICK, NOT_COVERED, 0, 1},
	/* A trap inside a timed counted call: the call's time holds it all. */
	{__LINE__, 0, 0, COST_WATCH, COVERED_BEFORE, 0, 0},
	/* A call's window that began in the run's middle: the first half and
	 * the trip, which came before it. */
	{__LINE__, 0, 0, COST_WATCH, COVERED_MID, HIT_NS + COST_SIGNAL_RETURN_NS, 0.5},
	/* A kept perf interval: the tick's own delivery, 30 us, is in it. */
	{__LINE__, 1, 30e3, COST_WATCH, NOT_COVERED, HIT_NS + COST_SIGNAL_RETURN_NS, 1},
};

static void interval_row(int i)
{
	int line = interval_rows[i].line;
	struct cost c;
	double all_ns;
	cost_begin(&c);
	cost_price_hit(HIT_NS);
	/* The tick that starts the interval. */
	cost_enter(&c);
	if (interval_rows[i].kept)
		cost_restart_interval_at_entry(&c, interval_rows[i].before_ns);
	else
		cost_restart_interval(&c);
	cost_leave(&c, 0, COST_TICK, 0);
	double tick_part = cost_take_interval(&c, &all_ns);
	/* The run inside it. */
	uint64_t covered = interval_rows[i].covered == COVERED_BEFORE ? __rdtsc() : 0;
	double t0 = mono_ns();
	cost_enter(&c);
	spin_on(CLOCK_MONOTONIC, RUN_NS / 2);
	if (interval_rows[i].covered == COVERED_MID)
		covered = __rdtsc();
	spin_on(CLOCK_MONOTONIC, RUN_NS / 2);
	cost_leave(&c, 0, interval_rows[i].entry, covered);
	double run_wall = mono_ns() - t0;
	double got = cost_take_interval(&c, &all_ns);
	if (interval_rows[i].kept)
		got += tick_part; /* the tick's run and what came before its entry */
	double want = interval_rows[i].want_trip_ns + interval_rows[i].want_run * RUN_NS +
		      (interval_rows[i].kept ? interval_rows[i].before_ns : 0);
	/* The run's wall time over RUN_NS (the clock reads, an interrupt) and,
	 * kept, the tick's own short run.  All of the overrun, even where half
	 * the run is left out: a stall may fall in either half (CI read 71.7 us
	 * for the mid row's 47, its run 24.8 us over, all before the window). */
	double slack = (interval_rows[i].want_run > 0 ? run_wall - RUN_NS : 0) + 10e3;
	CHECK(line, got >= want - 2e3 && got <= want + slack,
	      "the interval left out %.1f us, want %.1f us (+ up to %.1f)", got / 1e3, want / 1e3,
	      slack / 1e3);
}

/* cost_init's rate: a plausible one handed in is taken as it is (3 ticks
 * a ns: 3000 ticks are 1000 ns); 0, or one no TSC has, is measured here,
 * and agrees with the TSC against the monotonic clock over 2 ms. */
static const struct {
	int line;
	double tsc_per_ns; /* handed in */
	int measured;      /* 1: measured here */
} rate_rows[] = {
	{__LINE__, 3.0, 0},
	{__LINE__, 0.5, 0},
	{__LINE__, 0, 1},
	{__LINE__, 1e6, 1},
	{__LINE__, -2.0, 1},
};

/* The TSC against the monotonic clock over 2 ms: the middle of three (one
 * read 0.0005 ticks a ns beside three busy loops; the thread had moved). */
static double tsc_truth(void)
{
	double r[3];
	for (int k = 0; k < 3; k++) {
		double t0 = mono_ns();
		uint64_t c0 = __rdtsc();
		while (mono_ns() - t0 < 2e6)
			;
		uint64_t c1 = __rdtsc();
		r[k] = (double)(c1 - c0) / (mono_ns() - t0); /* ticks a ns */
	}
	double lo = r[0] < r[1] ? r[0] : r[1], hi = r[0] < r[1] ? r[1] : r[0];
	return r[2] < lo ? lo : r[2] > hi ? hi : r[2];
}

static void check_rates(void)
{
	double truth = tsc_truth();
	for (size_t i = 0; i < sizeof(rate_rows) / sizeof(rate_rows[0]); i++) {
		int line = rate_rows[i].line;
		CHECK(line, cost_init(rate_rows[i].tsc_per_ns) == 0, "cost_init failed");
		double ns = cost_tsc_ns(3000);
		double want = 3000 / (rate_rows[i].measured ? truth : rate_rows[i].tsc_per_ns);
		CHECK(line, ns > 0.97 * want && ns < 1.03 * want, "3000 ticks read %.1f ns, want %.1f",
		      ns, want);
	}
}

#define PART_STEPS 4

static const struct {
	int line;
	struct {
		enum cost_part part; /* the part from here on */
		double ns;           /* spun in it */
		double aside_ns;     /* then set aside (spun, then cost_set_aside) */
	} steps[PART_STEPS];
	int n;
	double want[COST_PARTS]; /* ns each part should read */
} part_rows[] = {
	/* look, picks, back to the rest: each its own */
	{__LINE__, {{COST_PART_OTHER, 100e3, 0}, {COST_PART_LOOK, 300e3, 0},
		    {COST_PART_PICKS, 200e3, 0}, {COST_PART_OTHER, 50e3, 0}}, 4,
	 {150e3, 300e3, 200e3}},
	/* a look running at the exit: the exit ends it */
	{__LINE__, {{COST_PART_LOOK, 400e3, 0}}, 1, {0, 400e3, 0}},
	/* 200 us of a 300 us stretch set aside: the 100 us left are the rest's */
	{__LINE__, {{COST_PART_OTHER, 100e3, 200e3}, {COST_PART_PICKS, 100e3, 0}}, 2,
	 {100e3, 0, 100e3}},
};

/* One try of part row i: 1 when it ran undisturbed (wall time within 15%
 * of what it spun, each part within 10 us of its row's time), checked; 0
 * to try again.  Each part is checked against what its spins took (an
 * interrupt in one, ~50 us of a VM's scheduler tick, is in it), and that
 * against the row. */
static int part_try(int i)
{
	int line = part_rows[i].line;
	struct cost c;
	double took[COST_PARTS] = {0};
	cost_begin(&c);
	double t0 = mono_ns(), spun = 0;
	cost_enter(&c);
	for (int k = 0; k < part_rows[i].n; k++) {
		cost_part(&c, part_rows[i].steps[k].part);
		double ns = spin_on(CLOCK_MONOTONIC, part_rows[i].steps[k].ns);
		took[part_rows[i].steps[k].part] += ns;
		spun += ns;
		if (part_rows[i].steps[k].aside_ns > 0) {
			uint64_t from = __rdtsc();
			spun += spin_on(CLOCK_MONOTONIC, part_rows[i].steps[k].aside_ns);
			cost_set_aside(&c, __rdtsc() - from);
		}
	}
	cost_leave(&c, 0, COST_CALL, 0);
	if (mono_ns() - t0 > 1.15 * spun)
		return 0;
	for (int p = 0; p < COST_PARTS; p++)
		if (took[p] > part_rows[i].want[p] + 10e3)
			return 0;
	uint64_t got[COST_PARTS] = {0};
	cost_fold_parts(&c, got);
	for (int p = 0; p < COST_PARTS; p++) {
		/* (the marks and clock reads between spins: a few us; the TSC
		 * rate is good to 1%) */
		CHECK(line, got[p] >= 0.97 * took[p] && got[p] <= TSC_SLACK * took[p] + 10e3,
		      "part %d: %.1f us, its spins took %.1f (the row's %.1f)", p, got[p] / 1e3,
		      took[p] / 1e3, part_rows[i].want[p] / 1e3);
	}
	uint64_t again[COST_PARTS] = {0};
	cost_fold_parts(&c, again);
	CHECK(line, again[0] == 0 && again[1] == 0 && again[2] == 0, "a second fold gave more");
	return 1;
}

int main(void)
{
	check_rates();
	if (cost_init(0) < 0) {
		fprintf(stderr, "cost_init failed\n");
		return 1;
	}
	for (size_t i = 0, tries = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int line = rows[i].line;
		struct cost c;
		cost_begin(&c);
		double short_wall = 0; /* their mean wall time: what the mean is of */
		for (int r = 0; r < rows[i].short_runs; r++) {
			struct run s = one_run(&c, rows[i].short_ns);
			short_wall += s.wall_ns / rows[i].short_runs;
			/* Counted as timed, unless this test itself lost the CPU
			 * in it (then its wall time says so). */
			if (s.wall_ns < 2 * rows[i].short_ns)
				CHECK(line, !s.preempted && s.handler_ns <= TSC_SLACK * s.wall_ns + 1e3 &&
						    s.handler_ns >= 0.9 * rows[i].short_ns,
				      "short run %d: handler %.0f us, wall %.0f us, preempted %llu", r,
				      s.handler_ns / 1e3, s.wall_ns / 1e3,
				      (unsigned long long)s.preempted);
		}
		struct run l = one_run(&c, rows[i].long_ns);
		/* A run meant to be counted whole that this test itself lost
		 * the CPU in was preempted (400 us that took 1210 beside the
		 * suite; in CI, 530 us, past PREEMPT_MIN_NS): the row again, up
		 * to 5 times.  15% over stays under the 400 us row's rule. */
		if (!rows[i].want_preempted && l.wall_ns > 1.15 * rows[i].long_ns && ++tries < 5) {
			i--;
			continue;
		}
		tries = 0;
		CHECK(line, l.preempted == rows[i].want_preempted, "preempted %llu, want %llu",
		      (unsigned long long)l.preempted, (unsigned long long)rows[i].want_preempted);
		/* (Under load the short runs lose the CPU too, and the mean
		 * grows with them: a CI run under ctest -j2 read 151 us.) */
		if (rows[i].want_preempted)
			CHECK(line, l.handler_ns < 2 * short_wall,
			      "preempted run counted %.0f us, want the mean (~%.0f us)",
			      l.handler_ns / 1e3, short_wall / 1e3);
		else
			CHECK(line, l.handler_ns >= 0.95 * rows[i].long_ns &&
					    l.handler_ns <= TSC_SLACK * l.wall_ns + 1e3,
			      "long run counted %.0f us, want its %.0f us", l.handler_ns / 1e3,
			      l.wall_ns / 1e3);
	}
	for (size_t i = 0; i < sizeof(tick_rows) / sizeof(tick_rows[0]); i++)
		tick_row((int)i);
	for (size_t i = 0; i < sizeof(trip_rows) / sizeof(trip_rows[0]); i++)
		trip_row((int)i);
	for (size_t i = 0; i < sizeof(interval_rows) / sizeof(interval_rows[0]); i++)
		interval_row((int)i);
	for (size_t i = 0; i < sizeof(part_rows) / sizeof(part_rows[0]); i++) {
		int tries = 0;
		while (!part_try((int)i) && ++tries < 20)
			;
		CHECK(part_rows[i].line, tries < 20, "lost the CPU in every try");
	}
	if (check_failures)
		fprintf(stderr, "test_cost: %d failures\n", check_failures);
	return check_failures != 0;
}
