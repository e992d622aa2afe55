/* lockguard: the runtime's memory kept out of the program's mlockall (see
 * lockguard.h). */
#include "witch/lockguard.h"
#include "witch/deps.h"
#include "witch/runtime.h"
#include "witch/export.h"
#include "witch/fdguard.h"
#include "witch/lbss.h"
#include "witch/limitguard.h"
#include "witch/rawsys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define LG_USER_TOP 0x800000000000ull
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT 1
#endif

/* The runtime's mappings: a dozen a process and three a thread.  The
 * first few among the start's variables; the rest in .lbss, touched only
 * by a process of many threads. */
#define LG_NEAR 32
#define LG_FAR 4096
struct lg_range {
	uint64_t lo, hi; /* hi 0: a free slot */
};
static struct lg_range lg_near[LG_NEAR];
static struct lg_range lg_far[LG_FAR] WITCH_LBSS;
static int lg_future; /* the program's MCL_FUTURE is on */

static struct lg_range *lg_slot(int i)
{
	return i < LG_NEAR ? &lg_near[i] : &lg_far[i - LG_NEAR];
}

/* Listed: a slot claimed by compare and swap (any thread, a handler too).
 * One past the list's end is not listed, and is locked with the program's. */
static void lg_list(uint64_t lo, uint64_t hi)
{
	for (int i = 0; i < LG_NEAR + LG_FAR; i++) {
		struct lg_range *r = lg_slot(i);
		uint64_t zero = 0;
		if (__atomic_load_n(&r->hi, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&r->hi, &zero, hi, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			__atomic_store_n(&r->lo, lo, __ATOMIC_RELEASE);
			return;
		}
	}
}

static void lg_unlist(uint64_t lo)
{
	for (int i = 0; i < LG_NEAR + LG_FAR; i++) {
		struct lg_range *r = lg_slot(i);
		if (__atomic_load_n(&r->hi, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&r->lo, __ATOMIC_ACQUIRE) == lo) {
			__atomic_store_n(&r->lo, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&r->hi, 0, __ATOMIC_RELEASE);
			return;
		}
	}
}

/* Under the program's MCL_FUTURE every mapping made is locked, and counts
 * against RLIMIT_MEMLOCK as it is made, inaccessible or not: the runtime's
 * then come from a pool reserved (inaccessible, so unlocked) just before
 * the program's call, opened piece by piece.  A piece given back is kept
 * for a later one of its size (a thread's map: threads come and go). */
#define LG_FREE 64
static char *lg_pool;
static size_t lg_pool_size, lg_pool_used, lg_pool_want;
static struct lg_range lg_free[LG_FREE]; /* (offsets in the pool, +1) */

void lockguard_init(size_t pool_bytes)
{
	lg_pool_want = pool_bytes;
}

static void lg_pool_reserve(void)
{
	if (lg_pool || !lg_pool_want || limitguard_reserve(lg_pool_want) < 0)
		return; /* (an address-space limit): each map as below */
	void *p = mmap(NULL, lg_pool_want, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		limitguard_release(lg_pool_want);
		return;
	}
	lg_pool_size = lg_pool_want;
	__atomic_store_n(&lg_pool, (char *)p, __ATOMIC_RELEASE);
	lg_list((uint64_t)(uintptr_t)p, (uint64_t)(uintptr_t)p + lg_pool_want);
}

static int lg_in_pool(const void *p)
{
	const char *pool = __atomic_load_n(&lg_pool, __ATOMIC_ACQUIRE);
	return pool && (const char *)p >= pool && (const char *)p < pool + lg_pool_size;
}

/* A piece of len bytes (whole pages) of the pool, opened; NULL if none. */
static void *lg_pool_take(size_t len)
{
	char *pool = __atomic_load_n(&lg_pool, __ATOMIC_ACQUIRE);
	if (!pool)
		return NULL;
	void *p = NULL;
	for (int i = 0; i < LG_FREE && !p; i++) {
		uint64_t off = __atomic_load_n(&lg_free[i].lo, __ATOMIC_ACQUIRE);
		if (off && __atomic_load_n(&lg_free[i].hi, __ATOMIC_ACQUIRE) == len &&
		    __atomic_compare_exchange_n(&lg_free[i].lo, &off, 0, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			__atomic_store_n(&lg_free[i].hi, 0, __ATOMIC_RELEASE);
			p = pool + off - 1;
		}
	}
	if (!p) {
		size_t off = __atomic_fetch_add(&lg_pool_used, len, __ATOMIC_ACQ_REL);
		if (off + len > lg_pool_size)
			return NULL;
		p = pool + off;
	}
	if (mprotect(p, len, PROT_READ | PROT_WRITE) != 0)
		return NULL;
	return p;
}

/* Back to the pool: emptied, closed, and kept for a piece of its size. */
static void lg_pool_give(void *p, size_t len)
{
	(void)madvise(p, len, MADV_DONTNEED);
	(void)mprotect(p, len, PROT_NONE);
	uint64_t off = (uint64_t)((char *)p - lg_pool) + 1;
	for (int i = 0; i < LG_FREE; i++) {
		uint64_t zero = 0;
		if (__atomic_load_n(&lg_free[i].hi, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&lg_free[i].hi, &zero, len, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			__atomic_store_n(&lg_free[i].lo, off, __ATOMIC_RELEASE);
			return;
		}
	}
}

void *lockguard_map(size_t len, int extra_flags)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | extra_flags;
	void *p;
	len = (len + 4095) & ~(size_t)4095;
	if (__atomic_load_n(&lg_future, __ATOMIC_RELAXED) && (p = lg_pool_take(len)) != NULL) {
		if (extra_flags & MAP_POPULATE)
			(void)madvise(p, len, MADV_WILLNEED);
		return p; /* (listed with the pool, and held with it: limitguard.h) */
	}
	/* Room under the program's address-space limit first (limitguard.h). */
	int rc = limitguard_reserve(len);
	if (rc < 0) {
		errno = -rc;
		return MAP_FAILED;
	}
	if (!__atomic_load_n(&lg_future, __ATOMIC_RELAXED)) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, -1, 0);
	} else {
		/* No pool left: made inaccessible (nothing to fill), unlocked,
		 * then opened (a locked mapping is filled as it becomes
		 * writable).  It counts against RLIMIT_MEMLOCK while made. */
		p = mmap(NULL, len, PROT_NONE, flags & ~MAP_POPULATE, -1, 0);
		if (p != MAP_FAILED && (munlock(p, len) != 0 ||
					mprotect(p, len, PROT_READ | PROT_WRITE) != 0)) {
			int e = errno;
			munmap(p, len);
			errno = e;
			p = MAP_FAILED;
		}
		if (p != MAP_FAILED && (extra_flags & MAP_POPULATE))
			(void)madvise(p, len, MADV_WILLNEED);
	}
	if (p != MAP_FAILED) {
		lg_list((uint64_t)(uintptr_t)p, (uint64_t)(uintptr_t)p + len);
	} else {
		int e = errno;
		limitguard_release(len);
		errno = e;
	}
	return p;
}

