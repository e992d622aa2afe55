/* io_return: ticks that come due in a system call made through the
 * runtime's I/O wrappers (iocount.h) stand for the kernel's time, not the
 * runtime's (handler.c's tick_in_runtime: a system call's way out, and the
 * wrappers as a whole, are the kernel's).
 *
 *   R times: pread(fd, buf, 64, off) through libwitch's pread (it adds the
 *   bytes read to a thread counter, then returns), then sum_words over
 *   WORDS words of a 64 KiB table (L1/L2-resident, ~1 ns a word).
 *
 * Per repetition: the wrapper ~10 instructions (~5 ns), the C library's
 * pread ~15, sum_words ~WORDS * 3 = ~1,500 (~300-500 ns); the kernel's
 * read from the page cache ~0.5-1 us.  So the wrapper's own share of the
 * user time is ~1-2% and of all CPU time below that: ticks_in_runtime /
 * ticks (cost_inline_ns / clock_ns alike) is at most ~0.02, whatever the
 * machine.  On a hypervisor that takes a timer interrupt only on the
 * kernel's way back to user mode (this PVM guest, sysret.h), the ticks
 * that came due in the kernel arrive up to four instructions past the
 * `syscall`, a quarter of them past the C library's `ret`, in the wrapper:
 * counted as the runtime's they read 0.15-0.30 of the ticks (2026-12-04:
 * 24-30% with a 16-word sum).  The test asks at most 0.03.
 *
 * threaded: a second thread sleeps in pthread_join's partner (it only
 * waits), so the C library's pread is a cancellation point's: it calls
 * __pthread_enable/disable_asynccancel around the `syscall`, and a late
 * tick lands past a path longer than sysret_tick follows, in the wrapper
 * after the call returns (redis-server's ticks in write and read; the
 * runtime's wrappers are the kernel's as a whole since, iocount_holds_pc).
 * The same bound holds.
 *
 * Usage: io_return [REPS [threaded]]     default REPS = 600,000 (0.17-0.9 s on
 * the VMs seen; the tests run 1,500,000 so that 2000/s gives >= 200 ticks)
 */
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "ka.h"

#define WORDS 512
#define TABLE_WORDS 16384 /* 64 KiB */

static uint32_t table[TABLE_WORDS];

KA_FN uint64_t sum_words(const uint32_t *p, int n)
{
	uint64_t s = 0;
	for (int i = 0; i < n; i++)
		s += KA_LOAD(p, i);
	return s;
}

static int quit_pipe[2];

/* Waits, off CPU, until main is done: the process is multi-threaded. */
static void *idle_thread(void *arg)
{
	char c;
	while (read(quit_pipe[0], &c, 1) < 0)
		;
	return arg;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 600000);
	int threaded = argc > 2 && strcmp(argv[2], "threaded") == 0;
	pthread_t idle;
	if (threaded && (pipe(quit_pipe) < 0 || pthread_create(&idle, NULL, idle_thread, NULL) != 0)) {
		perror("io_return: a second thread");
		return 1;
	}
	int fd = open(argv[0], O_RDONLY);
	if (fd < 0) {
		perror("io_return: open");
		return 1;
	}
	uint64_t v = 1, total = 0;
	for (int i = 0; i < TABLE_WORDS; i++) {
		KA_LCG(v);
		table[i] = KA_HI(v);
	}
	uint8_t buf[64];
	for (long r = 0; r < reps; r++) {
		if (pread(fd, buf, sizeof buf, (off_t)(r & 63) * 64) != (ssize_t)sizeof buf) {
			perror("io_return: pread");
			return 1;
		}
		total += buf[r & 63] + sum_words(table + (r & 31) * WORDS, WORDS);
	}
	close(fd);
	if (threaded) {
		if (write(quit_pipe[1], "q", 1) != 1 || pthread_join(idle, NULL) != 0) {
			perror("io_return: ending the second thread");
			return 1;
		}
	}
	printf("io_return reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	return 0;
}
