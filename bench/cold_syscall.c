/* cold_syscall: what a system call costs a handler that runs cold.
 *
 * At the budget's rates a tick comes every 10-50 ms of the program's CPU
 * time, and the program has the caches, the TLB and the branch predictor
 * to itself meanwhile.  This times the system calls a tick's handler makes
 * (getpid, clock_gettime of the thread's CPU clock, getrusage of the
 * thread, process_vm_readv of 8 bytes) after GAP ms of touching a 256 MiB
 * buffer a line a page at a time, as the first call and as the mean of
 * four in a row; GAP 0 is the hot price.  Median of 60 rounds, TSC cycles.
 *
 * usage: cold_syscall [GAP_MS...]   (cc -O2 bench/cold_syscall.c -o cold_syscall)
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define BIG (256ul << 20)
#define ROUNDS 60

enum call { GETPID, THREAD_CLOCK, GETRUSAGE, VM_READV, NCALLS };
static const char *const call_name[NCALLS] = {"getpid", "clock_gettime(THREAD_CPUTIME)",
					      "getrusage(THREAD)", "process_vm_readv(8 B)"};

static volatile uint64_t sink;
static char *big;
static size_t big_at;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The program's part: gap_ms of loads strided over the buffer. */
static void run_program(double gap_ms)
{
	double t0 = now_ns();
	while (now_ns() - t0 < gap_ms * 1e6)
		for (int k = 0; k < 64; k++) {
			sink += (uint64_t)big[big_at];
			big_at = (big_at + 7 * 4096 + 64) % BIG;
		}
}

static void do_call(enum call c)
{
	struct timespec ts;
	struct rusage ru;
	uint64_t word;
	struct iovec local = {&word, sizeof word}, remote = {(void *)&sink, sizeof word};
	switch (c) {
	case GETPID:
		syscall(SYS_getpid);
		break;
	case THREAD_CLOCK:
		syscall(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, &ts);
		break;
	case GETRUSAGE:
		syscall(SYS_getrusage, RUSAGE_THREAD, &ru);
		break;
	case VM_READV:
		syscall(SYS_process_vm_readv, getpid(), &local, 1, &remote, 1, 0);
		break;
	default:
		break;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median cycles of a call made n times in a row after each gap, per call. */
static double price(enum call c, double gap_ms, int n)
{
	double v[ROUNDS];
	for (int r = 0; r < ROUNDS; r++) {
		run_program(gap_ms);
		uint64_t t0 = __rdtsc();
		for (int i = 0; i < n; i++)
			do_call(c);
		v[r] = (double)(__rdtsc() - t0) / n;
	}
	qsort(v, ROUNDS, sizeof v[0], cmp_double);
	return v[ROUNDS / 2];
}

int main(int argc, char **argv)
{
	big = mmap(NULL, BIG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (big == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(big, 1, BIG);
	double gaps[8] = {0, 20};
	int n_gaps = 2;
	if (argc > 1) {
		n_gaps = 0;
		for (int i = 1; i < argc && n_gaps < 8; i++)
			gaps[n_gaps++] = atof(argv[i]);
	}
	printf("| call | gap ms | first, cycles | mean of 4, cycles |\n|---|---:|---:|---:|\n");
	for (int c = 0; c < NCALLS; c++)
		for (int g = 0; g < n_gaps; g++)
			printf("| %s | %g | %.0f | %.0f |\n", call_name[c], gaps[g],
			       price((enum call)c, gaps[g], 1), price((enum call)c, gaps[g], 4));
	return 0;
}
