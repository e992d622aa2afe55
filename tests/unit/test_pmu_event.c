/* Unit test of the pmu_event module: table-driven like libpfm4's
 * validate_x86.c.  Each row is (CPU model forced with LIBPFM_FORCE_PMU,
 * fake sysfs tree, client, event string, period) with the expected result:
 * the perf_event_attr fields libwitch relies on, or the negative errno and
 * the exact one-line reason.  libpfm4 reads LIBPFM_FORCE_PMU once, in
 * pfm_initialize, so every row runs in a fresh fork()ed child.
 *
 * Expected encodings come from Intel's event tables (EventSel, UMask; the
 * raw config perf takes is UMask << 8 | EventSel, no other bits):
 *   MEM_INST_RETIRED.ALL_STORES  D0H 82H   (Skylake .. Sapphire Rapids, Golden Cove)
 *   MEM_INST_RETIRED.ALL_LOADS   D0H 81H
 *   MEM_INST_RETIRED.ANY         D0H 83H   (loads | stores)
 *   MEM_UOPS_RETIRED.ALL_STORES  D0H 82H   (Haswell, Broadwell, Gracemont)
 *   MEM_UOPS_RETIRED.ALL_LOADS   D0H 81H
 *   MEM_LOAD_RETIRED.L1_HIT      D1H 01H
 * and, for AMD IBS, from the kernel's ibs_op sysfs formats (cnt_ctl =
 * config:19, swfilt = config2:0) which the fake tree provides.
 *
 * Then, in this process: pmu_event_explain wording, pmu_event_default,
 * pmu_event_open on events this machine has or lacks, and the fallback
 * this machine (no PMU) must give: pmu_event_probe with a forced Skylake
 * encoding fails with exactly "no precise store event on this CPU
 * (perf_event_open: ENOENT)" (or the perf_event_paranoid text when not
 * root and paranoid >= 3); unforced, the reason starts "no precise".
 *
 * Failures print the row's line.  Exit status 0 on success.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <perfmon/pfmlib_perf_event.h>

#include "witch/pmu_event.h"
#include "witch/pmu_sysfs.h"
#include "witch/pmu_ring.h"

#include "check.h"

#define EVSEL(event, umask) ((uint64_t)(umask) << 8 | (uint64_t)(event))
#define BASIC (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR)
#define IBS_ST (BASIC | PERF_SAMPLE_RAW)
#define CNT_CTL (1ull << 19)

/* ------------------------------------------------------------------ */
/* Fake sysfs trees                                                     */

enum tree {
	T_NONE, T_CPU, T_CPU9, T_HYBRID, T_IBS, T_IBS_NOSWFILT, T_IBS_BARE, T_IBS_BADFMT, T_MAX
};

static const struct {
	const char *name;
	const char *files[6][2]; /* path under bus/event_source/devices, content */
} trees[T_MAX] = {
	[T_NONE] = {"none", {{NULL, NULL}}},
	[T_CPU] = {"cpu", {{"cpu/type", "4\n"}}},
	/* a kernel gives "cpu" type 4 (PERF_TYPE_RAW); 9 shows the type is
	 * taken from sysfs and not assumed */
	[T_CPU9] = {"cpu9", {{"cpu/type", "9\n"}}},
	/* hybrid: cpu_core registers as PERF_TYPE_RAW, cpu_atom gets its own */
	[T_HYBRID] = {"hybrid", {{"cpu_core/type", "4\n"}, {"cpu_atom/type", "10\n"}}},
	[T_IBS] = {"ibs",
		   {{"ibs_op/type", "11\n"},
		    {"ibs_op/format/cnt_ctl", "config:19\n"},
		    {"ibs_op/format/swfilt", "config2:0\n"},
		    {"ibs_op/format/l3missonly", "config:16\n"}}},
	[T_IBS_NOSWFILT] = {"ibs-noswfilt",
			    {{"ibs_op/type", "11\n"}, {"ibs_op/format/cnt_ctl", "config:19\n"}}},
	[T_IBS_BARE] = {"ibs-bare", {{"ibs_op/type", "11\n"}}},
	[T_IBS_BADFMT] = {"ibs-badfmt",
			  {{"ibs_op/type", "11\n"}, {"ibs_op/format/cnt_ctl", "config:x\n"}}},
};

static char tree_root[T_MAX][256];

static void write_file(const char *path, const char *text)
{
	char dir[2400];
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *s = dir + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			mkdir(dir, 0755);
			*s = '/';
		}
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

