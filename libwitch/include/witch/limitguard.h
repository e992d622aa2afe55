/* limitguard: the runtime's address space kept out of the program's
 * RLIMIT_AS.
 *
 * The runtime maps ~140 MB of address space in a process at start (the
 * profile's arena, the heap table, reservations touched lazily) and ~17
 * MB a profiled thread, and an address-space limit (`ulimit -v`, a batch
 * scheduler's h_vmem) counts them: under `ulimit -v 200000` a program's
 * malloc of 100 MiB, which succeeds natively, failed profiled.  So where
 * the soft limit is finite, the kernel's soft limit is kept at the
 * program's own plus what the runtime holds now: every mapping of the
 * runtime's is made through lockguard_map, which asks here first
 * (limitguard_reserve) and gives back after its munmap (a short-lived
 * thread's stack too), plus a fixed allowance for what the runtime maps
 * otherwise (the libraries a first tick loads: LIMITGUARD_SLACK).  The
 * program reads and sets its own limit as if the runtime were not there:
 * getrlimit, setrlimit and prlimit (and their 64 forms) are interposed for
 * RLIMIT_AS.  So a program that exceeds its limit natively (a 2 GiB malloc
 * under 1 GiB) fails the same way profiled: before stop 87 the limit was
 * raised once by the most the runtime might ever map (1.2 GiB), and such
 * a malloc succeeded.
 *
 * Where the hard limit leaves no room for the start's mappings (`ulimit -v`
 * sets both), the runtime does not start: one `witch:` line says what to
 * do.  A later mapping that finds no room under the hard limit fails (a
 * thread then runs unprofiled), so the program never loses its share.  A
 * limit the program sets itself is raised the same way where its hard
 * limit leaves room for what the runtime holds, else taken as given (the
 * runtime's mappings then count against it, and new ones are refused
 * only by the kernel).  At an exec the limit goes back to the program's;
 * it is also handed down (WITCH_AS_PROGRAM) for the C library's own execs
 * (posix_spawn, system), which no interposer sees, so that an image
 * started there takes the program's limit, not the raised one.  Not seen:
 * syscall(SYS_prlimit64).
 * The program's own RLIMIT_NOFILE calls go to fdguard, which lifts that
 * limit for moments (fdguard_program_limit).
 *
 * Lock-free and async-signal-safe: the kernel's limit is set again until
 * no change raced the setting, so no fork hook is needed.
 */
#ifndef WITCH_LIMITGUARD_H
#define WITCH_LIMITGUARD_H

#include <stddef.h>
#include <stdint.h>

/* What the runtime maps other than through lockguard_map and a probe
 * thread's stack (datasym.c asks for that): the decoder's and unwinder's
 * libraries (0.95 MB here: VmSize after a first tick), the fault log's
 * two pages, the loader's own allocations.  A program within this of its
 * limit may get this much more than natively. */
#define LIMITGUARD_SLACK (2ull << 20)

/* At start, before the runtime maps anything: start_bytes, the most the
 * start maps (room the hard limit must leave).  0 (no finite limit, or the
 * kernel's soft limit now kept raised), -ENOSPC with why filled where the
 * hard limit leaves no room, or -errno. */
int limitguard_init(uint64_t start_bytes, char *why, size_t len);

/* Before the runtime maps len bytes: the kernel's soft limit raised by
 * len.  0, or -ENOMEM where the hard limit leaves no room (the mapping is
 * then not made), or -errno from prlimit. */
int limitguard_reserve(uint64_t len);

/* After the runtime unmapped len bytes (or failed to map what it had
 * reserved): the kernel's soft limit lowered by len. */
void limitguard_release(uint64_t len);

/* Just before an exec: the kernel's soft limit back to the program's (the
 * runtime's mappings go with the image; one in the new image raises it
 * again by its own).  Writes nothing but the limit: a vfork child's is
 * its own, its memory the parent's.  After a failed exec,
 * limitguard_exec_failed raises it again. */
void limitguard_before_exec(void);
void limitguard_exec_failed(void);

#endif
