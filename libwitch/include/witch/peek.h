/* peek: the handlers read the program's memory (see peek.c).
 *
 * Two ways.  In place, a memcpy of ~10 ns, when a fault there would end
 * only the handler run (rescue.h: a return point is set, the kernel's
 * SIGSEGV and SIGBUS handler is the runtime's, neither signal is blocked)
 * and the bytes are not under one of the thread's watchpoints (a read
 * there would trap, or use up a hit the watchpoint lets by).  Otherwise
 * process_vm_readv, ~1.3 us on these VMs, which fails with EFAULT instead
 * of faulting: a window run ahead reads ~20 times a tick, and that was a
 * quarter of a tick's handler time.  Async-signal-safe, errno untouched.
 */
#ifndef WITCH_PEEK_H
#define WITCH_PEEK_H

#include <stddef.h>
#include <stdint.h>

struct watchpoint_set;
struct witch_stats;

/* This thread's watchpoints, whose ranges are read only through the
 * kernel, and the stats that count reads (peek_in_place, peek_remote).
 * At a thread's start; NULL, NULL at its end. */
void peek_thread_begin(const struct watchpoint_set *wps, struct witch_stats *stats);

/* Around each handler run (handler.c): within one, the pid a read through
 * the kernel names is asked once, not once a read. */
void peek_run_begin(void);
void peek_run_end(void);

/* len bytes at addr into buf: 0, or -EFAULT where the kernel found them
 * unmapped.  A fault in place does not return: the rescue ends the run. */
int peek_read(uint64_t addr, void *buf, size_t len);

/* As peek_read, and *ticks: the TSC ticks a one-byte load at probe (in
 * [addr, addr + len)) took before the read, when read in place (memlat.h);
 * 0 when read through the kernel. */
int peek_read_timed(uint64_t addr, void *buf, size_t len, uint64_t probe, uint32_t *ticks);

/* 1 when peek_read_timed at addr would read in place and so time its
 * probe; a read through the kernel times nothing, and a probe alone is
 * not worth its system call. */
int peek_can_time(uint64_t addr, size_t len);

/* Through the kernel, whatever the run: for bytes a watchpoint may cover,
 * and outside handler runs.  0 or -EFAULT. */
int peek_read_remote(uint64_t addr, void *buf, size_t len);

#endif