int lockguard_unmap(void *p, size_t len)
{
	len = (len + 4095) & ~(size_t)4095;
	if (lg_in_pool(p)) {
		lg_pool_give(p, len);
		return 0;
	}
	lg_unlist((uint64_t)(uintptr_t)p);
	if (munmap(p, len) != 0)
		return -errno;
	limitguard_release(len);
	return 0;
}

void *lockguard_thread_stack(pthread_attr_t *attr, size_t size)
{
	if (!__atomic_load_n(&lg_future, __ATOMIC_RELAXED))
		return NULL;
	char *stack = lockguard_map(size, MAP_NORESERVE | MAP_STACK);
	if (stack == MAP_FAILED)
		return NULL;
	if (mprotect(stack, 4096, PROT_NONE) != 0 || pthread_attr_setstack(attr, stack, size) != 0) {
		(void)lockguard_unmap(stack, size);
		return NULL;
	}
	return stack;
}

void lockguard_postfork_child(void)
{
	lg_future = 0;
}

/* --- the program's calls ------------------------------------------------ */

/* The ranges locked so far by one mlockall(MCL_CURRENT), to undo. */
struct lg_done {
	uint64_t lo[256], hi[256];
	int n, lost; /* lost: more than it keeps (not undone) */
};

static long lg_lock(uint64_t lo, uint64_t hi, int onfault, struct lg_done *d)
{
	long rc = rawsys6(SYS_mlock2, (long)lo, (long)(hi - lo), onfault ? MLOCK_ONFAULT : 0, 0, 0, 0);
	if (rc == 0) {
		if (d->n < 256) {
			d->lo[d->n] = lo;
			d->hi[d->n++] = hi;
		} else {
			d->lost = 1;
		}
	}
	return rc;
}

/* [lo, hi) less the runtime's listed ranges, each piece locked.  0, or
 * the -errno of a refusal the kernel's mlockall makes too (the limit, no
 * privilege); other failures (a special mapping) are passed over, as
 * mlockall passes over them. */
