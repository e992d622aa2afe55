/* budget: the software sampler's rate follows a CPU budget (WITCH_BUDGET).
 *
 * At every tick the profiler's spending since the last one (handler time
 * and kernel round trips, cost.h) updates a running cost of one tick; the
 * mean interval to the next tick is that cost / budget (feed-forward),
 * corrected by the thread's balance: what the budget allowed over the
 * intervals that ran less what was spent in them (integral).  Over
 * BUDGET_REPAY_TICKS ticks a debt is paid back and a credit spent, so the
 * spending over a run comes to the budget even where
 *  - a tick's cost is not what the running mean says: a thread's first,
 *    cold tick (2.2 ms in sqlite3) held the mean high for ~40 ticks, and
 *    sqlite3 spent 0.5% under a 1% budget;
 *  - an interval runs longer than asked: the CPU timer fires at a
 *    scheduler tick that finds the thread running, and a thread that runs
 *    in short bursts between system calls is seldom found (sqlite3's
 *    intervals: 2-3x the period asked).
 * The balance is kept within BUDGET_BALANCE_TICKS ticks' cost, so a long
 * cheap stretch buys no burst later; the interval moves at most a factor
 * of two per tick and stays within BUDGET_MIN_RATE..BUDGET_MAX_RATE ticks
 * per CPU-second.  A tick stands for its own interval (handler.c), and a
 * byte-counted call sample for the period it was drawn with (bulk.c), so
 * estimates stay unbiased while the rate moves.
 */
#ifndef WITCH_BUDGET_H
#define WITCH_BUDGET_H

#include <stdint.h>

#define BUDGET_MIN_RATE 10
#define BUDGET_MAX_RATE 2000
/* What a thread's first tick costs, all told: its handler runs cold (the
 * decoder's, unwinder's and context tree's first pages; 585-640 us a first
 * tick of sed and grep here, 1.6 ms in bash's fork children).  The rate
 * starts where that tick keeps to the budget (budget_start_rate), so a
 * process of a few milliseconds is not charged a tick at 200/s for 10-30%
 * of its time; from its first tick on, the measured cost sets the rate. */
#define BUDGET_FIRST_TICK_NS 500000.0

/* A debt or credit is paid over this many ticks. */
#define BUDGET_REPAY_TICKS 8
/* The balance stays within this many ticks' cost either way. */
#define BUDGET_BALANCE_TICKS 16

struct budget {
	double tick_cost_ns; /* running mean of what one tick costs, all told */
	double balance_ns;   /* allowed less spent so far, within the bound above */
	uint32_t ticks;
};

/* The mean interval (ns) to use from now, given the budget (a fraction of CPU
 * time), what was spent since the last tick, the CPU time the interval that
 * ended ran (the profiler's spending in it included) and the mean interval in
 * force.  Async-signal-safe. */
uint64_t budget_next_period(struct budget *b, double budget, double spent_ns, double interval_ns,
			    uint64_t period_ns);
/* The ticks a CPU-second a thread starts at under the budget (a fraction
 * of CPU time): BUDGET_FIRST_TICK_NS's share of it, within
 * BUDGET_MIN_RATE..BUDGET_MAX_RATE (1%: 20 a second). */
uint32_t budget_start_rate(double budget);

#endif
