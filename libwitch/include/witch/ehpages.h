/* ehpages: the modules' unwind tables, given back to the page cache.
 *
 * The runtime unwinds the program's stack at its ticks and at tracked
 * allocations: libunwind searches a module's .eh_frame_hdr and reads its
 * .eh_frame, and each page fault there maps 16 pages around it (fault
 * around).  Those pages count in the program's resident set: cc1 kept all
 * 89 pages of its .eh_frame_hdr and 412 of its 586 .eh_frame pages, 1.75
 * MiB of gcc's peak.  They are the file's, read-only: given back, a later
 * unwind faults in again what it needs (filepages.h).  Where the kernel
 * allows, once a run is past its first 100 ms, each walk's new modules are
 * registered to fault in one page at a time (faultaround.h), so what
 * comes back is what the unwinds read.
 *
 * For each module with a PT_GNU_EH_FRAME in a read-only, non-executable
 * PT_LOAD: its pages from .eh_frame_hdr to the segment's end (.eh_frame
 * and .gcc_except_table follow the header there in GNU ld's layout;
 * .rodata, which the program reads, comes before it).
 *
 * Not in a signal handler (dl_iterate_phdr takes the loader's lock).
 */
#ifndef WITCH_EHPAGES_H
#define WITCH_EHPAGES_H

#include <stdint.h>

/* At most every EHPAGES_DUE_NS, or EHPAGES_DUE_ONE_PAGE_NS (a coarse clock
 * read otherwise; due.h: one caller an interval).
 * Called by the heap's growth hook and the flusher (witch.c, flush.c).
 * gcc -O2 (bench/real_programs' input), peak RSS profiled: 120.0-120.1 MB
 * before, 119.4-119.9 at 100 ms (4 runs each; native 114.7-115.1), for
 * 1,100-1,450 more page faults (~4%, each re-mapping 16 pages); 118.6-119.3
 * at 10 ms: the pages come back fast (each new pc's unwind searches the
 * header, 16 pages a fault), so the interval buys little below this. */
#define EHPAGES_DUE_NS 100000000ull
/* Where faults map one page (faultaround.h) the pages come back one at a
 * time, and each that an unwind reads again after a release is a fault
 * (~12 us on these VMs).  gcc -O2, medians of 5 (native 115.9 MB, before
 * one-page faults 118.9 MB and 29,064 faults): at 100 ms 117.5 MB and
 * 31,646 faults, at 300 ms 117.7 and 30,249, at 1 s 117.7 and 29,427. */
#define EHPAGES_DUE_ONE_PAGE_NS 1000000000ull
/* Not from the start: one page a fault costs a short run's first unwinds
 * (each new pc's binary search through the header) a fault a page where
 * fault-around batched 16, at 12-20 us a fault on these VMs: a cc1 of
 * hello.c took ~120 more (1.5 ms), and no release would have come in its
 * 30 ms.  A run long enough for releases switches at its first walk past
 * this, which gives back what came in batches. */
#define EHPAGES_ONE_PAGE_AFTER_NS 100000000ull
void ehpages_release_due(void);

/* Every module's pages now: 0, or a negative errno (pagemap unreadable). */
int ehpages_release(void);

/* At start-up: the first release is due EHPAGES_DUE_NS later, and the
 * first walk EHPAGES_ONE_PAGE_AFTER_NS or more after this turns one-page
 * faults on (faultaround_init, which also registers the modules added
 * with faultaround_add_module) and registers every module's range. */
void ehpages_start(void);

/* fork's handlers: no walk is under way while the process forks (the C
 * library leaves the loader's module-list lock as it was in the child). */
void ehpages_prefork(void);
void ehpages_postfork_parent(void);
void ehpages_postfork_child(void);

#endif
