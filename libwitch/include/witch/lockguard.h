/* lockguard: the runtime's memory kept out of the program's mlockall.
 *
 * A program that locks its memory (mlockall(MCL_CURRENT | MCL_FUTURE):
 * real-time and latency-bound servers) locked the runtime's too: every
 * page of its reservations (~140 MB, touched lazily) was made resident at
 * the call, and each thread's 8 MiB map at its start.  A 40 MB program
 * peaked at 220 MB as root; under an RLIMIT_MEMLOCK sized for it, its
 * mlockall would fail (ENOMEM) where it succeeds natively.
 *
 * So the runtime's anonymous mappings are made here and listed, and
 * mlockall is interposed: MCL_CURRENT locks each of the program's
 * mappings but the runtime's (mlock2, /proc/self/maps less the list;
 * undone where one fails on the limit, as the kernel's check refuses the
 * whole call), and MCL_FUTURE is passed on, after which the runtime's
 * mappings come from a pool reserved inaccessible (so unlocked) just
 * before, opened piece by piece: a mapping made after the call is locked,
 * filled, and counted against RLIMIT_MEMLOCK as it is made, even an
 * inaccessible one.  Past the pool, a mapping is made inaccessible,
 * unlocked, and only then opened.  munlockall passes on.
 * The runtime's memory is then the one part of the process that may page
 * out: a handler may wait on a fault there.  Not seen: a raw system call.
 */
#ifndef WITCH_LOCKGUARD_H
#define WITCH_LOCKGUARD_H

#include <pthread.h>
#include <stddef.h>

/* At start: the pool the runtime's mappings come from once the program
 * locks its future ones (what it may still map: the threads' cap). */
void lockguard_init(size_t pool_bytes);

/* An anonymous private read-write mapping of len bytes, with extra mmap
 * flags (MAP_NORESERVE, MAP_POPULATE), kept out of the program's locks.
 * MAP_FAILED with errno set where mmap fails. */
void *lockguard_map(size_t len, int extra_flags);

/* Unmaps one made by lockguard_map.  0 or -errno. */
int lockguard_unmap(void *p, size_t len);

/* For a thread of the runtime's own, where the program locks what it maps
 * from now on: a stack of size bytes made by lockguard_map (the C
 * library's, of RLIMIT_STACK's 8 MiB, would be locked and filled whole),
 * its lowest page a guard, set in attr.  The stack (for lockguard_unmap
 * after the join), or NULL where the program does not lock (attr as it
 * was) or it could not be made. */
void *lockguard_thread_stack(pthread_attr_t *attr, size_t size);

/* A fork child starts without the parent's locks (mlockall(2)). */
void lockguard_postfork_child(void);

#endif
