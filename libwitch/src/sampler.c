/* sampler: per-thread CPU-time clock (see sampler.h). */
#include "witch/sampler.h"
#include "witch/perf_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sampler_open_perf(struct sampler *s, int sig, pid_t tid)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = s->period_ns;
	a.wakeup_events = 1;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int fd = perf_fd_open(&a, tid);
	if (fd < 0)
		return fd;
	int rc = perf_fd_route(fd, sig, tid);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	s->fd = fd;
	s->clock = SAMPLER_PERF_TASK_CLOCK;
	return 0;
}

static int sampler_open_timer(struct sampler *s, int sig, pid_t tid)
{
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = sig;
	ev._sigev_un._tid = tid;
	ev.sigev_value.sival_ptr = s;
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &s->timer) < 0)
		return -errno;
	s->clock = SAMPLER_POSIX_TIMER;
	return 0;
}

int sampler_open(struct sampler *s, uint32_t rate, int sig, pid_t tid)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->period_ns = 1000000000ull / (rate ? rate : 1);
	s->current_ns = s->period_ns;
	int rc = sampler_open_perf(s, sig, tid);
	if (rc == 0)
		return 0;
	return sampler_open_timer(s, sig, tid);
}

int sampler_open_pmu(struct sampler *s, const struct pmu_event *ev, int sig, pid_t tid)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	int rc = pmu_open(&s->pmu, ev, sig, tid, 0);
	if (rc < 0)
		return rc;
	s->clock = SAMPLER_PMU;
	return 0;
}

int sampler_start(struct sampler *s)
{
	if (s->clock == SAMPLER_PMU)
		return pmu_start(&s->pmu);
	if (s->clock == SAMPLER_PERF_TASK_CLOCK)
		return ioctl(s->fd, PERF_EVENT_IOC_ENABLE, 0) < 0 ? -errno : 0;
	if (s->clock == SAMPLER_POSIX_TIMER) {
		struct itimerspec it;
		it.it_interval.tv_sec = (time_t)(s->period_ns / 1000000000ull);
		it.it_interval.tv_nsec = (long)(s->period_ns % 1000000000ull);
		it.it_value = it.it_interval;
		return timer_settime(s->timer, 0, &it, NULL) < 0 ? -errno : 0;
	}
	return -EBADF;
}

int sampler_stop(struct sampler *s)
{
	if (s->clock == SAMPLER_PMU)
		return pmu_stop(&s->pmu);
	if (s->clock == SAMPLER_PERF_TASK_CLOCK)
		return ioctl(s->fd, PERF_EVENT_IOC_DISABLE, 0) < 0 ? -errno : 0;
	if (s->clock == SAMPLER_POSIX_TIMER) {
		struct itimerspec it;
		memset(&it, 0, sizeof(it));
		return timer_settime(s->timer, 0, &it, NULL) < 0 ? -errno : 0;
	}
	return 0;
}

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* the vDSO: no system call */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int sampler_next_period(struct sampler *s, uint64_t random)
{
	if (s->clock == SAMPLER_PMU)
		return 0;
	s->started_ns = monotonic_ns();
	s->kept = 0;
	s->arrived_ns = 0; /* only a tick's own interval is kept */
	uint64_t next = s->period_ns / 2 + random % (s->period_ns ? s->period_ns : 1);
	if (next < 10000)
		next = 10000; /* the kernel's floor for hrtimer-driven events */
	s->current_ns = next;
	if (s->clock == SAMPLER_PERF_TASK_CLOCK)
		return ioctl(s->fd, PERF_EVENT_IOC_PERIOD, &next) < 0 ? -errno : 0;
	if (s->clock == SAMPLER_POSIX_TIMER) {
		struct itimerspec it;
		it.it_interval.tv_sec = (time_t)(s->period_ns / 1000000000ull);
		it.it_interval.tv_nsec = (long)(s->period_ns % 1000000000ull);
		it.it_value.tv_sec = (time_t)(next / 1000000000ull);
		it.it_value.tv_nsec = (long)(next % 1000000000ull);
		return timer_settime(s->timer, 0, &it, NULL) < 0 ? -errno : 0;
	}
	return -EBADF;
}

int sampler_next_period_or_keep(struct sampler *s, uint64_t random)
{
	if (s->clock == SAMPLER_PERF_TASK_CLOCK && s->arrived_ns && s->kept + 1 < SAMPLER_KEEP_TICKS) {
		s->kept++;
		s->started_ns = s->arrived_ns;
		return SAMPLER_KEPT;
	}
	return sampler_next_period(s, random);
}

/* Wall time bounds CPU time from above: a tick that ends a whole interval
 * never looks stale, whatever else ran on the CPU. */
int sampler_tick_arrive(struct sampler *s)
{
	if (s->clock == SAMPLER_PMU)
		return 0;
	uint64_t now = monotonic_ns();
	if (s->started_ns && now - s->started_ns < s->current_ns / 2)
		return 1;
	s->arrived_ns = now;
	return 0;
}

int sampler_is_tick(const struct sampler *s, const siginfo_t *si)
{
	if (s->clock == SAMPLER_PMU)
		return pmu_is_tick(&s->pmu, si);
	if (s->clock == SAMPLER_PERF_TASK_CLOCK)
		return si->si_code != SI_TIMER && si->si_fd == s->fd;
	if (s->clock == SAMPLER_POSIX_TIMER)
		return si->si_code == SI_TIMER && si->si_value.sival_ptr == (void *)s;
	return 0;
}

void sampler_close(struct sampler *s)
{
	if (s->clock == SAMPLER_PERF_TASK_CLOCK && s->fd >= 0)
		close(s->fd);
	else if (s->clock == SAMPLER_POSIX_TIMER)
		timer_delete(s->timer);
	else if (s->clock == SAMPLER_PMU)
		pmu_close(&s->pmu);
	s->clock = SAMPLER_NONE;
	s->fd = -1;
}
