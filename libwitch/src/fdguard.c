/* fdguard: the runtime's descriptors held against the program's sweeps,
 * and kept out of its descriptor limit (see fdguard.h). */
#include "witch/fdguard.h"
#include "witch/export.h"
#include "witch/rawsys.h"
#include "witch/realfn.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FDGUARD_WORDS (FDGUARD_TOP / 64)
/* Where there is no room above the program's limit: the lowest free of the
 * numbers from FDGUARD_SPAN below min(its soft limit, FDGUARD_LOW_TOP) up
 * (a shell dup2s its pipes onto the lowest ones it chose). */
#define FDGUARD_LOW_TOP 1024
#define FDGUARD_SPAN 128

static uint64_t fd_held[FDGUARD_WORDS];  /* the runtime's open descriptors */
static uint64_t fd_given[FDGUARD_WORDS]; /* were: the program dup2'd onto them */
static uint64_t fd_kept, fd_taken, fd_in_range;
static void *fd_real_closefrom;

/* The C library's close under its other public name: no lookup, bound at
 * load as the runtime's other imports are. */
extern int __close(int fd);

static int fd_bit(const uint64_t *set, int fd)
{
	return fd >= 0 && fd < FDGUARD_TOP &&
	       (__atomic_load_n(&set[fd / 64], __ATOMIC_ACQUIRE) >> (fd % 64) & 1);
}

static void fd_bit_set(uint64_t *set, int fd)
{
	if (fd >= 0 && fd < FDGUARD_TOP)
		__atomic_fetch_or(&set[fd / 64], 1ull << (fd % 64), __ATOMIC_ACQ_REL);
}

/* Clears fd's bit: whether it was set. */
static int fd_bit_clear(uint64_t *set, int fd)
{
	if (fd < 0 || fd >= FDGUARD_TOP)
		return 0;
	uint64_t m = 1ull << (fd % 64);
	return (__atomic_fetch_and(&set[fd / 64], ~m, __ATOMIC_ACQ_REL) & m) != 0;
}

/* The next held number at or above fd, up to last; -1 if none. */
static long fd_next_held(unsigned int fd, unsigned int last)
{
	for (; fd < FDGUARD_TOP && fd <= last; fd = (fd / 64 + 1) * 64) {
		uint64_t w = __atomic_load_n(&fd_held[fd / 64], __ATOMIC_ACQUIRE) >> (fd % 64);
		if (w) {
			unsigned int h = fd + (unsigned int)__builtin_ctzll(w);
			return h <= last ? (long)h : -1;
		}
	}
	return -1;
}

/* libunwind's code: it closes its pipe itself, to open it again after a
 * failed read. */
static uint64_t fd_unwinder_lo, fd_unwinder_hi;

static int fd_from_trusted(const void *ret)
{
	uint64_t pc = (uint64_t)(uintptr_t)ret;
	return pc >= fd_unwinder_lo && pc < fd_unwinder_hi;
}

void fdguard_set_unwinder_text(uint64_t lo, uint64_t hi)
{
	fd_unwinder_lo = lo;
	fd_unwinder_hi = hi;
}

/* --- the program's descriptor limit, lifted while the runtime opens -----
 *
 * The kernel gives a new descriptor the lowest free number below the soft
 * RLIMIT_NOFILE, and F_DUPFD none at or above it.  So the runtime lifts
 * the soft limit (to the hard one, at most FDGUARD_TOP) for the moment of
 * an open and a move above the program's limit, and puts it back: a
 * descriptor above the limit stays valid.  One lift at a time (fd_lock):
 * the runtime's opens wait a bounded while for another thread's (threads
 * begun together open theirs together; some opens are in a tick's
 * handler, which must not wait long), then place theirs in the program's
 * range; the program's own sets and reads of the limit wait for it, so
 * neither clobbers nor sees a lifted limit. */
static int fd_lock;
static struct rlimit fd_lift_was;  /* the program's limit, during a lift */
static long fd_program_cur = -1;   /* its soft limit as last read (-1: not yet) */
static __thread int fd_lifting __attribute__((tls_model("initial-exec")));

static int fd_trylock(void)
{
	return __atomic_exchange_n(&fd_lock, 1, __ATOMIC_ACQUIRE) == 0;
}

/* A lift takes ~3 us, but its thread may lose the CPU inside it for a
 * time slice: 200 yields (~0.2 ms) were too few under ctest -j2 (3
 * descriptors of 17 threads begun at once went in the program's range).
 * So a few yields, then 50 us sleeps, 20 ms in all at most. */
#define FDGUARD_LOCK_YIELDS 64
#define FDGUARD_LOCK_NAPS 400

