/* pmu_sysfs: what the kernel says about its PMUs, under
 * <root>/bus/event_source/devices (root /sys, or a test's fake tree).
 * Start-up only: not async-signal-safe. */
#ifndef WITCH_PMU_SYSFS_H
#define WITCH_PMU_SYSFS_H

#include <linux/perf_event.h>
#include <stdint.h>

/* Tests: read <root>/bus/... instead of /sys/bus/...; NULL: /sys again. */
void pmu_sysfs_set_root(const char *root);
const char *pmu_sysfs_root(void);

/* The perf type the kernel gave a PMU ("cpu", "ibs_op"): 0 or -errno. */
int pmu_sysfs_type(const char *pmu, uint32_t *type);

/* A one-bit format of a PMU ("config:19", "config2:0") set in attr:
 * 1 when set, 0 when the PMU has no such format, -errno when unreadable. */
int pmu_sysfs_format_bit(const char *pmu, const char *format, struct perf_event_attr *attr);

/* Is there any PMU that could give precise memory samples (cpu, cpu_core,
 * cpu_atom, ibs_op)?  Without one, libpfm4 need not be loaded at all.
 * Asked of sysfs once a root (four lookups, ~60 us of a process's start
 * here), or told by the process that started this one (probes.h). */
int pmu_sysfs_has_cpu_pmu(void);
void pmu_sysfs_note_cpu_pmu(int has);

/* A small sysfs or procfs file holding one decimal integer: 0 or -errno. */
int pmu_sysfs_read_int(const char *path, long long *v);

#endif
