/* unwind: libunwind walk from a signal context (see unwind.h). */
#define UNW_LOCAL_ONLY
#include "witch/unwind.h"
#include "witch/stats.h"
#include "witch/phdrs.h"
#include "witch/unwind_rules.h"
#include "witch/decode_zydis.h"
#include "witch/deps.h"
#include "witch/export.h"
#include "witch/fdguard.h"
#include "witch/rawsys.h"

#include <dlfcn.h>
#include <errno.h>
#include <libunwind.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>

/* libunwind (1.6) checks that memory it reads during a walk from a signal
 * frame is mapped by writing a byte of it into a pipe of its own and
 * reading one back: two descriptors it opens at its first use, at the
 * lowest free numbers (3 and 4 under a plain shell).  A program that then
 * dup2s onto them (a shell's `exec 3<file`, its pipelines) hands libunwind
 * its file: the handler's walk read the program's pipe, blocking there for
 * good (runtime_fds hung 1 run in ~20) or taking a byte of its data.  Its
 * pipes go high instead, held against the program's sweeps (fdguard.h);
 * anyone else's pipe2 is the C library's, untouched. */
WITCH_EXPORT int pipe2(int fds[2], int flags)
{
	uint64_t from = (uint64_t)(uintptr_t)__builtin_return_address(0);
	long rc = rawsys6(SYS_pipe2, (long)fds, flags, 0, 0, 0, 0);
	if (rc < 0) {
		errno = (int)-rc;
		return -1;
	}
	uint64_t lo, hi;
	deps_unwinder_text(&lo, &hi);
	if (from >= lo && from < hi) {
		fds[0] = fdguard_take(fds[0]);
		fds[1] = fdguard_take(fds[1]);
	}
	return 0;
}

/* libunwind's own set-up at the first walk, not at start: it writes its
 * tables' pages and opens its pipe, ~0.3 ms of a process's start here,
 * which a process that never ticks (most of a script's) paid for nothing
 * (bench/results/startup.md).  In a handler as unw_init_local would do it:
 * libunwind sets up under its lock with every signal blocked, and setting
 * no cache only bumps a generation count.  Each thread sets it before its
 * first walk, so none walks with libunwind's global cache. */
static int unwind_ready(void)
{
	static int ready; /* 1 set, -1 failed */
	int r = __atomic_load_n(&ready, __ATOMIC_ACQUIRE);
	if (!r && !deps_ready())
		return -EAGAIN; /* not loaded yet (deps.h) */
	if (!r) {
		/* No cache, so no lock.  A per-thread cache is what a signal
		 * handler wants, but libunwind 1.6 built without
		 * --enable-per-thread-cache (Debian 12's) makes
		 * UNW_CACHE_PER_THREAD the global cache, under a mutex held
		 * across the reads of unwind tables and stacks; a fault there
		 * that rescue.h takes the handler out of (a module dlclose
		 * unmapped under the walk) leaves it held by the thread, whose
		 * next unwind waits on it forever, and every other thread's
		 * after it (dl_churn at WITCH_RATE=10000: 3 hangs in ~50 runs;
		 * none in 63 runs without the cache).  The handler's time a tick
		 * moved less than this host's spread
		 * (bench/results/unwind_cache.md). */
		r = unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_NONE) < 0 ? -1 : 1;
		__atomic_store_n(&ready, r, __ATOMIC_RELEASE);
	}
	return r > 0 ? 0 : -EINVAL;
}

static int unwind_regs_of(unw_cursor_t *cursor, struct unwind_regs *at)
{
	unw_word_t ip, sp, bp;
	if (unw_get_reg(cursor, UNW_REG_IP, &ip) < 0 || unw_get_reg(cursor, UNW_REG_SP, &sp) < 0 ||
	    unw_get_reg(cursor, UNW_X86_64_RBP, &bp) < 0)
		return -EINVAL;
	at->ip = ip;
	at->sp = sp;
	at->bp = bp;
	return 0;
}