static void make_trees(const char *base)
{
	for (int t = 0; t < T_MAX; t++) {
		snprintf(tree_root[t], sizeof(tree_root[t]), "%s/%s", base, trees[t].name);
		char path[2400];
		snprintf(path, sizeof(path), "%s/bus/event_source/devices/.keep", tree_root[t]);
		write_file(path, "");
		for (int i = 0; i < 6 && trees[t].files[i][0]; i++) {
			snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s", tree_root[t],
				 trees[t].files[i][0]);
			write_file(path, trees[t].files[i][1]);
		}
	}
}

/* ------------------------------------------------------------------ */
/* The table                                                            */

struct want_attr {
	uint32_t type;
	uint64_t config, config2;
	uint32_t precise;
	uint64_t sample_type;
	uint64_t period;
	int exclude_kernel; /* exclude_hv is expected equal */
	const char *name;
};

struct row {
	int line;
	const char *model; /* LIBPFM_FORCE_PMU; NULL: unset */
	enum tree tree;
	enum config_client client;
	const char *event;
	uint64_t period;
	int rc;
	/* rc < 0: the exact reason; "@ROOT@" stands for the fake tree's root
	 * and "@PFM@" for pfm_strerror(pfm_err) */
	const char *why;
	int pfm_err;
	int n;
	int ibs;
	struct want_attr a[2];
	/* rows for PMUs libpfm4 may lack (Alder Lake: libpfm4 4.14+): when
	 * the installed libpfm4 does not know `needs`, expect why_old instead */
	const char *needs;
	const char *why_old;
};

#define D CONFIG_CLIENT_DEAD
#define S CONFIG_CLIENT_SILENT
#define L CONFIG_CLIENT_LOAD

/* An accepted Intel row: one PEBS event, precise up to 3, kernel excluded. */
#define PEBS(model, tree, client, event, period, type, config, wperiod, name)                    \
	{__LINE__, model, tree, client, event, period, 0, NULL, 0, 1, 0,                           \
	 {{type, config, 0, 3, BASIC, wperiod, 1, name}}, NULL, NULL}
/* A refused row. */
#define BAD(model, tree, client, event, period, rc, why) \
	{__LINE__, model, tree, client, event, period, rc, why, 0, 0, 0, {{0}}, NULL, NULL}
#define BADPFM(model, client, event, rc, why, err) \
	{__LINE__, model, T_CPU, client, event, 0, rc, why, err, 0, 0, {{0}}, NULL, NULL}
/* An accepted IBS row. */
#define IBSROW(model, tree, client, event, period, config, config2, wperiod, excl)        \
	{__LINE__, model, tree, client, event, period, 0, NULL, 0, 1, 1,                     \
	 {{11, config, config2, 2, IBS_ST, wperiod, excl, "ibs_op"}}, NULL, NULL}

#define NO_CORE_PMU(kind) \
	"no precise " kind " event on this CPU (libpfm4 recognises no core PMU on it)"
#define NOT_MEM "not a memory access event: PEBS records carry no data address for it"
#define BAD_AT "expected @ and a whole number of events per sample at the end"

