/* cost: what the profiler spends in a thread (see cost.h). */
#include "witch/cost.h"
#include "witch/median.h"

#include <string.h>
#include <time.h>
#include <x86intrin.h>

#define ROUND_TRIP_GUESS_NS 10000.0 /* until measured: a VM's signal round trip */
#define ROUND_TRIP_MAX_NS 200000.0  /* a longer gap held something else (preemption) */
/* A handler run the TSC times above both is taken as preempted: the TSC
 * counts wall time, and a run that lost the CPU to another task counts that
 * task's slice (>= 0.75 ms under CFS/EEVDF), which would read as profiler
 * time and leave the tick standing for no program time.  Such a run is
 * counted at the thread's mean instead (reading the thread's CPU clock
 * twice a run would cost ~1 us a run here).  Under a 2x oversubscribed
 * CPU, 1 run in 20-30 was. */
#define PREEMPT_MIN_NS 500000.0
#define PREEMPT_TIMES_MEAN 6.0

static double ns_per_tsc = 1.0 / 3.0;
static double hit_price_ns = ROUND_TRIP_GUESS_NS; /* until cost_price_hit */

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

double cost_measure_tsc_per_ns(void)
{
	/* The TSC against the monotonic clock over 25 us: 0.1%, plenty for
	 * times of microseconds (0.1 ms runs were 0.2 ms of every start).
	 * Each clock read is bracketed by two TSC reads, and of three runs
	 * the one whose brackets are narrowest is taken: a thread that lost
	 * the CPU between a clock read and its TSC read had read 3.08 ticks
	 * a ns on a 2.1 GHz TSC (unit.cost under ctest -j2). */
	double best = 0;
	uint64_t best_width = UINT64_MAX;
	for (int run = 0; run < 3; run++) {
		uint64_t c0a = __rdtsc();
		double t0 = now_ns();
		uint64_t c0b = __rdtsc();
		while (now_ns() - t0 < 25000.0)
			;
		uint64_t c1a = __rdtsc();
		double t1 = now_ns();
		uint64_t c1b = __rdtsc();
		uint64_t width = (c0b - c0a) + (c1b - c1a);
		if (c1a <= c0b || t1 <= t0 || width >= best_width)
			continue;
		best_width = width;
		best = ((double)(c1a + c1b - c0a - c0b) / 2) / (t1 - t0);
	}
	return best;
}

int cost_init(double tsc_per_ns)
{
	if (tsc_per_ns > 0.1 && tsc_per_ns < 100) {
		ns_per_tsc = 1.0 / tsc_per_ns;
		return 0;
	}
	double rate = cost_measure_tsc_per_ns();
	if (rate > 0.1 && rate < 100)
		ns_per_tsc = 1.0 / rate;
	return 0;
}

void cost_price_hit(double hit_ns)
{
	if (hit_ns > 0)
		hit_price_ns = hit_ns;
}

double cost_tsc_ns(uint64_t tsc)
{
	return (double)tsc * ns_per_tsc;
}

void cost_begin(struct cost *c)
{
	memset(c, 0, sizeof(*c));
}

/* One more timing of t's kind, and the median of those kept (cost.h). */
static void timed_add(struct cost_timed *t, double ns)
{
	t->v[t->n % COST_TIMED_KEEP] = ns;
	t->n++;
	int n = t->n < COST_TIMED_KEEP ? (int)t->n : COST_TIMED_KEEP;
	double v[COST_TIMED_KEEP];
	for (int i = 0; i < n; i++)
		v[i] = t->v[i];
	t->median = median_sort(v, n);
}

static double timed_or(const struct cost_timed *t, double guess)
{
	return t->n >= COST_TIMED_MIN ? t->median : guess;
}

double cost_round_trip_ns(const struct cost *c)
{
	return timed_or(&c->round_trip, ROUND_TRIP_GUESS_NS);
}

double cost_thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The running part's time up to now. */
static void part_end(struct cost *c, uint64_t now)
{
	if (now > c->part_tsc)
		c->part_sum[c->part] += now - c->part_tsc;
	c->part_tsc = now;
}

void cost_enter(struct cost *c)
{
	c->entry_tsc = __rdtsc();
	c->part_tsc = c->entry_tsc;
	c->part = COST_PART_OTHER;
	c->entries++;
	if (c->measuring) {
		/* On the thread's CPU clock, as the sampler's clock counts: the
		 * TSC would also count time the host takes for the VM. */
		double gap = cost_thread_cpu_ns() - c->exit_cpu_ns;
		c->measuring = 0;
		if (gap > 0 && gap < ROUND_TRIP_MAX_NS)
			timed_add(&c->round_trip, gap);
	}
}

