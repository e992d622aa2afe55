/* memlat: what a load costs beyond an L1 or L2 hit, measured with the TSC.
 *
 * The cost model (costmodel.h) knows instructions, not caches: a pointer
 * chase through DRAM is modelled at a few cycles a step and runs ~185 ns, so
 * its bytes were weighed ~40x too heavy where no loop pacing (pace.h)
 * measured it.  The run ahead reads every load's bytes from the program's
 * memory anyway, in place (peek.h), and is the first to touch them since
 * the tick: timing that read (rdtsc around a one-byte load) says whether the
 * line was in a near cache, in L3, or in DRAM, misses in the TLB included.
 * The handler's own reads and the kernel's signal delivery may push the
 * program's lines out of L1, not out of the 1 MiB L2: so only what lies
 * past an L2 hit counts (MEMLAT_MIN_NS).  The read brings the line in for
 * the program, which then finds it there: the miss is paid once, as it
 * would have been.
 *
 * Everything but memlat_init is async-signal-safe.
 */
#ifndef WITCH_MEMLAT_H
#define WITCH_MEMLAT_H

#include <stddef.h>
#include <stdint.h>
#include <x86intrin.h>

/* Latency below this past the probe's own cost is a near-cache hit: the
 * cost model's load latency covers it.  This VM's TSC moves in steps of
 * ~10 ns (26 ticks): an L1 or L2 hit reads 0-2 steps past the fastest, now
 * and then 3; L3 4-7 (~40-70 ns with its TLB misses), DRAM 110-185 ns
 * (measured: dependent chases through 4, 16 and 512 MiB).  Only DRAM
 * counts: what reads as L3 is as often a line the handler's own work or
 * the signal's delivery pushed out of L2, and at 35 ns the bench
 * programs' and python3's and sqlite3's shares by function were further
 * from the oracle's (bench/results/memlat.md, 2026-12-01, late). */
#define MEMLAT_MIN_NS 80.0
/* ... or lower where DRAM is faster than here (a bare-metal part reads
 * ~80 ns): memlat_init measures it (flushed lines) and the line sits at
 * no more than this share of it, and no less than the floor, above which
 * no L1 or L2 hit reads. */
#define MEMLAT_LINE_OF_DRAM 0.75
#define MEMLAT_LINE_FLOOR_NS 35.0
/* Past this, the probe met an interrupt or a page fault, not a cache miss. */
#define MEMLAT_MAX_NS 400.0
/* Independent misses overlap: 512 MiB of random loads, 185 ns a load
 * dependent, 11 ns a load independent, on this EPYC: ~16 in flight. */
#define MEMLAT_PARALLEL 16.0f

/* Once per process: the TSC's rate against CLOCK_MONOTONIC, the
 * probe's own cost on a line in L1 and DRAM's latency (~0.1 ms).  0, or -ENOTSUP where the TSC
 * is not usable (no invariant TSC): then every load counts as a hit. */
int memlat_init(void);
/* What memlat_init measured, as numbers for the processes this one starts
 * (probes.h): the TSC's ticks a ns, a probe's ticks, where misses start.
 * 0, or -ENOTSUP when it measured nothing (no invariant TSC). */
#define MEMLAT_PROBES 3
int memlat_probes_get(double v[MEMLAT_PROBES]);
/* The TSC's ticks a ns, measured or set; 0 where the TSC is not used. */
double memlat_tsc_per_ns(void);
/* Instead of memlat_init: numbers memlat_probes_get gave on this machine.
 * 0, or -EINVAL (not usable here: none set). */
int memlat_probes_set(const double v[MEMLAT_PROBES]);

/* Where a miss starts, in ns past an L2 hit: MEMLAT_MIN_NS, or below it
 * where memlat_init measured DRAM faster than this VM's. */
double memlat_line_ns(void);

/* TSC ticks a one-byte load of p took, the probe's fences included.  p must
 * be readable (peek.h reads in place under a rescue). */
static inline uint32_t memlat_time_load(const void *p)
{
	_mm_lfence();
	uint64_t t0 = __rdtsc();
	_mm_lfence();
	(void)*(const volatile uint8_t *)p;
	_mm_lfence();
	uint64_t t1 = __rdtsc();
	return (uint32_t)(t1 - t0);
}

/* Nanoseconds a load that took ticks (memlat_time_load) spent past an L2
 * hit: 0 for a near hit, an unusable TSC, or a probe an interrupt met. */
double memlat_extra_ns(uint32_t ticks);

/* memlat_time_load of p, checked: a slow probe is timed again on a line
 * just read (the caller's stack), and where that one is slow too the core
 * was held up, not the load (a VM exit, the sibling thread), and the probe
 * reads 0 ticks.  A window probes ~20 lines: one such delay in a few
 * windows weighed L1 loops ~4% light. */
uint32_t memlat_time_probe(const void *p);

#endif
