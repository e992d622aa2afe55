/* context: the program's calling contexts from inside the runtime (see context.h). */
#include "witch/context.h"
#include "witch/bulk.h"
#include "witch/thread.h"
#include "witch/unwind.h"

#include <errno.h>
#include <string.h>

static uint64_t runtime_lo, runtime_hi;
static uint64_t through_lo, through_hi;
static uint64_t program_lo, program_hi;
extern char __start_witch_through[], __stop_witch_through[];
extern char __start_witch_program[], __stop_witch_program[];

void context_set_runtime_text(uint64_t lo, uint64_t hi)
{
	runtime_lo = lo;
	runtime_hi = hi;
	through_lo = (uint64_t)(uintptr_t)__start_witch_through;
	through_hi = (uint64_t)(uintptr_t)__stop_witch_through;
	program_lo = (uint64_t)(uintptr_t)__start_witch_program;
	program_hi = (uint64_t)(uintptr_t)__stop_witch_program;
}

int context_pc_program(uint64_t pc)
{
	return pc >= program_lo && pc < program_hi;
}

uint64_t context_leaf(uint64_t pc)
{
	return context_pc_program(pc) ? bulk_program_leaf(pc) : pc;
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

int context_pc_runtime(uint64_t pc)
{
	return pc >= runtime_lo && pc < runtime_hi && !context_pc_program(pc);
}

int context_in_runtime(const uint64_t *pcs, int n)
{
	for (int i = 0; i < n; i++)
		if (context_pc_runtime(pcs[i]))
			return 1;
	return 0;
}


/* libunwind reads the program's stack in place: read-write watchpoints
 * there are paused while it walks, so the profiler's own reads do not
 * trap (Witch 4.5).  Only once it is about to read, and only from where it
 * starts (unwind.h): a walk by the thread's rules reads through peek.h and
 * needs none.  A resume is a debug-register write for every breakpoint the
 * thread has enabled (the kernel's ctx_resched): ~3 us each on these VMs. */
struct stack_pause {
	struct witch_thread *t;
	uint32_t paused;
};

static void pause_stack_watchpoints(void *arg, uint64_t sp)
{
	struct stack_pause *p = arg;
	struct witch_thread *t = p->t;
	uint64_t hi = t->stack_hi ? t->stack_hi : sp + (8u << 20);
	for (int i = 0; i < t->wps.n; i++) {
		const struct watchpoint *w = &t->wps.wp[i];
		if (!(p->paused & (1u << i)) && w->armed && w->type == WATCHPOINT_RW &&
		    w->addr + w->len > sp && w->addr < hi && watchpoint_pause(&t->wps, i) == 0) {
			p->paused |= 1u << i;
			t->stats.stack_pauses++;
		}
	}
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
	struct stack_pause p = {.t = t, .paused = 0};
	const struct unwind_guard g = {.before_reads = pause_stack_watchpoints, .arg = &p};
	int n = unwind_context(&t->unwind_rules, uc, &g, pcs, sps, max);
	resume_watchpoints(t, p.paused);
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
	pcs[0] = context_leaf(leaf);
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
