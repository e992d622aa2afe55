/* craft: the interface between the runtime and its clients (Witch 4.6).
 *
 * API
 *   const struct craft *craft_get(enum config_client client);
 *
 * A craft says which accesses to sample and how to watch them; on a
 * sample it may remember data with the watchpoint (on_sample); on a trap
 * it gives a verdict (on_trap): waste, use, or keep watching.  The runtime
 * does everything else: decoding, contexts, reservoir, proportional
 * attribution.  Both callbacks run in a signal handler.
 */
#ifndef WITCH_CRAFT_H
#define WITCH_CRAFT_H

#include <stdint.h>

#include "witch/config.h"
#include "witch/watchpoint.h"

enum craft_verdict {
	CRAFT_KEEP = 0,  /* no verdict yet: leave the watchpoint armed */
	CRAFT_WASTE = 1, /* redundant: credit waste, disarm */
	CRAFT_USE = 2,   /* useful: credit use, disarm */
};

/* The access that trapped, as far as the runtime could tell. */
struct craft_trap {
	uint8_t kind;     /* enum decode_kind */
	uint8_t elem;     /* enum decode_elem */
	uint64_t addr;
	uint32_t len;
	uint64_t overlap_addr; /* bytes both watched and touched by the trap */
	uint32_t overlap_len;
};

struct craft {
	const char *name;
	uint8_t sample_kind; /* DECODE_STORE or DECODE_LOAD: what to sample */
	int watch_type;      /* WATCHPOINT_W or WATCHPOINT_RW */
	/* Returns 0 to arm, negative errno to skip this sample. */
	int (*on_sample)(struct watchpoint *w);
	/* *approx is set to 1 when a waste verdict is only approximate (FP). */
	enum craft_verdict (*on_trap)(struct watchpoint *w, const struct craft_trap *t, int *approx);
};

const struct craft *craft_get(enum config_client client);

extern const struct craft craft_dead;

#endif
