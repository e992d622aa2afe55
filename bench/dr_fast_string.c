/* dr_fast_string: what one armed hardware watchpoint costs code that never
 * touches it.
 *
 * Times memmove() of SIZE-byte blocks (glibc uses `rep movsb` between a
 * few KiB and a large fraction of the cache) with no watchpoint, then with
 * one perf_event breakpoint armed on an unrelated variable, interleaved,
 * median of RUNS.  On our EPYC VMs the armed run is 16-27x slower for
 * 4 KiB to 64 KiB blocks (0.30 s/GiB against 0.011-0.019) and unchanged
 * for 1 MiB (glibc uses non-temporal vector stores there, no rep):
 * with a data breakpoint enabled in DR7 the CPU gives up fast-string
 * operation.  This is why programs that spend time in mid-sized memcpy,
 * memmove or memset pay more under libwitch than the per-sample cost
 * explains: some watchpoint is armed most of the time (Witch keeps
 * samples watched until their next access).
 *
 * The kernel's own string code runs under the same DR7: a second table
 * times what a process asks of the kernel with the same breakpoint armed
 * (its exclude_kernel changes what it reports, not DR7): pread() of 4 KiB
 * and 64 KiB from the page cache (copy_to_user, `rep movsb` on CPUs with
 * FSRM), pwrite() of 4 KiB, the first touch of an anonymous page
 * (clear_page, `rep stosb`), and for scale what pausing the watchpoint
 * around a call would cost (PERF_EVENT_IOC_DISABLE + _ENABLE).
 *
 * Build: cc -O2 bench/dr_fast_string.c -o dr_fast_string
 * Usage: dr_fast_string [SIZE...]      default 4096 65536 1048576
 */
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define RUNS 5
#define BYTES_PER_RUN (1ul << 30)

static volatile long unrelated;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int watch_unrelated(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_RW;
	a.bp_addr = (unsigned long)&unrelated;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.sample_period = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static double run_once(char *dst, const char *src, size_t size)
{
	double t0 = now();
	for (size_t done = 0; done < BYTES_PER_RUN; done += size) {
		memmove(dst, src, size);
		__asm__ volatile("" ::: "memory");
	}
	return now() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* ---- what the kernel does for the process, in us an operation ---- */
#define KERNEL_OPS 20000
#define FAULT_PAGES 16384 /* 64 MiB a run */

enum kernel_op { OP_PREAD_4K, OP_PREAD_64K, OP_PWRITE_4K, OP_FAULT, OP_PAUSE };
static const char *const kernel_op_name[] = {
	"pread 4 KiB (page cache)", "pread 64 KiB (page cache)", "pwrite 4 KiB (page cache)",
	"first touch of an anonymous page", "pause + resume the watchpoint (2 ioctls)"};

static double kernel_run(enum kernel_op op, int file, int wfd, char *buf)
{
	double t0 = now();
	int n = KERNEL_OPS;
	switch (op) {
	case OP_PREAD_4K:
	case OP_PREAD_64K: {
		size_t size = op == OP_PREAD_4K ? 4096 : 65536;
		for (int i = 0; i < n; i++)
			if (pread(file, buf, size, (off_t)((size_t)i * size % (1u << 20))) != (ssize_t)size)
				return -1;
		break;
	}
	case OP_PWRITE_4K:
		for (int i = 0; i < n; i++)
			if (pwrite(file, buf, 4096, (off_t)((size_t)i * 4096 % (1u << 20))) != 4096)
				return -1;
		break;
	case OP_FAULT: {
		n = FAULT_PAGES;
		char *p = mmap(NULL, (size_t)n * 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return -1;
		madvise(p, (size_t)n * 4096, MADV_NOHUGEPAGE); /* a fault a page */
		t0 = now();
		for (int i = 0; i < n; i++)
			((volatile char *)p)[(size_t)i * 4096] = 1;
		double t = now() - t0;
		munmap(p, (size_t)n * 4096);
		return t * 1e6 / n;
	}
	case OP_PAUSE:
		for (int i = 0; i < n; i++) {
			ioctl(wfd, PERF_EVENT_IOC_DISABLE, 0);
			ioctl(wfd, PERF_EVENT_IOC_ENABLE, 0);
		}
		break;
	}
	return (now() - t0) * 1e6 / n;
}

static int kernel_table(int wfd)
{
	char path[] = "/tmp/dr_fast_string.XXXXXX";
	int file = mkstemp(path);
	char *buf = aligned_alloc(4096, 65536);
	if (file < 0 || !buf)
		return 1;
	unlink(path);
	memset(buf, 3, 65536);
	for (int i = 0; i < 16; i++) /* 1 MiB in the page cache */
		if (pwrite(file, buf, 65536, (off_t)i * 65536) != 65536)
			return 1;
	printf("\n| what the kernel does | no watchpoint us | one armed us | ratio |\n"
	       "|---|---:|---:|---:|\n");
	for (int op = OP_PREAD_4K; op <= OP_PAUSE; op++) {
		double off[RUNS], on[RUNS];
		for (int r = 0; r < RUNS; r++) {
			off[r] = op == OP_PAUSE ? 0 : kernel_run(op, file, wfd, buf);
			ioctl(wfd, PERF_EVENT_IOC_ENABLE, 0);
			on[r] = kernel_run(op, file, wfd, buf);
			ioctl(wfd, PERF_EVENT_IOC_DISABLE, 0);
			if (off[r] < 0 || on[r] < 0)
				return 1;
		}
		qsort(off, RUNS, sizeof(double), cmp_double);
		qsort(on, RUNS, sizeof(double), cmp_double);
		if (op == OP_PAUSE)
			printf("| %s | | %.2f | |\n", kernel_op_name[op], on[RUNS / 2]);
		else
			printf("| %s | %.2f | %.2f | %.2f |\n", kernel_op_name[op], off[RUNS / 2],
			       on[RUNS / 2], on[RUNS / 2] / off[RUNS / 2]);
	}
	close(file);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	static const size_t defaults[] = {4096, 65536, 1048576};
	int fd = watch_unrelated();
	if (fd < 0) {
		perror("perf_event_open breakpoint");
		return 1;
	}
	printf("| block bytes | no watchpoint s/GiB | one armed s/GiB | ratio |\n|---:|---:|---:|---:|\n");
	int n = argc > 1 ? argc - 1 : 3;
	for (int i = 0; i < n; i++) {
		size_t size = argc > 1 ? strtoul(argv[i + 1], NULL, 10) : defaults[i];
		char *src = aligned_alloc(4096, size + 4096), *dst = aligned_alloc(4096, size + 4096);
		if (!src || !dst || size == 0)
			return 1;
		memset(src, 1, size);
		memset(dst, 2, size);
		double off[RUNS], on[RUNS];
		for (int r = 0; r < RUNS; r++) {
			off[r] = run_once(dst, src, size);
			ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
			on[r] = run_once(dst, src, size);
			ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		}
		qsort(off, RUNS, sizeof(double), cmp_double);
		qsort(on, RUNS, sizeof(double), cmp_double);
		printf("| %zu | %.3f | %.3f | %.2f |\n", size, off[RUNS / 2], on[RUNS / 2],
		       on[RUNS / 2] / off[RUNS / 2]);
		free(src);
		free(dst);
	}
	return kernel_table(fd);
}