static const struct row rows[] = {
	/* Defaults per CPU model and client. */
	PEBS("skl", T_CPU, D, NULL, 0, 4, EVSEL(0xd0, 0x82), PMU_EVENT_STORE_PERIOD,
	     "skl::MEM_INST_RETIRED:ALL_STORES"),
	PEBS("skl", T_NONE, S, NULL, 0, PERF_TYPE_RAW, EVSEL(0xd0, 0x82), PMU_EVENT_STORE_PERIOD,
	     "skl::MEM_INST_RETIRED:ALL_STORES"),
	PEBS("skl", T_CPU9, D, NULL, 0, 9, EVSEL(0xd0, 0x82), PMU_EVENT_STORE_PERIOD,
	     "skl::MEM_INST_RETIRED:ALL_STORES"),
	PEBS("skl", T_CPU, L, NULL, 0, 4, EVSEL(0xd0, 0x81), PMU_EVENT_LOAD_PERIOD,
	     "skl::MEM_INST_RETIRED:ALL_LOADS"),
	PEBS("skx", T_CPU, D, NULL, 0, 4, EVSEL(0xd0, 0x82), PMU_EVENT_STORE_PERIOD,
	     "skx::MEM_INST_RETIRED:ALL_STORES"),
	PEBS("icl", T_CPU, D, NULL, 0, 4, EVSEL(0xd0, 0x82), PMU_EVENT_STORE_PERIOD,
	     "icl::MEM_INST_RETIRED:ALL_STORES"),
	PEBS("icx", T_CPU, L, NULL, 0, 4, EVSEL(0xd0, 0x81), PMU_EVENT_LOAD_PERIOD,
	     "icx::MEM_INST_RETIRED:ALL_LOADS"),
	PEBS("spr", T_CPU, S, NULL, 0, 4, EVSEL(0xd0, 0x82), PMU_EVENT_STORE_PERIOD,
	     "spr::MEM_INST_RETIRED:ALL_STORES"),
	PEBS("spr", T_CPU, L, NULL, 0, 4, EVSEL(0xd0, 0x81), PMU_EVENT_LOAD_PERIOD,
	     "spr::MEM_INST_RETIRED:ALL_LOADS"),
	PEBS("hsw", T_CPU, D, NULL, 0, 4, EVSEL(0xd0, 0x82), PMU_EVENT_STORE_PERIOD,
	     "hsw::MEM_UOPS_RETIRED:ALL_STORES"),
	PEBS("hsw", T_CPU, L, NULL, 0, 4, EVSEL(0xd0, 0x81), PMU_EVENT_LOAD_PERIOD,
	     "hsw::MEM_UOPS_RETIRED:ALL_LOADS"),
	PEBS("bdw", T_CPU, S, NULL, 0, 4, EVSEL(0xd0, 0x82), PMU_EVENT_STORE_PERIOD,
	     "bdw::MEM_UOPS_RETIRED:ALL_STORES"),
	/* Alder Lake: Golden Cove on cpu_core, Gracemont on cpu_atom. */
	{__LINE__, "adl_glc", T_HYBRID, D, NULL, 0, 0, NULL, 0, 1, 0,
	 {{4, EVSEL(0xd0, 0x82), 0, 3, BASIC, PMU_EVENT_STORE_PERIOD, 1,
	   "adl_glc::MEM_INST_RETIRED:ALL_STORES"}},
	 "adl_glc", NO_CORE_PMU("store")},
	{__LINE__, "adl_grt", T_HYBRID, L, NULL, 0, 0, NULL, 0, 1, 0,
	 {{10, EVSEL(0xd0, 0x81), 0, 3, BASIC, PMU_EVENT_LOAD_PERIOD, 1,
	   "adl_grt::MEM_UOPS_RETIRED:ALL_LOADS"}},
	 "adl_grt", NO_CORE_PMU("load")},
	/* libpfm4 knows Sandy Bridge, whose PEBS has no store addresses. */
	BAD("snb", T_CPU, D, NULL, 0, -ENOENT,
	    "no precise store event on this CPU (libwitch knows none for libpfm4 PMU snb)"),
	BAD("no_such_pmu", T_CPU, D, NULL, 0, -ENOENT, NO_CORE_PMU("store")),

	/* AMD: IBS op sampling from sysfs, whatever libpfm4 says. */
	IBSROW("amd64_fam19h_zen3", T_IBS, D, NULL, 0, CNT_CTL, 1, PMU_EVENT_IBS_STORE_PERIOD, 1),
	IBSROW("amd64_fam17h_zen2", T_IBS, S, NULL, 0, CNT_CTL, 1, PMU_EVENT_IBS_STORE_PERIOD, 1),
	IBSROW("amd64_fam19h_zen3", T_IBS_NOSWFILT, D, NULL, 0, CNT_CTL, 0,
	       PMU_EVENT_IBS_STORE_PERIOD, 0),
	IBSROW("amd64_fam19h_zen3", T_IBS_BARE, L, NULL, 0, 0, 0, PMU_EVENT_IBS_LOAD_PERIOD, 0),
	BAD("amd64_fam19h_zen3", T_NONE, D, NULL, 0, -ENOENT,
	    "no precise store event on this CPU (no ibs_op PMU in @ROOT@/bus/event_source/devices)"),
	BAD("amd64_fam19h_zen3", T_IBS_BADFMT, D, NULL, 0, -ENODEV,
	    "no precise store event on this CPU (cannot read the ibs_op formats in "
	    "@ROOT@/bus/event_source/devices: EINVAL)"),
	BADPFM("amd64_fam19h_zen3", D, "RETIRED_INSTRUCTIONS", -EINVAL,
	       "AMD core events carry no data address; use ibs_op", 0),
	/* ibs_op by name needs no libpfm4 and no forced model. */
	IBSROW(NULL, T_IBS, D, "ibs_op", 0, CNT_CTL, 1, PMU_EVENT_IBS_STORE_PERIOD, 1),
	IBSROW(NULL, T_IBS, L, "ibs_op@5000000", 0, CNT_CTL, 1, 5000000, 1),
	IBSROW(NULL, T_IBS, D, "ibs_op", 160000, CNT_CTL, 1, 160000, 1),
	BAD(NULL, T_IBS, D, "ibs_op@5000011", 0, -EINVAL,
	    "period 5000011: IBS counts ops in steps of 16; use a multiple of 16 such as 5000016"),
	BAD(NULL, T_NONE, D, "ibs_op", 0, -ENOENT, "no ibs_op PMU in @ROOT@/bus/event_source/devices"),
	BAD(NULL, T_IBS, D, "ibs_op,MEM_INST_RETIRED:ALL_STORES", 0, -EINVAL,
	    "ibs_op cannot be combined with other events"),

	/* Events given in libpfm4 syntax, and periods. */
	PEBS("skl", T_CPU, D, "MEM_INST_RETIRED:ALL_STORES", 0, 4, EVSEL(0xd0, 0x82),
	     PMU_EVENT_STORE_PERIOD, "skl::MEM_INST_RETIRED:ALL_STORES"),
	PEBS("skl", T_CPU, D, "MEM_INST_RETIRED:ALL_STORES@7000003", 0, 4, EVSEL(0xd0, 0x82), 7000003,
	     "skl::MEM_INST_RETIRED:ALL_STORES"),
	PEBS("skl", T_CPU, D, "MEM_INST_RETIRED:ALL_STORES", 6000001, 4, EVSEL(0xd0, 0x82), 6000001,
	     "skl::MEM_INST_RETIRED:ALL_STORES"),
	PEBS("skl", T_CPU, D, "MEM_INST_RETIRED:ALL_STORES@7000003", 7000003, 4, EVSEL(0xd0, 0x82),
	     7000003, "skl::MEM_INST_RETIRED:ALL_STORES"),
	PEBS("skl", T_CPU, D, "MEM_INST_RETIRED:ALL_STORES:period=7000003", 0, 4, EVSEL(0xd0, 0x82),
	     7000003, "skl::MEM_INST_RETIRED:ALL_STORES"),
	PEBS("hsw", T_CPU, L, "hsw::MEM_UOPS_RETIRED:ALL_LOADS@1000", 0, 4, EVSEL(0xd0, 0x81), 1000,
	     "hsw::MEM_UOPS_RETIRED:ALL_LOADS"),
	PEBS("skl", T_CPU, D, "MEM_INST_RETIRED:ANY", 0, 4, EVSEL(0xd0, 0x83), PMU_EVENT_STORE_PERIOD,
	     "skl::MEM_INST_RETIRED:ANY"),
	PEBS("skl", T_CPU, L, "MEM_INST_RETIRED:ANY", 0, 4, EVSEL(0xd0, 0x83), PMU_EVENT_LOAD_PERIOD,
	     "skl::MEM_INST_RETIRED:ANY"),
	PEBS("skl", T_CPU, L, "MEM_LOAD_RETIRED:L1_HIT", 0, 4, EVSEL(0xd1, 0x01), PMU_EVENT_LOAD_PERIOD,
	     "skl::MEM_LOAD_RETIRED:L1_HIT"),
	{__LINE__, "skl", T_CPU, D, "MEM_INST_RETIRED:ALL_STORES:precise=1", 0, 0, NULL, 0, 1, 0,
	 {{4, EVSEL(0xd0, 0x82), 0, 1, BASIC, PMU_EVENT_STORE_PERIOD, 1,
	   "skl::MEM_INST_RETIRED:ALL_STORES"}}, NULL, NULL},
	{__LINE__, "skl", T_CPU, D, "MEM_INST_RETIRED:ALL_STORES,MEM_INST_RETIRED:ANY@2000003", 0, 0,
	 NULL, 0, 2, 0,
	 {{4, EVSEL(0xd0, 0x82), 0, 3, BASIC, 2000003, 1, "skl::MEM_INST_RETIRED:ALL_STORES"},
	  {4, EVSEL(0xd0, 0x83), 0, 3, BASIC, 2000003, 1, "skl::MEM_INST_RETIRED:ANY"}}, NULL, NULL},

	/* Refused events. */
	BADPFM("skl", D, "FOO_BAR", -ENOENT, "libpfm4 knows no such event on this CPU (libpfm4: @PFM@)",
	       PFM_ERR_NOTFOUND),
	BADPFM("hsw", D, "MEM_INST_RETIRED:ALL_STORES", -ENOENT,
	       "libpfm4 knows no such event on this CPU (libpfm4: @PFM@)", PFM_ERR_NOTFOUND),
	BADPFM("skl", D, "MEM_INST_RETIRED:NOPE", -EINVAL, "libpfm4 cannot encode it (libpfm4: @PFM@)",
	       PFM_ERR_ATTR),
	BADPFM("skl", D, "INST_RETIRED:PREC_DIST", -EINVAL, NOT_MEM, 0),
	BADPFM("skl", D, "UOPS_ISSUED:ANY", -EINVAL, NOT_MEM, 0),
	BADPFM("skl", D, "MEM_LOAD_RETIRED:L1_HIT", -EINVAL,
	       "counts loads only; client dead samples stores", 0),
	BADPFM("skl", S, "MEM_INST_RETIRED:ALL_LOADS", -EINVAL,
	       "counts loads only; client silent samples stores", 0),
	BADPFM("skl", L, "MEM_INST_RETIRED:ALL_STORES", -EINVAL,
	       "counts stores only; client load samples loads", 0),
	BADPFM("skl", D, "MEM_INST_RETIRED:ALL_STORES:freq=100", -EINVAL,
	       "a sampling frequency (:freq=) cannot be used: the PMU sampler takes every Nth "
	       "event; give the period as @N", 0),
	BAD("skl", T_CPU, D, "MEM_INST_RETIRED:ALL_STORES@7000003", 6000001, -EINVAL,
	    "the period is given twice (6000001 and @7000003)"),
	BAD("skl", T_CPU, D, "MEM_INST_RETIRED:ALL_STORES:period=7000003", 6000001, -EINVAL,
	    "the period is given twice (6000001 and :period=7000003)"),
	BAD("skl", T_CPU, D, "MEM_INST_RETIRED:ALL_STORES@", 0, -EINVAL, BAD_AT),
	BAD("skl", T_CPU, D, "MEM_INST_RETIRED:ALL_STORES@12x", 0, -EINVAL, BAD_AT),
	BAD("skl", T_CPU, D, "MEM_INST_RETIRED:ALL_STORES@-5", 0, -EINVAL, BAD_AT),
	BAD("skl", T_CPU, D, "MEM_INST_RETIRED:ALL_STORES@99999999999999999999", 0, -EINVAL, BAD_AT),
	BAD("skl", T_CPU, D, "MEM_INST_RETIRED:ALL_STORES@999", 0, -EINVAL,
	    "period @999: expected at least 1000 events per sample"),
	BAD("skl", T_CPU, D, "A,B,C", 0, -EINVAL, "at most 2 events (one per core type)"),
	BAD("skl", T_CPU, D, ",MEM_INST_RETIRED:ALL_STORES", 0, -EINVAL, "an empty event name"),
	BAD("skl", T_CPU, D, "", 0, -EINVAL, "an empty event name"),
};

