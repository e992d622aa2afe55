/* fault_chain: a program with SIGSEGV and SIGBUS handlers of its own, as
 * gcc's cc1, Rust programs and JVMs have.  The runtime keeps its own fault
 * handler installed under them (fatal.h) and passes the program's faults
 * on; this program checks they arrive as the kernel would have sent them.
 *
 * Each row installs its action, runs dead_two_loops' work (so a profile
 * has samples, taken while the program's handler is in place), causes its
 * fault and prints what the handler saw.  run_same_status.sh compares the
 * output and exit status with the native run's, so every printed field is
 * an assertion:
 *
 *   fix        SA_SIGINFO handler with SIGUSR1 in sa_mask, mprotects the page
 *              and returns: the store completes; si_addr the page, si_code
 *              SEGV_ACCERR; SIGSEGV and SIGUSR1 blocked in the handler,
 *              SIGUSR2 not; sigaction reads back the handler and its mask.
 *   nodefer    the same with SA_NODEFER: SIGSEGV not blocked in the handler.
 *   jump       signal() handler that siglongjmps out of a read fault.
 *   resethand  SA_RESETHAND: the first fault handled, then SIG_DFL reads
 *              back, and the second fault kills (status 139).
 *   onstack    its own sigaltstack and SA_ONSTACK: the handler runs on it.
 *   offstack   its own sigaltstack, no SA_ONSTACK: the handler does not.
 *   overflow   unbounded recursion into the guard page, caught on its
 *              sigaltstack (Rust's guard): _exit(42) from the handler.
 *   bus        SIGBUS past a file's end: si_code BUS_ADRERR, siglongjmp.
 *   sent       raise(SIGSEGV): the handler gets it, si_code SI_TKILL.
 *   skip       the handler moves the context's pc past the faulting store
 *              (as a JVM's implicit null check does): the store never lands.
 *   ignore     SIG_IGN, then a fault: killed all the same (139), as the
 *              kernel does; raise(SIGSEGV) before it is dropped.
 *   dfl        a handler, then SIG_DFL again: the fault kills (139).
 *   work       fix's handler, 10 repetitions with a fault in each: the
 *              known answer's run (known_answer.fault_chain), where the
 *              runtime must read the program's memory in place.
 *
 * Usage: fault_chain ROW [REPS]      REPS default 4 (10 for work)
 */
#include "ka.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <ucontext.h>
#include <unistd.h>

#define N (16u << 20)

static uint32_t *a;

#include "dead_loops.h"

static char altstack[256 * 1024];
static volatile uint8_t *page;
static long page_size;
static sigjmp_buf jump;

static struct {
	volatile sig_atomic_t faults, code, segv_blocked, usr1_blocked, usr2_blocked, on_altstack;
	void *volatile addr;
} seen;

static void note(int sig, siginfo_t *si)
{
	sigset_t cur;
	char here;
	seen.faults++;
	seen.code = si ? si->si_code : -1;
	seen.addr = si ? si->si_addr : NULL;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	seen.segv_blocked = sigismember(&cur, sig);
	seen.usr1_blocked = sigismember(&cur, SIGUSR1);
	seen.usr2_blocked = sigismember(&cur, SIGUSR2);
	seen.on_altstack = &here >= altstack && &here < altstack + sizeof(altstack);
}

static void on_fault_fix(int sig, siginfo_t *si, void *uc)
{
	note(sig, si);
	if (si->si_code > 0)
		mprotect((void *)page, (size_t)page_size, PROT_READ | PROT_WRITE);
}

static void on_fault_jump(int sig)
{
	note(sig, NULL);
	siglongjmp(jump, 1);
}

static void on_fault_jump_info(int sig, siginfo_t *si, void *uc)
{
	note(sig, si);
	siglongjmp(jump, 1);
}

static void *volatile skip_to;

static void on_fault_skip(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	note(sig, si);
	uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(uintptr_t)skip_to;
}