static long lg_lock_but_ours(uint64_t lo, uint64_t hi, int onfault, struct lg_done *d)
{
	while (lo < hi) {
		/* The listed range that starts first at or after lo (or holds it). */
		uint64_t cut = hi, skip_to = hi;
		for (int i = 0; i < LG_NEAR + LG_FAR; i++) {
			const struct lg_range *r = lg_slot(i);
			uint64_t rhi = __atomic_load_n(&r->hi, __ATOMIC_ACQUIRE);
			uint64_t rlo = __atomic_load_n(&r->lo, __ATOMIC_ACQUIRE);
			if (!rhi || rhi <= lo || rlo >= hi)
				continue;
			if ((rlo > lo ? rlo : lo) < cut) {
				cut = rlo > lo ? rlo : lo;
				skip_to = rhi;
			}
		}
		if (cut > lo) {
			long rc = lg_lock(lo, cut, onfault, d);
			if (rc == -ENOMEM || rc == -EPERM || rc == -EAGAIN)
				return rc;
		}
		lo = skip_to;
	}
	return 0;
}

static uint64_t lg_hex(const char **s)
{
	uint64_t v = 0;
	for (;; (*s)++) {
		char c = **s;
		int k = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (k < 0)
			return v;
		v = v << 4 | (uint64_t)k;
	}
}

/* mlockall(MCL_CURRENT) of the program's mappings: 0 or -errno. */
static long lg_lock_current(int onfault)
{
	static char buf[8192]; /* (the program's call: one at a time is enough) */
	static int busy;
	struct lg_done done = {.n = 0};
	if (__atomic_exchange_n(&busy, 1, __ATOMIC_ACQUIRE))
		return rawsys6(SYS_mlockall, MCL_CURRENT | (onfault ? MCL_ONFAULT : 0), 0, 0, 0, 0, 0);
	long fd = rawsys6(SYS_openat, AT_FDCWD, (long)"/proc/self/maps", O_RDONLY | O_CLOEXEC, 0, 0, 0);
	long rc = 0;
	if (fd < 0) {
		/* No /proc: the kernel's, the runtime's memory locked with it. */
		__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
		return rawsys6(SYS_mlockall, MCL_CURRENT | (onfault ? MCL_ONFAULT : 0), 0, 0, 0, 0, 0);
	}
	size_t have = 0;
	for (;;) {
		long n = rawsys6(SYS_read, fd, (long)(buf + have), (long)(sizeof(buf) - 1 - have), 0, 0, 0);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = 0;
		char *line = buf, *nl;
		while (rc == 0 && (nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			const char *s = line;
			uint64_t lo = lg_hex(&s);
			s++;
			uint64_t hi = lg_hex(&s);
			s++;
			/* Inaccessible ones (guard pages, reservations) hold no pages;
			 * [vsyscall] is the kernel's, above the user's half. */
			if (!(s[0] == '-' && s[1] == '-' && s[2] == '-') && hi <= LG_USER_TOP)
				rc = lg_lock_but_ours(lo, hi, onfault, &done);
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (rc != 0)
			break;
	}
	fdguard_close((int)fd);
	if (rc != 0 && !done.lost)
		for (int i = 0; i < done.n; i++)
			rawsys6(SYS_munlock, (long)done.lo[i], (long)(done.hi[i] - done.lo[i]), 0, 0, 0, 0);
	__atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
	return rc;
}

WITCH_EXPORT int mlockall(int flags)
{
	long rc = 0;
	if (flags & ~(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) || !(flags & (MCL_CURRENT | MCL_FUTURE)))
		rc = -EINVAL;
	/* The decoder and unwinder now, not at a tick (deps.h): there every page
	 * of theirs would come in locked, inside a handler that held one of
	 * the program's threads the while (mlock_all's future row: a third
	 * thread stack, 8 MiB more locked).  Their failure is said at exit. */
	if (rc == 0 && witch_rt.live && !witch_rt.sealed)
		(void)deps_load();
	if (rc == 0 && (flags & MCL_CURRENT))
		rc = lg_lock_current(flags & MCL_ONFAULT);
	if (rc == 0 && (flags & MCL_FUTURE)) {
		lg_pool_reserve();
		/* On first: a mapping the runtime makes meanwhile comes unlocked. */
		__atomic_store_n(&lg_future, 1, __ATOMIC_RELAXED);
		rc = rawsys6(SYS_mlockall, MCL_FUTURE | (flags & MCL_ONFAULT), 0, 0, 0, 0, 0);
		if (rc != 0)
			__atomic_store_n(&lg_future, 0, __ATOMIC_RELAXED);
	}
	if (rc != 0) {
		errno = (int)-rc;
		return -1;
	}
	return 0;
}

WITCH_EXPORT int munlockall(void)
{
	long rc = rawsys6(SYS_munlockall, 0, 0, 0, 0, 0, 0);
	if (rc == 0)
		__atomic_store_n(&lg_future, 0, __ATOMIC_RELAXED);
	if (rc != 0) {
		errno = (int)-rc;
		return -1;
	}
	return 0;
}
