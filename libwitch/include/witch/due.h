/* due: a chore run at most once an interval, by whichever thread comes
 * first (datasym_refresh_due, ehpages_release_due): a coarse clock read
 * (a vDSO call, no system call) and a compare-and-swap; never waits.
 * Async-signal-safe.
 */
#ifndef WITCH_DUE_H
#define WITCH_DUE_H

#include <stdint.h>
#include <time.h>

/* The coarse clock, in ns; 0 where it cannot be read. */
static inline uint64_t due_now_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* 1 when interval_ns have passed since *last_ns, which this caller (and
 * no other) then moves to now; 0 otherwise. */
static inline int due_claim(uint64_t *last_ns, uint64_t interval_ns)
{
	uint64_t now = due_now_ns();
	if (now == 0)
		return 0;
	uint64_t last = __atomic_load_n(last_ns, __ATOMIC_RELAXED);
	return now - last >= interval_ns &&
	       __atomic_compare_exchange_n(last_ns, &last, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

#endif
