/* craft: the interface between the runtime and its clients (Witch 4.6).
 *
 * A craft says which accesses to sample and how to watch them.  The
 * runtime calls it at three moments, all in a signal handler:
 *   on_sample  the access is chosen and about to run (x86 watchpoints are
 *              armed before it): remember what it will read, or refuse;
 *   on_self    the sampled instruction has run (its own trap): remember
 *              what it wrote;
 *   on_trap    a later access touched the watched bytes: waste, use, or
 *              keep watching.
 * The runtime does everything else: decoding, contexts, reservoir,
 * proportional attribution.
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
	CRAFT_DROP = 3,  /* cannot tell (bytes unreadable): disarm, no credit */
};

/* The access that trapped, as far as the runtime could tell. */
struct craft_trap {
	uint8_t kind;     /* enum decode_kind */
	uint8_t elem;     /* enum decode_elem */
	uint64_t addr;
	uint32_t len;
	uint64_t overlap_addr; /* bytes both watched and touched by the trap */
	uint32_t overlap_len;
	double tolerance;      /* WITCH_FP_TOLERANCE */
	/* A store's bytes (little-endian, len at most 8) where they are known
	 * without reading the location: the run ahead's (on_traced), or the
	 * trap path's from the registers (precise_stored_value) where the
	 * client would read them under its armed watchpoint (on_trap). */
	int value_known;
	uint64_t value;
};

/* What on_self reads, and so whether the own trap can be skipped where the
 * run ahead knows it already (sample.c, watchpoint_arm_after). */
enum craft_self {
	CRAFT_SELF_NOTHING, /* nothing (DeadCraft) */
	CRAFT_SELF_LOADED,  /* a pure load's bytes: what on_sample read, when nothing
			     * the window ran before it stored there, else the value
			     * the run ahead forwards from that store (on_self_value)
			     * (LoadCraft) */
	CRAFT_SELF_STORED,  /* the bytes the store writes: on_self_value (SilentCraft) */
};

struct craft {
	const char *name;
	uint8_t self;        /* enum craft_self */
	uint8_t sample_kind; /* DECODE_STORE or DECODE_LOAD: what to sample */
	int watch_type;      /* WATCHPOINT_W or WATCHPOINT_RW */
	/* Also sample the stack slots push, pop, call and ret touch by
	 * themselves.  Silent and load leave them out: a return address or a
	 * saved register is rewritten or reloaded with the same value on
	 * every call from the same site, which is redundant but not
	 * something a programmer can change. */
	uint8_t sample_stack_ops;
	/* Each returns 0 to go on, a negative errno to drop the sample. */
	int (*on_sample)(struct watchpoint *w);
	int (*on_self)(struct watchpoint *w);
	/* Instead of on_self: the sampled access's bytes as the run ahead knows
	 * them, what a store writes or a load reads (its sample_len bytes, at
	 * most WATCHPOINT_VALUE_MAX: a vector register's too). */
	int (*on_self_value)(struct watchpoint *w, const uint8_t *bytes);
	/* *approx is set to 1 when a waste verdict is only approximate (FP). */
	enum craft_verdict (*on_trap)(struct watchpoint *w, const struct craft_trap *t, int *approx);
	/* The trapped accesses (enum decode_kind bits) on_trap always decides,
	 * never CRAFT_KEEP: for them the watchpoint is released before on_trap,
	 * so the location it reads is read in place (peek.h), not through
	 * process_vm_readv and getpid (silent and load read at every such
	 * trap: ~1 remote read a sample, 5-40 us). */
	uint8_t decided_kinds;
	/* The next access to touch the watched bytes after the sample, as the
	 * run ahead traced it (it has not run: the bytes are as the sample and
	 * the accesses passed before left them; t->overlap_* and t->tolerance
	 * as for on_trap): CRAFT_WASTE or CRAFT_USE; CRAFT_KEEP to be shown the
	 * next (an access of traced_through kinds, its bytes laid over w's
	 * shadow); CRAFT_DROP when the program must run to tell.  NULL: always
	 * the program. */
	enum craft_verdict (*on_traced)(struct watchpoint *w, const struct craft_trap *t,
					int *approx);
	/* The accesses on_traced can judge (enum decode_kind bits), those it
	 * passes when their values are known, and whether it needs the values
	 * stored (the trace's and the sample's): how far the run ahead goes for
	 * a verdict (look.h) follows from them. */
	uint8_t traced_kinds;
	uint8_t traced_through;
	uint8_t traced_values;
};

const struct craft *craft_get(enum config_client client);
/* Copy the sampled location into buf (w->value or w->shadow): the whole
 * sampled access (up to WATCHPOINT_VALUE_MAX bytes) when it can be read, else
 * only the watched bytes; sets w->value_addr and w->value_len the first time.
 * Never faults (peek_read: bytes under a watchpoint go through
 * process_vm_readv, which does not trip it). Returns 0 or -EFAULT. */
int craft_read_location(struct watchpoint *w, uint8_t *buf);
/* Set the client's copy of the location (w->value, and w->shadow when
 * shadow) to the sampled access's bytes as the run ahead knows them (its
 * sample_len bytes).  0, or -EINVAL for an access wider than
 * WATCHPOINT_VALUE_MAX. */
int craft_set_location(struct watchpoint *w, const uint8_t *bytes, int shadow);
/* Lay a store's bytes (at most 8, little-endian, at addr) over the
 * client's copy buf (w->value or w->shadow) where they overlap it. */
void craft_overlay(const struct watchpoint *w, uint8_t *buf, uint64_t addr, uint32_t len,
		   uint64_t bytes);
/* Same value (w->value vs now, over the trap's overlap) is waste,
 * approximately the same (FP) is waste with *approx = 1, else use. */
enum craft_verdict craft_judge(const struct watchpoint *w, const uint8_t *now,
			       const struct craft_trap *t, int *approx);

extern const struct craft craft_dead;
extern const struct craft craft_silent;
extern const struct craft craft_load;

#endif
