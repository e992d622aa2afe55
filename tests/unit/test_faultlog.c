/* test_faultlog: the thread's page-fault log (faultlog.h) names the
 * instruction of the last fault since the last look.
 *
 * Stores into fresh anonymous pages fault once a page.  store_at stores
 * from an instruction whose address it returns, so the log's answer can be
 * checked against it:
 *   - no fault since the last look: 0;
 *   - one fault at store_at: 1, at its store;
 *   - 300 faults elsewhere (more than the one-page ring holds: 256 records
 *     of 16 bytes), then one at store_at: the newest still, at its store;
 *   - a store into a page already touched: no fault, 0;
 *   - closed: 0.
 * Thinned (faultlog_thin), a table: from a period and the records since
 * the last tick, the faults they stand for (records x period) and the
 * next period, the largest power of 2 that leaves at least
 * FAULTLOG_RECORDS_A_TICK (32) records an interval, taken at once if 4x
 * higher than the current; if 4x lower for FAULTLOG_DECAY_TICKS (8)
 * ticks in a row, the current halves, e.g.
 *   period 1, 128 records: 128 faults, 4 gives 32 records -> 4;
 *   period 1, 100 records: 2 would do, within 4x of 1 -> 1;
 *   period 64, 0 records, 6 low ticks before: 1 would do -> 64, 7 low;
 *   ... 7 low ticks before: the 8th -> 32, the count starts again;
 *   period 64, 20 records: 1280 faults, 32 would do, within 4x -> 64,
 *   and the low count back to 0.
 * Then live: at period 16, 1,600 fresh pages leave 100 records (+2 for
 * the test's own faults at most, one at 1 would leave 1,600).
 * Kept within a budget (faultlog_keep_within), a table above
 * check_keep_within: which tick closes a log that costs so much.
 * Begun (opened at the first tick), not yet looked at: no event is open
 * (the process's fd count is as before); a fault before the first look is
 * not reported (0: nothing was logged then), one after it is; closed
 * before any look, it never opens.
 * Skipped (77) where the perf event cannot be opened (perf_event_paranoid,
 * no software events).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "witch/faultlog.h"

#define PAGE 4096ul
#define PAGES 512ul

/* One 8-byte store to p; returns the store instruction's address. */
__attribute__((noinline)) static uint64_t store_at(volatile uint64_t *p)
{
	uint64_t pc;
	__asm__ volatile("lea 1f(%%rip), %0\n\t"
			 "1: movq $7, (%1)"
			 : "=&r"(pc)
			 : "r"(p)
			 : "memory");
	return pc;
}

