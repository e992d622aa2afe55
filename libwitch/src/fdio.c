/* fdio: whole reads of a file descriptor (see fdio.h). */
#include "witch/fdio.h"

#include "witch/rawsys.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

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
