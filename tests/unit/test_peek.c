/* test_peek: a read of the program's memory goes in place only where a
 * fault would be rescued and no watchpoint of the thread covers it; every
 * other read goes through the kernel and fails with -EFAULT, not a fault.
 *
 * Each row runs in a child: the row's SIGSEGV/SIGBUS disposition (fatal.c's
 * handler, as in a profiled program that leaves them at default; the
 * default; a handler the "program" set by raw system call, past every
 * interposer, as Go's runtime does; or one it set through sigaction, under
 * which fatal.c's stays), its signal mask, a return point set or
 * not, and a fake watchpoint over one word.  The child reads the row's
 * target and reports how: in place or through the kernel (peek's stats),
 * the bytes, -EFAULT, or rescued (the return point came back).
 *
 * Then reads through the kernel in and out of a handler run (line_rows):
 * in a run each 64-byte line is read once and kept to the run's end (the
 * program does not run meanwhile), so a second read of a line costs no
 * system call and sees the run's snapshot; outside a run every read asks
 * the kernel.  Each row counts peek_remote and checks the second read's
 * bytes.
 */
#include "witch/fatal.h"
#include "witch/peek.h"
#include "witch/rescue.h"
#include "witch/stats.h"
#include "witch/watchpoint.h"
#include "check.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum disposition { FATAL, DEFAULT, RAW_OTHER, SET_OTHER_AFTER };
/* The return point's interrupted context (rescue_arm): none (the kernel is
 * asked for the mask), one whose mask leaves SIGSEGV open, one blocking it. */
enum context { NO_UC, UC_OPEN, UC_BLOCKING };
enum target { MAPPED, UNMAPPED, WATCHED, BESIDE_WATCHED };
enum outcome { READ_IN_PLACE, READ_REMOTE, EFAULT_REMOTE, RESCUED };

static const struct {
	int line;
	enum disposition disp;
	int point;   /* a return point set (a handler run) */
	int blocked; /* SIGSEGV blocked while reading */
	enum context uc;
	enum target target;
	enum outcome want;
} rows[] = {
	{__LINE__, FATAL, 1, 0, NO_UC, MAPPED, READ_IN_PLACE},
	{__LINE__, FATAL, 1, 0, NO_UC, UNMAPPED, RESCUED},          /* the run ends, the program lives */
	{__LINE__, FATAL, 1, 0, NO_UC, WATCHED, READ_REMOTE},       /* would trap on the watchpoint */
	{__LINE__, FATAL, 1, 0, NO_UC, BESIDE_WATCHED, READ_IN_PLACE},
	{__LINE__, FATAL, 0, 0, NO_UC, MAPPED, READ_REMOTE},        /* no return point: nothing rescues */
	{__LINE__, FATAL, 0, 0, NO_UC, UNMAPPED, EFAULT_REMOTE},
	{__LINE__, DEFAULT, 1, 0, NO_UC, MAPPED, READ_REMOTE},      /* a fault would kill */
	{__LINE__, DEFAULT, 1, 0, NO_UC, UNMAPPED, EFAULT_REMOTE},
	{__LINE__, RAW_OTHER, 1, 0, NO_UC, MAPPED, READ_REMOTE},    /* the program's handler would get it */
	{__LINE__, RAW_OTHER, 1, 0, NO_UC, UNMAPPED, EFAULT_REMOTE},
	{__LINE__, FATAL, 1, 1, NO_UC, MAPPED, READ_REMOTE},        /* a blocked fault kills */
	{__LINE__, FATAL, 1, 1, NO_UC, UNMAPPED, EFAULT_REMOTE},
	/* A handler's run reads the mask from the context it interrupted. */
	{__LINE__, FATAL, 1, 0, UC_OPEN, MAPPED, READ_IN_PLACE},
	{__LINE__, FATAL, 1, 0, UC_BLOCKING, MAPPED, READ_REMOTE},
	{__LINE__, FATAL, 1, 0, UC_BLOCKING, UNMAPPED, EFAULT_REMOTE},
	/* A first run found fatal.c's handler, then the program set its own
	 * through the interposer: fatal.c's stays installed and passes the
	 * program's faults on (fatal.h), so reads stay in place and a fault in
	 * a run is still rescued, not the program's handler's (exit 9). */
	{__LINE__, SET_OTHER_AFTER, 1, 0, NO_UC, MAPPED, READ_IN_PLACE},
	{__LINE__, SET_OTHER_AFTER, 1, 0, NO_UC, UNMAPPED, RESCUED},
};

