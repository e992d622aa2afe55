/* perf_fd: the runtime's own perf_event file descriptors.
 */
#ifndef WITCH_PERF_FD_H
#define WITCH_PERF_FD_H

#include <linux/perf_event.h>
#include <sys/types.h>

/* perf_event_open(attr, tid, cpu -1, no group, CLOEXEC) as a raw system call:
 * the runtime's events never pass through the `syscall` interposer that serves
 * the program (perfguard.c), which could take a debug register from the very
 * set being opened.  Opened above the program's descriptor limit and
 * held against its sweeps (fdguard.h).  Returns the fd or -errno. */
int perf_fd_open(const struct perf_event_attr *attr, pid_t tid);
/* Overflow notices of fd go to signal sig on thread tid, with si_fd set
 * (O_ASYNC, F_SETSIG, F_SETOWN_EX).  0 or -errno. */
int perf_fd_route(int fd, int sig, pid_t tid);

#endif
