/* firsttouch: take a table's page for writing before reading it, where the
 * read is followed by a write.
 *
 * A private anonymous page that is first read maps the kernel's shared
 * zero page; the write that follows faults again to copy it.  Two faults,
 * each ~16 us on a VM whose guest page tables the hypervisor keeps (a PVM
 * guest: bench/fault_price.c), where a short process touches a few dozen
 * such pages (bench/results/startup.md, "Page faults").  An atomic or of 0
 * is a write that changes nothing another thread could see: one fault.
 *
 * Async-signal-safe; a locked instruction on a line the caller then
 * writes anyway, ~10-20 ns: where that is every call of a hot path, the
 * caller touches only while its table is young (heap_table.c).
 */
#ifndef WITCH_FIRSTTOUCH_H
#define WITCH_FIRSTTOUCH_H

#include <stdint.h>

static inline void firsttouch_for_write(void *p)
{
	__atomic_fetch_or((uint8_t *)p, (uint8_t)0, __ATOMIC_RELAXED);
}

#endif
