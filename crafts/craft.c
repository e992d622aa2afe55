/* craft: the table of clients and what they share (see craft.h). */
#include "witch/craft.h"
#include "witch/decode.h"
#include "witch/peek.h"
#include "witch/value.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

const struct craft *craft_get(enum config_client client)
{
	switch (client) {
	case CONFIG_CLIENT_DEAD:
		return &craft_dead;
	case CONFIG_CLIENT_SILENT:
		return &craft_silent;
	case CONFIG_CLIENT_LOAD:
		return &craft_load;
	}
	return NULL;
}

int craft_read_location(struct watchpoint *w, uint8_t *buf)
{
	if (w->own.value_len == 0) {
		/* First read: the whole access if every byte is mapped, else
		 * the watched head (the bytes a trap can be about). */
		uint32_t len = w->own.sample_len < WATCHPOINT_VALUE_MAX ? w->own.sample_len
								    : WATCHPOINT_VALUE_MAX;
		if (peek_read(w->own.sample_addr, buf, len) == 0) {
			w->own.value_addr = w->own.sample_addr;
			w->own.value_len = (uint8_t)len;
			return 0;
		}
		if (peek_read(w->addr, buf, w->len) < 0)
			return -EFAULT;
		w->own.value_addr = w->addr;
		w->own.value_len = (uint8_t)w->len;
		return 0;
	}
	return peek_read(w->own.value_addr, buf, w->own.value_len) < 0 ? -EFAULT : 0;
}

int craft_set_location(struct watchpoint *w, const uint8_t *bytes, int shadow)
{
	if (w->own.sample_len > WATCHPOINT_VALUE_MAX)
		return -EINVAL;
	w->own.value_addr = w->own.sample_addr;
	w->own.value_len = (uint8_t)w->own.sample_len;
	memcpy(w->own.value, bytes, w->own.sample_len);
	if (shadow)
		memcpy(w->own.shadow, bytes, w->own.sample_len);
	return 0;
}

void craft_overlay(const struct watchpoint *w, uint8_t *buf, uint64_t addr, uint32_t len,
		   uint64_t bytes)
{
	uint64_t lo = w->own.value_addr, hi = lo + w->own.value_len;
	for (uint64_t a = addr > lo ? addr : lo; a < addr + len && a < hi; a++)
		buf[a - lo] = (uint8_t)(bytes >> (8 * (a - addr)));
}

enum craft_verdict craft_judge(const struct watchpoint *w, const uint8_t *now,
			       const struct craft_trap *t, int *approx)
{
	struct value_view v = {w->own.value_addr, w->own.value_len, w->own.value, now};
	switch (value_compare(&v, t->overlap_addr, t->overlap_len, t->elem, t->addr, t->tolerance)) {
	case VALUE_SAME:
		*approx = 0;
		return CRAFT_WASTE;
	case VALUE_APPROX:
		*approx = 1;
		return CRAFT_WASTE;
	case VALUE_DIFFERENT:
		break;
	}
	*approx = 0;
	return CRAFT_USE;
}
