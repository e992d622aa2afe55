/* fault_price: what a page's first touch costs on this machine, beside a
 * system call and an mmap.
 *
 * A process's fixed cost under the runtime is mostly pages touched for the
 * first time (bench/results/startup.md, "Page faults"): the runtime's
 * tables, the libraries it loads and their relocations.  On a VM whose
 * guest page tables are the hypervisor's to keep (a PVM guest, as here) a
 * first touch costs far more than on bare metal; this prints how much, so
 * a fault count can be read as time.
 *
 * Each row: ROUNDS times map 16 fresh anonymous pages, do the row's work,
 * unmap; the mmap+munmap pair alone is timed first and taken off.  Best of
 * PASSES passes (the least disturbed), microseconds.
 *
 * usage: fault_price          (cc -O2 bench/fault_price.c -o fault_price)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGES 16
#define ROUNDS 2000
#define PASSES 5

enum work { NOTHING, READ, WRITE, POPULATE };

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static volatile char sink;

/* ns a round of ROUNDS: map, work, unmap. */
static double round_ns(enum work w)
{
	double t0 = now_ns();
	for (int r = 0; r < ROUNDS; r++) {
		char *p = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			return -1;
		}
		if (w == POPULATE && madvise(p, PAGES * 4096, MADV_POPULATE_WRITE) != 0) {
			perror("madvise(MADV_POPULATE_WRITE)");
			return -1;
		}
		for (int k = 0; w != NOTHING && k < PAGES; k++) {
			if (w == READ)
				sink += p[k * 4096];
			else
				p[k * 4096] = 1;
		}
		munmap(p, PAGES * 4096);
	}
	return (now_ns() - t0) / ROUNDS;
}

static double best(enum work w)
{
	double b = -1;
	for (int pass = 0; pass < PASSES; pass++) {
		double t = round_ns(w);
		if (t >= 0 && (b < 0 || t < b))
			b = t;
	}
	return b;
}

int main(void)
{
	double t0 = now_ns();
	for (int i = 0; i < 100000; i++)
		syscall(SYS_getpid);
	double sys_ns = (now_ns() - t0) / 100000;
	double base = best(NOTHING);
	printf("a system call (getpid)          %6.2f us\n", sys_ns / 1e3);
	printf("mmap + munmap of %d pages       %6.2f us\n", PAGES, base / 1e3);
	printf("a first read (the zero page)    %6.2f us a page\n", (best(READ) - base) / PAGES / 1e3);
	printf("a first write                   %6.2f us a page\n", (best(WRITE) - base) / PAGES / 1e3);
	printf("MADV_POPULATE_WRITE, then write %6.2f us a page\n",
	       (best(POPULATE) - base) / PAGES / 1e3);
	return 0;
}
