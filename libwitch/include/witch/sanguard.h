/* sanguard: programs built with a sanitizer that intercepts the C
 * library's memory functions.
 *
 * AddressSanitizer, ThreadSanitizer, MemorySanitizer and HWASan define
 * memcpy, memset, malloc and the rest in their own runtime, which a
 * preloaded libwitch.so's calls reach too: a tick's run-ahead read the
 * program's memory with memcpy, ASan's memcpy checked the read against
 * its shadow, and the program died in an ASan report ("unknown-crash ...
 * in the high shadow area", exit 1) that was the profiler's.  So where
 * one of them is in the process the runtime does not start, and says so
 * in one line; LeakSanitizer and UndefinedBehaviorSanitizer alone
 * intercept no memory reads and are profiled as any program.
 *
 * ASan's start also checks that its runtime comes first in the list of
 * libraries, which LD_PRELOAD changes: it aborts there, or (GCC 12's)
 * calls the preloaded dl_iterate_phdr before its own interceptors are
 * set and jumps to 0.  The runtime's __asan_default_options turns that
 * check off (verify_asan_link_order=0); a program's own definition, or
 * ASAN_OPTIONS naming the flag, comes before it.
 */
#ifndef WITCH_SANGUARD_H
#define WITCH_SANGUARD_H

#include <stddef.h>

/* The sanitizer in the process whose interceptors the runtime's calls
 * would meet ("AddressSanitizer", ...), or NULL for none. */
const char *sanguard_intercepting(void);

#endif
