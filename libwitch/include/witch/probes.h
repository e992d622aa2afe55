/* probes: the machine's measurements, handed from a profiled process to
 * the processes it starts.
 *
 * costmodel_init and memlat_init time the core (its clock, dispatch width,
 * ALU rate, rep stos, a locked op, a failed store forward) and the caches
 * (the TSC, a DRAM miss): ~0.8 ms of every process's start here, the same
 * answers for every process of a tree on one machine; so does whether the
 * kernel drives a CPU PMU at all (pmu_sysfs_has_cpu_pmu), and whether its
 * debug registers trap, what a hit costs and whether SIGTRAP breakpoints
 * open (watchpoint_probe: two perf_event_opens and five #DB round trips,
 * ~0.15 ms where they trap), and what an armed one adds to a page fault
 * and to a byte copied (drcost_price, ~0.2 ms, where they trap and the
 * process arms them).  The first process
 * measures and puts the results in its environment, WITCH_PROBES (through
 * the C library's setenv, as profile.h's WITCH_OUTPUT: a shell exports
 * its own copy); a process that finds them there, written on this machine
 * since its boot by this format, takes them and measures nothing.  The
 * boot is told by when it began by the wall clock (CLOCK_REALTIME less
 * CLOCK_BOOTTIME, two vDSO reads) within 1 s, else by the kernel's boot_id
 * (read from procfs: ~20-40 us a process here, the wall clock may have
 * been stepped since).  A value that is not that is ignored: the process
 * measures, and hands down its own.  The measures a long run takes again
 * (costmodel_remeasure) go on as before.
 *
 * At start-up only (getenv, setenv, open): not in a signal handler.
 */
#ifndef WITCH_PROBES_H
#define WITCH_PROBES_H

#define PROBES_ENV "WITCH_PROBES"

/* The parent's measurements, if WITCH_PROBES holds this machine's: 0 and
 * costmodel, memlat (only if the parent had a TSC to use) and pmu_sysfs's
 * answer set, else -EINVAL or -ENOENT and nothing but perhaps costmodel's
 * set (the caller then measures); -ENODATA: the short form, the watchpoint
 * probe's "never trap" alone (watchpoint_probe_handed_no_traps), and
 * pmu_sysfs's answer. */
int probes_take_inherited(void);
/* This process's measurements into its environment for what it starts.
 * 0 or -errno. */
int probes_hand_down(void);
/* Where debug registers never trap, that alone, for what this process
 * starts or becomes by exec (a wrapper: env, valgrind's launcher): they
 * run unprofiled without probing or saying it again, the line said once
 * here.  The measurements the runtime takes later are not taken, so no
 * more is handed.  0 or -errno. */
int probes_hand_down_no_traps(void);

#endif
