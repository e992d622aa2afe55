/* handler: what runs in the runtime's signal handlers.
 *
 * The path, top to bottom: sampler tick -> look (look.h: a window run ahead,
 * a pick and its weight in bytes) -> calling context -> client -> reservoir
 * -> watchpoint;
 * and watchpoint trap -> precise PC -> client verdict -> proportional
 * attribution (Witch 4.4.2) -> pair.  No malloc, stdio or locks.  The
 * settings, client and off switch are the runtime state's (runtime.h).
 */
#ifndef WITCH_HANDLER_H
#define WITCH_HANDLER_H

#include <signal.h>
#include <stdint.h>

#include "witch/config.h"
#include "witch/craft.h"

/* The runtime's RT signal: 1 if it was ours (a tick, a trap), 0 if the program's. */
int handler_on_signal(int sig, siginfo_t *si, void *uc);
/* SIGTRAP: 1 if it was the runtime's single step. */
int handler_on_sigtrap(siginfo_t *si, void *uc);
/* A SIGTRAP sigguard found to be a watchpoint's hit whose cause the kernel
 * lost (sigguard.c): counted in the thread's traps_lost, nothing else. */
void handler_on_lost_trap(void);
/* Sample the byte at addr that the program's call of fn (a C library bulk
 * operation, bulk.h) is about to access, or with ran has accessed (kind:
 * DECODE_STORE or DECODE_LOAD), standing for weight bytes.  Not from a
 * signal handler. */
void handler_sample_call(uint64_t fn, uint64_t addr, uint8_t kind, double weight, int ran);
/* iocount's hook (iocount_set_hook): the thread's armed watchpoints have
 * cost its read and write calls their share of the budget's interval
 * (drcost.h); its waiting samples go.  Not from a signal handler. */
void handler_io_over(void);
/* 1 while this thread is in a handler run (its signals blocked but faults). */
int handler_in_run(void);

#endif
