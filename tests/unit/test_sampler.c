/* unit.sampler: which clock raises the software sampler's ticks (sampler.h).
 *
 * A thread burns CPU with the sampler on, its handler doing what the
 * runtime's does (sampler_tick_arrive, then sampler_next_period).  Rows:
 *   - a mean interval of at least SAMPLER_TIMER_MIN_JIFFIES scheduler ticks
 *     (rate 50: 20 ms at HZ=250) runs on the user-time POSIX timer: every
 *     tick is SI_TIMER, as many as its clock's time over the period, and
 *     the intervals measured on the thread's CPU clock add up to the CPU
 *     time the ticks cover;
 *   - a short one (rate 2000: 0.5 ms) runs on perf's task clock: no tick
 *     is SI_TIMER, and their count is near rate x CPU time;
 *   - the period moved from short to long between ticks (as the budget
 *     does) hands the ticks to the timer at the next interval, and back;
 *   - the same two rates with the next interval set from the tick's
 *     arrival (sampler_next_period_or_keep, a short handler's way): the
 *     same counts and sums;
 *   - perf's event is opened only for intervals the timer cannot end:
 *     none after sampler_open at 50 a second, one at 2000, and one once
 *     the handler moved 50 to 2000.
 * Exits 77 (skipped) where perf_event_open or the user-time timer is
 * refused: then there is no choice to test.
 */
#include "witch/cost.h"
#include "witch/rng.h"
#include "witch/sampler.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static struct sampler smp;
static volatile int n_timer, n_perf, n_stale;
static volatile double measured_sum; /* intervals the timer's ticks measured, ns */
static volatile double last_tick_cpu; /* the thread's CPU clock at the last timer tick */
static volatile uint64_t long_period_ns; /* nonzero: switch to it at the next tick */
static volatile int switched; /* ... which came */
static int from_arrival; /* the row's handler starts intervals at the arrival */
static struct rng rng; /* the runtime's, as the handler draws intervals */

static void on_tick(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (!sampler_is_tick(&smp, si))
		return;
	int timer = si->si_code == SI_TIMER;
	if (sampler_tick_arrive(&smp)) {
		n_stale++;
		return;
	}
	if (timer) {
		n_timer++;
		measured_sum += (double)smp.current_ns;
		last_tick_cpu = cost_thread_cpu_ns();
	} else {
		n_perf++;
	}
	if (long_period_ns && smp.period_ns != long_period_ns) {
		smp.period_ns = long_period_ns;
		switched = 1;
	}
	if (from_arrival)
		sampler_next_period_or_keep(&smp, rng_next(&rng), 0); /* as a short handler does */
	else
		sampler_next_period(&smp, rng_next(&rng));
}

static void burn(double seconds)
{
	volatile double x = 0;
	double end = cost_thread_cpu_ns() + seconds * 1e9;
	while (cost_thread_cpu_ns() < end)
		for (int i = 0; i < 100000; i++)
			x += i * 0.5;
}

