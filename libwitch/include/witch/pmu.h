/* pmu: one thread's PMU address sampler (precise events, mmap rings).
 *
 * In the handler:  if (pmu_is_tick(&t->pmu, si)) pmu_drain(&t->pmu, on_sample, t);
 * with on_sample given s->ip (the accessing instruction, exact) and
 * s->addr; the access width comes from decoding s->ip.
 */
#ifndef WITCH_PMU_H
#define WITCH_PMU_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "witch/pmu_event.h"
#include "witch/pmu_ring.h"

#define PMU_DATA_PAGES 8 /* 32 KiB of ring: hundreds of samples between drains */

struct pmu {
	int n;
	int fd[PMU_EVENT_MAX];
	void *map[PMU_EVENT_MAX];
	size_t map_len;
	struct pmu_ring ring[PMU_EVENT_MAX];
};

/* Open every event of ev (pmu_event_encode, then pmu_event_probe at start-up)
 * for thread tid (> 0), disabled; map 1 + data_pages pages of ring each (a
 * power of two; 0 = PMU_DATA_PAGES); and route each event's overflow to `sig`
 * on that thread (O_ASYNC, F_SETSIG, F_SETOWN_EX F_OWNER_TID).  Returns 0 or a
 * negative errno, with nothing left open.  System calls and p's memory
 * only: called where sampler_open is, at a thread's start, which for a
 * fork child is in a handler (thread.c). */
int pmu_open(struct pmu *p, const struct pmu_event *ev, int sig, pid_t tid, uint32_t data_pages);
/* Resets and enables the events. */
int pmu_start(struct pmu *p);
/* Disables them (unread samples stay). */
int pmu_stop(struct pmu *p);
/* 1 when si is an overflow notice of one of p's events (si_code
 * POLL_IN..POLL_HUP and si_fd ours), like sampler_is_tick. */
int pmu_is_tick(const struct pmu *p, const siginfo_t *si);
/* Read every ring (pmu_ring_read) and call fn for each usable sample: user
 * mode, exact IP, nonzero data address, and on IBS the client's access kind.
 * Returns how many.  Async-signal-safe; call it from the overflow handler only
 * (one reader per ring). */
int pmu_drain(struct pmu *p, pmu_sample_fn fn, void *arg);
/* The rings' counters added up (what was used, dropped and why). */
void pmu_stats(const struct pmu *p, struct pmu_ring_stats *sum);
/* Unmaps and closes; p may be zeroed or half-open. */
void pmu_close(struct pmu *p);
/* A fork child's copy: the descriptors only, p untouched (the rings'
 * mappings were not copied: perf maps them VM_DONTCOPY). */
void pmu_close_inherited(const struct pmu *p);

#endif
