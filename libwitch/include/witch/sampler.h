/* sampler: what tells a thread to take an address sample.
 *
 * Either the software sampler's clock (a CPU-time tick: the handler then
 * finds the next access itself) or the PMU sampler (pmu.h: overflow of a
 * precise memory event; the samples carry their instruction and address).
 *
 * The software clock is two clocks of the thread's CPU time.  A
 * perf task-clock event ends any interval, but each of its ticks costs
 * ~33 us on these VMs (2026-11-27; 46-88 us on 2026-12-02: the runtime
 * times it, cost.h's COST_TICK) (its own hrtimer, reprogrammed, and the
 * irq_work self-IPI that sends the signal: VM exits), against ~8 us for a
 * timer tick (12-33 us on 2026-12-02; bench/tick_cost.c).  A POSIX timer on the thread's user-time clock
 * (CPUCLOCK_VIRT) is checked at the scheduler's tick, which interrupts
 * anyway, and its signal rides that interrupt's return: but it ends an
 * interval only at a scheduler tick (4 ms at HZ=250).  So intervals of at
 * least SAMPLER_TIMER_MIN_JIFFIES scheduler ticks (the default budget's
 * rates) run on the timer, shorter ones on perf.  On the timer a tick's
 * interval is what the thread's CPU time (CLOCK_THREAD_CPUTIME_ID, the
 * scheduler's count, which perf's task clock counts too) measured, not
 * what was asked for: the timer's own clock is charged by whole scheduler
 * ticks, and on a busy machine it runs far slower than the CPU time (it
 * then ticks less often; each tick still stands for the time it took).
 *
 * What happens on a tick (decode, single-step to the next access) is the
 * runtime's job (witch.c); this module only keeps time.
 */
#ifndef WITCH_SAMPLER_H
#define WITCH_SAMPLER_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "witch/pmu.h"

enum sampler_clock { SAMPLER_NONE, SAMPLER_PERF_TASK_CLOCK, SAMPLER_POSIX_TIMER, SAMPLER_PMU };

#define SAMPLER_TIMER_MIN_JIFFIES 2

struct sampler {
	enum sampler_clock clock; /* PERF_TASK_CLOCK: perf, and the timer when timer_ok */
	int fd;               /* perf's, -1 until an interval needs it (sampler_open) */
	int perf_failed;      /* perf's late open failed: the timer ends every interval */
	uint32_t perf_errors; /* ... the times it failed (0 or 1; stat sampler_perf_errors) */
	int sig;              /* what perf's late open raises, and on which thread */
	pid_t tid;
	timer_t timer;
	int timer_ok;         /* a user-time POSIX timer beside the perf clock */
	int on_timer;         /* the timer raises the ticks now */
	clockid_t cpu_clock;  /* the thread's user CPU time (the timer's clock) */
	uint64_t jiffy_ns;    /* the timer's granularity: the scheduler tick */
	uint64_t cpu_started_ns; /* the thread's CPU time when the timer's interval began */
	uint64_t armed_ns;    /* what the timer was set to */
	uint64_t period_ns;
	uint64_t current_ns;  /* the interval in force: the next tick ends it (on the
			       * timer, once it has: what it measured) */
	uint64_t started_ns;  /* CLOCK_MONOTONIC when it began */
	uint64_t arrived_ns;  /* ... when the last tick arrived (sampler_tick_arrive) */
	uint64_t arrived_cpu_ns; /* on the timer: the thread's CPU time then */
	uint32_t kept;        /* ticks the interval in force has been kept for */
	uint64_t head_ns;     /* the first tick's share of time before the start
			       * (sampler_start), added to what its timer measures */
	struct pmu pmu;
};

/* A user-CPU-time clock for thread tid raising `sig` on that thread `rate`
 * times per CPU-second: a POSIX timer on the thread's user time, and a
 * perf_event task-clock event, or the one that opens where the other is
 * refused.  Where the timer ends the intervals (rates up to a scheduler
 * tick's half: the default budget's), perf's event is opened only when an
 * interval first needs it, by the handler that sets it: most threads and
 * processes never do, and the open with its descriptor's set-up (a dozen
 * system calls, ~25 us a thread here) was every thread's start.  Where
 * that late open fails the timer ends every interval (perf_failed).
 * Returns 0 or a negative errno.  System calls only (a fork child opens it
 * in a handler, thread.c). */
