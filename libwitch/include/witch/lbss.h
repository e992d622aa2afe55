/* lbss: where the runtime's large zeroed arrays go.
 *
 * WITCH_LBSS puts an array in .lbss, which the linker lays out after
 * .bss.  The small variables that every process's start touches then share
 * a few pages, instead of lying in islands between arrays of 4-64 KiB that
 * are touched late or never: each page's first touch costs 12-15 us on a
 * VM whose page tables the hypervisor keeps (bench/fault_price.c).  A
 * small preloaded program touched 10 pages of the runtime's writable
 * segment, 5 once packed (bench/results/startup.md, "Page faults").
 *
 * Zero-initialized arrays only (.lbss has no file bytes).
 */
#ifndef WITCH_LBSS_H
#define WITCH_LBSS_H

#define WITCH_LBSS __attribute__((section(".lbss.witch")))

#endif
