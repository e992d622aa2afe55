/* phdrs: the loaded modules as the runtime's unwinding sees them, without
 * the dynamic loader's lock.
 *
 * libunwind finds a pc's unwind tables through dl_iterate_phdr, which takes
 * the loader's lock.  A signal that lands while the interrupted thread is
 * inside that lock's lock or unlock (dlopen, dlclose, a thread's first
 * pthread_exit loading libgcc_s) then deadlocks the thread (found by the
 * soak test).  So dl_iterate_phdr is interposed: while the runtime unwinds
 * (phdrs_unwind_begin..end) it walks a snapshot of the module list taken
 * outside any handler; every other caller gets the C library's.
 *
 * The snapshot is taken at start, after the program's dlclose, when a
 * thread starts, and by the flusher (where there is one: flush.h) within
 * 0.25 s of an unwind that found a pc in no module.  Until then, a pc in a
 * module loaded since (dlopen is not interposed: the C library finds the
 * caller's RUNPATH from its return address) is found by the C library's
 * lock-free _dl_find_object.  dlclose
 * first waits out the unwinds that may be reading the module it unmaps.
 */

#include <stdint.h>
#ifndef WITCH_PHDRS_H
#define WITCH_PHDRS_H

/* Maps the two snapshot buffers and takes the first snapshot: 0 or -errno. */
int phdrs_init(void);
/* A new snapshot (not in a signal handler); cheap when nothing changed is
 * not assumed: it walks the C library's list. */
void phdrs_refresh(void);
/* phdrs_refresh if an unwind since the last one missed a module. */
void phdrs_refresh_if_stale(void);
/* Around the runtime's own libunwind calls, async-signal-safe. */
void phdrs_unwind_begin(void);
void phdrs_unwind_end(void);
/* The pc the unwinder looks up next (a frame's pc, a return address less
 * one): where to look when the snapshot has no module for it. */
void phdrs_unwind_at(uint64_t pc);
/* A handler run that faulted mid-unwind was abandoned (rescue.h): drop
 * what its walk held, so dlclose does not wait for it forever. */
void phdrs_rescue(void);
/* Around the program's dlclose: no unwind reads the snapshot meanwhile. */
void phdrs_close_begin(void);
void phdrs_close_end(void);
/* Counts the program's dlcloses: what was learnt about a pc's code
 * before a change may not hold after it (unwind_rules.h). */
uint64_t phdrs_generation(void);
/* 1 when addr is in an executable segment of a module the C library has
 * loaded (_dl_find_object, lock-free): its page is mapped while the module
 * stays.  0 elsewhere (a JIT's code, data, no module), where the caller
 * asks the kernel.  Async-signal-safe, no system call. */
int phdrs_in_code(uint64_t addr);
/* Fork: no snapshot is half-taken in the child, and the unwinds of the
 * parent's other threads, gone in the child, are not waited for. */
void phdrs_prefork(void);
void phdrs_postfork_parent(void);
void phdrs_postfork_child(void);

#endif