/* A function that realigns its stack (`and rsp, imm` among its first
 * instructions: GCC's DRAP prologue, ld.so's _dl_runtime_resolve through
 * rbx) has frames whose size at one call site depends on the stack it was
 * called with: a rule for it holds only for that stack.  Looked up on a
 * frame's first step only, and only in modules' code (where rules are
 * kept): libunwind's procedure lookup costs as much as the step. */
static int unwind_realigns(const struct unwind_rules *r, unw_cursor_t *cursor,
			   const struct unwind_regs *at)
{
	struct decode_regs regs;
	struct decode_insn in;
	struct decode_zydis z;
	unw_proc_info_t pi;
	if (!phdrs_in_code(at->first ? at->ip : at->ip - 1) || unwind_rules_known(r, at) ||
	    unw_get_proc_info(cursor, &pi) != 0)
		return 0;
	uint64_t pc = pi.start_ip;
	memset(&regs, 0, sizeof(regs));
	for (int i = 0; i < 12; i++) {
		if (decode_at_zydis(pc, &regs, &in, &z) < 0)
			return 0;
		if (z.insn.mnemonic == ZYDIS_MNEMONIC_AND && z.ops[0].type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    z.ops[0].reg.value == ZYDIS_REGISTER_RSP)
			return 1;
		if (in.flags & DECODE_F_BRANCH)
			return 0; /* past the prologue */
		pc += in.len;
	}
	return 0;
}

/* libunwind from frame n - 1, whose registers are *at (the interrupted
 * frame's: uc itself), for up to steps steps (more while it stands in a
 * signal frame, which only libunwind steps out of), teaching r each one.
 * *ended: the walk is over (the outermost frame, or libunwind stopped).
 * -ESTALE: a caller's frame stepped to no module's code, or not at all
 * (below). */
static int unwind_walk_from(struct unwind_rules *r, ucontext_t *uc, const struct unwind_guard *g,
			    struct unwind_regs *at, uint64_t *pcs, uint64_t *sps, int n, int max,
			    int steps, int *ended)
{
	int from_caller = !at->first;
	unw_cursor_t cursor;
	ucontext_t mid;
	ucontext_t *start = uc;

	*ended = 1;
	if (!at->first) {
		/* A caller's frame: its pc a return address (flag 0), its other
		 * registers the interrupted ones (no rule this far used them). */
		memcpy(&mid, uc, sizeof(mid));
		mid.uc_mcontext.gregs[REG_RIP] = (greg_t)at->ip;
		mid.uc_mcontext.gregs[REG_RSP] = (greg_t)at->sp;
		mid.uc_mcontext.gregs[REG_RBP] = (greg_t)at->bp;
		start = &mid;
	}
	/* On x86-64 unw_context_t is ucontext_t; SIGNAL_FRAME marks the first
	 * ip as exact rather than a return address. */
	if (unwind_ready() < 0)
		return n;
	if (g)
		g->before_reads(g->arg, at->sp);
	if (unw_init_local2(&cursor, (unw_context_t *)start, at->first ? UNW_INIT_SIGNAL_FRAME : 0) < 0)
		return n;
	phdrs_unwind_at(pcs[n - 1]);
	int sig_from = unw_is_signal_frame(&cursor) > 0;
	while (n < max && (steps-- > 0 || sig_from)) {
		struct unwind_regs to = {.first = 0};
		unw_save_loc_t loc;
		int realigns = unwind_realigns(r, &cursor, at);
		int rc = unw_step(&cursor);
		if (rc < 0 && from_caller)
			return -ESTALE; /* (below) */
		if (rc <= 0) {
			if (rc == 0 && !sig_from)
				unwind_rules_learn(r, at, NULL, 0, 0);
			return n;
		}
		if (unwind_regs_of(&cursor, &to) < 0 || to.ip == 0)
			return n;
		/* A caller's frame starts from the interrupted registers but
		 * for rip, rsp and rbp.  Where its CFA is another register's
		 * (ld.so's _dl_runtime_resolve realigns its stack through rbx,
		 * which _dl_fixup below it had changed), libunwind reads a
		 * stale one and lands anywhere: a return address in no
		 * module's code tells, or a step that fails (unit.unwind_rules:
		 * the qsort row's first call's lazy binding, 1 walk in ~7,000;
		 * the rbx-based row, every walk through its frame). */
		if (from_caller && !phdrs_in_code(to.ip - 1))
			return -ESTALE;
		from_caller = 0;
		int sig_to = unw_is_signal_frame(&cursor) > 0;
		uint64_t bp_saved = unw_get_save_loc(&cursor, UNW_X86_64_RBP, &loc) == 0 &&
					    loc.type == UNW_SLT_MEMORY
				    ? loc.u.addr
				    : 0;
		unwind_rules_learn(r, at, &to, bp_saved, sig_from || sig_to || realigns);
		if (sps) /* the caller's sp: where the frame below ends (its CFA) */
			sps[n] = to.sp;
		pcs[n++] = sig_to ? to.ip : to.ip - 1;
		phdrs_unwind_at(pcs[n - 1]); /* the next step looks up this frame */
		*at = to;
		sig_from = sig_to;
	}
	*ended = n >= max;
	return n;
}

