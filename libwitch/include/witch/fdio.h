/* fdio: whole reads of a file descriptor (pread until done, EINTR again).
 * Async-signal-safe.
 */
#ifndef WITCH_FDIO_H
#define WITCH_FDIO_H

#include <stdint.h>

/* size bytes at off into buf: 0, or -EIO (an error or the file's end). */
int fdio_pread_all(int fd, void *buf, uint64_t size, uint64_t off);

#endif
