/* fdguard: the runtime's descriptors held against the program's sweeps
 * (see fdguard.h). */
#include "witch/fdguard.h"
#include "witch/export.h"
#include "witch/fdio.h"
#include "witch/rawsys.h"
#include "witch/realfn.h"

#include <errno.h>
#include <linux/close_range.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FDGUARD_WORDS (FDIO_HIGH_TOP / 64)

static uint64_t fd_held[FDGUARD_WORDS];  /* the runtime's open descriptors */
static uint64_t fd_given[FDGUARD_WORDS]; /* were: the program dup2'd onto them */
static uint64_t fd_kept, fd_taken;
static void *fd_real_closefrom;

/* The C library's close under its other public name: no lookup, bound at
 * load as the runtime's other imports are. */
extern int __close(int fd);

static int fd_bit(const uint64_t *set, int fd)
{
	return fd >= 0 && fd < FDIO_HIGH_TOP &&
	       (__atomic_load_n(&set[fd / 64], __ATOMIC_ACQUIRE) >> (fd % 64) & 1);
}

static void fd_bit_set(uint64_t *set, int fd)
{
	if (fd >= 0 && fd < FDIO_HIGH_TOP)
		__atomic_fetch_or(&set[fd / 64], 1ull << (fd % 64), __ATOMIC_ACQ_REL);
}

/* Clears fd's bit: whether it was set. */
static int fd_bit_clear(uint64_t *set, int fd)
{
	if (fd < 0 || fd >= FDIO_HIGH_TOP)
		return 0;
	uint64_t m = 1ull << (fd % 64);
	return (__atomic_fetch_and(&set[fd / 64], ~m, __ATOMIC_ACQ_REL) & m) != 0;
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

/* errno-style result of a raw call. */
static long fd_result(long rc)
{
	if (rc < 0) {
		errno = (int)-rc;
		return -1;
	}
	return rc;
}

int fdguard_take(int fd)
{
	if (fd < 0)
		return fd;
	fd = fdio_move_high(fd);
	fd_bit_clear(fd_given, fd);
	fd_bit_set(fd_held, fd);
	return fd;
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

void fdguard_counts(uint64_t *kept, uint64_t *taken)
{
	*kept = __atomic_load_n(&fd_kept, __ATOMIC_RELAXED);
	*taken = __atomic_load_n(&fd_taken, __ATOMIC_RELAXED);
}

/* --- the program's calls ------------------------------------------------ */

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
	if (first > last || first >= FDIO_HIGH_TOP || (flags & CLOSE_RANGE_CLOEXEC))
		return rawsys6(SYS_close_range, first, last, flags, 0, 0, 0);
	long rc = 0;
	unsigned int lo = first;
	for (unsigned int fd = first; fd < FDIO_HIGH_TOP && fd <= last; fd++) {
		if (!fd_bit(fd_held, (int)fd))
			continue;
		__atomic_fetch_add(&fd_kept, 1, __ATOMIC_RELAXED);
		if (lo < fd) {
			long r = rawsys6(SYS_close_range, lo, fd - 1, flags, 0, 0, 0);
			if (r < 0 && rc == 0)
				rc = r;
		}
		lo = fd + 1;
	}
	if (lo <= last && lo >= first) {
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
	 * number up to the held ones' top, then the C library's for the rest. */
	for (unsigned int fd = low; fd < FDIO_HIGH_TOP; fd++)
		if (!fd_bit(fd_held, (int)fd))
			rawsys6(SYS_close, fd, 0, 0, 0, 0, 0);
	void (*real)(int) = (void (*)(int))realfn_next(&fd_real_closefrom, "closefrom");
	if (real)
		real(low > FDIO_HIGH_TOP ? (int)low : FDIO_HIGH_TOP);
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
