/* fnrange: the function that holds a pc, kept per thread (see fnrange.h). */
#include "witch/fnrange.h"
#include "witch/phdrs.h"
#include "witch/unwind.h"

#include <errno.h>
#include <string.h>

void fnrange_init(struct fnrange *c)
{
	memset(c, 0, sizeof(*c));
	c->generation = phdrs_generation();
}

static struct fnrange_entry *fnrange_set_of(struct fnrange *c, uint64_t pc)
{
	uint64_t block = pc >> FNRANGE_BLOCK_SHIFT;
	return c->set[(block * 0x9E3779B97F4A7C15ull) >> (64 - FNRANGE_SET_BITS)];
}

int fnrange_start(struct fnrange *c, uint64_t pc, uint64_t *start)
{
	uint64_t generation = phdrs_generation();
	if (generation != c->generation) {
		memset(c->set, 0, sizeof(c->set));
		c->generation = generation;
	}
	struct fnrange_entry *set = fnrange_set_of(c, pc);
	for (int w = 0; w < FNRANGE_WAYS; w++)
		if (set[w].start <= pc && pc < set[w].end) {
			c->hits++;
			*start = set[w].start;
			return 0;
		}
	c->misses++;
	uint64_t lo, hi;
	int rc = unwind_proc_range(pc, &lo, &hi);
	if (rc < 0)
		return rc;
	/* A range that does not hold pc is libunwind's answer, kept out. */
	if (lo <= pc && pc < hi)
		set[c->next++ % FNRANGE_WAYS] = (struct fnrange_entry){lo, hi};
	*start = lo;
	return 0;
}