static int row;
static uint64_t words[4] = {0x1111111111111111ull, 0x2222222222222222ull,
			    0x3333333333333333ull, 0x4444444444444444ull};

static void no_profile(void)
{
}

static void other_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	_exit(9); /* the program's handler got a fault of the runtime's */
}

/* As the kernel's rt_sigaction takes it on x86-64. */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

static int install_raw(void)
{
	struct ksigaction old, k;
	if (syscall(SYS_rt_sigaction, SIGSEGV, NULL, &old, 8) != 0)
		return -1;
	k = old; /* keeps glibc's restorer */
	k.handler = (void *)other_handler;
	k.flags |= SA_SIGINFO;
	return (int)syscall(SYS_rt_sigaction, SIGSEGV, &k, NULL, 8);
}

static uint64_t target_addr(enum target t)
{
	long page = sysconf(_SC_PAGESIZE);
	if (t == UNMAPPED) {
		void *p = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(p, (size_t)page);
		return (uint64_t)(uintptr_t)p;
	}
	return (uint64_t)(uintptr_t)&words[t == WATCHED ? 1 : t == BESIDE_WATCHED ? 2 : 0];
}

/* 0 when the row's outcome came, else a code saying what came instead. */
static int child(void)
{
	static struct watchpoint_set wps;
	static struct witch_stats st;
	struct rescue_point rp;
	uint64_t got = 0;

	if (rows[row].disp != DEFAULT && fatal_install(no_profile) < 0)
		return 20;
	if (rows[row].disp == RAW_OTHER && install_raw() != 0)
		return 21;
	wps.n = 1;
	wps.wp[0].armed = 1;
	wps.wp[0].addr = (uint64_t)(uintptr_t)&words[1];
	wps.wp[0].len = 8;
	peek_thread_begin(&wps, &st);
	if (rows[row].blocked) {
		sigset_t s;
		sigemptyset(&s);
		sigaddset(&s, SIGSEGV);
		pthread_sigmask(SIG_BLOCK, &s, NULL);
	}
	if (rows[row].disp == SET_OTHER_AFTER) {
		/* a first run: in place (fatal.c's handler), and so asked */
		if (RESCUE_SET(&rp, NULL))
			return 22;
		int rc = peek_read(target_addr(MAPPED), &got, sizeof(got));
		rescue_disarm();
		if (rc != 0 || st.peek_in_place != 1)
			return 23;
		st.peek_in_place = 0;
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = other_handler;
		sa.sa_flags = SA_SIGINFO;
		if (sigaction(SIGSEGV, &sa, NULL) != 0)
			return 24;
	}
	ucontext_t uc;
	memset(&uc, 0, sizeof(uc));
	sigemptyset(&uc.uc_sigmask);
	if (rows[row].uc == UC_BLOCKING)
		sigaddset(&uc.uc_sigmask, SIGSEGV);
	static uint64_t addr; /* (static: live across RESCUE_SET) */
	addr = target_addr(rows[row].target);
	if (rows[row].point && RESCUE_SET(&rp, rows[row].uc == NO_UC ? NULL : &uc))
		return rows[row].want == RESCUED ? 0 : 10;
	int rc = peek_read(addr, &got, sizeof(got));
	if (rows[row].point)
		rescue_disarm();
	if (rows[row].want == RESCUED)
		return 11; /* no fault came back */
	if (rows[row].want == EFAULT_REMOTE)
		return rc == -EFAULT && st.peek_remote == 1 && st.peek_in_place == 0 ? 0 : 12;
	if (rc != 0 || got != *(uint64_t *)(uintptr_t)addr)
		return 13;
	if (rows[row].want == READ_IN_PLACE)
		return st.peek_in_place == 1 && st.peek_remote == 0 ? 0 : 14;
	return st.peek_remote == 1 && st.peek_in_place == 0 ? 0 : 15;
}

/* Two reads through the kernel of buf (64-byte aligned, 4 lines), the
 * first at a, the second at b; between them the bytes at b change when
 * change_between, and a run ends and another begins when new_run. */
