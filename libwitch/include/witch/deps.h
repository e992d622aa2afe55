/* deps: the decoder (Zydis) and the unwinder (libunwind), loaded when a
 * process first ticks, not when it starts.
 *
 * Loading them and the liblzma libunwind needs cost a short process
 * ~0.6 ms of the ~2.1 ms the runtime added to it here (three opens, a
 * dozen maps and ~23 page faults of 12-15 us on this PVM guest; bench/
 * results/startup.md), and most processes of a script or a build never
 * tick.  Only a tick's handler needs them, so libwitch.so does not name
 * them; its calls go through forwarders (deps_forward.c) to what dlopen
 * found.  dlopen is given the paths the build found them at, liblzma's
 * first (a search by soname reads ld.so.cache, ~0.65 ms of a first tick
 * here), and their sonames where those files are not there.
 *
 * dlopen is not async-signal-safe, and the handler is where it runs.
 * What makes a signal handler's dlopen unsafe is a lock or a half-done
 * update that the interrupted code holds in the C library or the loader
 * (malloc's arena, which a single-threaded process updates without a
 * lock; the loader's lock and link map).  A tick loads them only where
 * the interrupted code holds none of that:
 *   - its pc is outside the C library, the loader, the vDSO and the
 *     runtime (code that returned to the program has finished its update);
 *   - the program's malloc is the C library's (a malloc of the program's
 *     own, as redis links jemalloc, may hold its lock in program code:
 *     there they load at start, as before);
 *   - the loader's r_debug reads RT_CONSISTENT (not inside a dlopen's
 *     mapping and relocation, where an IFUNC resolver is program code);
 *   - no dl_iterate_phdr callback or dlclose runs in any thread (the
 *     loader's lock held around program code, here or where the tick's
 *     dlopen would wait for it while the holder waits on this thread);
 *   - the interrupted mask blocks no signal the program has a handler for
 *     (inside such a handler, which may have interrupted malloc, its
 *     signal is blocked, SA_NODEFER aside);
 *   - the runtime is not sealed (sandboxguard.h: no system call of its
 *     own past a sandbox) and this is the process that started it (not a
 *     vfork child).
 * A tick where any fails is skipped (stat ticks_deps_wait) and the next
 * one tries.  They are loaded at start instead where the program's malloc
 * is its own; before a chroot, after which the files are not there; and at
 * an mlockall, so that no tick maps (and locks) them later.  The runtime
 * leaves them out of its data index (deps_owns_module), and the loader's
 * allocations out of heap tracking.
 */
#ifndef WITCH_DEPS_H
#define WITCH_DEPS_H

#include <stdint.h>
#include <ucontext.h>

/* At start, after context_set_runtime_text: the ranges a loading tick
 * must not interrupt, and whether the program's malloc lets a tick load.
 * 0, or a negative errno; then deps_load_at_tick never loads (deps_load
 * still does). */
int deps_init(void);
/* 1 if a tick interrupted at pc may load them as far as the code goes:
 * pc outside the C library, the loader, the vDSO and the runtime
 * (deps_init's ranges, in every build).  Async-signal-safe. */
int deps_pc_may_load(uint64_t pc);
/* 1 if the loads must happen now, at start: the program's malloc is its
 * own, or deps_init did not find the C library or the loader. */
int deps_load_at_start(void);
/* Load now, in normal context: 0 (also when loaded before), -EAGAIN when
 * out of descriptors or memory for the moment (a later tick or call tries
 * again), or another negative errno (dlopen's failure: the decoder and
 * unwinder stay out, and every tick is skipped). */
int deps_load(void);
/* Async-signal-safe: 1 once loaded (always, in a build linked with them). */
int deps_ready(void);
/* A tick's handler, with the interrupted context: 1 loaded (now or
 * before), 0 not safe at this tick (try the next), a negative errno when
 * loading failed for good.  *load_tsc: the TSC ticks this call spent
 * loading (0 if it did not), which are the process's start-up cost, not
 * the sampler's (cost_set_aside). */
int deps_load_at_tick(const ucontext_t *uc, uint64_t *load_tsc);
/* The TSC ticks ticks spent loading, in all (stat cost_startup_ns counts
 * them).  Async-signal-safe. */
uint64_t deps_tick_load_tsc(void);
/* The loads failed (dlopen's errno, or 0 for none): said at exit. */
int deps_failed(void);
/* dlopen's message of the last failure, or "" (normal context). */
const char *deps_failure(void);
/* A second thread is about to start (the pthread_create interposer).  From
 * then on no tick loads: another thread may hold the loader's lock inside
 * the program's own dlopen, its library's constructor waiting for a lock
 * the interrupted thread holds, and the tick's dlopen would wait for that
 * loader lock for good (bench/zoo.py's gcc_dlopen case hung so).  They are
 * loaded here instead, once, in normal context, while the process has one
 * thread still.  0 or deps_load's error. */
int deps_threads_begin(void);
/* Around the program's code that the loader runs with its lock held:
 * dl_iterate_phdr's callbacks, dlclose's destructors. */
void deps_loader_enter(void);
void deps_loader_leave(void);
/* 1 if the module loaded at base is one the runtime loaded for itself
 * (the data index leaves it out: datasym.h).  Async-signal-safe. */
int deps_owns_module(uint64_t base);
/* The unwinder's and the decoder's text ([lo, hi), 0 before the load). */
void deps_unwinder_text(uint64_t *lo, uint64_t *hi);
/* An address in the decoder's text (faultaround_add_module), NULL before. */
const void *deps_decoder_library(void);
/* Fork: no load is under way in another thread as the process is copied
 * (the child would inherit the loader's lock held by a thread it does not
 * have): prefork waits for one to end (at most ~100 ms) and keeps new ones
 * from starting until postfork. */
void deps_prefork(void);
void deps_postfork_parent(void);
void deps_postfork_child(void);

#endif