int sampler_open(struct sampler *s, uint32_t rate, int sig, pid_t tid);
/* Its clock alone: a perf_event task-clock event on thread tid's user
 * time, raising `sig` there every period_ns (enabled, or not until
 * PERF_EVENT_IOC_ENABLE).  The descriptor (high, close-on-exec) or a
 * negative errno.  System calls only. */
int sampler_task_clock_open(uint64_t period_ns, int enabled, int sig, pid_t tid);
/* Start the ticks as a stationary process (renewal theory's equilibrium
 * start): the thread's start falls at a uniform point of an interval drawn
 * length-biased from [period/2, 3*period/2), the first tick ends that
 * interval and stands for the whole of it.  Every tick then weighs the
 * interval that ends at it, and the expected sum over the ticks in any
 * stretch of CPU time is that stretch, a thread's first and last pieces
 * included: a thread that lives less than an interval is ticked with the
 * probability of its share of one, instead of never (a fresh draw at the
 * start put no tick in the first period/2).  The first tick comes no
 * sooner than SAMPLER_FIRST_MIN_NS: a thread's first 30 us are sampled at
 * their end (bench/results/stationary_start.md). */
#define SAMPLER_FIRST_MIN_NS 30000
/* ran_ns: CPU time the thread ran before, unsampled (a fork child's lazy
 * start, thread.h), which the first tick stands for too. */
int sampler_start(struct sampler *s, uint64_t random, uint64_t ran_ns);
int sampler_stop(struct sampler *s);
int sampler_is_tick(const struct sampler *s, const siginfo_t *si);
/* From a tick: set the time to the next tick to a value drawn uniformly from
 * [period/2, 3*period/2) using `random`.  A fixed period locks onto loops
 * whose length is near a multiple of it and samples the same spots over and
 * over; a dithered one cannot. Async-signal-safe (one ioctl or timer_settime).
 * The interval starts at the call: call it as the handler ends. */
int sampler_next_period(struct sampler *s, uint64_t random);
/* The same, or, from a tick whose handler is short, the next interval
 * begun when this tick arrived (before the kernel delivered it and the
 * handler ran; the caller counts both as the profiler's, cost.h): then
 * SAMPLER_FROM_ARRIVAL is returned.  On perf the interval in force is kept
 * for up to SAMPLER_KEEP_TICKS ticks: setting a perf clock's period costs
 * 5-9 us on these VMs (the kernel stops and starts its hrtimer: two timer
 * reprograms, VM exits), a tenth of a tick's cost; each kept interval is
 * still a uniform draw, so ticks cannot lock onto a loop.  On the timer a
 * new draw is measured from the arrival's clock reading, and the timer set
 * to what is left of it after since_arrival_ns (the handler so far): the
 * CPU clock is read once a tick, not twice (a system call, ~3 us when the
 * handler runs cold). */
#define SAMPLER_KEEP_TICKS 4
#define SAMPLER_FROM_ARRIVAL 1
int sampler_next_period_or_keep(struct sampler *s, uint64_t random, uint64_t since_arrival_ns);
/* 1 when the ticks in force come from the timer (a tick then costs the
 * kernel a signal, not a round of interrupts: cost.h prices it so). */
int sampler_on_timer(const struct sampler *s);
/* The interval in force when the perf clock counts it (its tick is timed:
 * cost.h, COST_TICK); 0 on the timer or the PMU. */
uint64_t sampler_perf_interval_ns(const struct sampler *s);
/* A tick arrived: 1 when it is stale, one that came sooner after the last
 * next_period than any interval can end (the clock raised it while the
 * handler ran: perf_event signals queue, F_SETSIG with a real-time signal,
 * so a handler longer than the interval would otherwise meet a queue of
 * such ticks and starve the program); else 0, and its arrival is noted (a
 * kept interval starts there). */
int sampler_tick_arrive(struct sampler *s);
void sampler_close(struct sampler *s);
/* In a fork child, for the parent thread's sampler: close its descriptors
 * only.  The kernel copied neither its timer nor a PMU ring's mapping (perf
 * maps rings VM_DONTCOPY), and s stays untouched (its page not copied).
 * Async-signal-safe. */
void sampler_close_inherited(const struct sampler *s);
/* The PMU instead of the clock (ev encoded and probed at start-up): start,
 * stop, is_tick and close then act on its events, and next_period does nothing
 * (the event period is fixed).  Samples are read with pmu_drain(&s->pmu, ...)
 * in the handler. */
int sampler_open_pmu(struct sampler *s, const struct pmu_event *ev, int sig, pid_t tid);

#endif
