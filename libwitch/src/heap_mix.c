/* heap_mix: whose an untracked small heap block is (see heap_mix.h). */
#include "witch/heap_mix.h"
#include "witch/lbss.h"
#include "witch/heap_sites.h"

#include <errno.h>

#define MIX_N HEAP_SITES /* sites are 1..HEAP_SITES */

/* Live sampled bytes by site: one atomic add an update (a Fenwick tree
 * took 12, each a locked add of ~20 cycles, twice a tracked block), and a
 * draw sums the sites up to the highest one added (ids are dense, in the
 * order first seen: heap_sites.h). */
static int64_t mix_bytes[MIX_N + 1] WITCH_LBSS;
static uint32_t mix_top; /* the highest site added */
static uint64_t mix_windows[HEAP_MIX_WINDOWS]; /* window number + 1, 0 free */
static uint32_t mix_n_windows;

/* Window w (number + 1) is among the noted ones. */
static int mix_window_noted(uint64_t w)
{
	uint32_t n = __atomic_load_n(&mix_n_windows, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n && i < HEAP_MIX_WINDOWS; i++)
		if (__atomic_load_n(&mix_windows[i], __ATOMIC_ACQUIRE) == w)
			return 1;
	return 0;
}

/* Note window w (number + 1).  Two threads noting one window may both
 * claim a slot (a duplicate costs a slot, nothing else). */
static void mix_note(uint64_t w)
{
	if (mix_window_noted(w))
		return;
	uint32_t i = __atomic_fetch_add(&mix_n_windows, 1, __ATOMIC_ACQ_REL);
	if (i < HEAP_MIX_WINDOWS)
		__atomic_store_n(&mix_windows[i], w, __ATOMIC_RELEASE);
}

void heap_mix_note_window(uint64_t addr)
{
	mix_note((addr >> HEAP_MIX_WINDOW_SHIFT) + 1);
	/* The main arena's brk heap starts anywhere and grows up across a
	 * window's end: the blocks just past a tracked one, untracked until
	 * the next is (~16 KiB on), are in the heap too. */
	mix_note(((addr + HEAP_MIX_REACH) >> HEAP_MIX_WINDOW_SHIFT) + 1);
}

int heap_mix_holds(uint64_t addr)
{
	return mix_window_noted((addr >> HEAP_MIX_WINDOW_SHIFT) + 1);
}

void heap_mix_add(uint32_t site, int64_t bytes)
{
	if (site == 0 || site > MIX_N || bytes == 0)
		return;
	__atomic_fetch_add(&mix_bytes[site], bytes, __ATOMIC_RELAXED);
	uint32_t top = __atomic_load_n(&mix_top, __ATOMIC_RELAXED);
	while (site > top &&
	       !__atomic_compare_exchange_n(&mix_top, &top, site, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

/* A site's bytes as a draw counts them: a free racing its block's add on
 * another thread may leave a counter below 0 for a moment. */
static int64_t mix_site_bytes(uint32_t s)
{
	int64_t v = __atomic_load_n(&mix_bytes[s], __ATOMIC_RELAXED);
	return v > 0 ? v : 0;
}

/* Sites 1..top's bytes. */
static int64_t mix_sum(uint32_t top)
{
	int64_t total = 0;
	for (uint32_t s = 1; s <= top; s++)
		total += mix_site_bytes(s);
	return total;
}

int64_t heap_mix_total(void)
{
	return mix_sum(__atomic_load_n(&mix_top, __ATOMIC_ACQUIRE));
}

int heap_mix_draw(uint64_t u, uint32_t *site)
{
	uint32_t top = __atomic_load_n(&mix_top, __ATOMIC_ACQUIRE);
	int64_t total = mix_sum(top);
	if (total <= 0)
		return -ENOENT;
	/* r uniform in [0, total); the site is the first whose prefix sum passes it */
	int64_t r = (int64_t)(((unsigned __int128)u * (uint64_t)total) >> 64);
	for (uint32_t s = 1; s <= top; s++) {
		int64_t v = mix_site_bytes(s);
		if (r < v) {
			*site = s;
			return 0;
		}
		r -= v;
	}
	return -ENOENT; /* an update raced the two passes */
}
