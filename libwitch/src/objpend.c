/* objpend: a context's pending sample weight by object (see objpend.h). */
#include "witch/objpend.h"

#include <errno.h>
#include <string.h>

struct objpend_entry {
	uint32_t n;
	uint32_t obj[OBJPEND_SLOTS];
	double weight[OBJPEND_SLOTS];
	double rest_weight;
};

/* Handles are 16-byte units of the arena offset, plus one (0: none). */
static struct objpend_entry *entry_of(struct arena *a, uint32_t handle)
{
	return (struct objpend_entry *)(void *)(a->base + (size_t)(handle - 1) * 16);
}

int objpend_add(struct arena *a, uint32_t *handle, uint32_t obj, double weight)
{
	struct objpend_entry *e;
	if (*handle == 0) {
		/* The last quarter of the arena is left to the calling context
		 * tree and the pairs, which a run cannot do without. */
		if (a->used + sizeof(*e) > a->size - a->size / 4 || !(e = arena_alloc(a, sizeof(*e))))
			return -ENOMEM;
		memset(e, 0, sizeof(*e));
		*handle = (uint32_t)(((char *)e - a->base) / 16) + 1;
	} else {
		e = entry_of(a, *handle);
	}
	uint32_t i = 0;
	while (i < e->n && e->obj[i] != obj)
		i++;
	if (i == e->n && i < OBJPEND_SLOTS) {
		e->obj[i] = obj;
		e->weight[i] = 0;
		e->n++;
	}
	if (i < e->n)
		e->weight[i] += weight;
	else
		e->rest_weight += weight;
	return 0;
}

int objpend_take(struct arena *a, uint32_t handle, struct objpend_part *parts)
{
	if (handle == 0)
		return 0;
	struct objpend_entry *e = entry_of(a, handle);
	int n = 0;
	for (uint32_t i = 0; i < e->n; i++)
		if (e->weight[i] > 0)
			parts[n++] = (struct objpend_part){e->obj[i], e->weight[i]};
	if (e->rest_weight > 0)
		parts[n++] = (struct objpend_part){OBJPEND_REST, e->rest_weight};
	e->n = 0; /* the slots go to whichever objects come next */
	e->rest_weight = 0;
	return n;
}