static int pfm_knows(const char *name)
{
	pfm_pmu_t p;
	pfm_for_all_pmus(p)
	{
		pfm_pmu_info_t info;
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm_get_pmu_info(p, &info) == PFM_SUCCESS && strcmp(info.name, name) == 0)
			return 1;
	}
	return 0;
}

/* Replace @ROOT@ and @PFM@ in an expected reason. */
static void expand(char *out, size_t len, const char *in, const char *root, const char *pfm)
{
	size_t o = 0;
	while (*in && o + 1 < len) {
		const char *sub = NULL;
		if (strncmp(in, "@ROOT@", 6) == 0)
			sub = root, in += 6;
		else if (strncmp(in, "@PFM@", 5) == 0)
			sub = pfm, in += 5;
		if (sub) {
			o += (size_t)snprintf(out + o, len - o, "%s", sub);
			if (o >= len)
				o = len - 1;
			continue;
		}
		out[o++] = *in++;
	}
	out[o] = '\0';
}

static void check_row_child(const struct row *r)
{
	char why[512], want_why[512];
	struct pmu_event ev;

	pmu_sysfs_set_root(tree_root[r->tree]);
	int rc = pmu_event_encode(r->client, r->event, r->period, &ev, why, sizeof(why));

	int want_rc = r->rc;
	const char *want = r->why;
	if (r->needs) {
		pfm_initialize(); /* already done by encode; returns the same */
		if (!pfm_knows(r->needs)) {
			printf("test_pmu_event: line %d: libpfm4 has no %s PMU; checking the "
			       "fallback instead\n", r->line, r->needs);
			want_rc = -ENOENT;
			want = r->why_old;
		}
	}
	CHECK(r->line, rc == want_rc, "rc %d (%s), expected %d", rc, why, want_rc);
	if (want_rc < 0) {
		expand(want_why, sizeof(want_why), want, tree_root[r->tree], pfm_strerror(r->pfm_err));
		CHECK(r->line, strcmp(why, want_why) == 0, "reason\n  \"%s\", expected\n  \"%s\"", why,
		      want_why);
		return;
	}
	if (rc < 0)
		return;
	CHECK(r->line, why[0] == '\0', "a reason on success: %s", why);
	CHECK(r->line, ev.n == r->n, "n %d, expected %d", ev.n, r->n);
	CHECK(r->line, ev.ibs == r->ibs, "ibs %d, expected %d", ev.ibs, r->ibs);
	uint32_t op = r->client == CONFIG_CLIENT_LOAD ? PMU_OP_LOAD : PMU_OP_STORE;
	CHECK(r->line, ev.want_op == op, "want_op %u, expected %u", ev.want_op, op);
	for (int i = 0; i < ev.n && i < r->n; i++) {
		const struct perf_event_attr *a = &ev.attr[i];
		const struct want_attr *w = &r->a[i];
		CHECK(r->line, a->type == w->type, "[%d] type %u, expected %u", i, a->type, w->type);
		CHECK(r->line, a->config == w->config, "[%d] config %#llx, expected %#llx", i,
		      (unsigned long long)a->config, (unsigned long long)w->config);
		CHECK(r->line, a->config1 == 0, "[%d] config1 %#llx", i, (unsigned long long)a->config1);
		CHECK(r->line, a->config2 == w->config2, "[%d] config2 %#llx, expected %#llx", i,
		      (unsigned long long)a->config2, (unsigned long long)w->config2);
		CHECK(r->line, a->precise_ip == w->precise, "[%d] precise_ip %u, expected %u", i,
		      (unsigned)a->precise_ip, w->precise);
		CHECK(r->line, a->sample_type == w->sample_type, "[%d] sample_type %#llx, expected %#llx",
		      i, (unsigned long long)a->sample_type, (unsigned long long)w->sample_type);
		CHECK(r->line, a->sample_period == w->period && !a->freq,
		      "[%d] sample_period %llu freq %u, expected %llu", i,
		      (unsigned long long)a->sample_period, (unsigned)a->freq,
		      (unsigned long long)w->period);
		CHECK(r->line, a->exclude_kernel == (unsigned)w->exclude_kernel &&
				       a->exclude_hv == (unsigned)w->exclude_kernel && !a->exclude_user,
		      "[%d] exclude_kernel/hv/user %u/%u/%u, expected %d/%d/0", i, a->exclude_kernel,
		      a->exclude_hv, a->exclude_user, w->exclude_kernel, w->exclude_kernel);
		CHECK(r->line, a->disabled && a->wakeup_events == 1 && !a->inherit &&
				       a->size == sizeof(*a),
		      "[%d] disabled %u wakeup_events %u inherit %u size %u", i, a->disabled,
		      a->wakeup_events, a->inherit, a->size);
		CHECK(r->line, strcmp(ev.name[i], w->name) == 0, "[%d] name %s, expected %s", i,
		      ev.name[i], w->name);
	}
}

