/* budget: the software sampler's rate follows a CPU budget (see budget.h). */
#include "witch/budget.h"

uint64_t budget_next_period(struct budget *b, double budget, double spent_ns, double interval_ns,
			    uint64_t period_ns)
{
	/* A mean over the last ~16 ticks: samples and their traps come in bursts. */
	b->ticks++;
	b->tick_cost_ns += (spent_ns - b->tick_cost_ns) / (b->ticks < 16 ? b->ticks : 16);
	double bound = BUDGET_BALANCE_TICKS * b->tick_cost_ns;
	b->balance_ns += budget * (interval_ns > 0 ? interval_ns : 0) - spent_ns;
	if (b->balance_ns > bound)
		b->balance_ns = bound;
	if (b->balance_ns < -bound)
		b->balance_ns = -bound;
	/* The next tick may spend its cost plus a share of the credit (less a
	 * share of the debt): budget * want = cost + balance / R. */
	double steady = b->tick_cost_ns / budget;
	double want = (b->tick_cost_ns - b->balance_ns / BUDGET_REPAY_TICKS) / budget;
	double lo = 1e9 / BUDGET_MAX_RATE, hi = 1e9 / BUDGET_MIN_RATE;
	double p = (double)period_ns;
	if (want < steady / 4)
		want = steady / 4; /* (sqlite3's timer intervals ran 2-3x what was asked) */
	if (want > 2 * p)
		want = 2 * p;
	if (want < p / 2)
		want = p / 2;
	if (want < lo)
		want = lo;
	if (want > hi)
		want = hi;
	return (uint64_t)want;
}

uint32_t budget_start_rate(double budget)
{
	double rate = budget * 1e9 / BUDGET_FIRST_TICK_NS;
	if (rate < BUDGET_MIN_RATE)
		return BUDGET_MIN_RATE;
	if (rate > BUDGET_MAX_RATE)
		return BUDGET_MAX_RATE;
	return (uint32_t)rate;
}