static void on_overflow(int sig, siginfo_t *si, void *uc)
{
	note(sig, si);
	char line[64];
	int n = snprintf(line, sizeof line, "overflow: caught, on its altstack %d\n",
			 (int)seen.on_altstack);
	write(1, line, (size_t)n);
	_exit(42);
}

/* A store the handler skips: the pc after it is known to the handler. */
static void store_skipped(volatile uint8_t *p)
{
	__asm__ volatile("lea 1f(%%rip), %%rax\n\t"
			 "mov %%rax, %1\n\t"
			 "movb $7, (%0)\n"
			 "1:\n"
			 :
			 : "r"(p), "m"(skip_to)
			 : "rax", "memory");
}

KA_FN uint64_t recurse(uint64_t depth)
{
	volatile char frame[1024];
	frame[0] = (char)depth;
	if (depth == UINT64_MAX) /* never: the stack ends first */
		return 0;
	return recurse(depth + 1) + frame[0];
}

static void set_action(int sig, void (*fn)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR1);
	if (sigaction(sig, &sa, NULL) < 0) {
		perror("sigaction");
		exit(2);
	}
}

static void use_altstack(void)
{
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
	if (sigaltstack(&ss, NULL) < 0) {
		perror("sigaltstack");
		exit(2);
	}
}

