/* limitguard: the runtime's address space kept out of the program's
 * RLIMIT_AS.
 *
 * The runtime reserves ~140 MB of address space in a process (the
 * profile's arena, the heap table, a map a profiled thread), and an
 * address-space limit (`ulimit -v`, a batch scheduler's h_vmem) counts
 * reservations: under `ulimit -v 200000` a program's malloc of 100 MiB,
 * which succeeds natively, failed profiled.  So where the soft limit is
 * finite, the runtime raises it by what it may reserve (the hard limit
 * permitting), and the program reads and sets its limit as if it had not:
 * getrlimit, setrlimit and prlimit (and their 64 forms) are interposed
 * for RLIMIT_AS.  Where the hard limit leaves no room (`ulimit -v` sets
 * both), the runtime does not start: one `witch:` line says what to do.
 * The raise is handed down (WITCH_AS_RAISED) with the limit, so an exec'd
 * image does not raise it again.  A limit the program sets itself is
 * raised the same way where its hard limit leaves room, else taken as
 * given (and no longer handed down).  Not seen: syscall(SYS_prlimit64).
 * The program's own RLIMIT_NOFILE calls go to fdguard, which lifts that
 * limit for moments (fdguard_program_limit).
 */
#ifndef WITCH_LIMITGUARD_H
#define WITCH_LIMITGUARD_H

#include <stddef.h>
#include <stdint.h>

/* At start, before the runtime's reservations: extra, the most address
 * space the runtime reserves (bytes).  0 (no limit, or raised, or raised
 * already by the process that started this one), or -ENOSPC with why
 * filled where the hard limit leaves no room, or -errno. */
int limitguard_init(uint64_t extra, char *why, size_t len);

#endif
