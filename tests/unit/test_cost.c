/* test_cost: a handler run that lost the CPU counts at the thread's mean.
 *
 * cost.c times handler runs with the TSC, which counts wall time; a run
 * preempted by another task would count that task's slice as profiler time
 * and leave its tick standing for no program time.  Each row spins through
 * a number of "handler runs" of a given length (busy loops on the TSC, as a
 * handler's own work) and checks the handler time cost_fold reports and the
 * runs taken as preempted.  Lengths are far apart (50 us against 3 ms), so a
 * slow or loaded machine does not move a row across the rule.
 */
#include "witch/cost.h"
#include "check.h"

#include <stdlib.h>
#include <time.h>

static double mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void spin_ns(double ns)
{
	double t0 = mono_ns();
	while (mono_ns() - t0 < ns)
		;
}

/* runs of short_ns, then one of long_ns; the long one counted at most as
 * max_long_ns, and preempted runs as expected. */
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

int main(void)
{
	if (cost_init() < 0) {
		fprintf(stderr, "cost_init failed\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct cost c;
		uint64_t handler_ns = 0, kernel_ns = 0, trips = 0, preempted = 0;
		cost_begin(&c);
		for (int r = 0; r < rows[i].short_runs; r++) {
			cost_enter(&c);
			spin_ns(rows[i].short_ns);
			cost_leave(&c, 0, 1);
		}
		cost_enter(&c);
		spin_ns(rows[i].long_ns);
		cost_leave(&c, 0, 1);
		cost_fold(&c, &handler_ns, &kernel_ns, &trips, &preempted);
		double shorts = rows[i].short_runs * rows[i].short_ns;
		double want = rows[i].want_preempted ? shorts + rows[i].short_ns
						     : shorts + rows[i].long_ns;
		CHECK(rows[i].line, preempted == rows[i].want_preempted,
		      "preempted %llu, want %llu", (unsigned long long)preempted,
		      (unsigned long long)rows[i].want_preempted);
		/* Spinning overshoots a little, and a real preemption of the test
		 * itself adds; the rows differ by 2.5 ms or more. */
		CHECK(rows[i].line, handler_ns >= want * 0.95 && handler_ns < want + 1e6,
		      "handler %.0f us, want ~%.0f us", handler_ns / 1e3, want / 1e3);
		CHECK(rows[i].line, trips == (uint64_t)rows[i].short_runs + 1, "round trips %llu",
		      (unsigned long long)trips);
	}
	if (check_failures)
		fprintf(stderr, "test_cost: %d failures\n", check_failures);
	return check_failures != 0;
}