static int fd_lock_try_awhile(void)
{
	if (fd_lifting)
		return 0; /* a handler inside its own thread's lift */
	for (int i = 0; i < FDGUARD_LOCK_YIELDS + FDGUARD_LOCK_NAPS; i++) {
		if (fd_trylock())
			return 1;
		struct timespec nap = {0, 50000};
		if (i < FDGUARD_LOCK_YIELDS)
			rawsys6(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
		else
			rawsys6(SYS_nanosleep, (long)&nap, 0, 0, 0, 0, 0);
	}
	return 0;
}

static void fd_unlock(void)
{
	__atomic_store_n(&fd_lock, 0, __ATOMIC_RELEASE);
}

/* The program's calls wait for a lift in another thread (microseconds);
 * one its thread interrupted (a handler of its own) goes on.  0 if it did
 * not take the lock. */
static int fd_lock_wait(void)
{
	if (fd_lifting)
		return 0;
	while (!fd_trylock())
		rawsys6(SYS_sched_yield, 0, 0, 0, 0, 0, 0);
	return 1;
}

static long fd_nofile(const struct rlimit *set, struct rlimit *get)
{
	return rawsys6(SYS_prlimit64, 0, RLIMIT_NOFILE, (long)set, (long)get, 0, 0);
}

/* With the lock: the program's limit in *was, lifted if its hard limit
 * leaves room.  Whether it lifted. */
static int fd_lift(struct rlimit *was)
{
	if (fd_nofile(NULL, was) < 0)
		return 0;
	__atomic_store_n(&fd_program_cur, (long)was->rlim_cur, __ATOMIC_RELAXED);
	if (was->rlim_cur >= FDGUARD_TOP / 2 || was->rlim_max <= was->rlim_cur)
		return 0; /* room enough (or none): in the program's range */
	struct rlimit up = {was->rlim_max < FDGUARD_TOP ? was->rlim_max : FDGUARD_TOP,
			    was->rlim_max};
	fd_lift_was = *was;
	if (fd_nofile(&up, NULL) < 0)
		return 0;
	fd_lifting = 1;
	return 1;
}

static void fd_lift_end(const struct rlimit *was)
{
	fd_nofile(was, NULL);
	fd_lifting = 0;
}

/* fd moved to at least floor, close-on-exec: its new number, or fd itself
 * where none is free there. */
static int fd_move(int fd, long floor)
{
	if (floor < 0 || fd >= floor)
		return fd;
	long hi = rawsys6(SYS_fcntl, fd, F_DUPFD_CLOEXEC, floor, 0, 0, 0);
	if (hi < 0)
		return fd;
	rawsys6(SYS_close, fd, 0, 0, 0, 0, 0);
	return (int)hi;
}

/* In the program's range: the span below min(its limit, FDGUARD_LOW_TOP). */
static long fd_low_floor(long cur)
{
	long top = cur > 0 && cur < FDGUARD_LOW_TOP ? cur : FDGUARD_LOW_TOP;
	return top > 2 * FDGUARD_SPAN ? top - FDGUARD_SPAN : top > 16 ? top / 2 : -1;
}

/* Opens (open_fd(arg), or fd already open), moves it, and holds it if
 * hold. */
static int fd_open_held(long (*open_fd)(const void *arg), const void *arg, int fd, int hold)
{
	struct rlimit was;
	int locked = fd_lock_try_awhile(), lifted = locked && fd_lift(&was);
	if (open_fd)
		fd = (int)open_fd(arg);
	if (fd >= 0) {
		long cur = __atomic_load_n(&fd_program_cur, __ATOMIC_RELAXED);
		if (lifted)
			fd = fd_move(fd, (long)was.rlim_cur);
		else
			fd = fd_move(fd, fd_low_floor(cur));
		if (hold && (!lifted || fd < (long)was.rlim_cur))
			__atomic_fetch_add(&fd_in_range, 1, __ATOMIC_RELAXED);
		fd_bit_clear(fd_given, fd);
		if (hold)
			fd_bit_set(fd_held, fd);
	}
	if (lifted)
		fd_lift_end(&was);
	if (locked)
		fd_unlock();
	return fd;
}

int fdguard_open(long (*open_fd)(const void *arg), const void *arg)
{
	return fd_open_held(open_fd, arg, -1, 1);
}

int fdguard_open_brief(long (*open_fd)(const void *arg), const void *arg)
{
	return fd_open_held(open_fd, arg, -1, 0);
}

int fdguard_take(int fd)
{
	return fd < 0 ? fd : fd_open_held(NULL, NULL, fd, 1);
}

int fdguard_program_limit(const struct rlimit *set, struct rlimit *get)
{
	int locked = fd_lock_wait();
	long rc = fd_nofile(set, get);
	if (rc == 0 && get && fd_lifting)
		*get = fd_lift_was; /* a handler of the program's in the runtime's lift */
	if (locked)
		fd_unlock();
	return (int)rc;
}

void fdguard_prefork(void)
{
	(void)fd_lock_wait(); /* a child must not begin inside a lift */
}

void fdguard_postfork_parent(void)
{
	if (!fd_lifting)
		fd_unlock();
}

void fdguard_postfork_child(void)
{
	if (!fd_lifting)
		fd_unlock();
}

int fdguard_close(int fd)
{
	if (fd_bit_clear(fd_given, fd))
		return 0; /* the program's number now: nothing of the runtime's there */
	fd_bit_clear(fd_held, fd);
	long rc = rawsys6(SYS_close, fd, 0, 0, 0, 0, 0);
	return rc < 0 ? (int)rc : 0;
}

int fdguard_held(int fd)
{
	return fd_bit(fd_held, fd);
}

void fdguard_counts(uint64_t *kept, uint64_t *taken, uint64_t *in_range)
{
	*kept = __atomic_load_n(&fd_kept, __ATOMIC_RELAXED);
	*taken = __atomic_load_n(&fd_taken, __ATOMIC_RELAXED);
	*in_range = __atomic_load_n(&fd_in_range, __ATOMIC_RELAXED);
}

/* --- the program's calls ------------------------------------------------ */

/* errno-style result of a raw call. */
static long fd_result(long rc)
{
	if (rc < 0) {
		errno = (int)-rc;
		return -1;
	}
	return rc;
}

/* close(fd) from code at ret: -errno or 0 (the C library's close, a
 * cancellation point as the program expects). */
static long fd_close(int fd, const void *ret)
{
	if (fd_bit(fd_held, fd) || fd_bit(fd_given, fd)) {
		if (fd_from_trusted(ret))
			return fdguard_close(fd);
		if (fd_bit(fd_held, fd)) {
			__atomic_fetch_add(&fd_kept, 1, __ATOMIC_RELAXED);
			return 0;
		}
	}
	return __close(fd) < 0 ? -errno : 0;
}

/* close_range without the held numbers: the pieces between them, each a
 * close_range of its own.  0 or the first piece's -errno. */
static long fd_close_range(unsigned int first, unsigned int last, int flags)
{
	/* Setting close-on-exec harms nothing: the runtime's have it. */
	if (first > last || (flags & CLOSE_RANGE_CLOEXEC))
		return rawsys6(SYS_close_range, first, last, flags, 0, 0, 0);
	long rc = 0, held;
	unsigned int lo = first;
	while ((held = fd_next_held(lo, last)) >= 0) {
		__atomic_fetch_add(&fd_kept, 1, __ATOMIC_RELAXED);
		if (lo < (unsigned int)held) {
			long r = rawsys6(SYS_close_range, lo, held - 1, flags, 0, 0, 0);
			if (r < 0 && rc == 0)
				rc = r;
		}
		lo = (unsigned int)held + 1;
		if (lo == 0)
			return rc; /* (held was ~0U) */
	}
	if (lo <= last) {
		long r = rawsys6(SYS_close_range, lo, last, flags, 0, 0, 0);
		if (r < 0 && rc == 0)
			rc = r;
	}
	return rc;
}

/* dup2/dup3 made: a held number the program took is its now. */
static long fd_dup_done(long rc, int oldfd, int newfd)
{
	if (rc >= 0 && oldfd != newfd && fd_bit_clear(fd_held, newfd)) {
		fd_bit_set(fd_given, newfd);
		__atomic_fetch_add(&fd_taken, 1, __ATOMIC_RELAXED);
	}
	return rc;
}

WITCH_EXPORT int close(int fd)
{
	return (int)fd_result(fd_close(fd, __builtin_return_address(0)));
}

WITCH_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	return (int)fd_result(fd_close_range(first, last, flags));
}

