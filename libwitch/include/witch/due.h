/* due: a chore run at most once an interval, by whichever thread comes
 * first (datasym_refresh_due, ehpages_release_due): a coarse clock read
 * (a vDSO call, no system call) and a compare-and-swap; never waits.
 * Async-signal-safe.
 */
#ifndef WITCH_DUE_H
#define WITCH_DUE_H

#include <stdint.h>
#include <time.h>

/* 1 when interval_ns have passed since *last_ns, which this caller (and
 * no other) then moves to now; 0 otherwise. */
static inline int due_claim(uint64_t *last_ns, uint64_t interval_ns)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) < 0)
		return 0;
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	uint64_t last = __atomic_load_n(last_ns, __ATOMIC_RELAXED);
	return now - last >= interval_ns &&
	       __atomic_compare_exchange_n(last_ns, &last, now, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

#endif
