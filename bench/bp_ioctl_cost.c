/* bp_ioctl_cost: what the breakpoint ioctls of a sample cost, cold and hot.
 *
 * One perf_event read-write breakpoint (sigtrap, as the runtime opens its
 * own) on a word nothing touches.  Each sequence below is timed with the
 * TSC:
 *   cold: inside a SIGPROF handler every 20 ms of CPU time, while the
 *         program stores over 8 MiB between ticks (as a sampler tick finds
 *         the machine);
 *   hot:  the same back to back.
 * Sequences (what a handler run does to a slot):
 *   modify         MODIFY_ATTRIBUTES to another word (re-arm, no hits to pass)
 *   modify_second  the same, timed after an untimed one in the same handler:
 *                  on a KVM guest the first access to a debug register after
 *                  any VM exit (the tick's timer interrupt is one) exits
 *                  again, KVM having set its debug-register intercepts back;
 *                  the second does not (2026-12-07, EPYC VM with traps, cold:
 *                  modify 20.7 us, modify_second ~1.1; in a SIGTRAP handler,
 *                  after the #DB's own accesses, the first modify took 1.2)
 *   period_modify  PERIOD, then MODIFY_ATTRIBUTES (re-arm letting hits by)
 *   pause_resume   DISABLE, ENABLE (around an unwind)
 *   read_count     read(2) of the event's count of hits, as a re-arm with
 *                  hits to pass and a trap's look at its siblings take it
 *                  (watchpoint_period_ran_out); no debug register touched
 *   two_syscalls   two getppid(), for scale
 * Medians over the ticks, in us at the TSC rate measured against
 * CLOCK_MONOTONIC.
 *
 * OTHERS more breakpoints (0-3, on other untouched words) stay enabled
 * meanwhile, as a thread's other armed slots do: an enable takes every
 * enabled breakpoint of the thread out and puts it back (the kernel's
 * ctx_resched), so its cost grows with them (2026-12-06 on the PVM VM,
 * hot: 9.4 us with none, 43.9 us with three; bench/results/stack_pause.md).
 *
 * Build: cc -O2 bench/bp_ioctl_cost.c -o bp_ioctl_cost
 * Usage: bp_ioctl_cost [TICKS [OTHERS]]   default 150 (~3 s each sequence), 0
 */
#define _GNU_SOURCE
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

enum { MODIFY, MODIFY_SECOND, PERIOD_MODIFY, PAUSE_RESUME, READ_COUNT, TWO_SYSCALLS, N_SEQ };
static const char *const seq_name[N_SEQ] = {"modify", "modify_second", "period_modify",
					    "pause_resume", "read_count", "two_syscalls"};

static volatile uint64_t words[64];
static volatile uint64_t other_words[24]; /* a cache line each */
static int fd;
static int seq;
static unsigned k;
static volatile int n_done;
static int n_want;
static uint64_t *samples;

static void attr_of(struct perf_event_attr *a, uint64_t addr)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_BREAKPOINT;
	a->bp_type = HW_BREAKPOINT_RW;
	a->bp_addr = addr;
	a->bp_len = 8;
	a->sample_period = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->sigtrap = 1;
	a->remove_on_exec = 1;
}

static uint64_t run_seq(void)
{
	struct perf_event_attr a;
	uint64_t period = 2 + (k & 1);
	attr_of(&a, (uint64_t)(uintptr_t)&words[++k & 63]);
	if (seq == MODIFY_SECOND) /* untimed: the first debug-register access */
		ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a);
	uint64_t t0 = __rdtsc();
	switch (seq) {
	case MODIFY:
	case MODIFY_SECOND:
		ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a);
		break;
	case PERIOD_MODIFY:
		ioctl(fd, PERF_EVENT_IOC_PERIOD, &period);
		ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a);
		break;
	case PAUSE_RESUME:
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		break;
	case READ_COUNT: {
		uint64_t count;
		if (read(fd, &count, sizeof(count)) != sizeof(count))
			t0 = __rdtsc(); /* (an error reads as 0) */
		break;
	}
	default:
		syscall(SYS_getppid);
		syscall(SYS_getppid);
	}
	return __rdtsc() - t0;
}

static void on_prof(int sig)
{
	(void)sig;
	if (n_done < n_want)
		samples[n_done++] = run_seq();
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static double tsc_per_us(void)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint64_t c0 = __rdtsc();
	do
		clock_gettime(CLOCK_MONOTONIC, &t1);
	while ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec) < 2e7);
	uint64_t c1 = __rdtsc();
	return (double)(c1 - c0) / (((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3);
}

static double median_us(double per_us)
{
	qsort(samples, (size_t)n_want, sizeof(samples[0]), cmp_u64);
	return (double)samples[n_want / 2] / per_us;
}

int main(int argc, char **argv)
{
	n_want = argc > 1 ? atoi(argv[1]) : 150;
	int others = argc > 2 ? atoi(argv[2]) : 0;
	if (n_want < 1 || others < 0 || others > 3) {
		fprintf(stderr, "usage: bp_ioctl_cost [TICKS [OTHERS]]  (OTHERS 0-3)\n");
		return 2;
	}
	struct perf_event_attr a;
	attr_of(&a, (uint64_t)(uintptr_t)&words[0]);
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	samples = calloc((size_t)n_want, sizeof(*samples));
	size_t buf_len = 8u << 20;
	volatile char *buf = malloc(buf_len);
	if (fd < 0 || !samples || !buf) {
		perror("bp_ioctl_cost: perf_event_open (a breakpoint with sigtrap, Linux 5.13+)");
		return 1;
	}
	for (int i = 0; i < others; i++) {
		attr_of(&a, (uint64_t)(uintptr_t)&other_words[i * 8]);
		if (syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC) < 0) {
			perror("bp_ioctl_cost: perf_event_open (another breakpoint)");
			return 1;
		}
	}
	signal(SIGTRAP, SIG_IGN);
	double per_us = tsc_per_us();
	printf("%d other breakpoints enabled\n\n", others);
	printf("| sequence | cold us | hot us |\n|---|---:|---:|\n");
	for (seq = 0; seq < N_SEQ; seq++) {
		n_done = 0;
		signal(SIGPROF, on_prof);
		struct itimerval it = {{0, 20000}, {0, 20000}};
		setitimer(ITIMER_PROF, &it, NULL);
		while (n_done < n_want)
			for (size_t i = 0; i < buf_len; i += 64)
				buf[i]++;
		struct itimerval off = {{0, 0}, {0, 0}};
		setitimer(ITIMER_PROF, &off, NULL);
		double cold = median_us(per_us);
		for (int i = 0; i < n_want; i++)
			samples[i] = run_seq();
		printf("| %s | %.1f | %.1f |\n", seq_name[seq], cold, median_us(per_us));
	}
	return 0;
}
