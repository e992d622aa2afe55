/* tick_refill: what a tick's signal costs a program beyond its handler,
 * by the program's working set.
 *
 * usage: tick_refill KIB MILLIONS none|timer|perf RATE
 *
 * A pointer chase over KIB KiB of cache lines in a random cycle (every
 * load waits for the one before, so a line that an interrupt pushed out of
 * L2 costs its whole refill), MILLIONS million steps.  With timer or perf,
 * a signal with an empty handler RATE times a CPU-second: "timer" on a
 * POSIX timer of the thread's CPU clock (checked at the scheduler's tick,
 * the sampler's clock at the default budget), "perf" on a perf task-clock
 * event (its own hrtimer and an irq_work self-IPI, the sampler's clock for
 * short intervals).  Prints the signals taken on stderr.  The cost of a
 * signal is (CPU time with - CPU time without) / signals, over interleaved
 * runs (bench/tick_refill.py).  The handler does nothing: what it costs is
 * the kernel's round trip and what the program refills after it, which no
 * clock in a handler sees (cost.h).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile long signals;
static int perf_fd = -1;

static void on_tick(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	signals++;
	if (perf_fd >= 0)
		ioctl(perf_fd, PERF_EVENT_IOC_REFRESH, 1);
}

static int start_timer(long rate)
{
	timer_t timer;
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGPROF;
	ev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &timer) != 0)
		return -1;
	struct itimerspec its = {{0, 1000000000 / rate}, {0, 1000000000 / rate}};
	return timer_settime(timer, 0, &its, NULL);
}

static int start_perf(long rate)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = (uint64_t)(1000000000 / rate);
	a.disabled = 1;
	perf_fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (perf_fd < 0)
		return -1;
	struct f_owner_ex owner = {F_OWNER_TID, gettid()};
	if (fcntl(perf_fd, F_SETFL, O_ASYNC) != 0 || fcntl(perf_fd, F_SETSIG, SIGPROF) != 0 ||
	    fcntl(perf_fd, F_SETOWN_EX, &owner) != 0)
		return -1;
	return ioctl(perf_fd, PERF_EVENT_IOC_REFRESH, 1);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: tick_refill KIB MILLIONS none|timer|perf RATE\n");
		return 2;
	}
	size_t lines = strtoul(argv[1], NULL, 0) * 1024 / 64;
	uint64_t steps = strtoull(argv[2], NULL, 0) * 1000000ull;
	long rate = atol(argv[4]);
	if (lines < 2 || rate <= 0)
		return 2;
	uint64_t *line = aligned_alloc(64, lines * 64);
	size_t *order = malloc(lines * sizeof(*order));
	if (!line || !order)
		return 1;
	for (size_t i = 0; i < lines; i++)
		order[i] = i;
	srand(1);
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = (size_t)rand() % (i + 1), t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (size_t i = 0; i < lines; i++)
		line[order[i] * 8] = order[(i + 1) % lines] * 8;

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_tick;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	int rc = 0;
	if (!strcmp(argv[3], "timer"))
		rc = start_timer(rate);
	else if (!strcmp(argv[3], "perf"))
		rc = start_perf(rate);
	else if (strcmp(argv[3], "none"))
		return 2;
	if (rc != 0) {
		perror("tick_refill: clock");
		return 1;
	}
	uint64_t at = order[0] * 8, sum = 0;
	for (uint64_t i = 0; i < steps; i++) {
		at = line[at];
		sum += at;
	}
	fprintf(stderr, "signals %ld\n", signals);
	printf("%lu\n", (unsigned long)sum);
	return 0;
}
