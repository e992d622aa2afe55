/* tick_cost: what one sampler tick costs the program before any handler
 * work, for each clock the software sampler can tick on (sampler.h).
 *
 * A thread runs a fixed floating-point loop (no memory traffic, so a
 * tick's cost is CPU time, not cache state) with no clock, then with each
 * clock raising a real-time signal into an empty handler, interleaved,
 * RUNS times; a tick's cost is the median CPU time over the no-clock
 * median, divided by the ticks.  Clocks:
 *   perf    a perf_event task-clock event (exclude_kernel), as libwitch
 *           opens it: its own hrtimer, the signal sent by irq_work
 *   timer   timer_create on the thread's user CPU time (CPUCLOCK_VIRT),
 *           checked at the scheduler's tick: fires only at one
 *   signal  for scale, tgkill to self in a loop: the signal alone
 * On our EPYC VMs (2026-11-27, bench/results/tick_cost.md): at 250 ticks/s
 * perf 30-53 us a tick (median of 7 runs 33), the timer 1-21 us (median
 * 8), a signal alone 2.6 us; perf at 4,000/s 28-33 us.  The noise is the
 * VM's: the no-clock run itself moves by 1% between runs, so each run needs
 * ~2,000 ticks and a few runs.  A VM pays for interrupts (timer reprograms
 * and self-IPIs exit to the hypervisor); the scheduler's tick interrupts
 * anyway.  The timer's period rounds up to scheduler ticks (4 ms at
 * HZ=250).
 *
 * Build: cc -O2 bench/tick_cost.c -o tick_cost
 * Usage: tick_cost [PERIOD_US [SECONDS]]   default 4000 6
 */
#define _GNU_SOURCE /* F_SETSIG, F_SETOWN_EX */
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RUNS 5

enum clock_kind { NONE, PERF, TIMER, NCLOCKS };
static const char *const clock_names[] = {"none", "perf", "timer"};
static volatile long ticks;

static void on_tick(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	ticks++;
}

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double work(long n)
{
	volatile double x = 0;
	for (long i = 0; i < n; i++)
		x += (double)i * 0.5;
	return x;
}

/* Starts kind at period_us; returns a handle to stop it (-1: failed). */
static long clock_start(enum clock_kind kind, long period_us, int sig, timer_t *timer)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	if (kind == PERF) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_TASK_CLOCK;
		a.sample_period = (unsigned long long)period_us * 1000;
		a.exclude_kernel = 1;
		a.disabled = 1;
		int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		struct f_owner_ex owner = {F_OWNER_TID, tid};
		if (fd < 0 || fcntl(fd, F_SETFL, O_ASYNC) < 0 || fcntl(fd, F_SETSIG, sig) < 0 ||
		    fcntl(fd, F_SETOWN_EX, &owner) < 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			return -1;
		return fd;
	}
	if (kind == TIMER) {
		struct sigevent ev;
		memset(&ev, 0, sizeof(ev));
		ev.sigev_notify = SIGEV_THREAD_ID;
		ev.sigev_signo = sig;
		ev._sigev_un._tid = tid;
		clockid_t user_time = (clockid_t)((~(unsigned)tid << 3) | 4 | 1); /* CPUCLOCK_VIRT */
		struct itimerspec it = {{period_us / 1000000, (period_us % 1000000) * 1000},
					{period_us / 1000000, (period_us % 1000000) * 1000}};
		if (timer_create(user_time, &ev, timer) < 0 || timer_settime(*timer, 0, &it, NULL) < 0)
			return -1;
		return 0;
	}
	return 0;
}

static void clock_stop(enum clock_kind kind, long handle, timer_t timer)
{
	if (kind == PERF)
		close((int)handle);
	else if (kind == TIMER)
		timer_delete(timer);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long period_us = argc > 1 ? atol(argv[1]) : 4000;
	double seconds = argc > 2 ? atof(argv[2]) : 6;
	int sig = SIGRTMIN + 3;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_tick;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	if (period_us <= 0 || seconds <= 0 || sigaction(sig, &sa, NULL) < 0) {
		fprintf(stderr, "usage: tick_cost [PERIOD_US [SECONDS]]\n");
		return 2;
	}
	/* Calibrate the loop to ~seconds of CPU time. */
	double t0 = cpu_s();
	work(10000000);
	long n = (long)(10000000 * seconds / (cpu_s() - t0));

	double cpu[NCLOCKS][RUNS];
	long nticks[NCLOCKS][RUNS];
	for (int r = 0; r < RUNS; r++)
		for (int k = 0; k < NCLOCKS; k++) {
			timer_t timer;
			long h = clock_start((enum clock_kind)k, period_us, sig, &timer);
			if (h < 0) {
				fprintf(stderr, "tick_cost: cannot start the %s clock\n", clock_names[k]);
				return 1;
			}
			ticks = 0;
			t0 = cpu_s();
			work(n);
			cpu[k][r] = cpu_s() - t0;
			nticks[k][r] = ticks;
			clock_stop((enum clock_kind)k, h, timer);
		}
	double med[NCLOCKS];
	for (int k = 0; k < NCLOCKS; k++) {
		double sorted[RUNS];
		memcpy(sorted, cpu[k], sizeof(sorted));
		qsort(sorted, RUNS, sizeof(sorted[0]), cmp_double);
		med[k] = sorted[RUNS / 2];
	}
	printf("period %ld us, %d interleaved runs of ~%.1f s CPU, medians\n", period_us, RUNS,
	       seconds);
	for (int k = 0; k < NCLOCKS; k++) {
		long t = nticks[k][RUNS / 2];
		printf("%-6s cpu %.3f s  ticks %6ld", clock_names[k], med[k], t);
		if (k != NONE && t > 0)
			printf("  %.1f us a tick over none", (med[k] - med[NONE]) / (double)t * 1e6);
		printf("\n");
	}
	/* The signal alone: tgkill to self, hot. */
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
	const int calls = 200000;
	t0 = cpu_s();
	for (int i = 0; i < calls; i++)
		syscall(SYS_tgkill, pid, tid, sig);
	printf("signal %.2f us a tgkill and delivery\n", (cpu_s() - t0) / calls * 1e6);
	return 0;
}
