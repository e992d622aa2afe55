/* prefault: a handler table's pages made present in one system call, not
 * one fault at a time as its runs first touch them.
 *
 * On the PVM guests the runtime is measured on, an anonymous page's first
 * touch costs 12-15 us (the guest's #PF and the hypervisor's shadow page
 * tables); madvise(MADV_POPULATE_WRITE) makes a page present for ~1.1 us,
 * and the first touch after it costs ~6.6 us (the shadow entry alone):
 * about half (bench/fault_price.c).  A page read before it is written (a
 * table's tags, its buckets) faults twice, the zero page and then its
 * copy: there it saves three quarters.  At the 1% budget a run's
 * handlers took 63-287 faults (bench/programs at scale 6), most in the
 * decode caches' tags and the runspace, which a run fills whole within a
 * few ticks.  Only for such tables: a page made present and never
 * touched still counts in the resident set (bench/results/prefault.md).
 *
 * Async-signal-safe (one raw system call).  Linux 5.14 and later; before
 * that the pages fault in as they did, and no call is made again.
 */
#ifndef WITCH_PREFAULT_H
#define WITCH_PREFAULT_H

#include <stddef.h>

/* Makes the whole pages of [p, p + len) present and writable: 0,
 * -EOPNOTSUPP where the kernel cannot, or the kernel's -errno (-ENOMEM:
 * out of memory or not all mapped; -EINVAL: not writable, which some
 * kernels say as -EFAULT). */
int prefault_range(void *p, size_t len);

/* Pages made present so far by every thread's calls (the process's). */
unsigned long prefault_pages(void);

#endif
