/* decode_zcache: Zydis's decodings, kept from run to run (a window, look.c).
 *
 * A loop run ahead decodes each of its instructions once, not once an
 * iteration, and a hot loop once across ticks.  The code may change
 * between runs (a JIT, a library unmapped and another mapped there), never
 * within one: a decoding from an earlier run is used once its bytes are
 * found unchanged at pc (a compare of up to 15 bytes against Zydis's
 * ~0.3 us a decode).  Everything here runs in signal handlers.
 */
#ifndef WITCH_DECODE_ZCACHE_H
#define WITCH_DECODE_ZCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "witch/decode_zydis.h"

/* Set-associative, the oldest way replaced: a window runs ahead ~40-200
 * instructions, and 128 direct-mapped slots missed 15-61% of them at
 * 2000/s (bench/programs interp, lz, hashtab, strings: conflicts); 64 sets
 * of 4 miss 0.3, 4, 21 and 48% (strings' printf code: mostly first
 * visits).  That is a handler run's own cache (80 KiB touched), in the
 * workspace the run takes from the process's pool (runspace.h): as many
 * as runs at once, where it was one a thread before 2026-12-04.  Behind it is
 * one the process's threads share, of 512 sets (640 KiB), turned on when
 * a cache's shadow of its tags says it would save many misses: 2048 slots
 * cut sort's misses 35 -> 3%, python3's 43 -> 9%, and their handler time a
 * tick 15-30%, but gcc's cc1 misses 80% either way
 * (bench/results/handler_tick_cost.md).  It was a thread's own until
 * 2026-12-04, two threads a process at most: xz's two workers each
 * touched 676 KiB of it for the same code, and a third went without. */
#define DECODE_ZCACHE_SET_BITS 6
#define DECODE_ZCACHE_GROWN_BITS 9
#define DECODE_ZCACHE_WAYS 4
#define DECODE_ZCACHE_SLOTS ((1u << DECODE_ZCACHE_SET_BITS) * DECODE_ZCACHE_WAYS)
#define DECODE_ZSHARED_SLOTS ((1u << DECODE_ZCACHE_GROWN_BITS) * DECODE_ZCACHE_WAYS)
/* The shadow keeps the tags of one shared set in 4 (set sampling, as cache
 * partitioning's utility monitors do: a few sets predict the whole), and
 * compares its misses with the cache's own on the same lookups. */
#define DECODE_ZSHADOW_SAMPLE_BITS 2
#define DECODE_ZSHADOW_SLOTS \
	((1u << (DECODE_ZCACHE_GROWN_BITS - DECODE_ZSHADOW_SAMPLE_BITS)) * DECODE_ZCACHE_WAYS)
/* Asked every this many shadowed lookups (~1,000 in all: ~10 ticks),
 * over all of them since the cache began (halved past 65,536, so an old
 * phase fades) once there are 2 periods (~20 ticks).  A period alone
 * would have grown gcc's cc1 (2 of its 160 periods of 1,024 halve the
 * misses, while over its run they fall 80 -> 74%); it still does not.
 * Periods of 1,024 (~60 ticks before the first ask) left the shared
 * cache off for most of a short run at the budget's 50-100 ticks a
 * second: sqlite3 turned it on near its end (54 shared hits in ~170
 * ticks, where 1,978 distinct pcs were decoded 5,663 times); at 256 the
 * misses a tick fell 2-30% on 11 of 12 programs (sort 29 -> 20, strings
 * 28 -> 24, sqlite3 30 -> 29, python3 40 -> 38), peak RSS the same
 * (bench/results/cold_ticks.md). */
#define DECODE_ZSHADOW_PERIOD 256u
#define DECODE_ZSHADOW_FIRST (2 * DECODE_ZSHADOW_PERIOD)
#define DECODE_ZSHADOW_HALVE 65536u

/* A lookup reads a set's tags, one cache line apart from the decodings: a
 * handler that runs rarely finds the cache cold, and a hit is used in
 * place, not copied out. */
struct decode_zcache_tag {
	uint64_t pc;
	uint32_t gen;  /* the run that last found it current */
	uint16_t shared; /* 1 + the shared slot it is used from, in place; 0: its own slot */
	uint8_t len;   /* of bytes; 0: empty */
};

struct decode_zcache_slot {
	uint8_t bytes[15]; /* the code decoded, to check it is still there */
	struct decode_zydis z;
} __attribute__((aligned(64)));

struct decode_zshadow {
	uint64_t pc[DECODE_ZSHADOW_SLOTS]; /* 0: empty */
	uint32_t gen[DECODE_ZSHADOW_SLOTS];
	uint32_t lookups;      /* shadowed, since the cache began (halved) */
	uint32_t misses;       /* ... the grown cache would have missed */
	uint32_t small_misses; /* ... the cache missed */
};

