/* io_linger: samples that wait for an access that never comes, while the
 * program reads a file in pages (drcost.h).
 *
 *   A  300,000 preads of 4 KiB from the page cache: the samples here (the
 *      loop's stack slots) are decided within an iteration, so the
 *      watchpoints are free between ticks and the thread's rate of system
 *      per user time is measured without any armed;
 *   B  a 64 MiB array written, never read: its samples wait until the
 *      next round's B overwrites them;
 *   C  250,000 preads as in A, with B's samples still armed: every copy
 *      to the user buffer runs without fast strings (3x here), which the
 *      armed stretches measure against A's rate, over any budget, so a
 *      tick lets B's samples go (stat watch_expired).
 * B and C run in 4 rounds.  Whether one of B's samples is still armed when
 * C starts is chance (about 1 in 8 under a budget it is not), so rounds
 * give the budget run four independent chances in one run.
 * Prints a checksum of what it read and wrote (the same native and
 * profiled).  io_linger.sh checks the profile.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PAGE 4096
#define FILE_PAGES 256
#define ARRAY_WORDS (8u << 20)
#define ROUNDS 4

static uint64_t read_pages(int fd, char *buf, long calls)
{
	uint64_t sum = 0;
	for (long i = 0; i < calls; i++) {
		if (pread(fd, buf, PAGE, (off_t)(i % FILE_PAGES) * PAGE) != PAGE)
			return 0;
		sum += (unsigned char)buf[i % PAGE];
	}
	return sum;
}

int main(void)
{
	char path[] = "/tmp/io_linger.XXXXXX";
	int fd = mkstemp(path);
	static char buf[PAGE];
	if (fd < 0)
		return 2;
	unlink(path);
	for (int p = 0; p < FILE_PAGES; p++) {
		memset(buf, p & 0xff, PAGE);
		if (pwrite(fd, buf, PAGE, (off_t)p * PAGE) != PAGE)
			return 2;
	}
	uint64_t sum = read_pages(fd, buf, 300000);
	volatile uint64_t *array = malloc(ARRAY_WORDS * sizeof(uint64_t));
	if (!array)
		return 2;
	for (int r = 0; r < ROUNDS; r++) {
		for (uint64_t i = 0; i < ARRAY_WORDS; i++)
			array[i] = (i + r) * 2654435761u;
		sum += read_pages(fd, buf, 1000000 / ROUNDS);
	}
	sum += array[ARRAY_WORDS / 3];
	printf("io_linger: %llu\n", (unsigned long long)sum);
	return 0;
}
