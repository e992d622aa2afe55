/* runspace: what one handler run uses and no later run needs, from a pool
 * the process's threads share.
 *
 * A run's decodings (decode_zcache.h, 86 KiB), the window's trace (look.h,
 * 31 KiB), its vector registers and the large locals (sample.h) were a
 * thread's own: ~130 of the ~150 KiB a busy thread cost (java's 21
 * threads: +4.8 MiB peak RSS, bench/results/thread_memory_20261204.md).
 * They are only used between handler_enter and handler_leave, and a thread
 * runs one handler at a time, so a process needs as many as it has
 * handler runs at once: about its CPUs, not its threads.  What a thread
 * learns across runs (branch tables, loop paces, its frames' callers)
 * stays its own.
 *
 * The pool is one MAP_NORESERVE region mapped at start, a runspace laid
 * out fresh the first time it is taken; free ones are on a lock-free stack
 * (a Treiber stack whose head carries a tag against ABA).  Taking and
 * giving are async-signal-safe and take no lock.
 */
#ifndef WITCH_RUNSPACE_H
#define WITCH_RUNSPACE_H

#include <stdint.h>

#include "witch/decode_zcache.h"
#include "witch/emulate_vec.h"
#include "witch/look.h"
#include "witch/sample.h"

struct decode_cache;

struct runspace {
	struct decode_zcache zcache;  /* the run's decodings (its memory follows) */
	struct look_trace trace;      /* the window's accesses (look_tick's picks) */
	struct emulate_vec vec;       /* the run-ahead's vector registers */
	struct sample_scratch scratch; /* a run's large locals (sample.h) */
};

/* Once, from the constructor, outside any handler: maps room for the pool
 * (virtual only until used) for picks of depth frames, its decodings backed
 * by shared (may be NULL) and noting their ends in prev (may be NULL).
 * tables (tables_len bytes; NULL, 0: none) is the process's memory every
 * run fills (thread.c's unwind rules and prev): it and each runspace are
 * made present in bulk when first used (prefault.h), a process that never
 * ticks paying nothing.  0 or a negative errno. */
int runspace_module_init(uint32_t depth, struct decode_zshared *shared, struct decode_cache *prev,
			 void *tables, size_t tables_len);
/* A free runspace for this run, or NULL when as many runs hold one as
 * the pool has room for (the run is skipped; counted by the caller).
 * Its decodings are entered (decode_zcache_enter: the shared ones are
 * read in place while it is held).  Async-signal-safe, lock-free. */
struct runspace *runspace_take(void);
/* Back to the pool at the run's end, its decodings left. */
void runspace_give(struct runspace *r);
/* Runspaces laid out so far: the most runs that held one at once. */
uint32_t runspace_count(void);
/* 1 if addr is in the pool's region (the runtime's: never sampled). */
int runspace_owns_address(uint64_t addr);
/* In a fork's child only the forking thread lives, in no handler run:
 * every runspace is free again. */
void runspace_postfork_child(void);

#endif
