/* fdguard: the runtime's descriptors survive the program's sweeps.
 *
 * Daemons and the children they fork close every descriptor they did not
 * open themselves: closefrom(3), close_range(3, ~0U, 0), close() of each
 * number up to sysconf(_SC_OPEN_MAX) or of each entry in /proc/self/fd.
 * That closed the runtime's perf events, so sampling stopped for good
 * without a word (a profile covering 0.14 s of a 0.7 s run); and a thread
 * that ended after the program had reopened the numbers closed the
 * program's files in their place.
 *
 * So the runtime's long-lived descriptors (perf events, its userfaultfd,
 * libunwind's pipe) are held here, and close, close_range, closefrom and
 * syscall(SYS_close / SYS_close_range) (from perfguard's interposer) pass
 * over them: a close of one returns 0 and leaves it open, as if it had
 * been closed and the kernel had kept the number busy.  A dup2 or dup3
 * onto one is the program's to make: the number becomes the program's,
 * and the runtime's later close of it closes nothing.  Not seen: a raw
 * system call instruction, io_uring's close.  Only numbers below
 * FDIO_HIGH_TOP are held (fdio_move_high puts the runtime's there).
 *
 * Async-signal-safe throughout: a bitmap and raw system calls.
 */
#ifndef WITCH_FDGUARD_H
#define WITCH_FDGUARD_H

#include <stdint.h>

/* A descriptor the runtime keeps: moved out of the program's way
 * (fdio_move_high) and held.  Returns its new number (fd itself where it
 * could not move; fd if negative). */
int fdguard_take(int fd);

/* The runtime closes a descriptor of its own.  Every close in the runtime
 * goes through here (the interposed close would keep a held one open).
 * 0 or -errno. */
int fdguard_close(int fd);

/* libunwind's code (unwind_text_range): its closes are the runtime's (it
 * closes its pipe to open it again after a failed read). */
void fdguard_set_unwinder_text(uint64_t lo, uint64_t hi);

/* Whether the runtime holds fd now. */
int fdguard_held(int fd);

/* For perfguard's syscall interposer: SYS_close and SYS_close_range made
 * as the interposers do; 1 with *ret set (as syscall(2) returns, errno
 * set), 0 for any other call. */
int fdguard_syscall(long nr, const long a[6], long *ret);

/* What the program's sweeps met, for the profile: closes of a held
 * descriptor kept open, and held numbers the program took by dup2/dup3. */
void fdguard_counts(uint64_t *kept, uint64_t *taken);

#endif
