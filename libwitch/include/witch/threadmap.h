/* threadmap: the one mapping a profiled thread's runtime memory lives in
 * (its signal stack, state and arena: thread.c), kept for the next thread
 * when its thread ends.
 *
 * A pool whose threads end and begin (threads_many: 2,064 threads of
 * ~0.2 ms) mapped and unmapped 8.6 MiB a thread.  Each munmap in a process
 * with threads on other CPUs is a TLB-shootdown interrupt to each of them
 * (~50 us a thread here), and a new mapping's state and table pages fault
 * in again (~5 a thread, 12-15 us each: bench/results/thread_churn.md).
 * Up to THREADMAP_KEEP mappings are kept instead.  A kept one is cleared
 * as it is given back: /proc/self/pagemap tells which pages are there
 * (present or swapped), and those that are not all zero are zeroed, so the
 * next thread finds it as mmap gives it (the pages stay resident: a busy
 * thread's ~100 KiB).  Where pagemap cannot be read it is unmapped as
 * before.  Lock-free (slots taken and filled by atomic exchange): a fork
 * meets no lock; a mapping in transit in another thread is the child's
 * to lose.  Not in a signal handler (open, pread).
 */
#ifndef WITCH_THREADMAP_H
#define WITCH_THREADMAP_H

#include <stddef.h>

#define THREADMAP_KEEP 8

/* A private anonymous mapping (MAP_NORESERVE) of len bytes, all zero from
 * clean_from on (threadmap_give's promise): a kept one of that size, else a
 * new one.  MAP_FAILED with errno set where mmap fails. */
void *threadmap_take(size_t len);
/* map (len bytes, from threadmap_take) is its thread's no more: kept with
 * its bytes from clean_from to clean_to zeroed where touched (the caller
 * says none past clean_to were: an arena's bump pointer), or unmapped (no
 * slot free, pagemap unreadable).  Nothing in it may be used after. */
void threadmap_give(void *map, size_t len, size_t clean_from, size_t clean_to);
/* Mappings kept now (tests). */
int threadmap_kept(void);

#endif
