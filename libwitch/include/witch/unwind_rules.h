/* unwind_rules: a thread's cache of how each frame finds its caller, so a
 * walk that has seen its frames before needs no DWARF.
 *
 * libunwind runs uncached (unwind.c says why): every step searches the
 * module's .eh_frame_hdr and runs the FDE's CFA program.  At the budget's
 * rates that is all cold: python3's 17-frame walks took ~50 us at 50
 * ticks/s against ~8 us at 2000/s, half of a tick's handler time.
 *
 * The rule a step follows on x86-64, for one pc: the CFA (the caller's
 * sp) is rsp + k or rbp + 16, the return address is at CFA - 8, and the
 * caller's rbp is either unchanged or saved at CFA + j.  libunwind's own
 * steps teach the rules (unwind_rules_learn: the registers before and
 * after, and where it found rbp); a rule for a return address (a call
 * site, past the prologue) is followed from its first step, one for an
 * interrupted pc once two steps there agreed, and one that ever disagrees
 * (a CFA computed from another register, a stack realigned through DRAP,
 * a signal frame) is never cached; nor, from its first step, is one of a
 * function that realigns its stack (`and rsp, imm` in its prologue, which
 * unwind.c looks for), whose frame size moves with the caller's stack.
 * libunwind's step from a frame the rules reached starts from the
 * interrupted registers but rip, rsp and rbp; where that frame's CFA is
 * another register's (ld.so's _dl_runtime_resolve: rbx), the step may
 * land anywhere, and one that lands in no module's code, or fails, has the
 * walk redone by libunwind alone (unwind.c).  Now and then a walk goes all
 * the way with libunwind, which re-teaches, so a rule that stops holding is found:
 * every 16th walk at first, backing off to every 256th while no confirmed
 * rule was dropped since the last such walk (a check walk of python3's 17
 * frames cost 140-170 thousand cycles at budget rates, 3-5% of the ticks'
 * handler time at 1 in 16).  Rules are kept for pcs in modules' code only
 * (not a JIT's) and dropped when the program unloads a module
 * (phdrs_generation).
 *
 * Keys are (pc, first): the interrupted frame's exact pc and a return
 * address look up different rows of the unwind table.  4096 rules,
 * direct-mapped, 64 KiB, in one table the process's threads share: a
 * frame's rule is the code's, not the thread's, and a table a thread
 * touched 36-68 KiB of each busy thread (2026-12-04).  A rule is read and
 * written whole under its slot's sequence count, so threads need no lock
 * (unwind_rules.c).  Async-signal-safe.  Each thread keeps its own check
 * walks' pace.
 */
#ifndef WITCH_UNWIND_RULES_H
#define WITCH_UNWIND_RULES_H

#include <stdint.h>

#define UNWIND_RULES_BITS 12
#define UNWIND_RULES_MEM_SIZE (64u + (1u << UNWIND_RULES_BITS) * 16u)
#define UNWIND_RULES_CHECK_MIN 16u
#define UNWIND_RULES_CHECK_MAX 256u

/* A frame's registers as a walk reaches it.  first: the interrupted
 * frame (pc exact); else pc is a return address. */
struct unwind_regs {
	uint64_t ip, sp, bp;
	int first;
};

struct unwind_rules_table;
struct witch_stats;

/* Where the frame interrupted at (ip, sp) returns to, as the tick's
 * run-ahead emulated its ret (look.h): the caller's registers, exact. */
struct unwind_caller {
	uint64_t from_ip, from_sp; /* the interrupted frame's */
	struct unwind_regs to;     /* its caller's: ip a return address, sp the CFA */
	int known;
};

struct unwind_rules {
	struct unwind_rules_table *table; /* UNWIND_RULES_MEM_SIZE bytes, may be shared */
	uint64_t generation;      /* phdrs_generation this thread last saw */
	uint32_t check_every;     /* walks between libunwind's walks, now */
	uint32_t until_check;     /* walks to the next one (this one: 1) */
	uint64_t drops, drops_seen; /* confirmed rules dropped; at the last check */
	struct unwind_caller caller; /* this tick's (unwind_rules_expect_caller) */
	struct witch_stats *stats; /* unwind_ruled, unwind_stepped, unwind_rules_dropped */
};

/* mem: UNWIND_RULES_MEM_SIZE bytes, 16-aligned, zeroed before its first
 * user, for the thread's life (threads may share it); stats: where to
 * count (may be NULL). */
void unwind_rules_init(struct unwind_rules *r, void *mem, struct witch_stats *stats);

/* At a walk's start: 1 when this walk is to go by libunwind alone (every
 * check_every-th: CHECK_MIN, doubled up to CHECK_MAX at each such walk
 * while no confirmed rule was dropped since the last, else CHECK_MIN
 * again), 0 when it may follow rules.  Drops every rule after a
 * module was unloaded. */
int unwind_rules_walk_begin(struct unwind_rules *r, uint64_t generation);

/* The tick's run-ahead returned out of the interrupted frame (c->known),
 * or did not: a walk from that frame takes its caller from c instead of a
 * libunwind step, and a check walk compares (unwind_caller_wrong).  Kept
 * until the next call: a trap's walk starts elsewhere and ignores it. */
void unwind_rules_expect_caller(struct unwind_rules *r, const struct unwind_caller *c);
/* At a walk's start from *at (the interrupted frame): 1 and *to when the
 * run-ahead's caller applies, 0 when libunwind must step. */
int unwind_rules_caller(const struct unwind_rules *r, const struct unwind_regs *at,
			struct unwind_regs *to);

/* From *at, while confirmed rules lead on and n < max: appends each
 * caller's return address less one to pcs and its sp to sps (may be
 * NULL), moving *at.  Returns the new n; *done = 1 when a rule says the
 * walk ends there.  Reads the stack through peek_read. */
int unwind_rules_follow(struct unwind_rules *r, struct unwind_regs *at, uint64_t *pcs,
			uint64_t *sps, int n, int max, int *done);

/* 1 when the table holds a rule for the frame at, of any state (one
 * learned, confirmed or never to be cached); 0 when a step would be its
 * first. */
int unwind_rules_known(const struct unwind_rules *r, const struct unwind_regs *at);

/* libunwind stepped from *from to *to.  bp_saved: where it read the
 * caller's rbp, 0 when from a register (unchanged).  NULL to: the walk
 * ended cleanly at from.  never: the step is not one a rule can tell (a
 * signal frame on either side, a function that realigns its stack). */
void unwind_rules_learn(struct unwind_rules *r, const struct unwind_regs *from,
			const struct unwind_regs *to, uint64_t bp_saved, int never);

#endif