/* The thread's user time, as the timer's clock counts it (sampler.h). */
static uint64_t user_ns(void)
{
	struct timespec ts;
	if (clock_gettime(smp.cpu_clock, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct row {
	int line;
	uint32_t rate;        /* the clock opens at */
	uint32_t switch_rate; /* 0, or the rate the ticks move to after the first half */
	int want_timer;       /* in the (second) half: 1 timer, 0 perf */
	int from_arrival;     /* sampler_next_period_or_keep: intervals from the arrival */
};

static const struct row rows[] = {
	{__LINE__, 50, 0, 1, 0},
	{__LINE__, 2000, 0, 0, 0},
	{__LINE__, 2000, 50, 1, 0},
	{__LINE__, 50, 2000, 0, 0},
	/* The next interval set from the tick's arrival (the timer: measured
	 * from the arrival's reading; perf: the interval kept). */
	{__LINE__, 50, 0, 1, 1},
	{__LINE__, 2000, 0, 0, 1},
};

static int run_row(const struct row *r)
{
	const double half = 0.4; /* CPU seconds */
	int fails = 0;
	n_timer = n_perf = n_stale = 0;
	from_arrival = r->from_arrival;
	measured_sum = 0;
	long_period_ns = 0;
	if (sampler_start(&smp, 0x8000000080000000ull, 0) < 0) {
		printf("FAIL line %d: sampler_start\n", r->line);
		return 1;
	}
	uint64_t user0 = user_ns(), cpu0 = cost_thread_cpu_ns();
	burn(half);
	if (r->switch_rate) {
		switched = 0;
		long_period_ns = 1000000000ull / r->switch_rate;
		/* The switch happens at the next tick (a 50/s one may take a
		 * while on a busy machine: see below), then the next interval. */
		for (int i = 0; i < 200 && !switched; i++)
			burn(0.01);
		burn(0.05);
		n_timer = n_perf = 0;
		measured_sum = 0;
		user0 = user_ns();
		cpu0 = cost_thread_cpu_ns();
		burn(half);
	}
	sampler_stop(&smp);
	uint32_t rate = r->switch_rate ? r->switch_rate : r->rate;
	if ((smp.fd >= 0) != (r->want_timer == 0 || r->rate == 2000)) {
		printf("FAIL line %d: perf's event %s after the run\n", r->line,
		       smp.fd >= 0 ? "opened" : "not opened");
		fails++;
	}
	double period_ns = 1e9 / rate, expect = half * rate;
	if (r->want_timer) {
		/* The timer ends intervals of its clock, the user time the kernel
		 * charges by whole scheduler ticks: on a busy VM 0.1-0.4 of the
		 * CPU time burn measured.  Each tick stands for the thread's CPU
		 * time since the last (sampler.h): together, at least the CPU time
		 * from the half's start to its last tick (the first interval may
		 * begin before), and not much more than the half's.  (Ticks on a
		 * busy VM come 80+ ms apart: a tail after the last one is no
		 * fixed part of the half; a fresh-clone CI run beside a load read
		 * 183 of 400 ms, all of it up to the last tick.) */
		double user = (double)(user_ns() - user0), cpu = (double)(cost_thread_cpu_ns() - cpu0);
		double covered = n_timer ? last_tick_cpu - (double)cpu0 : 0;
		expect = user / period_ns;
		if (n_perf || n_timer < expect / 2 || n_timer > expect * 1.5 ||
		    measured_sum < covered * 0.9 || measured_sum > cpu * 1.25) {
			printf("FAIL line %d: want the timer: %d timer ticks (~%.0f by its clock), %d "
			       "perf, measured intervals %.1f ms in all for %.1f ms of CPU time "
			       "(%.1f up to the last tick)\n",
			       r->line, n_timer, expect, n_perf, measured_sum / 1e6, cpu / 1e6,
			       covered / 1e6);
			fails++;
		}
	} else if (n_timer || n_perf < expect / 2 || n_perf > expect * 1.5) {
		printf("FAIL line %d: want perf: %d perf ticks (~%.0f), %d timer\n", r->line, n_perf,
		       expect, n_timer);
		fails++;
	}
	if (!fails)
		printf("ok line %d: rate %u (then %u): %d timer, %d perf ticks, %d stale\n", r->line,
		       r->rate, rate, n_timer, n_perf, n_stale);
	return fails;
}

int main(void)
{
	int sig = SIGRTMIN + 5, fails = 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_tick;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(sig, &sa, NULL);
	pid_t tid = (pid_t)syscall(SYS_gettid);
	rng_seed(&rng, 42);

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (sampler_open(&smp, rows[i].rate, sig, tid) < 0 ||
		    smp.clock != SAMPLER_PERF_TASK_CLOCK || !smp.timer_ok) {
			printf("SKIP: needs perf's task clock and a user-time POSIX timer\n");
			return 77;
		}
		if ((smp.fd >= 0) != (rows[i].rate == 2000)) {
			printf("FAIL line %d: perf's event %s at sampler_open, rate %u\n", rows[i].line,
			       smp.fd >= 0 ? "opened" : "not opened", rows[i].rate);
			fails++;
		}
		fails += run_row(&rows[i]);
		sampler_close(&smp);
	}
	return fails ? 1 : 0;
}