static void run_rows(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0) {
			FAIL(r->line, "fork: %s", strerror(errno));
			continue;
		}
		if (pid == 0) {
			check_failures = 0; /* count this row only */
			if (r->model)
				setenv("LIBPFM_FORCE_PMU", r->model, 1);
			else
				unsetenv("LIBPFM_FORCE_PMU");
			check_row_child(r);
			fflush(NULL);
			_exit(check_failures ? 1 : 0);
		}
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
			check_failures++; /* the child printed why */
	}
}

/* ------------------------------------------------------------------ */
/* Reasons for perf_event_open failures                                 */

static const struct {
	int line;
	int err, paranoid, ibs_kernel;
	enum config_client client;
	const char *why;
} explain_rows[] = {
	{__LINE__, -ENOENT, 2, 0, D, "no precise store event on this CPU (perf_event_open: ENOENT)"},
	{__LINE__, -ENOENT, 2, 0, L, "no precise load event on this CPU (perf_event_open: ENOENT)"},
	{__LINE__, -EOPNOTSUPP, 2, 0, S,
	 "no precise store event on this CPU (perf_event_open: EOPNOTSUPP)"},
	{__LINE__, -EINVAL, -1, 1, D, "no precise store event on this CPU (perf_event_open: EINVAL)"},
	{__LINE__, -EBUSY, 2, 0, D, "cannot open the precise store event (perf_event_open: EBUSY)"},
	{__LINE__, -EACCES, 3, 0, D,
	 "perf_event_open: EACCES: kernel.perf_event_paranoid is 3, which refuses perf events to "
	 "programs without CAP_PERFMON; run `sysctl kernel.perf_event_paranoid=2` as root, or give "
	 "the program CAP_PERFMON"},
	{__LINE__, -EACCES, 4, 1, L,
	 "perf_event_open: EACCES: kernel.perf_event_paranoid is 4, which refuses perf events to "
	 "programs without CAP_PERFMON; run `sysctl kernel.perf_event_paranoid=2` as root, or give "
	 "the program CAP_PERFMON"},
	{__LINE__, -EACCES, 2, 1, D,
	 "perf_event_open: EACCES: IBS on this kernel cannot leave out kernel samples and "
	 "kernel.perf_event_paranoid is 2; run `sysctl kernel.perf_event_paranoid=1` as root, give "
	 "the program CAP_PERFMON, or use a kernel whose ibs_op PMU has the swfilt format"},
	{__LINE__, -EPERM, 2, 0, D,
	 "perf_event_open: EPERM although kernel.perf_event_paranoid is 2: a seccomp filter, "
	 "container or security module refuses it; allow perf_event_open there, or give the "
	 "program CAP_PERFMON"},
	{__LINE__, -EACCES, 1, 1, D,
	 "perf_event_open: EACCES although kernel.perf_event_paranoid is 1: a seccomp filter, "
	 "container or security module refuses it; allow perf_event_open there, or give the "
	 "program CAP_PERFMON"},
	{__LINE__, -EPERM, PMU_EVENT_PARANOID_UNKNOWN, 0, D,
	 "perf_event_open: EPERM and kernel.perf_event_paranoid is unreadable; allow user-space "
	 "perf events with `sysctl kernel.perf_event_paranoid=2` as root, or give the program "
	 "CAP_PERFMON"},
};

