/* unwind: libunwind walk from a signal context (see unwind.h). */
#define UNW_LOCAL_ONLY
#include "witch/unwind.h"
#include "witch/phdrs.h"

#include <errno.h>
#include <libunwind.h>
#include <stddef.h>

int unwind_init(void)
{
	/* No cache, so no lock.  A per-thread cache is what a signal handler
	 * wants, but libunwind 1.6 built without --enable-per-thread-cache
	 * (Debian 12's) makes UNW_CACHE_PER_THREAD the global cache, under a
	 * mutex held across the reads of unwind tables and stacks; a fault
	 * there that rescue.h takes the handler out of (a module dlclose
	 * unmapped under the walk) leaves it held by the thread, whose next
	 * unwind waits on it forever, and every other thread's after it
	 * (dl_churn at WITCH_RATE=10000: 3 hangs in ~50 runs, the mutex's
	 * owner the waiting thread; none in 63 runs without the cache).  The
	 * handler's time a tick moved less than this host's spread
	 * (bench/results/unwind_cache.md). */
	if (unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_NONE) < 0)
		return -EINVAL;
	return 0;
}

static int unwind_walk(ucontext_t *uc, uint64_t *pcs, uint64_t *sps, int max, uint64_t *fn_start)
{
	unw_cursor_t cursor;
	unw_word_t ip, sp;
	int n = 0;

	if (max < 1)
		return -EINVAL;
	/* On x86-64 unw_context_t is ucontext_t; SIGNAL_FRAME marks the first
	 * ip as exact rather than a return address. */
	if (unw_init_local2(&cursor, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) < 0)
		return -EINVAL;
	if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0)
		return -EINVAL;
	if (sps)
		sps[n] = unw_get_reg(&cursor, UNW_REG_SP, &sp) == 0 ? sp : 0;
	pcs[n++] = ip;
	phdrs_unwind_at(ip);
	if (fn_start) {
		unw_proc_info_t pi;
		*fn_start = unw_get_proc_info(&cursor, &pi) == 0 ? pi.start_ip : 0;
	}
	while (n < max && unw_step(&cursor) > 0) {
		if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		if (sps) /* the caller's sp: where the frame below ends (its CFA) */
			sps[n] = unw_get_reg(&cursor, UNW_REG_SP, &sp) == 0 ? sp : 0;
		pcs[n++] = unw_is_signal_frame(&cursor) > 0 ? ip : ip - 1;
		phdrs_unwind_at(pcs[n - 1]); /* the next step looks up this frame */
	}
	return n;
}

/* libunwind finds unwind tables through dl_iterate_phdr: inside these two,
 * the runtime's lock-free snapshot of the modules answers (phdrs.h). */
int unwind_context(ucontext_t *uc, uint64_t *pcs, uint64_t *sps, int max, uint64_t *fn_start)
{
	phdrs_unwind_begin();
	int n = unwind_walk(uc, pcs, sps, max, fn_start);
	phdrs_unwind_end();
	return n;
}

int unwind_proc_start(uint64_t pc, uint64_t *fn_start)
{
	unw_proc_info_t pi;
	phdrs_unwind_begin();
	phdrs_unwind_at(pc);
	int rc = unw_get_proc_info_by_ip(unw_local_addr_space, pc, &pi, NULL);
	phdrs_unwind_end();
	if (rc < 0)
		return -ENOENT;
	*fn_start = pi.start_ip;
	return 0;
}
