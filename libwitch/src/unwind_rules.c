/* unwind_rules: how each frame finds its caller, cached (see unwind_rules.h). */
#include "witch/unwind_rules.h"
#include "witch/peek.h"
#include "witch/phdrs.h"
#include "witch/stats.h"

#include <string.h>

enum rule_kind { RULE_RSP = 1, RULE_RBP, RULE_END };
enum rule_state { RULE_EMPTY = 0, RULE_SEEN, RULE_CONFIRMED, RULE_NEVER };

/* A slot: tag is seq << 48 | key, seq odd while a thread writes the slot
 * (a seqlock: a reader keeps what it read only when tag was even and the
 * same before and after); body is the rule's fields in one word. */
struct unwind_rule {
	uint64_t tag;
	uint64_t body;
};

struct rule_body {
	int32_t cfa_off; /* CFA = (RSP: sp, RBP: bp) + cfa_off */
	int16_t bp_off;  /* the caller's rbp at CFA + bp_off; 0: unchanged */
	uint8_t kind, state;
};

_Static_assert(sizeof(struct rule_body) == 8, "a rule's fields in one word");

/* The table threads share: its generation, then the slots. */
struct unwind_rules_table {
	uint64_t generation;
	uint64_t pad[7];
	struct unwind_rule slot[1u << UNWIND_RULES_BITS];
};

_Static_assert(sizeof(struct unwind_rules_table) == UNWIND_RULES_MEM_SIZE, "the table's size");

#define RULE_KEY_BITS 48
#define RULE_KEY_MASK ((1ull << RULE_KEY_BITS) - 1)
#define RULE_SEQ_ONE (1ull << RULE_KEY_BITS)

/* A frame no larger than this is believed (a rule gone wrong points
 * anywhere). */
#define RULE_MAX_FRAME (1u << 20)

void unwind_rules_init(struct unwind_rules *r, void *mem, struct witch_stats *stats)
{
	memset(r, 0, sizeof(*r));
	r->table = mem;
	r->generation = __atomic_load_n(&r->table->generation, __ATOMIC_RELAXED);
	r->stats = stats;
	r->check_every = r->until_check = UNWIND_RULES_CHECK_MIN;
}

/* (pc, first) as a key; 0 (never cached) past 48 bits: a 5-level page
 * table's upper half, where programs map code only when they ask. */
static uint64_t rule_key(const struct unwind_regs *at)
{
	uint64_t key = at->ip * 2 + (at->first ? 1 : 0);
	return key & ~RULE_KEY_MASK ? 0 : key;
}

static struct unwind_rule *rule_slot(const struct unwind_rules *r, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;
	return &r->table->slot[h >> (64 - UNWIND_RULES_BITS)];
}

/* 1 and *b when u holds key's rule, read whole; 0 otherwise (another
 * key, empty, or written meanwhile). */