static void check_explain(void)
{
	for (size_t i = 0; i < sizeof(explain_rows) / sizeof(explain_rows[0]); i++) {
		char why[512];
		pmu_event_explain(explain_rows[i].err, explain_rows[i].paranoid,
				  explain_rows[i].ibs_kernel, explain_rows[i].client, why, sizeof(why));
		CHECK(explain_rows[i].line, strcmp(why, explain_rows[i].why) == 0,
		      "reason\n  \"%s\", expected\n  \"%s\"", why, explain_rows[i].why);
	}
}

/* ------------------------------------------------------------------ */
/* The default table itself (independent of which libpfm4 is installed) */

static const struct {
	int line;
	const char *pmu;
	enum config_client client;
	int rc;
	const char *event, *perf;
} default_rows[] = {
	{__LINE__, "adl_glc", D, 0, "MEM_INST_RETIRED:ALL_STORES", "cpu_core"},
	{__LINE__, "adl_glc", L, 0, "MEM_INST_RETIRED:ALL_LOADS", "cpu_core"},
	{__LINE__, "adl_grt", S, 0, "MEM_UOPS_RETIRED:ALL_STORES", "cpu_atom"},
	{__LINE__, "adl_grt", L, 0, "MEM_UOPS_RETIRED:ALL_LOADS", "cpu_atom"},
	{__LINE__, "hsw_ep", D, 0, "MEM_UOPS_RETIRED:ALL_STORES", "cpu"},
	{__LINE__, "bdw_ep", L, 0, "MEM_UOPS_RETIRED:ALL_LOADS", "cpu"},
	{__LINE__, "clx", D, 0, "MEM_INST_RETIRED:ALL_STORES", "cpu"},
	{__LINE__, "snb", D, -ENOENT, NULL, NULL},
	{__LINE__, "amd64_fam19h_zen4", D, -ENOENT, NULL, NULL},
	{__LINE__, "", D, -ENOENT, NULL, NULL},
};

