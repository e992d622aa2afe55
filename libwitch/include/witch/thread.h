/* thread: per-thread runtime state and its life cycle.
 *
 * pthread_create is interposed so every new thread runs thread_begin first.
 */
#ifndef WITCH_THREAD_H
#define WITCH_THREAD_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "witch/arena.h"
#include "witch/budget.h"
#include "witch/bulk.h"
#include "witch/cct.h"
#include "witch/config.h"
#include "witch/cost.h"
#include "witch/drcost.h"
#include "witch/decode.h"
#include "witch/faultlog.h"
#include "witch/look.h"
#include "witch/pairtab.h"
#include "witch/reservoir.h"
#include "witch/rng.h"
#include "witch/sampler.h"
#include "witch/unwind_rules.h"
#include "witch/fnrange.h"
#include "witch/stats.h"
#include "witch/watchpoint.h"

struct runspace;

struct witch_thread {
	pid_t tid;
	volatile sig_atomic_t active; /* handlers do nothing unless set */
	/* Periodic flush: the flusher sets paused, then waits for in_handler
	 * to clear before reading the thread's tables (handler.c enters and
	 * leaves around every use of them). */
	int paused;
	int in_handler;
	/* In the first line with active and in_handler: bulk.c's wrappers read
	 * the three and the count on each of the program's counted calls. */
	struct bulk bulk;             /* byte-counted memset/memcpy (bulk.h) */
	uint64_t fs_base, gs_base;
	uint64_t errno_addr;          /* this thread's errno (the handler saves it) */
	uint64_t stack_hi;            /* the top of the thread's own stack, 0 when unknown */
	char *altstack;               /* the start of the thread's one mapping (thread.c) */
	int altstack_on;              /* sigaltstack set to it */
	struct arena arena;
	struct cct cct;
	struct pairtab pairs;
	struct runspace *rs;          /* this handler run's workspace (runspace.h), else NULL */
	struct sampler sampler;
	struct watchpoint_set wps;
	int wps_waiting;              /* wps opens at the first arm (thread_watchpoints_open) */
	struct reservoir reservoir;
	struct rng rng;
	struct look look;             /* software sampler: reaching a tick's pick */
	struct unwind_rules unwind_rules; /* its frames' rules (unwind_rules.h) */
	struct fnrange fnrange;       /* the functions its stack samples fell in (fnrange.h) */
	struct cost cost;             /* what the profiler spends here (cost.h) */
	struct drcost drcost;         /* what armed watchpoints cost its kernel work */
	struct faultlog faults;       /* its page faults: ticks that arrive from one */
	uint32_t self_checks;         /* samples that could skip their own trap (sample.c) */
	struct budget budget;         /* the rate following WITCH_BUDGET (budget.h) */
	int back_soon;                /* this handler run expects the program back at once */
	int back_step;                /* ... by a single step (cost.h times it) */
	int reserved;                 /* holds THREAD_FOOTPRINT of WITCH_MEMORY_MB */
	uint64_t parking;             /* a harmless address to park disabled watchpoints on */
	struct witch_stats stats;
	struct witch_thread *next;    /* in the list of live threads */
};

/* Once, from the constructor (after runtime.h's cfg and sig): which sampler
 * threads get (pmu_ev NULL: the software one), the thread-exit key.  New
 * threads are profiled once witch_rt.live. */
int thread_module_init(const struct pmu_event *pmu_ev);
/* Give the calling thread its sigaltstack, arena, calling context tree,
 * watchpoints and sampler, and start sampling.  NULL (after one `witch:` line
 * for the first failure) when it cannot. */
struct witch_thread *thread_begin(void);
/* The same for the process's first thread, from the constructor.
 * open_watchpoints: its watchpoints open now, so a machine or setting
 * that refuses them is said at the start, and the program runs
 * unprofiled; else at its first sample to arm, as any other thread's (and
 * a fork child's). */
struct witch_thread *thread_begin_first(int open_watchpoints);
/* Before a thread's first arm: its watchpoints opened if they wait.  0,
 * or -errno (stat watchpoint_open_errors), after which the thread runs
 * unprofiled, as one whose set could not open at its start did.
 * Async-signal-safe. */
