/* budget: the software sampler's rate follows a CPU budget (WITCH_BUDGET).
 *
 * At every tick the profiler's spending since the last one (handler time
 * and kernel round trips, cost.h) updates a running cost of one tick; the
 * mean interval to the next tick becomes that cost / budget, moving at most
 * a factor of two per tick and kept within BUDGET_MIN_RATE..BUDGET_MAX_RATE
 * ticks per CPU-second.  A tick stands for its own interval (handler.c), and
 * a byte-counted call sample for the period it was drawn with (bulk.c), so
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

struct budget {
	double tick_cost_ns; /* running mean of what one tick costs, all told */
	uint32_t ticks;
};

/* The mean interval (ns) to use from now, given the budget (a fraction of CPU
 * time), what was spent since the last tick and the mean interval in force.
 * Async-signal-safe. */
uint64_t budget_next_period(struct budget *b, double budget, double spent_ns, uint64_t period_ns);
/* The ticks a CPU-second a thread starts at under the budget (a fraction
 * of CPU time): BUDGET_FIRST_TICK_NS's share of it, within
 * BUDGET_MIN_RATE..BUDGET_MAX_RATE (1%: 20 a second). */
uint32_t budget_start_rate(double budget);

#endif
