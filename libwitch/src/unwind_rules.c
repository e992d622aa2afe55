/* unwind_rules: how each frame finds its caller, cached (see unwind_rules.h). */
#include "witch/unwind_rules.h"
#include "witch/peek.h"
#include "witch/phdrs.h"
#include "witch/stats.h"

#include <string.h>

enum rule_kind { RULE_RSP = 1, RULE_RBP, RULE_END };
enum rule_state { RULE_EMPTY = 0, RULE_SEEN, RULE_CONFIRMED, RULE_NEVER };

struct unwind_rule {
	uint64_t key;    /* pc * 2 + first */
	int32_t cfa_off; /* CFA = (RSP: sp, RBP: bp) + cfa_off */
	int16_t bp_off;  /* the caller's rbp at CFA + bp_off; 0: unchanged */
	uint8_t kind, state;
};

_Static_assert(sizeof(struct unwind_rule) == 16, "16-byte rules");

/* A frame no larger than this is believed (a rule gone wrong points
 * anywhere). */
#define RULE_MAX_FRAME (1u << 20)

void unwind_rules_init(struct unwind_rules *r, void *mem, struct witch_stats *stats)
{
	memset(r, 0, sizeof(*r));
	r->slot = mem;
	r->stats = stats;
	r->check_every = r->until_check = UNWIND_RULES_CHECK_MIN;
}

static uint64_t rule_key(const struct unwind_regs *at)
{
	return at->ip * 2 + (at->first ? 1 : 0);
}

static struct unwind_rule *rule_slot(struct unwind_rules *r, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;
	return &r->slot[h >> (64 - UNWIND_RULES_BITS)];
}

int unwind_rules_walk_begin(struct unwind_rules *r, uint64_t generation)
{
	if (generation != r->generation) {
		memset(r->slot, 0, UNWIND_RULES_MEM_SIZE);
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
		const struct unwind_rule *u = rule_slot(r, key);
		if (u->key != key || u->state != RULE_CONFIRMED)
			break;
		if (u->kind == RULE_END) {
			*done = 1;
			break;
		}
		uint64_t cfa = (u->kind == RULE_RSP ? at->sp : at->bp) + (uint64_t)(int64_t)u->cfa_off;
		uint64_t ra, bp = at->bp;
		if (cfa <= at->sp || cfa - at->sp > RULE_MAX_FRAME ||
		    peek_read(cfa - 8, &ra, sizeof(ra)) < 0 ||
		    (u->bp_off && peek_read(cfa + (uint64_t)(int64_t)u->bp_off, &bp, sizeof(bp)) < 0))
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
			uint64_t bp_saved, struct unwind_rule *u)
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

void unwind_rules_learn(struct unwind_rules *r, const struct unwind_regs *from,
			const struct unwind_regs *to, uint64_t bp_saved, int never)
{
	if (r->stats)
		r->stats->unwind_stepped++;
	if (!phdrs_in_code(from->first ? from->ip : from->ip - 1))
		return; /* a JIT's code: it may change under the rule */
	uint64_t key = rule_key(from);
	struct unwind_rule seen = {.key = key, .state = RULE_SEEN}, *u = rule_slot(r, key);
	if (never || (to && !rule_of_step(from, to, bp_saved, &seen)))
		seen.state = RULE_NEVER;
	else if (!to)
		seen.kind = RULE_END;
	if (u->key != key || u->state == RULE_EMPTY) {
		/* A return address is a call site, past its function's prologue:
		 * the frame's rule there is the same on every visit (a variable
		 * frame has a frame pointer, a realigned one is never cached),
		 * so one step teaches it.  An interrupted pc may be inside a
		 * prologue that realigns the stack: two steps must agree. */
		if (!from->first && seen.state == RULE_SEEN)
			seen.state = RULE_CONFIRMED;
		*u = seen;
		return;
	}
	if (u->state == RULE_NEVER)
		return;
	if (seen.state == RULE_NEVER || seen.kind != u->kind || seen.cfa_off != u->cfa_off ||
	    seen.bp_off != u->bp_off) {
		if (u->state == RULE_CONFIRMED) {
			r->drops++;
			if (r->stats)
				r->stats->unwind_rules_dropped++;
		}
		u->state = RULE_NEVER;
		return;
	}
	u->state = RULE_CONFIRMED;
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