static const struct {
	int line;
	int in_run;
	uint32_t a, a_len, b, b_len;
	int change_between, new_run;
	int want_calls;  /* process_vm_readv calls */
	int want_new;    /* the second read sees the changed bytes */
} line_rows[] = {
	{__LINE__, 1, 0, 8, 8, 8, 0, 0, 1, 0},      /* one line: one call */
	{__LINE__, 1, 0, 8, 64, 8, 0, 0, 2, 0},     /* two lines */
	{__LINE__, 1, 60, 8, 60, 8, 0, 0, 2, 0},    /* across a line: both lines, once */
	{__LINE__, 1, 0, 8, 8, 8, 1, 0, 1, 0},      /* the run's snapshot */
	{__LINE__, 1, 0, 8, 8, 8, 1, 1, 2, 1},      /* a new run reads anew */
	{__LINE__, 0, 0, 8, 8, 8, 1, 0, 2, 1},      /* outside a run: every read */
	{__LINE__, 1, 0, 200, 0, 8, 0, 0, 2, 0},    /* past two lines: as asked, then a line */
	{__LINE__, 1, 0, 8, 16, 8, 1, 0, 1, 0},     /* later bytes of a kept line: the snapshot */
};

static void test_run_lines(void)
{
	static uint8_t buf[256] __attribute__((aligned(64)));
	static struct witch_stats st;
	for (size_t i = 0; i < sizeof(line_rows) / sizeof(line_rows[0]); i++) {
		const __typeof__(line_rows[0]) *r = &line_rows[i];
		uint8_t got[256], want[256];
		for (int k = 0; k < 256; k++)
			buf[k] = (uint8_t)(k + i);
		memset(&st, 0, sizeof(st));
		peek_thread_begin(NULL, &st);
		if (r->in_run)
			peek_run_begin();
		int rc = peek_read_remote((uint64_t)(uintptr_t)(buf + r->a), got, r->a_len);
		memcpy(want, buf + r->b, r->b_len);
		if (r->change_between)
			for (uint32_t k = 0; k < r->b_len; k++)
				buf[r->b + k] ^= 0xff;
		if (r->new_run) {
			peek_run_end();
			peek_run_begin();
		}
		if (r->want_new)
			memcpy(want, buf + r->b, r->b_len);
		rc |= peek_read_remote((uint64_t)(uintptr_t)(buf + r->b), got, r->b_len);
		peek_run_end();
		peek_thread_begin(NULL, NULL);
		CHECK(r->line, rc == 0, "peek_read_remote failed");
		CHECK(r->line, (int)st.peek_remote == r->want_calls, "%d system calls, want %d",
		      (int)st.peek_remote, r->want_calls);
		CHECK(r->line, memcmp(got, want, r->b_len) == 0, "second read: wrong bytes (want the %s)",
		      r->want_new ? "changed ones" : "run's snapshot");
	}
	/* A line in no mapping fails, and a run goes on reading after it. */
	long page = sysconf(_SC_PAGESIZE);
	void *gone = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, (size_t)page);
	uint64_t v = 0;
	peek_run_begin();
	int bad = peek_read_remote((uint64_t)(uintptr_t)gone, &v, 8);
	int good = peek_read_remote((uint64_t)(uintptr_t)words, &v, 8);
	peek_run_end();
	CHECK(__LINE__, bad == -EFAULT, "an unmapped line: %d, want -EFAULT", bad);
	CHECK(__LINE__, good == 0 && v == words[0], "a read after it: %d", good);
}

int main(void)
{
	test_run_lines();
	for (row = 0; row < (int)(sizeof(rows) / sizeof(rows[0])); row++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(child());
		int st = 0;
		waitpid(pid, &st, 0);
		CHECK(rows[row].line, WIFEXITED(st) && WEXITSTATUS(st) == 0,
		      "want outcome %d, got %s %d (10 rescued, 11 not rescued, 12 no -EFAULT, "
		      "13 wrong bytes, 14 not in place, 15 not remote, 9 the program's handler ran)",
		      (int)rows[row].want, WIFEXITED(st) ? "exit" : "signal",
		      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	if (check_failures)
		fprintf(stderr, "test_peek: %d failures\n", check_failures);
	return check_failures != 0;
}
