/* trap_trip: what one watchpoint trap costs the thread, by how its signal
 * comes.
 *
 * A write breakpoint with period 1 on a word the loop increments: each
 * increment is a #DB and a signal to an empty handler.  Two deliveries:
 *   queued:  the fd's own signal (F_SETSIG, O_ASYNC, F_SETOWN_EX): the
 *            kernel sends it from an irq_work, which interrupts itself (a
 *            self-IPI, a VM exit here) to get out of the #DB;
 *   sigtrap: attr.sigtrap (Linux 5.13; blocked = waits since 5.18): a
 *            SIGTRAP the kernel raises on the way back to the program.
 * Each between EVICT KiB of stores (0: hot), so the cost with the caches
 * cold shows too.  Per hit: CPU time of the loop with the breakpoint, less
 * the same loop without it, over the hits.  Interleaved, median of RUNS.
 * The runtime uses sigtrap where the kernel has it (watchpoint.h).
 *
 * Build: cc -O2 bench/trap_trip.c -o trap_trip
 * Usage: trap_trip [HITS] [RUNS] [EVICT_KIB...]   default 3000 5 0 2048 8192
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
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

static volatile uint64_t word;
static volatile long hits;
static volatile char *buf;
static size_t buf_len;

static double cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void on_hit(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	hits++;
}

static void evict(void)
{
	for (size_t i = 0; i < buf_len; i += 64)
		buf[i]++;
}

static int open_bp(int sigtrap)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (uint64_t)(uintptr_t)&word;
	a.bp_len = sizeof(word);
	a.sample_period = 1;
	a.wakeup_events = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = 1;
	a.sigtrap = (unsigned)sigtrap;
	a.remove_on_exec = (unsigned)sigtrap;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 || sigtrap)
		return fd;
	struct f_owner_ex o = {F_OWNER_TID, gettid()};
	if (fcntl(fd, F_SETOWN_EX, &o) < 0 || fcntl(fd, F_SETSIG, SIGRTMIN + 3) < 0 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* us per hit, or -1 */
static double one_run(int sigtrap, int n)
{
	int fd = open_bp(sigtrap);
	if (fd < 0)
		return -1;
	double t0 = cpu_ns();
	for (int i = 0; i < n; i++)
		evict();
	double t1 = cpu_ns();
	hits = 0;
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	double t2 = cpu_ns();
	for (int i = 0; i < n; i++) {
		evict();
		word++;
	}
	double t3 = cpu_ns();
	close(fd);
	if (hits != n)
		return -1;
	return ((t3 - t2) - (t1 - t0)) / n / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3000, runs = argc > 2 ? atoi(argv[2]) : 5;
	static const int def_kib[] = {0, 2048, 8192};
	int nk = argc > 3 ? argc - 3 : 3;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_hit;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	if (n < 1 || runs < 1 || runs > 64 || sigaction(SIGRTMIN + 3, &sa, NULL) < 0 ||
	    sigaction(SIGTRAP, &sa, NULL) < 0) {
		fprintf(stderr, "usage: trap_trip [HITS] [RUNS] [EVICT_KIB...]\n");
		return 2;
	}
	printf("| evict KiB | queued us/hit | sigtrap us/hit |\n|---:|---:|---:|\n");
	for (int k = 0; k < nk; k++) {
		int kib = argc > 3 ? atoi(argv[3 + k]) : def_kib[k];
		buf_len = (size_t)kib << 10;
		buf = buf_len ? calloc(1, buf_len) : NULL;
		double q[64], s[64];
		for (int r = 0; r < runs; r++) {
			q[r] = one_run(0, n);
			s[r] = one_run(1, n);
			if (q[r] < 0 || s[r] < 0) {
				fprintf(stderr, "trap_trip: breakpoint did not open or trap as asked\n");
				return 1;
			}
		}
		qsort(q, (size_t)runs, sizeof(q[0]), cmp);
		qsort(s, (size_t)runs, sizeof(s[0]), cmp);
		printf("| %d | %.1f | %.1f |\n", kib, q[runs / 2], s[runs / 2]);
		free((void *)buf);
	}
	return 0;
}
