/* drcost: what armed debug registers cost the program's own kernel work.
 *
 * While a data breakpoint is enabled in DR7 the CPU runs `rep movs/stos`
 * without its fast-string microcode, in the kernel too: copy_to_user and
 * copy_from_user (read, pread, write: 3.2x for 4 KiB, 8.4x for 64 KiB
 * here) and clear_page (a first touch of an anonymous page: 1.7x), with
 * the breakpoint on an unrelated word (bench/dr_fast_string.c).  Witch
 * keeps samples watched until their next access, so a program that reads
 * files in pages (sqlite3: 0.8 s of system time, 830,000 preads of 4 KiB)
 * pays on every call while a sample waits.  No handler sees it: it is the
 * program's own system time, slower.
 *
 * It is measured the way the program runs.  Between two handler runs the
 * watchpoints stay as the first left them, armed or all free; each such
 * stretch is timed (getrusage, RUSAGE_THREAD: user and system time, less
 * the runtime's own round trips and hits, cost.h).  Free stretches keep
 * the thread's recent rate of system time per user time; an armed one
 * costs its system time less what that rate says it would have been.
 * Recent, not the run's: a program's phases differ in system time by 10x
 * (sqlite3 inserting, then scanning), and samples wait longer in some.
 * Armed stretches before any free one are counted apart (user time), and
 * witch report scales the cost to them.
 *
 * What the runtime does about it (handler.c):
 *  - the cost is part of what a tick costs, so WITCH_BUDGET's rate follows
 *    it (budget.h);
 *  - a sample that stayed watched through a whole tick interval and met no
 *    access is likely to stay so (a buffer the program is done with).
 *    While the armed stretches' cost is above the budget, each tick lets
 *    such samples go, as the reservoir lets a replaced one go (their
 *    weight waits in mu, Witch 4.4.2): stat watch_expired.  Samples armed
 *    at this tick keep their interval.  The rate fades over ~20 ticks
 *    without armed stretches, and the next one measures again.
 * Neither with a fixed WITCH_RATE (reproducible runs).
 *
 * Async-signal-safe (a raw system call a handler run, none after a run that
 * expects the program right back: a single step, an own trap).
 */
#ifndef WITCH_DRCOST_H
#define WITCH_DRCOST_H

#include <stdint.h>

struct drcost {
	uint64_t user_ns, sys_ns;   /* the thread's times when the stretch began */
	int state;                  /* of the stretch: 0 free, 1 armed, -1 mixed or unknown */
	int skip_read;              /* the last run expects the program right back */
	double free_sys, free_user; /* recent free stretches, decayed */
	double armed_cost, armed_user; /* recent armed stretches, decayed at every tick */
	double cost_since_tick;     /* for the budget */
	uint64_t ticks;             /* ticks so far: a sample armed at tick t < ticks is older */
};

/* What drcost_enter adds to the profile's counters. */
struct drcost_sums {
	uint64_t sys_ns;          /* the program's system time */
	uint64_t cost_ns;         /* armed stretches' system time above the recent rate */
	uint64_t user_matched_ns; /* armed stretches' user time that had a recent rate */
	uint64_t user_armed_ns;   /* ... all armed stretches' user time */
};

/* A thread starts: no stretch yet. */
void drcost_begin(struct drcost *d);
/* At every handler entry: the stretch since the last exit, less
 * runtime_kernel_ns of the runtime's own kernel time in it, goes to s. */
void drcost_enter(struct drcost *d, double runtime_kernel_ns, struct drcost_sums *s);
/* drcost_enter's work, given the thread's user and system time now. */
void drcost_account(struct drcost *d, uint64_t user_ns, uint64_t sys_ns, double runtime_kernel_ns,
		    struct drcost_sums *s);
/* At every handler exit: whether any watchpoint is armed now; soon: the
 * program is expected right back (no read at the next entry). */
void drcost_leave(struct drcost *d, int armed, int soon);
/* At a tick: counts it; returns the cost since the last tick (ns, for the
 * budget). */
double drcost_tick(struct drcost *d);
/* Whether armed stretches lately cost the program more system time than
 * budget (a share of its user time): samples armed before this tick go. */
int drcost_over(const struct drcost *d, double budget);

#endif
