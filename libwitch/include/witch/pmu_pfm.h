/* pmu_pfm: libpfm4, opened on demand, and the CPU it finds.
 *
 * dlopen'ed only when a PMU may be used: linking it would relocate ~2 MiB
 * of event tables into every profiled process, for nothing on the (many)
 * machines without a PMU.  Start-up only: not async-signal-safe.
 */
#ifndef WITCH_PMU_PFM_H
#define WITCH_PMU_PFM_H

#include <linux/perf_event.h>
/* After <linux/perf_event.h>: libpfm4's copy of the perf ABI steps aside. */
#include <perfmon/pfmlib_perf_event.h>
#include <stddef.h>

/* The libpfm4 functions the runtime calls; valid once pmu_pfm_ready is 0. */
struct pmu_pfm_fn {
	int (*initialize)(void);
	const char *(*strerror)(int);
	int (*get_pmu_info)(pfm_pmu_t, pfm_pmu_info_t *);
	int (*get_event_info)(int, pfm_os_t, pfm_event_info_t *);
	int (*get_event_attr_info)(int, int, pfm_os_t, pfm_event_attr_info_t *);
	int (*get_os_event_encoding)(const char *, int, pfm_os_t, void *);
};
extern struct pmu_pfm_fn pmu_pfm;

/* Load and initialize libpfm4 once: 0, or -ENODEV and `why` (one line:
 * "cannot load libpfm4: ..." or "cannot initialize libpfm4: ..."). */
int pmu_pfm_ready(char *why, size_t whylen);

/* The core PMUs libpfm4 found (or was forced to), and whether this is AMD. */
struct pmu_cpus {
	int n;
	char name[4][64];
	int amd;
};
void pmu_pfm_detect(struct pmu_cpus *d);

/* cpuid says AuthenticAMD (IBS needs no libpfm4 model). */
int pmu_pfm_cpu_is_amd(void);

#endif
