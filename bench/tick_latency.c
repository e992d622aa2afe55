/* tick_latency: the CPU time a perf task-clock tick costs past its period,
 * timed as libwitch times it (cost.h, COST_TICK).
 *
 * A task-clock event (exclude_kernel, as libwitch opens it) raises a
 * real-time signal every PERIOD_US of the thread's CPU time.  Its handler
 * sets the period again (PERF_EVENT_IOC_PERIOD starts it afresh) and reads
 * the thread's CPU clock right after; the next handler reads it on entry.
 * What lies past the period is the tick's own cost before the handler: the
 * clock's hrtimer interrupt, the irq_work self-IPI that sends the signal,
 * its delivery, and the last handler's return.  A gap past a whole period
 * is dropped (a period that ended in the kernel raises no tick).
 * bench/tick_cost.c measures the same cost the other way, as a loop's CPU
 * time with ticks over without.
 *
 * 2026-12-02, this 2-vCPU VM: 51-67 us a tick at 500 us, 75-88 us at 4-8
 * ms, against tick_cost's 46-71 and 60 us at those periods
 * (bench/results/tick_price.md).
 *
 * Build: cc -O2 bench/tick_latency.c -o tick_latency
 * Usage: tick_latency [PERIOD_US [SECONDS]]   default 500 2
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

static int clock_fd;
static unsigned long long period_ns = 500000;
static double set_at_ns; /* the thread's CPU clock as the period was set */
static double past_sum_ns;
static long timed, dropped;

static double thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void on_tick(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	double past = thread_cpu_ns() - set_at_ns - (double)period_ns;
	if (past > 0 && past < (double)period_ns) {
		past_sum_ns += past;
		timed++;
	} else {
		dropped++;
	}
	unsigned long long p = period_ns;
	ioctl(clock_fd, PERF_EVENT_IOC_PERIOD, &p);
	set_at_ns = thread_cpu_ns();
}

int main(int argc, char **argv)
{
	double seconds = 2;
	if (argc > 1)
		period_ns = strtoull(argv[1], NULL, 10) * 1000;
	if (argc > 2)
		seconds = atof(argv[2]);
	if (period_ns < 10000 || !(seconds > 0)) {
		fprintf(stderr, "usage: tick_latency [PERIOD_US >= 10 [SECONDS]]\n");
		return 2;
	}
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = period_ns;
	a.exclude_kernel = 1;
	a.disabled = 1;
	a.wakeup_events = 1;
	clock_fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (clock_fd < 0) {
		perror("tick_latency: perf_event_open");
		return 1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_tick;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGRTMIN + 1, &sa, NULL);
	struct f_owner_ex owner = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
	if (fcntl(clock_fd, F_SETOWN_EX, &owner) < 0 || fcntl(clock_fd, F_SETSIG, SIGRTMIN + 1) < 0 ||
	    fcntl(clock_fd, F_SETFL, O_ASYNC) < 0) {
		perror("tick_latency: fcntl");
		return 1;
	}
	ioctl(clock_fd, PERF_EVENT_IOC_ENABLE, 0);
	set_at_ns = thread_cpu_ns();
	volatile double x = 1;
	double t0 = thread_cpu_ns();
	while (thread_cpu_ns() - t0 < seconds * 1e9)
		for (int i = 0; i < 100000; i++)
			x = x * 1.0000001 + 1e-9;
	ioctl(clock_fd, PERF_EVENT_IOC_DISABLE, 0);
	printf("period %llu us: %ld ticks timed, %.1f us a tick past its period (%ld dropped)\n",
	       period_ns / 1000, timed, timed ? past_sum_ns / (double)timed / 1000 : 0.0, dropped);
	return 0;
}
