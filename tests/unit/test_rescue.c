/* test_rescue: a fault inside a handler run with a return point set comes
 * back to it; every other fault ends the process as it would have.
 *
 * Each row runs in a child, where fatal.c's handler stands in for SIGSEGV
 * and SIGBUS (as in a profiled program that leaves them at default).  The
 * child sets a return point (or not), inside a signal handler (as the
 * runtime's) or not, and causes the row's fault.  Rescued, it checks that
 * its signal mask is the one it had before the fault and exits 0; else the
 * fault kills it with the row's signal (fatal.c re-raises after writing).
 */
#include "witch/fatal.h"
#include "witch/rescue.h"
#include "check.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum fault { READ_UNMAPPED, WRITE_READONLY, READ_PAST_FILE_END, RAISED };

static const struct {
	int line;
	enum fault fault;
	int armed;      /* a return point set when the fault comes */
	int disarmed;   /* ... set, then the run ended (rescue_disarm) first */
	int in_handler; /* in a SIGUSR1 handler, as the runtime's runs are */
	int want_sig;   /* 0: rescued (exit 0); else the child dies of it */
} rows[] = {
	{__LINE__, READ_UNMAPPED, 1, 0, 1, 0},
	{__LINE__, READ_UNMAPPED, 1, 0, 0, 0}, /* a call from the program (bulk.c) */
	{__LINE__, WRITE_READONLY, 1, 0, 1, 0},
	{__LINE__, READ_PAST_FILE_END, 1, 0, 1, 0}, /* SIGBUS */
	{__LINE__, READ_UNMAPPED, 0, 0, 1, SIGSEGV},
	{__LINE__, READ_UNMAPPED, 1, 1, 1, SIGSEGV}, /* no stale return point */
	{__LINE__, READ_PAST_FILE_END, 0, 0, 0, SIGBUS},
	{__LINE__, RAISED, 1, 0, 1, SIGSEGV}, /* sent, not a fault: the program's */
};

static int row;
static volatile int child_status;

static void no_profile(void)
{
}

static volatile uint8_t sink;

static void cause(enum fault f)
{
	long page = sysconf(_SC_PAGESIZE);
	if (f == READ_UNMAPPED) {
		uint8_t *p = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		munmap(p, (size_t)page);
		sink = *(volatile uint8_t *)p;
	} else if (f == WRITE_READONLY) {
		uint8_t *p = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		*(volatile uint8_t *)p = 1;
	} else if (f == READ_PAST_FILE_END) {
		char path[] = "/tmp/test_rescue.XXXXXX";
		int fd = mkstemp(path);
		unlink(path);
		if (fd < 0 || ftruncate(fd, 1) < 0)
			_exit(3);
		uint8_t *p = mmap(NULL, 2 * (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
		sink = *(volatile uint8_t *)(p + page); /* past the file's last page */
	} else {
		raise(SIGSEGV);
	}
}

/* The kernel's mask is 64 signals; the rest of a sigset_t is not written. */
static int same_mask(const sigset_t *a, const sigset_t *b)
{
	for (int sig = 1; sig < 65; sig++)
		if (sigismember(a, sig) != sigismember(b, sig))
			return 0;
	return 1;
}

/* The run: a return point, the fault, and on rescue a check of the mask. */
static void run(void)
{
	struct rescue_point rp;
	sigset_t before, after;
	pthread_sigmask(SIG_BLOCK, NULL, &before);
	if (!rows[row].armed) {
		cause(rows[row].fault);
		child_status = 4; /* the fault did not end us: wrong */
		return;
	}
	if (RESCUE_SET(&rp, NULL)) {
		pthread_sigmask(SIG_BLOCK, NULL, &after);
		child_status = same_mask(&before, &after) ? 0 : 5;
		return;
	}
	if (rows[row].disarmed)
		rescue_disarm();
	cause(rows[row].fault);
	rescue_disarm();
	child_status = 6; /* no fault came: wrong */
}

static void on_usr1(int sig)
{
	(void)sig;
	run();
}

static void child(void)
{
	if (fatal_install(no_profile) < 0)
		_exit(2);
	if (rows[row].in_handler) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;
		sigemptyset(&sa.sa_mask);
		sigaddset(&sa.sa_mask, SIGUSR2); /* a mask that must come back */
		sigaction(SIGUSR1, &sa, NULL);
		raise(SIGUSR1);
	} else {
		run();
	}
	_exit(child_status);
}

int main(void)
{
	for (row = 0; row < (int)(sizeof(rows) / sizeof(rows[0])); row++) {
		pid_t pid = fork();
		if (pid == 0)
			child();
		int st = 0;
		waitpid(pid, &st, 0);
		int line = rows[row].line;
		if (rows[row].want_sig == 0)
			CHECK(line, WIFEXITED(st) && WEXITSTATUS(st) == 0,
			      "want rescued (exit 0), got %s %d",
			      WIFEXITED(st) ? "exit" : "signal",
			      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
		else
			CHECK(line, WIFSIGNALED(st) && WTERMSIG(st) == rows[row].want_sig,
			      "want killed by signal %d, got %s %d", rows[row].want_sig,
			      WIFEXITED(st) ? "exit" : "signal",
			      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	if (check_failures)
		fprintf(stderr, "test_rescue: %d failures\n", check_failures);
	return check_failures != 0;
}