static void check_defaults(void)
{
	for (size_t i = 0; i < sizeof(default_rows) / sizeof(default_rows[0]); i++) {
		const char *e = NULL, *p = NULL;
		int rc = pmu_event_default(default_rows[i].pmu, default_rows[i].client, &e, &p);
		CHECK(default_rows[i].line, rc == default_rows[i].rc, "rc %d", rc);
		if (rc == 0 && default_rows[i].rc == 0)
			CHECK(default_rows[i].line,
			      strcmp(e, default_rows[i].event) == 0 && strcmp(p, default_rows[i].perf) == 0,
			      "%s on %s, expected %s on %s", e, p, default_rows[i].event,
			      default_rows[i].perf);
	}
	/* The paper's periods: primes near 5M and 10M; IBS: 16 x a prime. */
	static const struct {
		int line;
		uint64_t v, near, mul;
	} periods[] = {
		{__LINE__, PMU_EVENT_STORE_PERIOD, 5000000, 1},
		{__LINE__, PMU_EVENT_LOAD_PERIOD, 10000000, 1},
		{__LINE__, PMU_EVENT_IBS_STORE_PERIOD, 5000000, 16},
		{__LINE__, PMU_EVENT_IBS_LOAD_PERIOD, 10000000, 16},
	};
	for (size_t i = 0; i < sizeof(periods) / sizeof(periods[0]); i++) {
		uint64_t v = periods[i].v, q = v / periods[i].mul;
		int prime = v % periods[i].mul == 0 && q > 1;
		for (uint64_t d = 2; prime && d * d <= q; d++)
			prime = q % d != 0;
		CHECK(periods[i].line, prime, "%llu is not %llu x a prime", (unsigned long long)v,
		      (unsigned long long)periods[i].mul);
		uint64_t off = v > periods[i].near ? v - periods[i].near : periods[i].near - v;
		CHECK(periods[i].line, off * 1000 < periods[i].near, "%llu is not near %llu",
		      (unsigned long long)v, (unsigned long long)periods[i].near);
	}
}

