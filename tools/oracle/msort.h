/* msort: a stable merge sort for the oracle's output, O(n log n).
 * Valgrind's VG_(ssort) is a Shell sort with Knuth's gaps, ~n^1.5
 * comparisons and byte-by-byte element moves, and the output sorts
 * millions of pairs (bench/programs/sort).
 *
 *   void msort(void *base, SizeT n, SizeT size,
 *              Int (*cmp)(const void *, const void *));
 */
#ifndef ORACLE_MSORT_H
#define ORACLE_MSORT_H

#include "pub_tool_basics.h"

void msort(void *base, SizeT n, SizeT size, Int (*cmp)(const void *, const void *));

#endif
