/* context: the program's calling contexts from inside the runtime (see context.h). */
#include "witch/context.h"
#include "witch/thread.h"
#include "witch/unwind.h"

#include <errno.h>
#include <string.h>

static uint64_t runtime_lo, runtime_hi;
static uint64_t through_lo, through_hi;
extern char __start_witch_through[], __stop_witch_through[];

void context_set_runtime_text(uint64_t lo, uint64_t hi)
{
	runtime_lo = lo;
	runtime_hi = hi;
	through_lo = (uint64_t)(uintptr_t)__start_witch_through;
	through_hi = (uint64_t)(uintptr_t)__stop_witch_through;
}

int context_drop_through(uint64_t *pcs, uint64_t *sps, int n)
{
	int out = 0;
	for (int i = 0; i < n; i++)
		if (i == 0 || pcs[i] < through_lo || pcs[i] >= through_hi) {
			if (sps)
				sps[out] = sps[i];
			pcs[out++] = pcs[i];
		}
	return out;
}

void context_runtime_text(uint64_t *lo, uint64_t *hi)
{
	*lo = runtime_lo;
	*hi = runtime_hi;
}

int context_in_runtime(const uint64_t *pcs, int n)
{
	for (int i = 0; i < n; i++)
		if (pcs[i] >= runtime_lo && pcs[i] < runtime_hi)
			return 1;
	return 0;
}


/* The unwinder reads the program's stack: pause read-write watchpoints on
 * it so the profiler's own reads do not trap (Witch 4.5).  It reads return
 * addresses and saved registers, all at or above sp; a leaf's red zone
 * below sp it never reads (the registers come from the signal context), so
 * words watched there stay armed: lz at 50/s paused 86 -> 48 times in ~90
 * ticks, handler time a tick 128 -> 125 us (lz), 185 -> 177 us (hashtab). */
static uint32_t pause_stack_watchpoints(struct witch_thread *t, uint64_t sp)
{
	uint64_t lo = sp, hi = t->stack_hi ? t->stack_hi : sp + (8u << 20);
	uint32_t paused = 0;
	for (int i = 0; i < t->wps.n; i++) {
		const struct watchpoint *w = &t->wps.wp[i];
		if (w->armed && w->type == WATCHPOINT_RW && w->addr + w->len > lo && w->addr < hi &&
		    watchpoint_pause(&t->wps, i) == 0)
			paused |= 1u << i;
	}
	return paused;
}

static void resume_watchpoints(struct witch_thread *t, uint32_t paused)
{
	for (int i = 0; i < t->wps.n; i++)
		if ((paused & (1u << i)) && t->wps.wp[i].armed && watchpoint_resume(&t->wps, i) < 0)
			t->stats.arm_errors++;
}

int context_of_signal(struct witch_thread *t, ucontext_t *uc, uint64_t leaf, int skip,
		      uint64_t *pcs, uint64_t *sps, int max)
{
	uint32_t paused = pause_stack_watchpoints(t, (uint64_t)uc->uc_mcontext.gregs[REG_RSP]);
	int n = unwind_context(&t->unwind_rules, uc, pcs, sps, max);
	resume_watchpoints(t, paused);
	if (n <= 0)
		return n < 0 ? n : -EINVAL;
	n = context_drop_through(pcs, sps, n);
	if (skip > 0) {
		if (n <= skip)
			return -EINVAL;
		memmove(pcs, pcs + skip, sizeof(pcs[0]) * (size_t)(n - skip));
		if (sps)
			memmove(sps, sps + skip, sizeof(sps[0]) * (size_t)(n - skip));
		n -= skip;
	}
	pcs[0] = leaf;
	return n;
}

int context_of_call(uint64_t *pcs, int n, uint64_t fn)
{
	int first = 1; /* pcs[0], the leaf, context_of has set already */
	while (first < n && pcs[first] >= runtime_lo && pcs[first] < runtime_hi)
		first++;
	if (first == n)
		return -EINVAL;
	memmove(pcs + 1, pcs + first, sizeof(pcs[0]) * (size_t)(n - first));
	pcs[0] = fn;
	return n - first + 1;
}
