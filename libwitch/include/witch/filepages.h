/* filepages: give back the pages of a read-only file mapping that the
 * runtime read (its own reads count in the program's resident set).
 *
 * The whole pages of a range are dropped with MADV_DONTNEED where
 * /proc/self/pagemap shows them still the file's (not present, or a file
 * page): a later touch faults them in again from the page cache, so the
 * program loses nothing but a minor fault, and a page the program made
 * writable and changed (an anonymous copy) is never reverted.
 *
 * Not in a signal handler (open, pread, madvise are safe there, but the
 * callers walk modules under the loader's lock).
 */
#ifndef WITCH_FILEPAGES_H
#define WITCH_FILEPAGES_H

#include <stdint.h>

/* The whole pages of [at, at + size): 0, or a negative errno when pagemap
 * cannot be read (then none are given back). */
int filepages_release(const void *at, uint64_t size);

#endif
