/* DeadCraft (Witch 4.4): a store followed by a store with no load between.
 *
 * Sample stores, watch them for read or write.  The next access decides:
 * a load (or read-modify-write, which reads first) uses the stored value; a
 * store kills it.  Byte counts and proportional weights are the runtime's.
 */
#include "witch/craft.h"
#include "witch/decode.h"

static int dead_on_sample(struct watchpoint *w)
{
	return 0;
}

static int dead_on_self(struct watchpoint *w)
{
	return 0;
}

static enum craft_verdict dead_on_trap(struct watchpoint *w, const struct craft_trap *t,
				       int *approx)
{
	*approx = 0;
	return t->kind == DECODE_STORE ? CRAFT_WASTE : CRAFT_USE;
}

static enum craft_verdict dead_on_traced(struct watchpoint *w, const struct craft_trap *t,
				       int *approx)
{
	(void)w;
	*approx = 0;
	return t->kind == DECODE_STORE ? CRAFT_WASTE : CRAFT_USE;
}

const struct craft craft_dead = {
	.name = "dead",
	.self = CRAFT_SELF_NOTHING,
	.sample_kind = DECODE_STORE,
	.sample_stack_ops = 1,
	.watch_type = WATCHPOINT_RW,
	.on_sample = dead_on_sample,
	.on_self = dead_on_self,
	.on_trap = dead_on_trap,
	.decided_kinds = DECODE_LOAD | DECODE_STORE,
	.on_traced = dead_on_traced,
	.traced_kinds = DECODE_LOAD | DECODE_STORE,
};