/* The process's shared cache.  Lock-free, and read in place: a copy into
 * a run's own cache was 5 cache lines read and 5 written a decoding, most
 * of a cold tick's misses in the decodings (sort at 50/s: ~220 of ~950 a
 * tick, bench/results/cold_ticks.md).
 * - A slot's seq is odd while a thread writes it; a reader uses a slot
 *   whose seq is even and whose pc, length and bytes are its code's.
 * - A writer writes only while no other run is inside (runs: enter and
 *   leave below): it makes seq odd, then reads runs, and puts seq back
 *   untouched if another run is in.  A reader counts itself in before
 *   its first lookup.  Both are sequentially consistent, so a writer sees
 *   the reader in, or the reader sees seq odd or changed (Dekker's
 *   pattern): no slot changes under a run that uses it.
 * - A run's own writes drop its own references to the slot they reuse.
 * Runs last ~20-150 us and come tens to thousands of times a second, so
 * a writer rarely finds another in; one that does keeps its decoding in
 * its own cache only, as one that loses the race to make seq odd. */
struct decode_zshared_tag {
	uint64_t pc;
	uint32_t seq;
	uint8_t len; /* of bytes; 0: empty */
};

struct decode_zshared {
	uint32_t on; /* a thread's shadow said it pays (atomic; 0: not looked in) */
	uint32_t runs; /* runs inside (decode_zcache_enter), atomic */
	struct decode_zshared_tag *tag;   /* DECODE_ZSHARED_SLOTS of each, */
	struct decode_zcache_slot *slot;  /* untouched until on */
};

/* Bytes of memory decode_zshared_init wants (64: the slots' alignment). */
#define DECODE_ZSHARED_MEM_SIZE                                                              \
	((sizeof(struct decode_zshared_tag) + sizeof(struct decode_zcache_slot)) *           \
		 DECODE_ZSHARED_SLOTS + 64)
/* An empty shared cache over mem (zeroed, DECODE_ZSHARED_MEM_SIZE bytes),
 * off until a thread's shadow turns it on. */
void decode_zshared_init(struct decode_zshared *s, void *mem);
/* The process's (mapped once, by the first call, outside any handler);
 * NULL when no memory could be mapped. */
struct decode_zshared *decode_zshared_process(void);
/* In a fork's child, a slot some other thread was writing is freed, and
 * no run is inside (the forking thread is in none). */
void decode_zcache_postfork_child(void);

/* A run's own cache (its workspace's, runspace.h). */
struct decode_zcache {
	uint32_t gen;
	uint32_t next_way; /* where in a full shared set this cache writes next */
	struct decode_zcache_tag *tag;   /* DECODE_ZCACHE_SLOTS of each */
	struct decode_zcache_slot *slot;
	struct decode_zshadow shadow;    /* asked only while shared is off */
	struct decode_zshared *shared;   /* NULL: none */
	int turned_on;                   /* this cache's shadow turned shared on */
	uint32_t inside;                 /* entered, not left (counted in shared->runs) */
	uint64_t hits, misses;           /* misses: its own cache's */
	uint64_t decode_tsc;             /* TSC ticks in Zydis's decodings (stat cost_decode_ns) */
	uint64_t shared_hits;            /* of its misses, found in shared */
	uint64_t shared_busy;            /* decodings not offered: another run was inside */
	/* Told each new decoding's end (decode_cache_note), NULL: none.  A
	 * window's instructions are where the program runs, and so where
	 * its watchpoints trap. */
	struct decode_cache *prev;
};

/* Bytes of memory decode_zcache_init wants (64: the decodings' alignment). */
#define DECODE_ZCACHE_MEM_SIZE                                                               \
	((sizeof(struct decode_zcache_tag) + sizeof(struct decode_zcache_slot)) *            \
		 DECODE_ZCACHE_SLOTS + 64)
/* An empty cache over mem (zeroed, DECODE_ZCACHE_MEM_SIZE bytes), backed by
 * shared (may be NULL); prev NULL. */
void decode_zcache_init(struct decode_zcache *c, void *mem, struct decode_zshared *shared);
/* 1 when this cache's shadow turned the shared cache on. */
static inline int decode_zcache_grown(const struct decode_zcache *c)
{
	return c->turned_on;
}
/* A handler run that uses c begins and ends (runspace.h's take and give):
 * while it is inside, no other run writes a shared slot, so c's lookups
 * use shared decodings in place.  Entering also begins a run of lookups
 * (decode_zcache_begin), so no reference to a shared slot outlives the
 * handler run that checked it.  Lookups outside enter and leave are for
 * a process with one thread (tests). */
void decode_zcache_enter(struct decode_zcache *c);
void decode_zcache_leave(struct decode_zcache *c);
/* In a fork's child: c is in no run (it was another thread's, or the
 * process's count of runs starts again at 0: postfork_child below). */
void decode_zcache_postfork_cache(struct decode_zcache *c);
/* A run of lookups begins (a window, a trap's resolve): kept decodings
 * are checked against their code again. */
void decode_zcache_begin(struct decode_zcache *c);
/* decode_at_zydis, with Zydis's part from c (or the shared cache) when pc
 * was decoded before and its bytes are the same (checked once a run).
 * *z: Zydis's decoding, in c or in the shared cache, valid until the next
 * call.  May turn the shared cache on (above). */
int decode_at_zydis_cached(struct decode_zcache *c, uint64_t pc, const struct decode_regs *regs,
			   struct decode_insn *out, const struct decode_zydis **z);

#endif