static void work(long reps)
{
	uint64_t total = 0;
	for (long r = 0; r < reps; r++) {
		fill(a, 2 * (uint64_t)r + 1);
		overwrite(a, 2 * (uint64_t)r + 2);
		total += sum(a);
	}
	printf("work: reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	fflush(stdout);
}

static void print_seen(const char *row)
{
	printf("%s: faults=%d code=%d addr_is_page=%d segv_blocked=%d usr1_blocked=%d "
	       "usr2_blocked=%d on_altstack=%d\n",
	       row, (int)seen.faults, (int)seen.code, seen.addr == (void *)page,
	       (int)seen.segv_blocked, (int)seen.usr1_blocked, (int)seen.usr2_blocked,
	       (int)seen.on_altstack);
	fflush(stdout);
}

/* What sigaction reads back, told as the kernel tells it: by the handler's
 * value (SA_RESETHAND leaves SA_SIGINFO and the mask as they were). */
static void print_readback(const char *row, int sig)
{
	struct sigaction now;
	sigaction(sig, NULL, &now);
	const char *what = now.sa_handler == SIG_DFL ? "SIG_DFL"
			   : now.sa_handler == SIG_IGN ? "SIG_IGN"
			   : now.sa_sigaction == on_fault_fix ? "on_fault_fix"
							      : "another handler";
	printf("%s: reads back %s, siginfo %d, usr1 in its mask %d\n", row, what,
	       !!(now.sa_flags & SA_SIGINFO), sigismember(&now.sa_mask, SIGUSR1));
	fflush(stdout);
}

static int row_fix(const char *row, long reps, int flags)
{
	set_action(SIGSEGV, on_fault_fix, flags);
	print_readback(row, SIGSEGV);
	work(reps);
	page[0] = 7; /* faults once; the handler opens the page */
	print_seen(row);
	sigset_t cur;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	printf("%s: stored %d, segv blocked after %d\n", row, page[0], sigismember(&cur, SIGSEGV));
	return 0;
}

static int row_work(long reps)
{
	set_action(SIGSEGV, on_fault_fix, 0);
	for (long r = 0; r < reps; r++) {
		mprotect((void *)page, (size_t)page_size, PROT_NONE);
		work(1);
		page[r] = (uint8_t)r;
	}
	print_seen("work");
	return 0;
}

static int row_run(const char *row, long reps)
{
	if (!strcmp(row, "fix"))
		return row_fix(row, reps, 0);
	if (!strcmp(row, "nodefer"))
		return row_fix(row, reps, SA_NODEFER);
	if (!strcmp(row, "onstack")) {
		use_altstack();
		return row_fix(row, reps, SA_ONSTACK);
	}
	if (!strcmp(row, "offstack")) {
		use_altstack();
		return row_fix(row, reps, 0);
	}
	if (!strcmp(row, "work"))
		return row_work(reps);
	if (!strcmp(row, "jump")) {
		signal(SIGSEGV, on_fault_jump);
		work(reps);
		if (!sigsetjmp(jump, 1))
			printf("jump: read %d\n", page[1]); /* faults */
		print_seen(row);
		return 0;
	}
	if (!strcmp(row, "resethand")) {
		set_action(SIGSEGV, on_fault_fix, SA_RESETHAND);
		work(reps);
		page[0] = 7;
		print_seen(row);
		print_readback(row, SIGSEGV);
		mprotect((void *)page, (size_t)page_size, PROT_NONE);
		page[0] = 8; /* the default action now: killed */
		printf("resethand: not reached\n");
		return 1;
	}
	if (!strcmp(row, "overflow")) {
		use_altstack();
		set_action(SIGSEGV, on_overflow, SA_ONSTACK);
		work(reps);
		printf("overflow: %llu\n", (unsigned long long)recurse(0));
		return 1;
	}
	if (!strcmp(row, "bus")) {
		char path[] = "/tmp/fault_chain.XXXXXX";
		int fd = mkstemp(path);
		unlink(path);
		if (fd < 0 || ftruncate(fd, 1) < 0)
			return 2;
		volatile uint8_t *m = mmap(NULL, 2 * (size_t)page_size, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			return 2;
		set_action(SIGBUS, on_fault_jump_info, 0);
		print_readback(row, SIGBUS);
		work(reps);
		if (!sigsetjmp(jump, 1))
			printf("bus: read %d\n", m[page_size]); /* past the file's last page */
		print_seen(row);
		printf("bus: code is BUS_ADRERR %d, addr past the end %d\n", seen.code == BUS_ADRERR,
		       seen.addr == (void *)(m + page_size));
		return 0;
	}
	if (!strcmp(row, "sent")) {
		set_action(SIGSEGV, on_fault_fix, 0);
		work(reps);
		raise(SIGSEGV);
		print_seen(row);
		printf("sent: code is SI_TKILL %d\n", seen.code == SI_TKILL);
		return 0;
	}
	if (!strcmp(row, "skip")) {
		set_action(SIGSEGV, on_fault_skip, 0);
		work(reps);
		store_skipped(page);
		print_seen(row);
		mprotect((void *)page, (size_t)page_size, PROT_READ);
		printf("skip: byte still %d\n", page[0]);
		return 0;
	}
	if (!strcmp(row, "ignore")) {
		signal(SIGSEGV, SIG_IGN);
		print_readback(row, SIGSEGV);
		raise(SIGSEGV); /* dropped */
		work(reps);
		printf("ignore: the raise was dropped\n");
		fflush(stdout);
		page[0] = 7; /* a fault kills even so */
		printf("ignore: not reached\n");
		return 1;
	}
	if (!strcmp(row, "dfl")) {
		set_action(SIGSEGV, on_fault_fix, 0);
		work(reps);
		signal(SIGSEGV, SIG_DFL);
		print_readback(row, SIGSEGV);
		page[0] = 7;
		printf("dfl: not reached\n");
		return 1;
	}
	fprintf(stderr, "fault_chain: no row %s\n", row);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fault_chain ROW [REPS]\n");
		return 2;
	}
	const char *row = argv[1];
	long reps = argc > 2 ? atol(argv[2]) : !strcmp(row, "work") ? 10 : 4;
	page_size = sysconf(_SC_PAGESIZE);
	page = mmap(NULL, (size_t)page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	a = ka_alloc((size_t)N * sizeof *a);
	if (page == MAP_FAILED)
		return 2;
	return row_run(row, reps);
}
