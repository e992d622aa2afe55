/* sampler: per-thread CPU-time clock (see sampler.h). */
#include "witch/sampler.h"
#include "witch/perf_fd.h"
#include "witch/fdguard.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int sampler_task_clock_open(uint64_t period_ns, int enabled, int sig, pid_t tid)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = period_ns;
	a.wakeup_events = 1;
	a.disabled = !enabled;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int fd = perf_fd_open(&a, tid);
	if (fd < 0)
		return fd;
	int rc = perf_fd_route(fd, sig, tid);
	if (rc < 0) {
		fdguard_close(fd);
		return rc;
	}
	return fd;
}

static int sampler_open_perf(struct sampler *s)
{
	int fd = sampler_task_clock_open(s->period_ns, 0, s->sig, s->tid);
	if (fd < 0)
		return fd;
	s->fd = fd;
	return 0;
}

/* The kernel's id of thread tid's user-time clock (CPUCLOCK_VIRT,
 * per-thread): glibc names only the thread's total CPU time. */
static clockid_t sampler_user_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 4 | 1);
}

static int sampler_open_timer(struct sampler *s, int sig, pid_t tid)
{
	struct sigevent ev;
	struct timespec res;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = sig;
	ev._sigev_un._tid = tid;
	ev.sigev_value.sival_ptr = s;
	s->cpu_clock = sampler_user_clock(tid);
	/* The kernel gives a tick-checked clock's resolution as its tick: the
	 * same for every thread, asked once. */
	static uint64_t jiffy_ns; /* (a race asks twice, for the same answer) */
	if (!__atomic_load_n(&jiffy_ns, __ATOMIC_RELAXED)) {
		if (clock_getres(s->cpu_clock, &res) < 0)
			return -errno;
		if (res.tv_sec != 0 || res.tv_nsec <= 0)
			return -EINVAL;
		__atomic_store_n(&jiffy_ns, (uint64_t)res.tv_nsec, __ATOMIC_RELAXED);
	}
	if (timer_create(s->cpu_clock, &ev, &s->timer) < 0)
		return -errno;
	s->jiffy_ns = __atomic_load_n(&jiffy_ns, __ATOMIC_RELAXED);
	s->timer_ok = 1;
	return 0;
}

/* The timer for intervals it can end closely enough (sampler.h). */
static int sampler_wants_timer(const struct sampler *s)
{
	if (s->clock == SAMPLER_POSIX_TIMER || s->perf_failed)
		return 1;
	return s->timer_ok && s->period_ns >= SAMPLER_TIMER_MIN_JIFFIES * s->jiffy_ns;
}

int sampler_open(struct sampler *s, uint32_t rate, int sig, pid_t tid)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->sig = sig;
	s->tid = tid;
	s->period_ns = 1000000000ull / (rate ? rate : 1);
	s->current_ns = s->period_ns;
	int rc_timer = sampler_open_timer(s, sig, tid);
	s->clock = SAMPLER_PERF_TASK_CLOCK;
	if (rc_timer == 0 && sampler_wants_timer(s))
		return 0; /* perf's event when an interval needs it (sampler_uses_timer) */
	int rc_perf = sampler_open_perf(s);
	if (rc_perf == 0)
		return 0; /* with the timer or not */
	if (rc_timer < 0) {
		s->clock = SAMPLER_NONE;
		return rc_perf;
	}
	s->clock = SAMPLER_POSIX_TIMER;
	return 0;
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

static uint64_t clock_read_ns(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t monotonic_ns(void)
{
	return clock_read_ns(CLOCK_MONOTONIC); /* the vDSO: no system call */
}

/* The thread's CPU time as the scheduler counts it (user and system, to
 * the nanosecond: perf's task clock), not the timer's clock: that one is
 * charged a whole scheduler tick to whichever thread runs at the tick,
 * and on a busy machine it aliases with the scheduler's 3 ms slices (a
 * thread beside two busy ones was charged 44-64 ms of user time for 400
 * ms on the CPU).  A system call, ~0.3 us; the handler runs on the
 * thread, so CLOCK_THREAD_CPUTIME_ID is its clock. */
static uint64_t thread_cpu_ns(void)
{
	return clock_read_ns(CLOCK_THREAD_CPUTIME_ID);
}

static struct timespec timespec_of_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	return ts;
}

/* value_ns of the timer's clock from now, then every period (a tick that
 * does not set the next interval, a stale one, leaves the clock running);
 * the interval is measured from started_cpu_ns on the thread's CPU time. */
static int sampler_set_timer(struct sampler *s, uint64_t started_cpu_ns, uint64_t value_ns)
{
	struct itimerspec it = {timespec_of_ns(s->period_ns), timespec_of_ns(value_ns)};
	s->cpu_started_ns = started_cpu_ns;
	s->armed_ns = value_ns;
	return timer_settime(s->timer, 0, &it, NULL) < 0 ? -errno : 0;
}

