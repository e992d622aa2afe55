/* LoadCraft (Witch 4.6, LoadSpy): a load that reads the value the previous
 * load of that location read.
 *
 * Sample loads; remember the value before the sampled load runs (the value
 * it reads) and watch read-write (x86 has no read-only watchpoint).  A store
 * is no verdict (the value may change, or change back): keep watching, and
 * keep a shadow of what the location now holds.  The next load decides: the
 * overlapping bytes as remembered is waste, changed is use; FP loads within
 * WITCH_FP_TOLERANCE are approximately redundant.
 */
#include "witch/craft.h"
#include "witch/decode.h"

#include <string.h>

static int load_on_sample(struct watchpoint *w)
{
	int rc = craft_read_location(w, w->own.value);
	if (rc < 0)
		return rc;
	memcpy(w->own.shadow, w->own.value, w->own.value_len);
	return 0;
}

static int load_on_self(struct watchpoint *w)
{
	/* A read-modify-write sample has just changed the location. */
	return craft_read_location(w, w->own.shadow);
}

/* The load reads bytes a store just before it wrote (the run ahead
 * forwarded them): that is the value, and what the location holds. */
static int load_on_self_value(struct watchpoint *w, const uint8_t *loaded)
{
	return craft_set_location(w, loaded, 1);
}

static enum craft_verdict load_on_trap(struct watchpoint *w, const struct craft_trap *t,
				       int *approx)
{
	uint8_t now[WATCHPOINT_VALUE_MAX];

	*approx = 0;
	if (!(t->kind & DECODE_LOAD)) {
		if (t->value_known && w->own.value_len > 0)
			craft_overlay(w, w->own.shadow, t->addr, t->len, t->value);
		else if (craft_read_location(w, w->own.shadow) < 0)
			return CRAFT_DROP;
		return CRAFT_KEEP;
	}
	/* A read-modify-write has already stored: what it loaded is the shadow. */
	const uint8_t *loaded = w->own.shadow;
	if (!(t->kind & DECODE_STORE)) {
		if (craft_read_location(w, now) < 0)
			return CRAFT_DROP;
		loaded = now;
	}
	return craft_judge(w, loaded, t, approx);
}

/* The run ahead's next access to the watched bytes: a store whose bytes
 * it knows is laid over the shadow, as on_trap reads it back, and the
 * next is shown; a load (or a read-modify-write's load) reads the shadow:
 * the bytes as the sample read them is waste, changed is use.  w's value
 * and shadow are the sample's (sample.c sets them before the first). */
static enum craft_verdict load_on_traced(struct watchpoint *w, const struct craft_trap *t,
				       int *approx)
{
	*approx = 0;
	if (t->kind & DECODE_LOAD)
		return craft_judge(w, w->own.shadow, t, approx);
	if (!t->value_known || t->len > sizeof(t->value) || w->own.value_len == 0)
		return CRAFT_DROP;
	craft_overlay(w, w->own.shadow, t->addr, t->len, t->value);
	return CRAFT_KEEP;
}

const struct craft craft_load = {
	.name = "load",
	.self = CRAFT_SELF_LOADED,
	.sample_kind = DECODE_LOAD,
	.sample_stack_ops = 0,
	.watch_type = WATCHPOINT_RW,
	.on_sample = load_on_sample,
	.on_self = load_on_self,
	.on_self_value = load_on_self_value,
	.on_trap = load_on_trap,
	.decided_kinds = DECODE_LOAD,
	.on_traced = load_on_traced,
	.traced_kinds = DECODE_LOAD,
	.traced_through = DECODE_STORE,
};
