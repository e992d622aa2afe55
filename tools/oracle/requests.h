/* requests: what the oracle's preload (preload_wrap.c) tells the tool
 * about the C library's heap, as Valgrind client requests.  The client's
 * malloc family is glibc's own, wrapped, not replaced: its zeroing,
 * copies and bookkeeping are the program's loads and stores, as they are
 * natively under libwitch.
 *
 *   ORACLE_REQ_ALLOC(p, n)             a block [p, p+n) from the running
 *                                      thread's innermost call (p may be 0)
 *   ORACLE_REQ_FREE(p)                 block p is gone (before free runs)
 *   ORACLE_REQ_FILL_BEGIN(old)         a calloc (old 0) or realloc is under
 *                                      way: old's block goes now, and what
 *                                      the call touches outside any object
 *                                      is the new block's (libwitch's
 *                                      heap_pending_site)
 *   ORACLE_REQ_FILL_END(old, p, n)     it returned p (0: failed, old stays)
 */
#ifndef ORACLE_REQUESTS_H
#define ORACLE_REQUESTS_H

#include "valgrind.h"

enum oracle_request {
	ORACLE_REQ_ALLOC = VG_USERREQ_TOOL_BASE('W', 'O'),
	ORACLE_REQ_FREE,
	ORACLE_REQ_FILL_BEGIN,
	ORACLE_REQ_FILL_END,
};

#endif