static int sampler_stop_timer(struct sampler *s)
{
	struct itimerspec it;
	memset(&it, 0, sizeof(it));
	return timer_settime(s->timer, 0, &it, NULL) < 0 ? -errno : 0;
}

/* Hands the ticks to the timer (on 1) or to perf (0).  A tick the other
 * clock raised meanwhile arrives stale (sampler_tick_arrive). */
static int sampler_switch(struct sampler *s, int on)
{
	if (on == s->on_timer)
		return 0;
	s->on_timer = on;
	if (on)
		return s->fd < 0 || ioctl(s->fd, PERF_EVENT_IOC_DISABLE, 0) == 0 ? 0 : -errno;
	int rc = sampler_stop_timer(s);
	if (rc < 0)
		return rc;
	return ioctl(s->fd, PERF_EVENT_IOC_ENABLE, 0) < 0 ? -errno : 0;
}

/* Whether the timer ends the next interval; if not, perf's event is open
 * for it (sampler_open left it unopened where the timer did).  Where it
 * cannot open, the timer ends this interval and every one after. */
static int sampler_uses_timer(struct sampler *s)
{
	if (!sampler_wants_timer(s) && s->fd < 0 && sampler_open_perf(s) < 0) {
		s->perf_failed = 1; /* (sampler_wants_timer from now on) */
		s->perf_errors++;
	}
	return sampler_wants_timer(s);
}

/* sqrt of y in [P^2/4, 9P^2/4] by Newton from P: six steps are exact to a
 * double's precision there (no libm in the runtime). */
static double sampler_sqrt(double y, double p)
{
	double x = p;
	for (int i = 0; i < 6; i++)
		x = 0.5 * (x + y / x);
	return x;
}

/* The interval the start falls in, length-biased (density x on [P/2, 3P/2):
 * x = sqrt(a^2 + v (b^2 - a^2))), and where in it the start falls (uniform):
 * returns the time to the first tick, sets head to the time before. */
static uint64_t sampler_draw_first(const struct sampler *s, uint64_t random, uint64_t *head)
{
	double a = (double)s->period_ns / 2, b = 3.0 * (double)s->period_ns / 2;
	double v = (double)(random >> 32) / 4294967296.0;
	double u = (double)(random & 0xffffffffu) / 4294967296.0;
	double x = s->period_ns ? sampler_sqrt(a * a + v * (b * b - a * a), (double)s->period_ns) : 0;
	uint64_t next = (uint64_t)((1.0 - u) * x);
	/* Not sooner than a signal's round trip (~20 us here): perf's clock
	 * ticks again at that period until the first tick's arrival sets the
	 * mean one (sampler_tick_arrive), and at the kernel's 10 us floor
	 * queued stale ticks outran a new thread's handler (threads_many: 250
	 * stale ticks a short thread).  Draws under the floor tick at it. */
	if (next < SAMPLER_FIRST_MIN_NS)
		next = SAMPLER_FIRST_MIN_NS;
	*head = (uint64_t)(u * x);
	return next;
}

int sampler_start(struct sampler *s, uint64_t random, uint64_t ran_ns)
{
	if (s->clock == SAMPLER_PMU)
		return pmu_start(&s->pmu);
	if (s->clock == SAMPLER_NONE)
		return -EBADF;
	uint64_t head, next = sampler_draw_first(s, random, &head);
	/* The first tick arrives as any (current_ns: its stale bound), then
	 * stands for head more (sampler_tick_arrive), and draws anew: its
	 * period is only the interval's rest, not one to keep. */
	s->kept = SAMPLER_KEEP_TICKS;
	s->arrived_ns = 0;
	s->arrived_cpu_ns = 0;
	s->head_ns = head + ran_ns;
	s->current_ns = next;
	s->started_ns = monotonic_ns();
	if (sampler_uses_timer(s)) {
		s->on_timer = 1;
		return sampler_set_timer(s, thread_cpu_ns(), next);
	}
	s->on_timer = 0;
	if (ioctl(s->fd, PERF_EVENT_IOC_PERIOD, &next) < 0)
		return -errno;
	return ioctl(s->fd, PERF_EVENT_IOC_ENABLE, 0) < 0 ? -errno : 0;
}

int sampler_stop(struct sampler *s)
{
	if (s->clock == SAMPLER_PMU)
		return pmu_stop(&s->pmu);
	int rc = 0;
	if (s->clock == SAMPLER_PERF_TASK_CLOCK && s->fd >= 0 &&
	    ioctl(s->fd, PERF_EVENT_IOC_DISABLE, 0) < 0)
		rc = -errno;
	if (s->timer_ok && sampler_stop_timer(s) < 0 && rc == 0)
		rc = -errno;
	return rc;
}

int sampler_on_timer(const struct sampler *s)
{
	return s->on_timer;
}

uint64_t sampler_perf_interval_ns(const struct sampler *s)
{
	return s->clock == SAMPLER_PERF_TASK_CLOCK && !s->on_timer ? s->current_ns : 0;
}

