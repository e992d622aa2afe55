/* SilentCraft (Witch 4.6): a store that writes the value already there.
 *
 * Sample stores and watch them write-only.  Once the sampled store has run,
 * remember what it left; the next store to the watched bytes decides: the
 * overlapping bytes unchanged is waste (the later store was silent), changed
 * is use.  Floating-point stores within WITCH_FP_TOLERANCE are approximately
 * silent (RedSpy): waste, also counted apart as waste_approx.
 */
#include "witch/craft.h"
#include "witch/decode.h"

#include <string.h>


static int silent_on_sample(struct watchpoint *w)
{
	return 0; /* the value to remember is the one the store is about to write */
}

static int silent_on_self(struct watchpoint *w)
{
	return craft_read_location(w, w->own.value);
}

static int silent_on_self_value(struct watchpoint *w, const uint8_t *stored)
{
	return craft_set_location(w, stored, 0);
}

static enum craft_verdict silent_on_trap(struct watchpoint *w, const struct craft_trap *t,
					 int *approx)
{
	uint8_t now[WATCHPOINT_VALUE_MAX];

	*approx = 0;
	if (!(t->kind & DECODE_STORE))
		return CRAFT_KEEP; /* a write-only watchpoint: cannot happen, but no verdict */
	if (craft_read_location(w, now) < 0)
		return CRAFT_DROP;
	return craft_judge(w, now, t, approx);
}

/* The next store, run ahead: the location as the sample left it (w->own.value,
 * set from the value the sample stores) with the store's bytes laid over it. */
static enum craft_verdict silent_on_traced(struct watchpoint *w, const struct craft_trap *t,
					   int *approx)
{
	uint8_t now[WATCHPOINT_VALUE_MAX];

	*approx = 0;
	if (!t->value_known || w->own.value_len == 0 || t->len > sizeof(t->value))
		return CRAFT_DROP;
	memcpy(now, w->own.value, w->own.value_len);
	craft_overlay(w, now, t->addr, t->len, t->value);
	return craft_judge(w, now, t, approx);
}

const struct craft craft_silent = {
	.name = "silent",
	.self = CRAFT_SELF_STORED,
	.sample_kind = DECODE_STORE,
	.sample_stack_ops = 0,
	.watch_type = WATCHPOINT_W,
	.on_sample = silent_on_sample,
	.on_self = silent_on_self,
	.on_self_value = silent_on_self_value,
	.on_trap = silent_on_trap,
	.decided_kinds = DECODE_STORE,
	.on_traced = silent_on_traced,
	.traced_kinds = DECODE_STORE,
	.traced_values = 1,
};
