/* pmu_event: choosing and encoding the precise memory event of the PMU sampler.
 *
 * Defaults (libpfm4 PMU: stores / loads; data addresses from PEBS):
 *   hsw hsw_ep bdw bdw_ep        MEM_UOPS_RETIRED:ALL_STORES / ALL_LOADS
 *   skl skx clx icl icx spr      MEM_INST_RETIRED:ALL_STORES / ALL_LOADS
 *   adl_glc (perf PMU cpu_core)  MEM_INST_RETIRED:ALL_STORES / ALL_LOADS
 *   adl_grt (perf PMU cpu_atom)  MEM_UOPS_RETIRED:ALL_STORES / ALL_LOADS
 *   AMD (amd64_* or AuthenticAMD) perf's ibs_op PMU, not libpfm4 (libpfm4
 *        has no IBS encoder): type and format bits from sysfs; cnt_ctl set
 *        (count ops, not cycles); swfilt set when the kernel has it, which
 *        allows exclude_kernel, else kernel samples are opened for and
 *        dropped by the ring.
 * A forced model (LIBPFM_FORCE_PMU, read by pfm_initialize) decides alone;
 * otherwise a CPU libpfm4 does not know is taken as AMD when cpuid says so.
 * A given libpfm4 event must be a precise (PEBS) event of a core PMU whose
 * name starts MEM_ (only those carry a data address), and count the
 * client's access: stores for dead and silent, loads for load; events
 * counting both (MEM_INST_RETIRED:ANY) suit either.
 */
#ifndef WITCH_PMU_EVENT_H
#define WITCH_PMU_EVENT_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "witch/config.h"

#define PMU_EVENT_MAX 2
#define PMU_EVENT_NAME_MAX 128
#define PMU_EVENT_STORE_PERIOD 5000011ull     /* prime */
#define PMU_EVENT_LOAD_PERIOD 10000019ull     /* prime */
#define PMU_EVENT_IBS_STORE_PERIOD 5000144ull /* 16 x 312509 (prime) */
#define PMU_EVENT_IBS_LOAD_PERIOD 10000112ull /* 16 x 625007 (prime) */
#define PMU_EVENT_PERIOD_MIN 1000
#define PMU_EVENT_PARANOID_UNKNOWN (-100)

struct pmu_event {
	int n;                                 /* events to open per thread */
	struct perf_event_attr attr[PMU_EVENT_MAX];
	char name[PMU_EVENT_MAX][PMU_EVENT_NAME_MAX]; /* "skl::MEM_INST_RETIRED:ALL_STORES", "ibs_op" */
	int ibs;           /* AMD IBS op sampling: RAW holds the op registers */
	uint32_t want_op;  /* PMU_OP_STORE or PMU_OP_LOAD: what the client samples */
	uint64_t period;
	enum config_client client;
};

/* Fill ev with the perf_event_attr of every event to open per thread (two on a
 * hybrid Intel CPU: one per core type).  event NULL: this CPU's default for
 * the client (table below); else libpfm4 syntax, e.g.
 * "MEM_INST_RETIRED:ALL_STORES", "adl_grt::MEM_UOPS_RETIRED:ALL_STORES", up to
 * two joined by ',', or "ibs_op" for AMD IBS; "@N" at the very end sets the
 * period.  period: events per sample, 0 = the @N, else the default: primes
 * 5000011 (stores) and 10000019 (loads) as in the paper; on IBS, which counts
 * every op and needs a multiple of 16, 16 x prime: 5000144 and 10000112. attr:
 * type, config/config1/config2, sample_period, precise_ip = the highest level
 * to try (3 PEBS, 2 IBS; an explicit :precise=N lowers it), sample_type
 * IP|TID|ADDR (+RAW on IBS), exclude_kernel, exclude_hv, disabled,
 * wakeup_events = 1. Returns 0, or a negative errno and `why` = one line
 * without "witch: ".  -EINVAL: the event string or the period is wrong (a
 * setting error: name the setting, e.g. "WITCH_EVENT=<value>: " + why, since
 * why does not repeat the value).  -ENOENT, -ENODEV: this machine has no such
 * event; with event NULL why starts "no precise store event on this CPU (" (or
 * "load"), to be followed by "; using software sampling". Not async-signal-
 * safe (libpfm4, malloc); call at start-up. */
int pmu_event_encode(enum config_client client, const char *event, uint64_t period,
		     struct pmu_event *ev, char *why, size_t whylen);
/* Open every event of an encoded ev on the calling thread and close it;
 * records in ev the precise_ip each one got.  0, or a negative errno and why:
 * "no precise store event on this CPU (perf_event_open: ENOENT)", or for
 * EACCES/EPERM what to change (perf_event_paranoid, CAP_PERFMON), see
 * pmu_event_explain. */
int pmu_event_probe(struct pmu_event *ev, char *why, size_t whylen);
/* perf_event_open(attr, tid, cpu -1, O_CLOEXEC), lowering precise_ip from
 * attr's to 1 while the kernel answers EOPNOTSUPP or EINVAL. Returns the fd
 * (and *precise, if not NULL) or a negative errno. */
int pmu_event_open(const struct perf_event_attr *attr, pid_t tid, int *precise);
/* /proc/sys/kernel/perf_event_paranoid, or PMU_EVENT_PARANOID_UNKNOWN. */
int pmu_event_paranoid(void);
/* The reason line for a perf_event_open failure err (negative errno);
 * paranoid: /proc/sys/kernel/perf_event_paranoid, or
 * PMU_EVENT_PARANOID_UNKNOWN; ibs_kernel: the event cannot exclude kernel
 * samples (IBS without swfilt). */
void pmu_event_explain(int err, int paranoid, int ibs_kernel, enum config_client client,
		       char *why, size_t whylen);
/* The default event for a libpfm4 PMU name and the sysfs PMU whose type perf
 * wants for it.  0 or -ENOENT. */
int pmu_event_default(const char *pfm_pmu, enum config_client client, const char **event,
		      const char **perf_pmu);

#endif
