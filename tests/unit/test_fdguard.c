/* test_fdguard: the program's closes pass over the runtime's descriptors
 * (fdguard.h), and the runtime's own close still closes them.
 *
 * Each row sets up eight descriptors on consecutive numbers B..B+7 (slots
 * 0..7; B near the top of the first 1024, where fdguard_take leaves the
 * runtime's as they are when the hard limit leaves no room above the soft
 * one: the test sets them equal), holds those of HELD as the runtime's
 * (fdguard_take), makes one call as the program or the runtime would, and
 * checks which slots are open after it, and what the call returned.  This
 * test links fdguard.o, so its close, close_range and closefrom are the
 * interposers, as under LD_PRELOAD.
 */
#include "check.h"
#include "witch/fdguard.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SLOTS 8
#define S(i) (1u << (i))

enum op {
	OP_CLOSE,          /* close(slot a) */
	OP_SYSCALL_CLOSE,  /* syscall(SYS_close, slot a), as perfguard hands it */
	OP_CLOSE_RANGE,    /* close_range(slot a, slot b, flags) */
	OP_SYSCALL_RANGE,  /* syscall(SYS_close_range, ...) */
	OP_CLOSE_RANGE_TOP,/* close_range(slot a, ~0U, flags) */
	OP_CLOSEFROM,      /* closefrom(slot a) */
	OP_RUNTIME_CLOSE,  /* fdguard_close(slot a): the runtime's own */
	OP_DUP2_THEN_RUNTIME_CLOSE, /* dup2(slot b, slot a), then fdguard_close(slot a) */
};

static const struct row {
	int line;
	unsigned held;
	enum op op;
	int a, b, flags;
	unsigned open_after; /* slots still open */
	int rc;              /* the call's return (-1: errno EBADF expected) */
} rows[] = {
	/* The program's close of a held one: 0, left open; of its own: closed. */
	{__LINE__, S(3), OP_CLOSE, 3, 0, 0, 0xff, 0},
	{__LINE__, S(3), OP_CLOSE, 4, 0, 0, 0xff & ~S(4), 0},
	{__LINE__, S(3), OP_SYSCALL_CLOSE, 3, 0, 0, 0xff, 0},
	{__LINE__, 0, OP_SYSCALL_CLOSE, 3, 0, 0, 0xff & ~S(3), 0},
	/* A range around held ones closes the program's pieces between. */
	{__LINE__, S(2) | S(5), OP_CLOSE_RANGE, 0, 7, 0, S(2) | S(5), 0},
	{__LINE__, S(0) | S(7), OP_CLOSE_RANGE, 0, 7, 0, S(0) | S(7), 0},
	{__LINE__, S(3) | S(4), OP_CLOSE_RANGE, 1, 6, 0, S(0) | S(3) | S(4) | S(7), 0},
	{__LINE__, 0, OP_CLOSE_RANGE, 1, 6, 0, S(0) | S(7), 0},
	{__LINE__, 0xff, OP_CLOSE_RANGE, 0, 7, 0, 0xff, 0},
	{__LINE__, S(6), OP_CLOSE_RANGE, 2, 2, 0, 0xff & ~S(2), 0},
	{__LINE__, S(2) | S(5), OP_SYSCALL_RANGE, 0, 7, 0, S(2) | S(5), 0},
	{__LINE__, S(2), OP_CLOSE_RANGE_TOP, 1, 0, 0, S(0) | S(2), 0},
	{__LINE__, S(2), OP_CLOSE_RANGE_TOP, 1, 0, CLOSE_RANGE_UNSHARE, S(0) | S(2), 0},
	/* Close-on-exec for all: nothing closes. */
	{__LINE__, S(2), OP_CLOSE_RANGE, 0, 7, CLOSE_RANGE_CLOEXEC, 0xff, 0},
	/* closefrom: all from there but the held. */
	{__LINE__, S(1) | S(6), OP_CLOSEFROM, 0, 0, 0, S(1) | S(6), 0},
	{__LINE__, S(1) | S(6), OP_CLOSEFROM, 4, 0, 0, 0x0f | S(6), 0},
	/* The runtime's own close closes a held one, and a program's one. */
	{__LINE__, S(3), OP_RUNTIME_CLOSE, 3, 0, 0, 0xff & ~S(3), 0},
	{__LINE__, 0, OP_RUNTIME_CLOSE, 3, 0, 0, 0xff & ~S(3), 0},
	/* The program dup2s onto a held number: the number is its now, and the
	 * runtime's close of it closes nothing. */
	{__LINE__, S(3), OP_DUP2_THEN_RUNTIME_CLOSE, 3, 0, 0, 0xff, 0},
	/* ... where the number was not held, the runtime's close closes. */
	{__LINE__, 0, OP_DUP2_THEN_RUNTIME_CLOSE, 3, 0, 0, 0xff & ~S(3), 0},
};

