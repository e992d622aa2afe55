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
 * FDGUARD_TOP are held.
 *
 * The runtime's descriptors also stay out of the program's soft
 * RLIMIT_NOFILE: a profiled thread holds one to six (its clock, its fault
 * log, four breakpoints), and a server of 150 threads under the usual
 * 1,024 would have lost most of its numbers to them (EMFILE where it ran
 * natively).  So they are opened with the soft limit lifted and moved
 * above it, then the limit is put back: the program opens, and reads its
 * limit, exactly as natively, and its descriptors stay below FD_SETSIZE
 * as select() needs.  Where the hard limit leaves no room (ulimit -n sets
 * both), or the soft one is FDGUARD_TOP / 2 or more, they go to the lowest
 * free of the 128 numbers below min(the soft limit, 1024), out of the way
 * of a shell's dup2 onto the numbers it chose, and count against the
 * program's limit (stat fd_in_program_range).
 *
 * Async-signal-safe throughout: a bitmap, a lock only tried, and raw
 * system calls.
 */
#ifndef WITCH_FDGUARD_H
#define WITCH_FDGUARD_H

#include <stdint.h>
#include <sys/resource.h>

/* Numbers held: 2 x 512 bytes of bitmap, among the start's other
 * variables (a page of its own was a fault, ~12 us, in every process),
 * and room above a soft limit of 1,024 for 500 threads' descriptors. */
#define FDGUARD_TOP 4096

/* A descriptor the runtime keeps, opened by open_fd(arg) (a raw system
 * call: the fd or -errno) with the program's limit lifted, then moved
 * above it (or out of the program's way) and held.  Returns the new
 * number, or -errno. */
int fdguard_open(long (*open_fd)(const void *arg), const void *arg);

/* The same, not held: a file the runtime closes itself soon (a profile
 * written where the program had used every number of its own). */
int fdguard_open_brief(long (*open_fd)(const void *arg), const void *arg);

/* The same as fdguard_open for a descriptor opened already (fd itself if
 * negative). */
int fdguard_take(int fd);

/* The program's own read or set of its RLIMIT_NOFILE (limitguard's
 * interposers): made between the runtime's lifts, never inside one.
 * 0 or -errno. */
int fdguard_program_limit(const struct rlimit *set, struct rlimit *get);

/* Fork hooks: no child begins inside a lift. */
void fdguard_prefork(void);
void fdguard_postfork_parent(void);
void fdguard_postfork_child(void);

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

/* For the profile: closes of a held descriptor kept open, held numbers
 * the program took by dup2/dup3, and the runtime's descriptors that went
 * in the program's range (no room above its limit). */
void fdguard_counts(uint64_t *kept, uint64_t *taken, uint64_t *in_range);

#endif
