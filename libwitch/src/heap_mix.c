/* heap_mix: whose an untracked small heap block is (see heap_mix.h). */
#include "witch/heap_mix.h"
#include "witch/heap_sites.h"

#include <errno.h>

#define MIX_N HEAP_SITES /* sites are 1..HEAP_SITES; a power of two */

static int64_t mix_tree[MIX_N + 1]; /* Fenwick: mix_tree[i] sums (i - lowbit(i), i] */
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

void heap_mix_note_window(uint64_t addr)
{
	uint64_t w = (addr >> HEAP_MIX_WINDOW_SHIFT) + 1;
	if (mix_window_noted(w))
		return;
	/* Claim the next slot; two threads noting one window may both add it
	 * (a duplicate costs a slot, nothing else). */
	uint32_t i = __atomic_fetch_add(&mix_n_windows, 1, __ATOMIC_ACQ_REL);
	if (i < HEAP_MIX_WINDOWS)
		__atomic_store_n(&mix_windows[i], w, __ATOMIC_RELEASE);
}

int heap_mix_holds(uint64_t addr)
{
	return mix_window_noted((addr >> HEAP_MIX_WINDOW_SHIFT) + 1);
}

void heap_mix_add(uint32_t site, int64_t bytes)
{
	if (site == 0 || site > MIX_N || bytes == 0)
		return;
	for (uint32_t i = site; i <= MIX_N; i += i & -i)
		__atomic_fetch_add(&mix_tree[i], bytes, __ATOMIC_RELAXED);
}

int64_t heap_mix_total(void)
{
	return __atomic_load_n(&mix_tree[MIX_N], __ATOMIC_RELAXED);
}

static int64_t mix_prefix(uint32_t i)
{
	int64_t s = 0;
	for (; i > 0; i -= i & -i)
		s += __atomic_load_n(&mix_tree[i], __ATOMIC_RELAXED);
	return s;
}

int heap_mix_draw(uint64_t u, uint32_t *site)
{
	int64_t total = heap_mix_total();
	if (total <= 0)
		return -ENOENT;
	/* r uniform in [0, total); the site is the first whose prefix sum passes it */
	int64_t r = (int64_t)(((unsigned __int128)u * (uint64_t)total) >> 64);
	uint32_t pos = 0;
	for (uint32_t step = MIX_N; step > 0; step >>= 1) {
		if (pos + step > MIX_N)
			continue;
		int64_t v = __atomic_load_n(&mix_tree[pos + step], __ATOMIC_RELAXED);
		if (v <= r) {
			pos += step;
			r -= v;
		}
	}
	uint32_t s = pos + 1;
	if (s > MIX_N || mix_prefix(s) - mix_prefix(s - 1) <= 0)
		return -ENOENT; /* an update raced the descent */
	*site = s;
	return 0;
}