WITCH_EXPORT void closefrom(int lowfd)
{
	unsigned int low = lowfd < 0 ? 0 : (unsigned int)lowfd;
	if (fd_close_range(low, ~0u, 0) == 0)
		return;
	/* No close_range (Linux before 5.9, or a filter refusing it): each
	 * number up to the last held one, then the C library's for the rest. */
	long held;
	while ((held = fd_next_held(low, ~0u)) >= 0) {
		for (; low < (unsigned int)held; low++)
			rawsys6(SYS_close, low, 0, 0, 0, 0, 0);
		low = (unsigned int)held + 1;
	}
	void (*real)(int) = (void (*)(int))realfn_next(&fd_real_closefrom, "closefrom");
	if (real)
		real((int)low);
}

WITCH_EXPORT int dup2(int oldfd, int newfd)
{
	return (int)fd_result(fd_dup_done(rawsys6(SYS_dup2, oldfd, newfd, 0, 0, 0, 0), oldfd, newfd));
}

WITCH_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	return (int)fd_result(
		fd_dup_done(rawsys6(SYS_dup3, oldfd, newfd, flags, 0, 0, 0), oldfd, newfd));
}

int fdguard_syscall(long nr, const long a[6], long *ret)
{
	switch (nr) {
	case SYS_close:
		*ret = fd_result(fd_close((int)a[0], NULL));
		return 1;
	case SYS_close_range:
		*ret = fd_result(fd_close_range((unsigned int)a[0], (unsigned int)a[1], (int)a[2]));
		return 1;
	case SYS_dup2:
		*ret = fd_result(fd_dup_done(rawsys6(SYS_dup2, a[0], a[1], 0, 0, 0, 0), (int)a[0],
					     (int)a[1]));
		return 1;
	case SYS_dup3:
		*ret = fd_result(fd_dup_done(rawsys6(SYS_dup3, a[0], a[1], a[2], 0, 0, 0), (int)a[0],
					     (int)a[1]));
		return 1;
	}
	return 0;
}
