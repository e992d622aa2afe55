/* median: the median of a few numbers.
 *
 * For the handful of timings a probe or a price keeps (cost.h's
 * struct cost_timed, watchpoint_probe's hits, costmodel's probes), where
 * one timing that held something else (the scheduler's tick, a
 * preemption) must not set the answer.  No allocation; async-signal-safe.
 */
#ifndef WITCH_MEDIAN_H
#define WITCH_MEDIAN_H

/* Sorts v[0..n) in place (insertion sort: meant for a dozen or so) and
 * returns the middle one, or the mean of the middle two for even n; 0 for
 * n <= 0. */
double median_sort(double *v, int n);

#endif