static int rule_read(const struct unwind_rule *u, uint64_t key, struct rule_body *b)
{
	uint64_t tag = __atomic_load_n(&u->tag, __ATOMIC_ACQUIRE);
	if ((tag & RULE_SEQ_ONE) || (tag & RULE_KEY_MASK) != key)
		return 0;
	uint64_t body = __atomic_load_n(&u->body, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the body before tag's second read */
	if (__atomic_load_n(&u->tag, __ATOMIC_RELAXED) != tag)
		return 0;
	memcpy(b, &body, sizeof(*b));
	return 1;
}

/* u holds key's rule *b from now, unless another thread is writing it
 * (then this rule is not kept: a later step teaches it again). */
static void rule_write(struct unwind_rule *u, uint64_t key, const struct rule_body *b)
{
	uint64_t tag = __atomic_load_n(&u->tag, __ATOMIC_RELAXED), body;
	if ((tag & RULE_SEQ_ONE) || !__atomic_compare_exchange_n(&u->tag, &tag, tag + RULE_SEQ_ONE, 0,
							   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	__atomic_thread_fence(__ATOMIC_RELEASE); /* odd before the body changes */
	memcpy(&body, b, sizeof(body));
	__atomic_store_n(&u->body, body, __ATOMIC_RELAXED);
	__atomic_store_n(&u->tag, ((tag + 2 * RULE_SEQ_ONE) & ~RULE_KEY_MASK) | key, __ATOMIC_RELEASE);
}

int unwind_rules_walk_begin(struct unwind_rules *r, uint64_t generation)
{
	if (generation != r->generation) {
		/* The first thread to see a module unloaded empties the table. */
		uint64_t had = __atomic_load_n(&r->table->generation, __ATOMIC_RELAXED);
		if (had != generation && __atomic_compare_exchange_n(&r->table->generation, &had,
								     generation, 0, __ATOMIC_RELAXED,
								     __ATOMIC_RELAXED)) {
			static const struct rule_body empty;
			for (unsigned i = 0; i < (1u << UNWIND_RULES_BITS); i++)
				rule_write(&r->table->slot[i], 0, &empty);
		}
		r->generation = generation;
		r->check_every = r->until_check = UNWIND_RULES_CHECK_MIN;
	}
	if (--r->until_check > 0)
		return 0;
	if (r->drops != r->drops_seen)
		r->check_every = UNWIND_RULES_CHECK_MIN;
	else if (r->check_every < UNWIND_RULES_CHECK_MAX)
		r->check_every *= 2;
	r->drops_seen = r->drops;
	r->until_check = r->check_every;
	return 1;
}

int unwind_rules_follow(struct unwind_rules *r, struct unwind_regs *at, uint64_t *pcs,
			uint64_t *sps, int n, int max, int *done)
{
	*done = 0;
	while (n < max) {
		uint64_t key = rule_key(at);
		struct rule_body u;
		if (!key || !rule_read(rule_slot(r, key), key, &u) || u.state != RULE_CONFIRMED)
			break;
		if (u.kind == RULE_END) {
			*done = 1;
			break;
		}
		uint64_t cfa = (u.kind == RULE_RSP ? at->sp : at->bp) + (uint64_t)(int64_t)u.cfa_off;
		uint64_t ra, bp = at->bp;
		if (cfa <= at->sp || cfa - at->sp > RULE_MAX_FRAME ||
		    peek_read(cfa - 8, &ra, sizeof(ra)) < 0 ||
		    (u.bp_off && peek_read(cfa + (uint64_t)(int64_t)u.bp_off, &bp, sizeof(bp)) < 0))
			break; /* libunwind takes it from here, and judges */
		if (ra == 0) { /* as the walk with libunwind stops */
			*done = 1;
			break;
		}
		if (sps)
			sps[n] = cfa;
		pcs[n++] = ra - 1;
		if (r->stats)
			r->stats->unwind_ruled++;
		*at = (struct unwind_regs){.ip = ra, .sp = cfa, .bp = bp, .first = 0};
	}
	return n;
}

/* The rule the step from -> to followed, or 0 when none fits. */
static int rule_of_step(const struct unwind_regs *from, const struct unwind_regs *to,
			uint64_t bp_saved, struct rule_body *u)
{
	uint64_t cfa = to->sp;
	if (cfa <= from->sp || cfa - from->sp > RULE_MAX_FRAME)
		return 0;
	/* rbp saved where it points, yet the CFA not just above: a frame
	 * whose stack was realigned (GCC's DRAP), its CFA read from memory. */
	if (bp_saved && bp_saved == from->bp && from->bp + 16 != cfa)
		return 0;
	u->bp_off = 0;
	if (bp_saved >= from->sp && bp_saved < cfa && cfa - bp_saved <= 32768)
		u->bp_off = (int16_t)-(int64_t)(cfa - bp_saved);
	else if (to->bp != from->bp)
		return 0; /* rbp came from somewhere a rule does not say */
	/* rbp-based only where rbp is this frame's pointer: saved just below
	 * the return address and pointing at its save; elsewhere rbp may be
	 * any register's value. */
	if (u->bp_off == -16 && from->bp + 16 == cfa) {
		u->kind = RULE_RBP;
		u->cfa_off = 16;
	} else {
		u->kind = RULE_RSP;
		u->cfa_off = (int32_t)(cfa - from->sp);
	}
	return 1;
}

int unwind_rules_known(const struct unwind_rules *r, const struct unwind_regs *at)
{
	uint64_t key = rule_key(at);
	struct rule_body u;
	return key && rule_read(rule_slot(r, key), key, &u) && u.state != RULE_EMPTY;
}

void unwind_rules_learn(struct unwind_rules *r, const struct unwind_regs *from,
			const struct unwind_regs *to, uint64_t bp_saved, int never)
{
	if (r->stats)
		r->stats->unwind_stepped++;
	if (!phdrs_in_code(from->first ? from->ip : from->ip - 1))
		return; /* a JIT's code: it may change under the rule */
	uint64_t key = rule_key(from);
	if (!key)
		return;
	struct unwind_rule *slot = rule_slot(r, key);
	struct rule_body seen = {.state = RULE_SEEN}, u;
	if (never || (to && !rule_of_step(from, to, bp_saved, &seen)))
		seen.state = RULE_NEVER;
	else if (!to)
		seen.kind = RULE_END;
	if (!rule_read(slot, key, &u) || u.state == RULE_EMPTY) {
		/* A return address is a call site, past its function's prologue:
		 * the frame's rule there is the same on every visit (a variable
		 * frame has a frame pointer, a realigned one is never cached),
		 * so one step teaches it.  An interrupted pc may be inside a
		 * prologue that realigns the stack: two steps must agree. */
		if (!from->first && seen.state == RULE_SEEN)
			seen.state = RULE_CONFIRMED;
		rule_write(slot, key, &seen);
		return;
	}
	if (u.state == RULE_NEVER)
		return;
	if (seen.state == RULE_NEVER || seen.kind != u.kind || seen.cfa_off != u.cfa_off ||
	    seen.bp_off != u.bp_off) {
		if (u.state == RULE_CONFIRMED) {
			r->drops++;
			if (r->stats)
				r->stats->unwind_rules_dropped++;
		}
		u.state = RULE_NEVER;
		rule_write(slot, key, &u);
		return;
	}
	if (u.state != RULE_CONFIRMED) {
		u.state = RULE_CONFIRMED;
		rule_write(slot, key, &u);
	}
}

void unwind_rules_expect_caller(struct unwind_rules *r, const struct unwind_caller *c)
{
	r->caller = *c;
}

int unwind_rules_caller(const struct unwind_rules *r, const struct unwind_regs *at,
			struct unwind_regs *to)
{
	const struct unwind_caller *c = &r->caller;
	if (!c->known || !at->first || at->ip != c->from_ip || at->sp != c->from_sp)
		return 0;
	/* A CFA must lie above the frame, as rule_of_step asks of a step. */
	if (c->to.sp <= at->sp || c->to.sp - at->sp > RULE_MAX_FRAME || c->to.ip == 0)
		return 0;
	*to = c->to;
	return 1;
}