/* The process's open file descriptors. */
static int open_fds(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* (the directory's own) */
}

__attribute__((noinline)) static void touch(unsigned char *p, unsigned long pages)
{
	for (unsigned long i = 0; i < pages; i++)
		((volatile unsigned char *)p)[i * PAGE] = 1;
}

static const struct {
	int line;
	uint64_t period;
	uint32_t low;
	uint64_t records, faults, next;
	uint32_t next_low;
} thin_rows[] = {
	{__LINE__, 1, 0, 0, 0, 1, 0},
	{__LINE__, 1, 0, 10, 10, 1, 0},
	{__LINE__, 1, 0, 100, 100, 1, 0},
	{__LINE__, 1, 0, 128, 128, 4, 0},
	{__LINE__, 1, 0, 32768, 32768, 1024, 0},
	{__LINE__, 1, 0, 10000000, 10000000, FAULTLOG_PERIOD_MAX, 0},
	{__LINE__, 64, 0, 0, 0, 64, 1},
	{__LINE__, 64, 6, 0, 0, 64, 7},
	{__LINE__, 64, 7, 0, 0, 32, 0},
	{__LINE__, 64, 7, 5, 320, 32, 0},
	{__LINE__, 64, 3, 20, 1280, 64, 0},
	{__LINE__, 64, 0, 200, 12800, 256, 0},
	{__LINE__, 64, 5, 2000, 128000, 2048, 0},
	{__LINE__, 2, 0, 1, 2, 2, 0},
	{__LINE__, 4, 7, 0, 0, 2, 0},
	{__LINE__, 4, 0, 0, 0, 4, 1},
};

static void check_thinning(void)
{
	struct faultlog f;
	if (faultlog_open(&f, (pid_t)gettid()) < 0) {
		FAIL(__LINE__, "the log opened before, not now");
		return;
	}
	for (size_t i = 0; i < sizeof(thin_rows) / sizeof(thin_rows[0]); i++) {
		uint64_t faults = ~0ull;
		f.period = thin_rows[i].period;
		f.low_ticks = thin_rows[i].low;
		int rc = faultlog_thin(&f, thin_rows[i].records, &faults);
		CHECK(thin_rows[i].line,
		      rc == 0 && faults == thin_rows[i].faults && f.period == thin_rows[i].next &&
			      f.low_ticks == thin_rows[i].next_low,
		      "period %lu (%u low), %lu records: got %d, %lu faults, period %lu (%u low); "
		      "want %lu, %lu (%u)",
		      (unsigned long)thin_rows[i].period, thin_rows[i].low,
		      (unsigned long)thin_rows[i].records, rc, (unsigned long)faults,
		      (unsigned long)f.period, f.low_ticks, (unsigned long)thin_rows[i].faults,
		      (unsigned long)thin_rows[i].next, thin_rows[i].next_low);
	}
	/* Live: to 16 (512 faults at 1), then 1,600 faults. */
	uint64_t faults;
	f.period = 1;
	int rc = faultlog_thin(&f, 512, &faults);
	CHECK(__LINE__, rc == 0 && f.period == 16, "512 faults at 1: got %d, period %lu", rc,
	      (unsigned long)f.period);
	unsigned char *m = mmap(NULL, 1600 * PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		FAIL(__LINE__, "mmap");
		faultlog_close(&f);
		return;
	}
	madvise(m, 1600 * PAGE, MADV_NOHUGEPAGE);
	(void)faultlog_records_since(&f);
	touch(m, 1600);
	uint64_t n = faultlog_records_since(&f);
	CHECK(__LINE__, n >= 99 && n <= 102, "1600 faults at period 16: %lu records, want 100",
	      (unsigned long)n);
	munmap(m, 1600 * PAGE);
	faultlog_close(&f);
}

/* faultlog_keep_within under a budget allowing 1 ms an interval: the log's
 * cost each tick (ms, then the same for the rest of 24 ticks), and the
 * tick that closes it (0: none).  From the 8th tick on it closes where its
 * cost, summed with each tick weighing 7/8 of the next, passes half the
 * allowance summed so:
 *   0.6 every tick: 0.6 of it, past 0.5 -> the 8th;
 *   0.4 every tick: never;
 *   20 once, then 0: at the 8th, 20 x 0.875^7 = 7.9 of 5.3 allowed -> 8;
 *   2 once, then 0: at the 8th, 0.79 of 5.3 -> never (by the 24th less). */
static const struct {
	int line;
	double first_ms, then_ms;
	int closes_at;
} keep_rows[] = {
	{__LINE__, 0.6, 0.6, 8},
	{__LINE__, 0.4, 0.4, 0},
	{__LINE__, 20, 0, 8},
	{__LINE__, 2, 0, 0},
	{__LINE__, 0, 0, 0},
};

static void check_keep_within(void)
{
	for (size_t i = 0; i < sizeof(keep_rows) / sizeof(keep_rows[0]); i++) {
		struct faultlog f;
		if (faultlog_open(&f, (pid_t)gettid()) < 0) {
			FAIL(keep_rows[i].line, "the log opened before, not now");
			return;
		}
		int closed_at = 0;
		for (int tick = 1; tick <= 24 && !closed_at; tick++) {
			double ms = tick == 1 ? keep_rows[i].first_ms : keep_rows[i].then_ms;
			if (faultlog_keep_within(&f, ms * 1e6, 1e6))
				closed_at = tick;
		}
		CHECK(keep_rows[i].line, closed_at == keep_rows[i].closes_at && (f.fd < 0) == (closed_at > 0),
		      "%.1f ms then %.1f: closed at tick %d (fd %d), want %d", keep_rows[i].first_ms,
		      keep_rows[i].then_ms, closed_at, f.fd, keep_rows[i].closes_at);
		faultlog_close(&f);
	}
}

int main(void)
{
	struct faultlog f;
	int rc = faultlog_open(&f, (pid_t)gettid());
	if (rc < 0) {
		printf("test_faultlog: no page-fault event (%d): skipped\n", rc);
		return 77;
	}
	unsigned char *m = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	madvise(m, PAGES * PAGE, MADV_NOHUGEPAGE); /* a fault a page */
	uint64_t ip = 0, pc;
	(void)faultlog_since_tick(&f, &ip); /* what the process did so far */
	(void)faultlog_records_since(&f);
	uint64_t n;

	CHECK(__LINE__, faultlog_since_tick(&f, &ip) == 0, "a fault reported with none since");
	pc = store_at((volatile uint64_t *)(m + 0 * PAGE));
	rc = faultlog_since_tick(&f, &ip);
	CHECK(__LINE__, rc == 1 && ip == pc, "one fault at %#lx: got %d at %#lx", (unsigned long)pc,
	      rc, (unsigned long)ip);
	/* Counted records: the test's own faults besides (a lazily bound
	 * call, a stack page) may add one or two. */
	n = faultlog_records_since(&f);
	CHECK(__LINE__, n >= 1 && n <= 3, "one fault counted: got %lu", (unsigned long)n);
	touch(m + 1 * PAGE, 300);
	pc = store_at((volatile uint64_t *)(m + 301 * PAGE));
	rc = faultlog_since_tick(&f, &ip);
	CHECK(__LINE__, rc == 1 && ip == pc, "after 300 faults, the newest at %#lx: got %d at %#lx",
	      (unsigned long)pc, rc, (unsigned long)ip);
	n = faultlog_records_since(&f);
	CHECK(__LINE__, n >= 301 && n <= 303, "301 faults counted (the ring holds far fewer): got %lu",
	      (unsigned long)n);
	store_at((volatile uint64_t *)(m + 301 * PAGE + 8)); /* the page is there now */
	CHECK(__LINE__, faultlog_since_tick(&f, &ip) == 0, "a fault reported for a present page");
	n = faultlog_records_since(&f);
	CHECK(__LINE__, n == 0, "a fault counted for a present page: got %lu", (unsigned long)n);
	faultlog_close(&f);
	store_at((volatile uint64_t *)(m + 400 * PAGE));
	CHECK(__LINE__, faultlog_since_tick(&f, &ip) == 0, "a closed log reported a fault");
	CHECK(__LINE__, faultlog_records_since(&f) == 0, "a closed log counted a fault");

	int fds = open_fds();
	faultlog_begin(&f, (pid_t)gettid());
	CHECK(__LINE__, f.fd < 0 && open_fds() == fds, "begun: an fd opened before the first tick");
	store_at((volatile uint64_t *)(m + 401 * PAGE));
	rc = faultlog_since_tick(&f, &ip);
	CHECK(__LINE__, rc == 0 && f.fd >= 0 && open_fds() == fds + 1,
	      "the first tick: got %d, fd %d (a fault before the log opened is no one's)", rc, f.fd);
	pc = store_at((volatile uint64_t *)(m + 402 * PAGE));
	rc = faultlog_since_tick(&f, &ip);
	CHECK(__LINE__, rc == 1 && ip == pc, "after the first tick, a fault at %#lx: got %d at %#lx",
	      (unsigned long)pc, rc, (unsigned long)ip);
	faultlog_close(&f);
	CHECK(__LINE__, open_fds() == fds, "closed: its fd still open");
	faultlog_begin(&f, (pid_t)gettid());
	faultlog_close(&f);
	rc = faultlog_since_tick(&f, &ip);
	CHECK(__LINE__, rc == 0 && f.fd < 0 && open_fds() == fds,
	      "closed before its first tick: opened at a look after (%d, fd %d)", rc, f.fd);
	munmap(m, PAGES * PAGE);
	check_thinning();
	check_keep_within();
	printf("test_faultlog: %s\n", check_failures ? "failed" : "all checks passed");
	return check_failures != 0;
}