/* ------------------------------------------------------------------ */
/* perf_event_open on this machine                                      */

static int this_machine_has_pmu(void)
{
	return access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
	       access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0 ||
	       access("/sys/bus/event_source/devices/ibs_op", F_OK) == 0;
}

static int read_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = PMU_EVENT_PARANOID_UNKNOWN;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = PMU_EVENT_PARANOID_UNKNOWN;
		fclose(f);
	}
	return v;
}

static void check_open(void)
{
	/* A software event takes any precise_ip: the first try succeeds. */
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.exclude_kernel = 1;
	a.disabled = 1;
	a.precise_ip = 2;
	int precise = -1;
	int fd = pmu_event_open(&a, 0, &precise);
	if (fd == -EACCES || fd == -EPERM)
		printf("test_pmu_event: SKIP software event: %s\n", strerror(-fd));
	else {
		CHECK(__LINE__, fd >= 0 && precise == 2, "software event: fd %d precise %d", fd, precise);
		if (fd >= 0)
			close(fd);
	}
	/* A PMU type nobody registered: ENOENT at every precise level. */
	a.type = 1000;
	a.precise_ip = 3;
	fd = pmu_event_open(&a, 0, &precise);
	CHECK(__LINE__, fd == -ENOENT || fd == -EACCES, "type 1000: %d", fd);
}

/* The fallback the issue asks for, on this machine. */
static void check_fallback(void)
{
	if (this_machine_has_pmu()) {
		printf("test_pmu_event: SKIP fallback: this machine has a PMU\n");
		return;
	}
	int paranoid = read_paranoid();
	char want[512];
	if (geteuid() != 0 && paranoid >= 3)
		snprintf(want, sizeof(want),
			 "perf_event_open: EACCES: kernel.perf_event_paranoid is %d, which refuses "
			 "perf events to programs without CAP_PERFMON; run `sysctl "
			 "kernel.perf_event_paranoid=2` as root, or give the program CAP_PERFMON",
			 paranoid);
	else
		snprintf(want, sizeof(want),
			 "no precise store event on this CPU (perf_event_open: ENOENT)");

	/* A Skylake encoding with the real sysfs: the kernel has no PMU for it. */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		check_failures = 0;
		setenv("LIBPFM_FORCE_PMU", "skl", 1);
		char why[512];
		struct pmu_event ev;
		int rc = pmu_event_encode(CONFIG_CLIENT_DEAD, NULL, 0, &ev, why, sizeof(why));
		CHECK(__LINE__, rc == 0, "encode: %d %s", rc, why);
		if (rc == 0) {
			rc = pmu_event_probe(&ev, why, sizeof(why));
			CHECK(__LINE__, rc < 0, "probe opened a PEBS event on a machine without a PMU");
			CHECK(__LINE__, strcmp(why, want) == 0, "reason\n  \"%s\", expected\n  \"%s\"",
			      why, want);
			printf("test_pmu_event: fallback (forced skl): witch: %s; using software "
			       "sampling\n", why);
		}
		fflush(NULL);
		_exit(check_failures ? 1 : 0);
	}
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		FAIL(__LINE__, "forced-skl fallback child failed");

	/* Whatever this CPU is: the reason a user would read. */
	pid = fork();
	if (pid == 0) {
		check_failures = 0;
		unsetenv("LIBPFM_FORCE_PMU");
		char why[512];
		struct pmu_event ev;
		int rc = pmu_event_encode(CONFIG_CLIENT_DEAD, NULL, 0, &ev, why, sizeof(why));
		if (rc == 0)
			rc = pmu_event_probe(&ev, why, sizeof(why));
		CHECK(__LINE__, rc < 0, "the PMU sampler is usable on a machine without a PMU");
		int perm = strncmp(why, "perf_event_open: EACCES", 23) == 0 ||
			   strncmp(why, "perf_event_open: EPERM", 22) == 0;
		CHECK(__LINE__, strncmp(why, "no precise store event on this CPU (", 36) == 0 ||
					(perm && geteuid() != 0),
		      "reason \"%s\"", why);
		printf("test_pmu_event: fallback (this CPU): witch: %s; using software sampling\n",
		       why);
		fflush(NULL);
		_exit(check_failures ? 1 : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		FAIL(__LINE__, "this-CPU fallback child failed");
}

int main(void)
{
	char base[] = "/tmp/test_pmu_event.XXXXXX";
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 2;
	}
	make_trees(base);
	run_rows();
	check_explain();
	check_defaults();
	check_open();
	check_fallback();

	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		fprintf(stderr, "test_pmu_event: could not remove %s\n", base);
	if (check_failures)
		fprintf(stderr, "test_pmu_event: %d failures\n", check_failures);
	return check_failures != 0;
}
