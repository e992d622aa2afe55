/* fdio: whole reads of a file descriptor (pread until done, EINTR again),
 * and the runtime's long-lived descriptors kept out of the program's way.
 * Async-signal-safe.
 */
#ifndef WITCH_FDIO_H
#define WITCH_FDIO_H

#include <stdint.h>

/* size bytes at off into buf: 0, or -EIO (an error or the file's end). */
int fdio_pread_all(int fd, void *buf, uint64_t size, uint64_t off);

/* A descriptor the runtime keeps (its perf events, its userfaultfd) moved
 * from the lowest free number, which a program may be about to dup2 onto
 * (a shell sets a pipeline's pipes up at numbers it chose: bash's dup2 of
 * its pipe to fd 6 closed the runtime's fault log opened there by a tick,
 * and its children's fork hook then closed bash's pipe), to the lowest free
 * one of the FDIO_HIGH_SPAN below min(the soft RLIMIT_NOFILE,
 * FDIO_HIGH_TOP), close-on-exec.  Returns the new descriptor, or fd as it
 * was where none is free there. */
#define FDIO_HIGH_TOP 1024 /* (a higher one grows the kernel's fd table) */
#define FDIO_HIGH_SPAN 128 /* the range below it the runtime's go in */
int fdio_move_high(int fd);

#endif
