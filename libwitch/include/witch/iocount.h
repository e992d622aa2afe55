/* iocount: the bytes each thread's read and write calls moved through the
 * kernel (drcost.h prices them).
 *
 * libwitch interposes the C library's read, write, pread, pwrite, readv,
 * writev, preadv, pwritev (and their 64 names), recv, recvfrom, recvmsg,
 * send, sendto and sendmsg, and _FORTIFY_SOURCE's checked reads
 * (__read_chk, __pread_chk, __pread64_chk, __recv_chk, __recvfrom_chk): each calls the C library's own (RTLD_NEXT,
 * looked up by iocount_init, or at its first call before it) and adds
 * what it returned to a per-thread count.  A program's raw syscall(2) or
 * io_uring is not counted, nor the C library's calls from inside itself
 * (stdio's reads), which do not go through the interposers.
 */
#ifndef WITCH_IOCOUNT_H
#define WITCH_IOCOUNT_H

#include <stdint.h>

/* Outside handlers, once: the C library's functions.  0 or -ENOENT. */
int iocount_init(void);
/* The calling thread's bytes so far.  Async-signal-safe. */
uint64_t iocount_bytes(void);

#endif
