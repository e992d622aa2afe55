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
	printf("test_faultlog: %s\n", check_failures ? "failed" : "all checks passed");
	return check_failures != 0;
}
