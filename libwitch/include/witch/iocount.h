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
 *
 * A thread's count may carry a limit: the call that takes it past runs
 * the hook (handler.c's: armed watchpoints have cost the program's I/O
 * what the budget allows them, drcost.h), once, after the C library's
 * call returned.  One compare a call where no limit is set.
 */
#ifndef WITCH_IOCOUNT_H
#define WITCH_IOCOUNT_H

#include <stdint.h>

/* Outside handlers, once: the C library's functions.  0 or -ENOENT. */
int iocount_init(void);
/* The calling thread's bytes so far.  Async-signal-safe. */
uint64_t iocount_bytes(void);
/* 1 when pc is in one of the wrappers.  A tick there is the kernel's: a
 * wrapper runs a few instructions around the C library's call, ~1 ns,
 * beside the system call's ~1 us and more, and a tick that came due in
 * the call arrives on its way out on some hypervisors (sysret.h), past the
 * C library's return once its path is longer than sysret_tick follows
 * (a multi-threaded program's cancellation points: redis-server's ticks
 * in write and read, 3 of 4 of its "runtime" ticks, each priced at a
 * 58 ms interval).  Async-signal-safe. */
int iocount_holds_pc(uint64_t pc);
/* The calling thread's count past which the hook runs (once: the limit is
 * then none again); UINT64_MAX: none.  Async-signal-safe. */
void iocount_set_limit(uint64_t bytes);
/* What runs when a thread's count passes its limit, errno kept around it
 * (NULL: nothing).  Set once, outside handlers. */
void iocount_set_hook(void (*fn)(void));

#endif