/* Rules where they lead, a libunwind step where they do not, then rules
 * again (unwind_rules.h); now and then a walk by libunwind alone
 * (unwind_rules_walk_begin says when).
 * libunwind finds unwind tables through dl_iterate_phdr: inside
 * phdrs_unwind_begin and _end, the runtime's lock-free snapshot of the
 * modules answers (phdrs.h). */
int unwind_context(struct unwind_rules *r, ucontext_t *uc, const struct unwind_guard *g,
		   uint64_t *pcs, uint64_t *sps, int max)
{
	if (max < 1)
		return -EINVAL;
	struct unwind_regs at = {.ip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP],
				 .sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP],
				 .bp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP],
				 .first = 1};
	int n = 1, ended = 0;
	pcs[0] = at.ip;
	if (sps)
		sps[0] = at.sp;
	int check = unwind_rules_walk_begin(r, phdrs_generation());
	/* The tick's run-ahead returned out of the interrupted frame: its
	 * caller without a libunwind step (at budget rates the interrupted pc
	 * rarely has a rule of its own), but on a check walk. */
	struct unwind_regs caller;
	int by_run = unwind_rules_caller(r, &at, &caller);
	if (by_run && !check && n < max) {
		if (r->stats)
			r->stats->unwind_caller_run++;
		if (sps)
			sps[n] = caller.sp;
		pcs[n++] = caller.ip - 1;
		at = caller;
	}
	phdrs_unwind_begin();
	while (!ended && n < max) {
		if (!check) {
			n = unwind_rules_follow(r, &at, pcs, sps, n, max, &ended);
			if (ended || n >= max)
				break;
		}
		int m = unwind_walk_from(r, uc, g, &at, pcs, sps, n, max, check ? max : 1, &ended);
		if (m == -ESTALE) { /* again, by libunwind alone from the interrupted frame */
			at = (struct unwind_regs){.ip = pcs[0], .sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP],
						  .bp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP],
						  .first = 1};
			m = unwind_walk_from(r, uc, g, &at, pcs, sps, 1, max, max, &ended);
			ended = 1;
		}
		n = m;
	}
	phdrs_unwind_end();
	if (by_run && check && n > 1 && r->stats &&
	    (pcs[1] != caller.ip - 1 || (sps && sps[1] != caller.sp)))
		r->stats->unwind_caller_wrong++;
	return n;
}

int unwind_proc_range(uint64_t pc, uint64_t *start, uint64_t *end)
{
	unw_proc_info_t pi;
	if (unwind_ready() < 0)
		return -ENOENT;
	phdrs_unwind_begin();
	phdrs_unwind_at(pc);
	int rc = unw_get_proc_info_by_ip(unw_local_addr_space, pc, &pi, NULL);
	phdrs_unwind_end();
	if (rc < 0)
		return -ENOENT;
	*start = pi.start_ip;
	*end = pi.end_ip;
	return 0;
}

int unwind_proc_start(uint64_t pc, uint64_t *fn_start)
{
	uint64_t end;
	return unwind_proc_range(pc, fn_start, &end);
}
