/* sysret: whether a tick arrived on a system call's way out (sysret.h). */
#include "witch/sysret.h"
#include "witch/peek.h"
#include "witch/phdrs.h"

#define SYSRET_MAX_VISITS 24   /* instructions decoded at most: jcc forks the walk */
#define SYSRET_NEAR (SYSRET_MAX_INSNS * 15) /* bytes SYSRET_MAX_INSNS instructions span at most */
#define SYSRET_PAGE 4096ull

struct sysret_walk {
	const struct decode_regs *regs;
	uint64_t pc;     /* the tick's */
	uint64_t ret_to; /* where one `ret` on the path went: the word below rsp */
	int visits;
	int n_pages;
	uint64_t pages[4]; /* pages known mapped: pc's, then those read */
};

static int sysret_known(const struct sysret_walk *w, uint64_t addr)
{
	uint64_t page = addr & ~(SYSRET_PAGE - 1);
	for (int i = 0; i < w->n_pages; i++)
		if (w->pages[i] == page)
			return 1;
	return 0;
}

/* decode_at reads an instruction's first page in place, where a fault
 * would end the handler run: a page neither known mapped nor a module's
 * code is asked of the kernel first (rcx may hold any number). */
static int sysret_mapped(struct sysret_walk *w, uint64_t addr)
{
	uint8_t byte;
	if (sysret_known(w, addr))
		return 1;
	if (!phdrs_in_code(addr) && peek_read_remote(addr, &byte, 1) < 0)
		return 0;
	if (w->n_pages < (int)(sizeof(w->pages) / sizeof(w->pages[0])))
		w->pages[w->n_pages++] = addr & ~(SYSRET_PAGE - 1);
	return 1;
}

/* Whether the tick's pc is on a path of at most depth instructions from
 * addr that leaves rcx alone and takes at most one `ret` (the one whose
 * address is still below rsp; a call on the path pushes its own). */
static int sysret_reaches(struct sysret_walk *w, uint64_t addr, int depth, int rets)
{
	if (addr == w->pc)
		return 1;
	if (depth == 0 || ++w->visits > SYSRET_MAX_VISITS)
		return 0;
	struct decode_insn in;
	if (!sysret_mapped(w, addr) || decode_at(addr, w->regs, &in) < 0)
		return 0;
	if (in.regs_written & (1u << DECODE_RCX))
		return 0; /* rcx would not still hold the return address */
	if (in.flags & DECODE_F_RET)
		return rets == 0 && w->ret_to && sysret_reaches(w, w->ret_to, depth - 1, 1);
	uint64_t next = addr + in.len;
	if (in.flags & DECODE_F_CALL) /* a direct call: on into the callee */
		return in.branch_target && sysret_reaches(w, in.branch_target, depth - 1, rets);
	if (!(in.flags & DECODE_F_BRANCH))
		return sysret_reaches(w, next, depth - 1, rets);
	if ((in.flags & DECODE_F_COND) && sysret_reaches(w, next, depth - 1, rets))
		return 1;
	return in.branch_target && sysret_reaches(w, in.branch_target, depth - 1, rets);
}

int sysret_tick(const struct decode_regs *regs)
{
	uint64_t rcx = regs->gpr[DECODE_RCX], pc = regs->rip;
	struct sysret_walk w = {.regs = regs, .pc = pc, .n_pages = 1};
	w.pages[0] = pc & ~(SYSRET_PAGE - 1);
	/* Most ticks end here, without a read: pc is neither just past rcx
	 * nor just past the return address a `ret` left below rsp (the
	 * handler runs on its own stack: the program's is as it left it). */
	if (peek_read(regs->gpr[DECODE_RSP] - 8, &w.ret_to, sizeof(w.ret_to)) < 0)
		w.ret_to = 0;
	if (!(pc + 2 - rcx <= SYSRET_NEAR + 2 || (w.ret_to && pc - w.ret_to <= SYSRET_NEAR)))
		return 0;
	/* rcx just past a `syscall` off pc's page is code of a loaded module;
	 * the rcx most such ticks find (a `ret` just left a return address
	 * below rsp) is data or a number, which phdrs_in_code rules out
	 * without the remote read that proves a page mapped (two system
	 * calls: 43% of gcc's handler time on a PVM guest).  A JIT's system
	 * call off the page of the tick is not recognised. */
	if (rcx < 2 || (!sysret_known(&w, rcx - 2) && !phdrs_in_code(rcx - 2)))
		return 0;
	uint8_t op[2];
	if (!sysret_mapped(&w, rcx - 2) || !sysret_mapped(&w, rcx) ||
	    peek_read(rcx - 2, op, sizeof(op)) < 0 || op[0] != 0x0f || op[1] != 0x05)
		return 0;
	if (pc == rcx || pc == rcx - 2)
		return 1;
	return sysret_reaches(&w, rcx, SYSRET_MAX_INSNS, 0);
}
