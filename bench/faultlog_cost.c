/* faultlog_cost: what the page-fault log (libwitch/include/witch/faultlog.h)
 * costs a fault: a perf software page-fault event with one record a fault
 * (sample_period 1, PERF_SAMPLE_IP) into a one-page ring written backward,
 * as the runtime opens it.
 *
 * Each run touches PAGES fresh pages (MADV_NOHUGEPAGE: a fault a page)
 * without the event, then with it; per fault: the thread's CPU time of the
 * touches over PAGES, and the difference, which is FAULTLOG_RECORD_NS's
 * measurement (2026-12-07, AMD EPYC VM: 460-610 ns a record on faults of
 * ~1.5 us).  Prints one line a run.
 *
 * PERIOD (default 1): one record every PERIOD faults, as a thinned log
 * takes them (faultlog_thin); the cost is then a fault's, counted and
 * mostly not recorded: FAULTLOG_COUNT_NS's measurement.
 *
 * Build: cc -O2 bench/faultlog_cost.c -o faultlog_cost
 * Usage: faultlog_cost [PAGES] [RUNS] [PERIOD]   default 100000 7 1
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double thread_cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU seconds to touch `pages` fresh pages, or a negative value. */
static double touch_fresh(size_t pages)
{
	size_t len = pages * 4096;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	madvise(p, len, MADV_NOHUGEPAGE);
	double t0 = thread_cpu_s();
	for (size_t i = 0; i < pages; i++)
		((volatile char *)p)[i * 4096] = 1;
	double t = thread_cpu_s() - t0;
	munmap(p, len);
	return t;
}

int main(int argc, char **argv)
{
	size_t pages = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	int runs = argc > 2 ? atoi(argv[2]) : 7;
	unsigned long period = argc > 3 ? strtoul(argv[3], NULL, 10) : 1;
	/* The event as faultlog_open asks for it. */
	struct perf_event_attr a = {.size = sizeof(a), .type = PERF_TYPE_SOFTWARE,
				    .config = PERF_COUNT_SW_PAGE_FAULTS, .sample_period = period,
				    .sample_type = PERF_SAMPLE_IP, .exclude_kernel = 1,
				    .exclude_hv = 1, .write_backward = 1};
	if (pages == 0 || runs < 1 || period == 0) {
		fprintf(stderr, "usage: faultlog_cost [PAGES>0] [RUNS>0] [PERIOD>0]\n");
		return 2;
	}
	printf("one record every %lu faults\n", period);
	printf("| run | ns a fault, no log | with the log | the log's, a fault |\n|---:|---:|---:|---:|\n");
	for (int r = 0; r < runs; r++) {
		double off = touch_fresh(pages);
		int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
		if (fd < 0) {
			perror("perf_event_open");
			return 1;
		}
		void *ring = mmap(NULL, 2 * 4096, PROT_READ, MAP_SHARED, fd, 0);
		if (ring == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		double on = touch_fresh(pages);
		munmap(ring, 2 * 4096);
		close(fd);
		if (off < 0 || on < 0) {
			perror("mmap");
			return 1;
		}
		printf("| %d | %.0f | %.0f | %.0f |\n", r + 1, off / (double)pages * 1e9,
		       on / (double)pages * 1e9, (on - off) / (double)pages * 1e9);
	}
	return 0;
}