/* The next interval, drawn uniformly from [period/2, 3*period/2). */
static uint64_t sampler_draw(struct sampler *s, uint64_t random)
{
	s->kept = 0;
	s->arrived_ns = 0; /* only a tick's own arrival starts an interval */
	s->arrived_cpu_ns = 0;
	uint64_t next = s->period_ns / 2 + random % (s->period_ns ? s->period_ns : 1);
	if (next < 10000)
		next = 10000; /* the kernel's floor for hrtimer-driven events */
	s->current_ns = next;
	return next;
}

/* The timer fires at the first scheduler tick past its value, half a tick
 * late on average: asked that much sooner, the intervals it measures
 * average the period. */
static uint64_t sampler_timer_value(const struct sampler *s, uint64_t next)
{
	return next > s->jiffy_ns ? next - s->jiffy_ns / 2 : next;
}

int sampler_next_period(struct sampler *s, uint64_t random)
{
	if (s->clock == SAMPLER_PMU)
		return 0;
	s->started_ns = monotonic_ns();
	uint64_t next = sampler_draw(s, random);
	if (sampler_uses_timer(s)) {
		int rc = sampler_switch(s, 1);
		int rc2 = sampler_set_timer(s, thread_cpu_ns(), sampler_timer_value(s, next));
		return rc < 0 ? rc : rc2;
	}
	int rc = sampler_switch(s, 0);
	if (rc < 0)
		return rc;
	return ioctl(s->fd, PERF_EVENT_IOC_PERIOD, &next) < 0 ? -errno : 0;
}

int sampler_next_period_or_keep(struct sampler *s, uint64_t random, uint64_t since_arrival_ns)
{
	if (s->on_timer && s->arrived_cpu_ns && sampler_wants_timer(s)) {
		uint64_t from = s->arrived_cpu_ns;
		s->started_ns = monotonic_ns();
		/* What is left of the draw after the handler so far (the timer
		 * fires at a scheduler tick anyway: a jiffy's floor). */
		uint64_t value = sampler_timer_value(s, sampler_draw(s, random));
		value = value > since_arrival_ns + s->jiffy_ns ? value - since_arrival_ns : s->jiffy_ns;
		int rc = sampler_set_timer(s, from, value);
		return rc < 0 ? rc : SAMPLER_FROM_ARRIVAL;
	}
	if (!s->on_timer && s->arrived_ns && s->kept + 1 < SAMPLER_KEEP_TICKS) {
		s->kept++;
		s->started_ns = s->arrived_ns;
		return SAMPLER_FROM_ARRIVAL;
	}
	return sampler_next_period(s, random);
}

/* Wall time bounds CPU time from above: a tick that ends a whole interval
 * never looks stale, whatever else ran on the CPU.  On the timer the
 * clock's own time says it, and is the interval. */
int sampler_tick_arrive(struct sampler *s)
{
	if (s->clock == SAMPLER_PMU)
		return 0;
	if (s->on_timer) {
		uint64_t now = thread_cpu_ns(), ran = now - s->cpu_started_ns;
		if (ran < s->armed_ns / 2)
			return 1;
		s->current_ns = ran + s->head_ns;
		s->head_ns = 0;
		s->arrived_cpu_ns = now;
		return 0;
	}
	uint64_t now = monotonic_ns();
	if (s->started_ns && now - s->started_ns < s->current_ns / 2)
		return 1;
	s->arrived_ns = now;
	if (s->head_ns) {
		/* The first tick: its short period would fire again while this
		 * handler, a new thread's first and cold, runs.  Unchecked: the
		 * handler's next period (never a kept one after the first tick,
		 * sampler_start) sets it again and counts a failure. */
		uint64_t period = s->period_ns;
		(void)ioctl(s->fd, PERF_EVENT_IOC_PERIOD, &period);
	}
	s->current_ns += s->head_ns;
	s->head_ns = 0;
	return 0;
}

void sampler_close_inherited(const struct sampler *s)
{
	if (s->clock == SAMPLER_PERF_TASK_CLOCK && s->fd >= 0)
		fdguard_close(s->fd);
	else if (s->clock == SAMPLER_PMU)
		pmu_close_inherited(&s->pmu);
}

int sampler_is_tick(const struct sampler *s, const siginfo_t *si)
{
	if (s->clock == SAMPLER_PMU)
		return pmu_is_tick(&s->pmu, si);
	if (s->timer_ok && si->si_code == SI_TIMER && si->si_value.sival_ptr == (void *)s)
		return 1;
	return s->clock == SAMPLER_PERF_TASK_CLOCK && s->fd >= 0 && si->si_code != SI_TIMER &&
	       si->si_fd == s->fd;
}

void sampler_close(struct sampler *s)
{
	if (s->clock == SAMPLER_PERF_TASK_CLOCK && s->fd >= 0)
		fdguard_close(s->fd);
	else if (s->clock == SAMPLER_PMU)
		pmu_close(&s->pmu);
	if (s->timer_ok)
		timer_delete(s->timer);
	s->clock = SAMPLER_NONE;
	s->timer_ok = 0;
	s->on_timer = 0;
	s->fd = -1;
}