void cost_leave(struct cost *c, int soon, enum cost_entry entry, uint64_t covered_from_tsc)
{
	c->exit_tsc = __rdtsc();
	part_end(c, c->exit_tsc); /* (the running part ends with the run) */
	double handler = (double)(c->exit_tsc - c->entry_tsc) * ns_per_tsc;
	double trip = entry == COST_TRIP     ? cost_round_trip_ns(c)
		      : entry == COST_TICK   ? cost_tick_ns(c)
		      : entry == COST_SIGNAL ? COST_SIGNAL_NS
		      : entry == COST_WATCH  ? hit_price_ns + COST_SIGNAL_RETURN_NS
					     : 0;
	double in_interval = handler;
	uint64_t from_tsc = c->entry_tsc;
	if (c->restart_tsc) {
		in_interval = (double)(c->exit_tsc - c->restart_tsc) * ns_per_tsc;
		from_tsc = c->restart_tsc;
		c->restart_tsc = 0;
	}
	if (handler > PREEMPT_MIN_NS && c->handler_runs >= 16 &&
	    handler > PREEMPT_TIMES_MEAN * c->handler_mean_ns) {
		c->preempted++;
		handler = c->handler_mean_ns;
		if (in_interval > handler)
			in_interval = handler;
	} else {
		/* Running mean over the last ~64 runs. */
		c->handler_mean_ns += (handler - c->handler_mean_ns) /
				      (c->handler_runs < 64 ? c->handler_runs + 1 : 64);
		c->handler_runs++;
	}
	if (covered_from_tsc && covered_from_tsc < c->exit_tsc) {
		uint64_t from = covered_from_tsc > from_tsc ? covered_from_tsc : from_tsc;
		in_interval -= (double)(c->exit_tsc - from) * ns_per_tsc;
		if (in_interval < 0)
			in_interval = 0;
	}
	c->since_ns += in_interval;
	/* A trap's or a step's round trip falls inside the interval (cost.h);
	 * a tick's comes before the interval it starts. */
	int covered_all = covered_from_tsc && covered_from_tsc <= c->entry_tsc;
	if ((entry == COST_TRIP || entry == COST_WATCH) && !covered_all)
		c->since_kernel_ns += trip;
	c->since_all_ns += handler + trip;
	c->handler_ns += handler;
	c->kernel_ns += trip;
	c->round_trips += entry != COST_CALL;
	/* Measure every round trip that is expected right back (two clock
	 * reads, ~1 us): single steps. */
	if (soon) {
		c->measuring = 1;
		c->exit_cpu_ns = cost_thread_cpu_ns();
	}
}

void cost_tick_from(struct cost *c, double period_ns)
{
	c->tick_from_entry = 0;
	if (!(period_ns > 0) || ++c->tick_sets % COST_TICK_EVERY)
		return;
	c->tick_from_cpu_ns = cost_thread_cpu_ns();
	c->tick_period_ns = period_ns;
	c->tick_from_entry = c->entries;
}

void cost_tick_arrived(struct cost *c)
{
	if (!c->tick_from_entry)
		return;
	int next_run = c->entries == c->tick_from_entry + 1;
	c->tick_from_entry = 0;
	if (!next_run)
		return; /* a trap or a step between: their time is in the gap */
	double past = cost_thread_cpu_ns() - c->tick_from_cpu_ns - c->tick_period_ns;
	if (!(past > 0 && past < c->tick_period_ns))
		return; /* past a whole period: one ended in the kernel, unticked */
	timed_add(&c->tick_trip, past);
}

double cost_tick_ns(const struct cost *c)
{
	return timed_or(&c->tick_trip, cost_round_trip_ns(c));
}

void cost_add_kernel(struct cost *c, double ns)
{
	c->since_kernel_ns += ns;
	c->since_all_ns += ns;
	c->kernel_ns += ns;
}

void cost_restart_interval(struct cost *c)
{
	c->restart_tsc = __rdtsc();
	c->since_ns = c->since_kernel_ns = 0;
}

void cost_restart_interval_at_entry(struct cost *c, double before_ns)
{
	c->restart_tsc = c->entry_tsc;
	c->since_ns = 0;
	c->since_kernel_ns = before_ns;
}

double cost_in_handler_ns(const struct cost *c)
{
	return (double)(__rdtsc() - c->entry_tsc) * ns_per_tsc;
}

void cost_set_aside(struct cost *c, uint64_t tsc)
{
	/* (as if the run began that much later; a restart of the interval
	 * came after it or not at all: tick_soft restarts at its end) */
	c->entry_tsc += tsc;
	c->part_tsc += tsc; /* (spent in the running part) */
	if (c->restart_tsc)
		c->restart_tsc += tsc;
}

double cost_take_interval(struct cost *c, double *all_ns)
{
	double s = c->since_ns + c->since_kernel_ns;
	*all_ns = c->since_all_ns;
	c->since_ns = c->since_kernel_ns = c->since_all_ns = 0;
	return s;
}

void cost_part(struct cost *c, enum cost_part p)
{
	part_end(c, __rdtsc());
	c->part = p;
}

void cost_fold_parts(struct cost *c, uint64_t part_ns[COST_PARTS])
{
	for (int p = 0; p < COST_PARTS; p++) {
		part_ns[p] += (uint64_t)((double)c->part_sum[p] * ns_per_tsc);
		c->part_sum[p] = 0;
	}
}

void cost_fold(struct cost *c, uint64_t *handler_ns, uint64_t *kernel_ns, uint64_t *round_trips,
	       uint64_t *preempted)
{
	*handler_ns += (uint64_t)c->handler_ns;
	*kernel_ns += (uint64_t)c->kernel_ns;
	*round_trips += c->round_trips;
	*preempted += c->preempted;
	c->handler_ns = c->kernel_ns = 0;
	c->round_trips = 0;
	c->preempted = 0;
}
