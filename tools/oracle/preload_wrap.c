/* preload_wrap: the C library's malloc family, wrapped for the oracle
 * (requests.h).  Valgrind loads this as the tool's preload object and
 * redirects libc's functions here; each calls the original and tells the
 * tool what it did.  The tool leaves this object's own loads and stores
 * out (oracle_main.c), as libwitch's interposers are not the program's. */
#include <stddef.h>

#include "requests.h"

#define WRAP(fn) I_WRAP_SONAME_FNNAME_ZU(libcZdsoZa, fn)
#define TELL(req, a, b, c) VALGRIND_DO_CLIENT_REQUEST_STMT(req, a, b, c, 0, 0)

/* An allocator of one argument (the size) or two (alignment, size) whose
 * block is new: the original's result, told to the tool. */
#define WRAP_NEW1(fn)                                       \
	void *WRAP(fn)(size_t n);                           \
	void *WRAP(fn)(size_t n)                            \
	{                                                   \
		OrigFn orig;                                \
		void *p;                                    \
		VALGRIND_GET_ORIG_FN(orig);                 \
		CALL_FN_W_W(p, orig, n);                    \
		TELL(ORACLE_REQ_ALLOC, p, n, 0);            \
		return p;                                   \
	}
#define WRAP_NEW2(fn)                                       \
	void *WRAP(fn)(size_t align, size_t n);             \
	void *WRAP(fn)(size_t align, size_t n)              \
	{                                                   \
		OrigFn orig;                                \
		void *p;                                    \
		VALGRIND_GET_ORIG_FN(orig);                 \
		CALL_FN_W_WW(p, orig, align, n);            \
		TELL(ORACLE_REQ_ALLOC, p, n, 0);            \
		return p;                                   \
	}

WRAP_NEW1(malloc)
WRAP_NEW1(valloc)
WRAP_NEW1(pvalloc)
WRAP_NEW2(memalign)
WRAP_NEW2(aligned_alloc)

void *WRAP(calloc)(size_t k, size_t n);
void *WRAP(realloc)(void *old, size_t n);
void *WRAP(reallocarray)(void *old, size_t k, size_t n);
void WRAP(free)(void *p);
int WRAP(posix_memalign)(void **out, size_t align, size_t n);

void *WRAP(calloc)(size_t k, size_t n)
{
	OrigFn fn;
	void *p;
	VALGRIND_GET_ORIG_FN(fn);
	TELL(ORACLE_REQ_FILL_BEGIN, 0, 0, 0);
	CALL_FN_W_WW(p, fn, k, n);
	/* (on overflow calloc fails: no block) */
	TELL(ORACLE_REQ_FILL_END, 0, p, k * n);
	return p;
}

void *WRAP(realloc)(void *old, size_t n)
{
	OrigFn fn;
	void *p;
	VALGRIND_GET_ORIG_FN(fn);
	TELL(ORACLE_REQ_FILL_BEGIN, old, 0, 0);
	CALL_FN_W_WW(p, fn, old, n);
	TELL(ORACLE_REQ_FILL_END, old, p, n);
	return p;
}

void *WRAP(reallocarray)(void *old, size_t k, size_t n)
{
	OrigFn fn;
	void *p;
	VALGRIND_GET_ORIG_FN(fn);
	TELL(ORACLE_REQ_FILL_BEGIN, old, 0, 0);
	CALL_FN_W_WWW(p, fn, old, k, n);
	TELL(ORACLE_REQ_FILL_END, old, p, k * n);
	return p;
}

void WRAP(free)(void *p)
{
	OrigFn fn;
	void *unused;
	VALGRIND_GET_ORIG_FN(fn);
	TELL(ORACLE_REQ_FREE, p, 0, 0);
	CALL_FN_W_W(unused, fn, p);
	(void)unused;
}

int WRAP(posix_memalign)(void **out, size_t align, size_t n)
{
	OrigFn fn;
	long rc;
	VALGRIND_GET_ORIG_FN(fn);
	CALL_FN_W_WWW(rc, fn, out, align, n);
	if (rc == 0)
		TELL(ORACLE_REQ_ALLOC, *out, n, 0);
	return (int)rc;
}
