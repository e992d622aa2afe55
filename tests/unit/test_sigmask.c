/* test_sigmask: a mask that blocks every real-time signal leaves the
 * runtime's open, and the program reads its mask back as it set it
 * (sigguard.h).
 *
 * Each row starts the thread with nothing blocked, makes its calls in
 * order (as the program, or as libunwind: code the guard is told is
 * libunwind's, whose masks go through as asked) and checks, after the
 * last: whether the runtime's signal is blocked for real (the kernel's
 * mask), and whether the mask the program reads back names it.  This test
 * links sigguard.o, so sigprocmask and pthread_sigmask are the
 * interposers, as under LD_PRELOAD.
 */
#include "check.h"
#include "witch/sigguard.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum set { NONE, ALL, OURS, OTHER_RT, SAVED };
enum how_kind { END, BLOCK, UNBLOCK, SETMASK, SETMASK_UNW, BLOCK_UNW, QUERY_SAVE, SAVE_BLOCK, THREAD };

struct call {
	enum how_kind how;
	enum set set;
};

static const struct row {
	int line;
	struct call calls[4];
	int real_blocked; /* the kernel's mask blocks the runtime's signal */
	int view_blocked; /* the program's read-back names it */
} rows[] = {
	/* sigfillset, as a signalfd daemon blocks: ours open, read back blocked */
	{__LINE__, {{BLOCK, ALL}}, 0, 1},
	{__LINE__, {{SETMASK, ALL}}, 0, 1},
	/* ours alone, or with some others: as asked (a program waiting for it) */
	{__LINE__, {{BLOCK, OURS}}, 1, 1},
	{__LINE__, {{BLOCK, OURS}, {BLOCK, OTHER_RT}}, 1, 1},
	/* all, then one other opened: the mask names ours without all others */
	{__LINE__, {{BLOCK, ALL}, {UNBLOCK, OTHER_RT}}, 1, 1},
	/* all, then ours opened: open, read back open */
	{__LINE__, {{BLOCK, ALL}, {UNBLOCK, OURS}}, 0, 0},
	/* ours, then all: all hides ours */
	{__LINE__, {{BLOCK, OURS}, {BLOCK, ALL}}, 0, 1},
	/* save and restore around a block of all, as critical sections do */
	{__LINE__, {{SAVE_BLOCK, ALL}, {SETMASK, SAVED}}, 0, 0},
	/* a read-back restored: still all, still hidden */
	{__LINE__, {{BLOCK, ALL}, {QUERY_SAVE, NONE}, {SETMASK, NONE}, {SETMASK, SAVED}}, 0, 1},
	/* libunwind's block of all and its restore: as asked, both ways */
	{__LINE__, {{SETMASK_UNW, ALL}}, 1, 1},
	{__LINE__, {{BLOCK, ALL}, {BLOCK_UNW, ALL}}, 1, 1},
	/* a thread begun under a hiding mask: open, and it reads all blocked */
	{__LINE__, {{BLOCK, ALL}, {THREAD, NONE}}, 0, 1},
};

static int ours;
static sigset_t saved;

/* libunwind stands in: its calls come from this section's code. */
__attribute__((noinline, section("unwinder_like"))) static int as_unwinder(int how, const sigset_t *s)
{
	sigset_t old;
	int rc = pthread_sigmask(how, s, &old);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
	return rc;
}
extern const char __start_unwinder_like[], __stop_unwinder_like[];

static void make_set(enum set which, sigset_t *s)
{
	sigemptyset(s);
	if (which == ALL)
		sigfillset(s);
	else if (which == OURS)
		sigaddset(s, ours);
	else if (which == OTHER_RT)
		sigaddset(s, SIGRTMIN + 1);
	else if (which == SAVED)
		*s = saved;
}

static int real_blocked(void)
{
	uint64_t m = 0;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &m, 8);
	return (m >> (ours - 1)) & 1;
}

static int view_blocked(void)
{
	sigset_t v;
	pthread_sigmask(SIG_BLOCK, NULL, &v);
	return sigismember(&v, ours) == 1;
}

struct thread_says {
	int real, view;
};

static void *thread_reads(void *arg)
{
	struct thread_says *t = arg;
	sigguard_thread_open(); /* what thread_begin does */
	t->real = real_blocked();
	t->view = view_blocked();
	return NULL;
}

int main(void)
{
	ours = sigguard_pick_signal();
	if (ours < 0 || sigguard_install(ours) != 0) {
		printf("cannot install the guard\n");
		return 1;
	}
	sigguard_set_unwinder_text((uint64_t)(uintptr_t)__start_unwinder_like,
				   (uint64_t)(uintptr_t)__stop_unwinder_like);
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		const struct row *w = &rows[k];
		sigset_t none, s;
		sigemptyset(&none);
		pthread_sigmask(SIG_SETMASK, &none, NULL);
		sigemptyset(&saved);
		int real = -1, view = -1;
		for (int i = 0; i < 4 && w->calls[i].how != END; i++) {
			make_set(w->calls[i].set, &s);
			int rc = 0;
			switch (w->calls[i].how) {
			case BLOCK:
				rc = pthread_sigmask(SIG_BLOCK, &s, NULL);
				break;
			case UNBLOCK:
				rc = sigprocmask(SIG_UNBLOCK, &s, NULL);
				break;
			case SETMASK:
				rc = sigprocmask(SIG_SETMASK, &s, NULL);
				break;
			case SETMASK_UNW:
				rc = as_unwinder(SIG_SETMASK, &s);
				break;
			case BLOCK_UNW:
				rc = as_unwinder(SIG_BLOCK, &s);
				break;
			case QUERY_SAVE:
				rc = pthread_sigmask(SIG_BLOCK, NULL, &saved);
				break;
			case SAVE_BLOCK:
				rc = pthread_sigmask(SIG_BLOCK, &s, &saved);
				break;
			case THREAD: {
				pthread_t th;
				struct thread_says t = {-1, -1};
				if (pthread_create(&th, NULL, thread_reads, &t) != 0 ||
				    pthread_join(th, NULL) != 0)
					FAIL(w->line, "cannot run a thread");
				real = t.real;
				view = t.view;
				break;
			}
			case END:
				break;
			}
			CHECK(w->line, rc == 0, "call %d returned %d", i, rc);
		}
		if (real < 0) {
			real = real_blocked();
			view = view_blocked();
		}
		CHECK(w->line, real == w->real_blocked, "the kernel's mask %s the runtime's signal",
		      real ? "blocks" : "leaves open");
		CHECK(w->line, view == w->view_blocked, "the program reads its mask back %s it",
		      view ? "naming" : "without");
	}
	sigset_t none;
	sigemptyset(&none);
	pthread_sigmask(SIG_SETMASK, &none, NULL);
	if (check_failures == 0)
		printf("PASS sigmask: %zu rows\n", sizeof(rows) / sizeof(rows[0]));
	return check_failures != 0;
}