static unsigned open_slots(int base)
{
	unsigned m = 0;
	for (int i = 0; i < SLOTS; i++)
		if (fcntl(base + i, F_GETFD) >= 0)
			m |= S(i);
	return m;
}

int main(void)
{
	struct rlimit r;
	if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_max < 1024) {
		printf("SKIP: RLIMIT_NOFILE below 1024: the runtime's numbers sit lower\n");
		return 77;
	}
	/* No room above the soft limit: fdguard_take keeps a number at or
	 * above its floor in the program's range (896), and moves none. */
	r.rlim_cur = r.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &r) != 0) {
		perror("setrlimit");
		return 1;
	}
	const int base = 1024 - 2 * SLOTS;
	int null = open("/dev/null", O_RDONLY);
	if (null < 0) {
		perror("/dev/null");
		return 1;
	}
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		const struct row *w = &rows[k];
		for (int i = 0; i < SLOTS; i++) {
			if (dup2(null, base + i) != base + i)
				FAIL(w->line, "cannot set slot %d up", i);
			if (w->held & S(i))
				CHECK(w->line, fdguard_take(base + i) == base + i, "slot %d moved", i);
		}
		long rc = 0;
		int fa = base + w->a, fb = base + w->b;
		switch (w->op) {
		case OP_CLOSE:
			rc = close(fa);
			break;
		case OP_SYSCALL_CLOSE: {
			long a[6] = {fa};
			CHECK(w->line, fdguard_syscall(SYS_close, a, &rc) == 1, "SYS_close not taken");
			break;
		}
		case OP_CLOSE_RANGE:
			rc = close_range((unsigned)fa, (unsigned)fb, w->flags);
			break;
		case OP_SYSCALL_RANGE: {
			long a[6] = {fa, fb, w->flags};
			CHECK(w->line, fdguard_syscall(SYS_close_range, a, &rc) == 1,
			      "SYS_close_range not taken");
			break;
		}
		case OP_CLOSE_RANGE_TOP:
			rc = close_range((unsigned)fa, ~0u, w->flags);
			break;
		case OP_CLOSEFROM:
			closefrom(fa);
			break;
		case OP_RUNTIME_CLOSE:
			rc = fdguard_close(fa);
			break;
		case OP_DUP2_THEN_RUNTIME_CLOSE:
			CHECK(w->line, dup2(fb, fa) == fa, "dup2 failed");
			CHECK(w->line, !fdguard_held(fa), "still held after the program's dup2");
			rc = fdguard_close(fa);
			break;
		}
		CHECK(w->line, rc == w->rc, "returned %ld, expected %d (errno %d)", rc, w->rc, errno);
		unsigned got = open_slots(base);
		CHECK(w->line, got == w->open_after, "open slots 0x%02x, expected 0x%02x", got,
		      w->open_after);
		for (int i = 0; i < SLOTS; i++) {
			CHECK(w->line, fdguard_held(base + i) == ((w->held & S(i)) && (got & S(i)) &&
								  !(w->op == OP_DUP2_THEN_RUNTIME_CLOSE && i == w->a)),
			      "slot %d held %d", i, fdguard_held(base + i));
			fdguard_close(base + i);
		}
	}
	if (check_failures == 0)
		printf("PASS fdguard: %zu rows\n", sizeof(rows) / sizeof(rows[0]));
	return check_failures != 0;
}
