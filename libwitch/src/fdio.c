/* fdio: whole reads of a file descriptor (see fdio.h). */
#include "witch/fdio.h"

#include "witch/rawsys.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The bottom of the range: FDIO_HIGH_SPAN below the top, itself the soft
 * limit where that is lower (0: not known yet, -1: no range). */
static long fdio_high_floor(void)
{
	static long high_floor;
	long f = __atomic_load_n(&high_floor, __ATOMIC_RELAXED);
	if (f != 0)
		return f;
	struct rlimit r;
	long top = FDIO_HIGH_TOP;
	if (rawsys6(SYS_prlimit64, 0, RLIMIT_NOFILE, 0, (long)&r, 0, 0) == 0 &&
	    r.rlim_cur < (rlim_t)top)
		top = (long)r.rlim_cur;
	f = top > 2 * FDIO_HIGH_SPAN ? top - FDIO_HIGH_SPAN : top > 16 ? top / 2 : -1;
	__atomic_store_n(&high_floor, f, __ATOMIC_RELAXED);
	return f;
}

int fdio_move_high(int fd)
{
	long floor = fdio_high_floor();
	if (fd < 0 || floor < 0 || fd >= floor)
		return fd;
	long hi = rawsys6(SYS_fcntl, fd, F_DUPFD_CLOEXEC, floor, 0, 0, 0);
	if (hi < 0)
		return fd;
	rawsys6(SYS_close, fd, 0, 0, 0, 0, 0);
	return (int)hi;
}

int fdio_pread_all(int fd, void *buf, uint64_t size, uint64_t off)
{
	unsigned char *b = buf;
	while (size) {
		ssize_t n = pread(fd, b, size, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		b += n;
		size -= (uint64_t)n;
		off += (uint64_t)n;
	}
	return 0;
}
