/* sampler: the software address sampler's clock, per thread.
 *
 * API
 *   int  sampler_open(struct sampler *s, uint32_t rate, int sig, pid_t tid);
 *        A CPU-time clock for thread tid raising `sig` on that thread `rate`
 *        times per CPU-second: a perf_event task-clock event, or, where
 *        perf_event_open is refused, timer_create(CLOCK_THREAD_CPUTIME_ID).
 *        Returns 0 or a negative errno.  Not async-signal-safe.
 *   int  sampler_start(struct sampler *s);
 *   int  sampler_stop(struct sampler *s);
 *   int  sampler_is_tick(const struct sampler *s, const siginfo_t *si);
 *   int  sampler_next_period(struct sampler *s, uint64_t random);
 *        From a tick: set the time to the next tick to a value drawn
 *        uniformly from [period/2, 3*period/2) using `random`.  A fixed
 *        period locks onto loops whose length is near a multiple of it and
 *        samples the same spots over and over; a dithered one cannot.
 *        Async-signal-safe (one ioctl or timer_settime).
 *   void sampler_close(struct sampler *s);
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

enum sampler_clock { SAMPLER_NONE, SAMPLER_PERF_TASK_CLOCK, SAMPLER_POSIX_TIMER };

struct sampler {
	enum sampler_clock clock;
	int fd;
	timer_t timer;
	uint64_t period_ns;
};

int sampler_open(struct sampler *s, uint32_t rate, int sig, pid_t tid);
int sampler_start(struct sampler *s);
int sampler_stop(struct sampler *s);
int sampler_is_tick(const struct sampler *s, const siginfo_t *si);
int sampler_next_period(struct sampler *s, uint64_t random);
void sampler_close(struct sampler *s);

#endif
