/* dr_quirks: two ways QEMU's emulated debug registers (TCG) part from a
 * real x86's, each in a few lines, for tools/tcg_guest.sh quirks.
 *
 *   dr_quirks two      two write breakpoints on one word, 1000 writes: on
 *                      x86 an instruction that meets both sets both DR6
 *                      bits and Linux's handler counts each, so both read
 *                      1000.  TCG sets the first's only: the other reads 0.
 *   dr_quirks step M   1000 writes single-stepped (TF, set again by each
 *                      SIGTRAP's handler): M=1 no breakpoint, M=2 a write
 *                      breakpoint on a word not written, M=3 one on the
 *                      word written.  On x86 a step over a watched write
 *                      reports DR6.BS and DR6.B0 together (both traps).
 *                      Under TCG M=1 and M=2 end, and M=3 never does: the
 *                      vCPU goes round the kernel's exc_debug and
 *                      native_set_debugreg (seen 2026-12-04, QEMU 7.2
 *                      and 10.0).
 *   dr_quirks kernel   the kernel writing watched words, which ends under
 *                      TCG as on x86: read() from a pipe into a word a
 *                      write breakpoint watches (copy_to_user), and signal
 *                      frames written over four watched words of an
 *                      alternate signal stack.
 *
 * Prints one line of counts and exits 0; 1 when perf_event_open refuses
 * a breakpoint; 2 on bad usage.  Breakpoints that never trap (some VMs)
 * read 0 of 1000 everywhere.
 */
#define _GNU_SOURCE
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define WRITES 1000
#define EFLAGS_TF 0x100

static volatile uint64_t written, not_written;
static volatile uint64_t read_into[8] __attribute__((aligned(64)));
static char alt_stack[65536] __attribute__((aligned(64)));
static volatile sig_atomic_t frames;
static volatile sig_atomic_t stepping;
static volatile long steps;

static int breakpoint_open_type(volatile void *word, int type)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof(a);
	a.bp_type = type;
	a.bp_addr = (uintptr_t)word;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.sample_period = 1; /* counted only: no signal is asked for */
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static int breakpoint_open(volatile uint64_t *word)
{
	return breakpoint_open_type(word, HW_BREAKPOINT_W);
}

static long breakpoint_count(int fd)
{
	uint64_t n = 0;
	return read(fd, &n, sizeof(n)) == (ssize_t)sizeof(n) ? (long)n : -1;
}

static __attribute__((noinline)) void write_word(void)
{
	for (int i = 0; i < WRITES; i++)
		written = (uint64_t)i;
}

/* Each step's SIGTRAP sets TF again while stepping, clears it after. */
static void on_step(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	ucontext_t *uc = ctx;
	steps++;
	if (stepping)
		uc->uc_mcontext.gregs[REG_EFL] |= EFLAGS_TF;
	else
		uc->uc_mcontext.gregs[REG_EFL] &= ~(greg_t)EFLAGS_TF;
}

static int quirk_two(void)
{
	int a = breakpoint_open(&written), b = breakpoint_open(&written);
	if (a < 0 || b < 0) {
		perror("dr_quirks: perf_event_open");
		return 1;
	}
	ioctl(a, PERF_EVENT_IOC_ENABLE, 0);
	ioctl(b, PERF_EVENT_IOC_ENABLE, 0);
	write_word();
	ioctl(a, PERF_EVENT_IOC_DISABLE, 0);
	ioctl(b, PERF_EVENT_IOC_DISABLE, 0);
	printf("two: %ld and %ld of %d\n", breakpoint_count(a), breakpoint_count(b), WRITES);
	return 0;
}

static void catch_signal(int sig, void (*fn)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static int quirk_step(int mode)
{
	catch_signal(SIGTRAP, on_step, 0);
	int fd = breakpoint_open(mode == 2 ? &not_written : &written);
	if (fd < 0) {
		perror("dr_quirks: perf_event_open");
		return 1;
	}
	if (mode != 1)
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	printf("step %d: stepping\n", mode);
	fflush(stdout);
	stepping = 1;
	raise(SIGTRAP); /* its handler sets TF: each instruction from here traps */
	write_word();
	stepping = 0;
	raise(SIGTRAP);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	printf("step %d: %ld of %d counted, %ld steps\n", mode, breakpoint_count(fd),
	       mode == 3 ? WRITES : 0, steps);
	return 0;
}

static void on_frame(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	(void)ctx;
	frames++;
}

static int quirk_kernel(void)
{
	int fd = breakpoint_open(&read_into[2]), pipefd[2];
	if (fd < 0) {
		perror("dr_quirks: perf_event_open");
		return 1;
	}
	if (pipe(pipefd) < 0)
		return 1;
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	char src[sizeof(read_into)];
	memset(src, 7, sizeof(src));
	for (int i = 0; i < 100; i++)
		if (write(pipefd[1], src, sizeof(src)) != (ssize_t)sizeof(src) ||
		    read(pipefd[0], (void *)read_into, sizeof(src)) != (ssize_t)sizeof(src))
			return 1;
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	printf("kernel read: ended, %ld counted (the kernel's writes are not the user's: 0)\n",
	       breakpoint_count(fd));
	close(fd); /* its debug register, for the frames' four */
	stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof(alt_stack)};
	sigaltstack(&ss, NULL);
	catch_signal(SIGUSR1, on_frame, SA_ONSTACK);
	int n = 0;
	for (size_t off = sizeof(alt_stack) - 1024; n < 4; off -= 1024) {
		int b = breakpoint_open_type(alt_stack + off, HW_BREAKPOINT_RW);
		if (b < 0)
			break;
		ioctl(b, PERF_EVENT_IOC_ENABLE, 0);
		n++;
	}
	for (int i = 0; i < 100; i++)
		raise(SIGUSR1);
	printf("kernel frame: ended, %d signals, %d words of their frames watched\n", (int)frames, n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "two") == 0)
		return quirk_two();
	if (argc == 2 && strcmp(argv[1], "kernel") == 0)
		return quirk_kernel();
	if (argc == 3 && strcmp(argv[1], "step") == 0 && argv[2][0] >= '1' && argv[2][0] <= '3' &&
	    argv[2][1] == 0)
		return quirk_step(argv[2][0] - '0');
	fprintf(stderr, "usage: dr_quirks two | dr_quirks kernel | dr_quirks step 1|2|3\n");
	return 2;
}
