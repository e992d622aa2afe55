/* perf_user: a program that uses perf_event itself (issue 6).
 *
 *   1. A counting task-clock event on itself: it counts (> 0).
 *   2. Four hardware breakpoints of its own (write watches on four
 *      variables), each written 1000 times and read back: 1000 each.  The
 *      runtime holds the thread's debug registers; it must give them up
 *      (x86 has four) rather than make the program's perf_event_open fail
 *      with ENOSPC.
 *   3. dead_two_loops' work in a second thread: that thread's debug
 *      registers are its own, so its pairs stay right (fill's stores are
 *      killed by overwrite only; dead_two_loops.c).  The main thread's
 *      watched stores each trap into the kernel, which makes them slow
 *      and so sampled often: the overall fraction is not dead_two_loops'.
 */
#include "ka.h"

#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define N (8u << 20)

static volatile uint64_t watched[4][8];

static int open_event(struct perf_event_attr *a)
{
	a->size = sizeof(*a);
	a->disabled = 1;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, a, 0, -1, -1, 0);
}

#include "dead_loops.h"

static void *work(void *arg)
{
	uint32_t *a = ka_alloc((size_t)N * sizeof(*a));
	uint64_t total = 0;
	for (int r = 0; r < 6; r++) {
		fill(a, 2 * (uint64_t)r + 1);
		overwrite(a, 2 * (uint64_t)r + 2);
		total += sum(a);
	}
	return (void *)(uintptr_t)total;
}

int main(void)
{
	struct perf_event_attr a;
	uint64_t count;
	void *total;
	pthread_t th;

	pthread_create(&th, NULL, work, NULL);

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	int clk = open_event(&a);
	ioctl(clk, PERF_EVENT_IOC_ENABLE, 0);
	for (volatile int i = 0; i < 1000000; i++)
		;
	ioctl(clk, PERF_EVENT_IOC_DISABLE, 0);
	printf("task-clock counts: %s\n",
	       clk >= 0 && read(clk, &count, sizeof(count)) == sizeof(count) && count > 0 ? "yes"
											  : "no");

	for (int w = 0; w < 4; w++) {
		memset(&a, 0, sizeof(a));
		a.type = PERF_TYPE_BREAKPOINT;
		a.bp_type = HW_BREAKPOINT_W;
		a.bp_addr = (uintptr_t)&watched[w][0];
		a.bp_len = HW_BREAKPOINT_LEN_8;
		a.sample_period = 1;
		int fd = open_event(&a);
		if (fd < 0) {
			printf("breakpoint %d: perf_event_open failed: %s\n", w, strerror(errno));
			continue;
		}
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		for (int i = 0; i < 1000; i++)
			watched[w][0] = (uint64_t)i;
		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		count = 0;
		if (read(fd, &count, sizeof(count)) != sizeof(count))
			count = 0;
		printf("breakpoint %d counted %llu writes\n", w, (unsigned long long)count);
	}

	pthread_join(th, &total);
	printf("perf_user checksum=%016llx\n", (unsigned long long)(uintptr_t)total);
	return 0;
}