int thread_watchpoints_open(struct witch_thread *t);
/* Stop the thread's sampler and watchpoints, fold what it measured into the
 * process profile and free its memory.  Runs from the thread-exit key
 * destructor, so nothing a thread measured is lost. */
void thread_end(struct witch_thread *t);
/* At process exit: stops and folds every thread. */
void thread_end_all(void);
/* After thread_end_all, until no other thread is inside a handler run
 * that began before (a sandbox comes next: sandboxguard.h). */
void thread_wait_handlers(void);
/* After thread_end_all, start every thread's sampling again (an exec that
 * failed: the process goes on). */
void thread_resume_all(void);
/* Fold what every live thread measured so far into the profile (pausing each
 * one's handlers for the moment it takes); they go on. */
void thread_flush_all(void);
/* fn(sig, si, uc) on the calling thread's own signal stack, from a signal
 * handler, returning what fn does.  The kernel delivers on the thread's
 * registered sigaltstack, which the program may have replaced with one of
 * its own (CPython's faulthandler, which pytest turns on: 16 KiB; Go's
 * runtime, by raw system call) or turned off: the handler's deepest frames
 * (~25 KiB, and a profile's write in fatal.h's) wrote past a 16 KiB one
 * into the program's memory below it.  Where it came on another stack, the
 * run moves to the thread's own (counted: stat signals_off_stack); a
 * thread the runtime does not profile runs fn where it is. */
int thread_on_own_stack(int (*fn)(int, siginfo_t *, void *), int sig, siginfo_t *si, void *uc);
/* A runtime thread of its own (the flusher): never sampled.  Where the
 * program locks its future mappings, its stack is the runtime's
 * (lockguard_thread_stack), of this size, and outlives it. */
#define THREAD_UNPROFILED_STACK (8u << 20)
int thread_create_unprofiled(pthread_t *th, void *(*fn)(void *), void *arg);
/* Called (outside any handler) each time the profiled program is about to
 * start a thread, before it exists (flush.h starts its writer then). */
void thread_set_spawn_hook(void (*before_spawn)(void));
/* Called where the program's last thread ends without ending the process
 * (its main thread had called pthread_exit): the runtime's own threads
 * must return, or the process waits on them for ever. */
void thread_set_last_hook(void (*last_gone)(void));
/* The calling thread gives one of its debug registers back (the program wants
 * a breakpoint of its own).  0 or -ENOSPC. */
int thread_yield_watchpoint(void);
/* The calling thread's state, or NULL.  Async-signal-safe (TLS).  Inline:
 * the wrappers of bulk.c ask it on each of the program's counted calls. */
extern __thread struct witch_thread *thread_tls_self
	__attribute__((visibility("hidden"), tls_model("initial-exec")));
static inline struct witch_thread *thread_self(void)
{
	return thread_tls_self;
}
/* 1 if addr is the runtime's (arena, signal stack, thread state) or a word
 * its handler touches (the TCB head with the stack canary, errno): never
 * sampled. */
int thread_owns_address(const struct witch_thread *t, uint64_t addr);
/* The child closes the descriptors of the parent's threads; their memory
 * and the forking thread's state wait for the child's start (thread.c). */
void thread_prefork(void);
void thread_postfork_parent(void);
void thread_postfork_child(void);
/* Once fork has returned to the child (forkguard.h), past the program's
 * atfork handlers: arm its start, a task-clock event that signals at 5 ms
 * of its user time (or one sampling interval if shorter), so a child that
 * execs before never pays for it.  Started at once where no event can be
 * had; begun afresh when the forking thread was not profiled.  0 or a
 * negative errno. */
int thread_child_arm(void);
/* From the runtime signal's handler, first: 1 when si is that event's
 * (the child's thread then starts sampling, async-signal-safely), else 0. */
int thread_child_on_signal(const siginfo_t *si);
/* 1 in a fork child whose start has not come yet: it has measured
 * nothing. */
int thread_child_pending(void);
/* Such a child's start is called off (a sandbox comes first): its event
 * closed.  thread_child_arm arms it again. */
void thread_child_disarm(void);

#endif
