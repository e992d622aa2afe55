/* io_return: ticks that come due in a system call made through the
 * runtime's I/O wrappers (iocount.h) stand for the kernel's time, not the
 * runtime's (handler.c: a system call's way out is asked before the
 * runtime's code).
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
 * 24-30% with a 16-word sum).  The test asks at most 0.08.
 *
 * Usage: io_return [REPS]     default REPS = 600,000 (~0.9 s here)
 */
#include <fcntl.h>
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

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 600000);
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
	printf("io_return reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	return 0;
}
