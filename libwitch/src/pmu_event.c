/* pmu_event: the precise memory event, chosen and encoded (see pmu_event.h). */
#include "witch/pmu_event.h"
#include "witch/perf_fd.h"
#include "witch/pmu_ring.h"
#include "witch/pmu_sysfs.h"
#include "witch/fdguard.h"

#include <cpuid.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "witch/pmu_pfm.h"

#define PMU_EVENT_STR_MAX 512
#define PMU_PRECISE_PEBS 3 /* "must have zero skid"; pmu_event_open walks down */
#define PMU_PRECISE_IBS 2  /* IBS ops carry their exact rip: levels 1 and 2 */

/* Default events per libpfm4 core PMU.  perf: the sysfs PMU whose type the
 * kernel gives the event (hybrid parts register cpu_core and cpu_atom with
 * their own types; elsewhere "cpu", PERF_TYPE_RAW). */
static const struct pmu_default {
	const char *pfm;
	const char *perf;
	const char *store;
	const char *load;
} pmu_defaults[] = {
	{"hsw", "cpu", "MEM_UOPS_RETIRED:ALL_STORES", "MEM_UOPS_RETIRED:ALL_LOADS"},
	{"hsw_ep", "cpu", "MEM_UOPS_RETIRED:ALL_STORES", "MEM_UOPS_RETIRED:ALL_LOADS"},
	{"bdw", "cpu", "MEM_UOPS_RETIRED:ALL_STORES", "MEM_UOPS_RETIRED:ALL_LOADS"},
	{"bdw_ep", "cpu", "MEM_UOPS_RETIRED:ALL_STORES", "MEM_UOPS_RETIRED:ALL_LOADS"},
	{"skl", "cpu", "MEM_INST_RETIRED:ALL_STORES", "MEM_INST_RETIRED:ALL_LOADS"},
	{"skx", "cpu", "MEM_INST_RETIRED:ALL_STORES", "MEM_INST_RETIRED:ALL_LOADS"},
	{"clx", "cpu", "MEM_INST_RETIRED:ALL_STORES", "MEM_INST_RETIRED:ALL_LOADS"},
	{"icl", "cpu", "MEM_INST_RETIRED:ALL_STORES", "MEM_INST_RETIRED:ALL_LOADS"},
	{"icx", "cpu", "MEM_INST_RETIRED:ALL_STORES", "MEM_INST_RETIRED:ALL_LOADS"},
	{"spr", "cpu", "MEM_INST_RETIRED:ALL_STORES", "MEM_INST_RETIRED:ALL_LOADS"},
	{"adl_glc", "cpu_core", "MEM_INST_RETIRED:ALL_STORES", "MEM_INST_RETIRED:ALL_LOADS"},
	{"adl_grt", "cpu_atom", "MEM_UOPS_RETIRED:ALL_STORES", "MEM_UOPS_RETIRED:ALL_LOADS"},
};

static void say(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(char *why, size_t whylen, const char *fmt, ...)
{
	if (!why || !whylen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

static const char *access_word(enum config_client client)
{
	return client == CONFIG_CLIENT_LOAD ? "load" : "store";
}

static const char *errno_name(int e)
{
	const char *name = strerrorname_np(e);
	return name ? name : "unknown error";
}

int pmu_event_default(const char *pfm_pmu, enum config_client client, const char **event,
		      const char **perf_pmu)
{
	for (size_t i = 0; i < sizeof(pmu_defaults) / sizeof(pmu_defaults[0]); i++) {
		const struct pmu_default *d = &pmu_defaults[i];
		if (strcmp(d->pfm, pfm_pmu) != 0)
			continue;
		if (event)
			*event = client == CONFIG_CLIENT_LOAD ? d->load : d->store;
		if (perf_pmu)
			*perf_pmu = d->perf;
		return 0;
	}
	return -ENOENT;
}

/* What an encoded libpfm4 event counts, from its event and umask names. */
#define KIND_LOAD 1
#define KIND_STORE 2

static int kind_of(const char *names)
{
	int kind = 0;
	if (strstr(names, "STORE"))
		kind |= KIND_STORE;
	if (strstr(names, "LOAD"))
		kind |= KIND_LOAD;
	return kind ? kind : KIND_LOAD | KIND_STORE; /* ANY, or a bare event */
}

/* Is every umask named in the canonical string precise?  fstr looks like
 * "skl::MEM_INST_RETIRED:ALL_STORES:e=0:i=0:...": umasks are the parts
 * after the event name up to the first "name=value". */
static int umasks_precise(int idx, const pfm_event_info_t *info, const char *umasks)
{
	int seen = 0;
	for (int k = 0; k < info->nattrs; k++) {
		pfm_event_attr_info_t ai;
		memset(&ai, 0, sizeof(ai));
		ai.size = sizeof(ai);
		if (pmu_pfm.get_event_attr_info(idx, k, PFM_OS_PERF_EVENT_EXT, &ai) != PFM_SUCCESS ||
		    ai.type != PFM_ATTR_UMASK)
			continue;
		size_t len = strlen(ai.name);
		for (const char *u = umasks; *u;) {
			const char *end = strchr(u, ':');
			size_t ulen = end ? (size_t)(end - u) : strlen(u);
			if (ulen == len && strncmp(u, ai.name, len) == 0) {
				if (!ai.is_precise)
					return 0;
				seen = 1;
			}
			u += ulen;
			if (*u == ':')
				u++;
		}
	}
	return seen || info->is_precise;
}

/* Encode one libpfm4 event into attr (type, config*, precise_ip) and name. */
static int encode_pfm(const char *str, int is_default, enum config_client client,
		      struct perf_event_attr *attr, char *name, uint64_t *event_period,
		      char *why, size_t whylen)
{
	struct perf_event_attr a;
	pfm_perf_encode_arg_t arg;
	char *fstr = NULL;
	const char *kind = access_word(client);

	memset(&a, 0, sizeof(a));
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.attr = &a;
	arg.fstr = &fstr;
	int rc = pmu_pfm.get_os_event_encoding(str, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (rc != PFM_SUCCESS) {
		free(fstr);
		if (is_default)
			say(why, whylen, "no precise %s event on this CPU (libpfm4: %s)", kind,
			    pmu_pfm.strerror(rc));
		else if (rc == PFM_ERR_NOTFOUND)
			say(why, whylen, "libpfm4 knows no such event on this CPU (libpfm4: %s)",
			    pmu_pfm.strerror(rc));
		else
			say(why, whylen, "libpfm4 cannot encode it (libpfm4: %s)", pmu_pfm.strerror(rc));
		return rc == PFM_ERR_NOTFOUND || is_default ? -ENOENT : -EINVAL;
	}

	pfm_event_info_t info;
	pfm_pmu_info_t pinfo;
	memset(&info, 0, sizeof(info));
	memset(&pinfo, 0, sizeof(pinfo));
	info.size = sizeof(info);
	pinfo.size = sizeof(pinfo);
	if (pmu_pfm.get_event_info(arg.idx, PFM_OS_PERF_EVENT_EXT, &info) != PFM_SUCCESS ||
	    pmu_pfm.get_pmu_info(info.pmu, &pinfo) != PFM_SUCCESS || !fstr) {
		free(fstr);
		say(why, whylen, "libpfm4 cannot describe it");
		return -EINVAL;
	}

	/* "pmu::EVENT:UMASK..." up to the first attribute is the name shown. */
	char canon[PMU_EVENT_STR_MAX];
	snprintf(canon, sizeof(canon), "%s", fstr);
	free(fstr);
	char *p = strstr(canon, "::");
	p = p ? p + 2 : canon;
	for (char *c = p; (c = strchr(c, ':')) != NULL; c++) {
		char *next = strchr(c + 1, ':');
		char *eq = strchr(c + 1, '=');
		if (eq && (!next || eq < next)) {
			*c = '\0';
			break;
		}
	}
	snprintf(name, PMU_EVENT_NAME_MAX, "%.*s", PMU_EVENT_NAME_MAX - 1, canon);
	const char *umasks = strchr(p, ':');
	umasks = umasks ? umasks + 1 : "";

	int amd = strncmp(pinfo.name, "amd64", 5) == 0;
	if (pinfo.type != PFM_PMU_TYPE_CORE) {
		say(why, whylen, "not an event of the CPU's core PMU (libpfm4 PMU %s)", pinfo.name);
		return -EINVAL;
	}
	if (strncmp(info.name, "MEM_", 4) != 0 || amd) {
		if (amd)
			say(why, whylen, "AMD core events carry no data address; use ibs_op");
		else
			say(why, whylen, "not a memory access event: PEBS records carry no data "
					 "address for it");
		return -EINVAL;
	}
	if (!umasks_precise(arg.idx, &info, umasks)) {
		say(why, whylen, "not a precise (PEBS) event: the PMU gives no exact "
				 "instruction and address for it");
		return -EINVAL;
	}
	int k = kind_of(p);
	if (client == CONFIG_CLIENT_LOAD && !(k & KIND_LOAD)) {
		say(why, whylen, "counts stores only; client load samples loads");
		return -EINVAL;
	}
	if (client != CONFIG_CLIENT_LOAD && !(k & KIND_STORE)) {
		say(why, whylen, "counts loads only; client %s samples stores",
		    config_client_name(client));
		return -EINVAL;
	}
	if (a.freq) {
		say(why, whylen, "a sampling frequency (:freq=) cannot be used: the PMU "
				 "sampler takes every Nth event; give the period as @N");
		return -EINVAL;
	}

	attr->type = a.type;
	attr->config = a.config;
	attr->config1 = a.config1;
	attr->config2 = a.config2;
	attr->precise_ip = a.precise_ip ? a.precise_ip : PMU_PRECISE_PEBS;
	*event_period = a.sample_period;

	/* libpfm4 says PERF_TYPE_RAW; hybrid parts need their PMU's own type. */
	const char *perf = NULL;
	uint32_t type;
	if (pmu_event_default(pinfo.name, client, NULL, &perf) == 0 &&
	    pmu_sysfs_type(perf, &type) == 0)
		attr->type = type;
	return 0;
}

static int encode_ibs(enum config_client client, int is_default, struct perf_event_attr *attr,
		      char *why, size_t whylen)
{
	char where[1024], missing[1100];
	snprintf(where, sizeof(where), "%s/bus/event_source/devices", pmu_sysfs_root());
	int rc = pmu_sysfs_type("ibs_op", &attr->type);
	if (rc < 0) {
		if (rc == -ENOENT)
			snprintf(missing, sizeof(missing), "no ibs_op PMU in %s", where);
		else
			snprintf(missing, sizeof(missing), "cannot read %s/ibs_op/type: %s", where,
				 errno_name(-rc));
		if (is_default)
			say(why, whylen, "no precise %s event on this CPU (%s)", access_word(client),
			    missing);
		else
			say(why, whylen, "%s", missing);
		return rc == -ENOENT ? -ENOENT : -ENODEV;
	}
	/* Count ops, not cycles, so that samples follow op counts. */
	rc = pmu_sysfs_format_bit("ibs_op", "cnt_ctl", attr);
	int swfilt = rc < 0 ? rc : pmu_sysfs_format_bit("ibs_op", "swfilt", attr);
	if (rc < 0 || swfilt < 0) {
		say(why, whylen, "cannot read the ibs_op formats in %s: %s", where,
		    errno_name(-(rc < 0 ? rc : swfilt)));
		return -ENODEV;
	}
	/* Without swfilt the IBS driver rejects every exclude_* bit. */
	attr->exclude_kernel = swfilt ? 1 : 0;
	attr->exclude_hv = swfilt ? 1 : 0;
	attr->precise_ip = PMU_PRECISE_IBS;
	return 0;
}

/* "...@N": the period, stripped from s.  1 when present, 0 when not. */
static int take_period(char *s, uint64_t *period, char *why, size_t whylen)
{
	char *at = strrchr(s, '@');
	if (!at)
		return 0;
	uint64_t v = 0;
	const char *d = at + 1;
	if (!*d)
		goto bad;
	for (; *d; d++) {
		if (*d < '0' || *d > '9' || v > (UINT64_C(1) << 63) / 10)
			goto bad;
		v = v * 10 + (uint64_t)(*d - '0');
	}
	if (v > INT64_MAX)
		goto bad;
	if (v < PMU_EVENT_PERIOD_MIN) {
		say(why, whylen, "period @%llu: expected at least %d events per sample",
		    (unsigned long long)v, PMU_EVENT_PERIOD_MIN);
		return -EINVAL;
	}
	*at = '\0';
	*period = v;
	return 1;
bad:
	say(why, whylen, "expected @ and a whole number of events per sample at the end");
	return -EINVAL;
}

/* Agree on one period from the setting, @N and :period=. */
static int merge_period(uint64_t *have, uint64_t more, const char *what, char *why,
			size_t whylen)
{
	if (!more)
		return 0;
	if (*have && *have != more) {
		say(why, whylen, "the period is given twice (%llu and %s%llu)",
		    (unsigned long long)*have, what, (unsigned long long)more);
		return -EINVAL;
	}
	*have = more;
	return 0;
}

static int encode(enum config_client client, const char *event, uint64_t period,
		  struct pmu_event *ev, char *why, size_t whylen)
{
	char buf[PMU_EVENT_STR_MAX];
	char items[PMU_EVENT_MAX][PMU_EVENT_STR_MAX];
	int nitems = 0, is_default = event == NULL, ibs = 0, rc;
	uint64_t at = 0;

	memset(ev, 0, sizeof(*ev));
	ev->client = client;
	ev->want_op = client == CONFIG_CLIENT_LOAD ? PMU_OP_LOAD : PMU_OP_STORE;
	if (why && whylen)
		why[0] = '\0';

	if (event) {
		if (strlen(event) >= sizeof(buf)) {
			say(why, whylen, "longer than %zu bytes", sizeof(buf) - 1);
			return -EINVAL;
		}
		snprintf(buf, sizeof(buf), "%s", event);
		if ((rc = take_period(buf, &at, why, whylen)) < 0)
			return rc;
		for (char *s = buf, *comma;; s = comma + 1) {
			comma = strchr(s, ',');
			if (comma)
				*comma = '\0';
			if (!*s || nitems == PMU_EVENT_MAX) {
				say(why, whylen, !*s ? "an empty event name"
						     : "at most 2 events (one per core type)");
				return -EINVAL;
			}
			snprintf(items[nitems++], sizeof(items[0]), "%s", s);
			if (!comma)
				break;
		}
		ibs = strcmp(items[0], "ibs_op") == 0 || strcmp(items[0], "ibs_op//") == 0;
		if (ibs && nitems > 1) {
			say(why, whylen, "ibs_op cannot be combined with other events");
			return -EINVAL;
		}
	}
	if ((rc = merge_period(&period, at, "@", why, whylen)) < 0)
		return rc;
	if (is_default && !getenv("LIBPFM_FORCE_PMU") && !pmu_sysfs_has_cpu_pmu()) {
		say(why, whylen, "no precise %s event on this CPU (no CPU PMU in "
				 "%s/bus/event_source/devices)", access_word(client), pmu_sysfs_root());
		return -ENOENT;
	}

	if (!ibs) {
		rc = pmu_pfm_ready(why, whylen);
		if (rc < 0 && event)
			return rc;
		if (rc < 0) { /* no libpfm4: only AMD IBS remains */
			if (!pmu_pfm_cpu_is_amd())
				return rc;
			ibs = 1;
		}
	}
	if (is_default && !ibs) {
		struct pmu_cpus d;
		pmu_pfm_detect(&d);
		ibs = d.amd;
		for (int i = 0; !ibs && i < d.n && nitems < PMU_EVENT_MAX; i++) {
			const char *e;
			if (pmu_event_default(d.name[i], client, &e, NULL) == 0)
				snprintf(items[nitems++], sizeof(items[0]), "%s::%s", d.name[i], e);
		}
		if (!ibs && nitems == 0) {
			if (d.n == 0)
				say(why, whylen, "no precise %s event on this CPU (libpfm4 "
						 "recognises no core PMU on it)", access_word(client));
			else
				say(why, whylen, "no precise %s event on this CPU (libwitch knows "
						 "none for libpfm4 PMU %s)", access_word(client),
				    d.name[0]);
			return -ENOENT;
		}
	}

	if (ibs) {
		if ((rc = encode_ibs(client, is_default, &ev->attr[0], why, whylen)) < 0)
			return rc;
		snprintf(ev->name[0], sizeof(ev->name[0]), "ibs_op");
		ev->n = 1;
		ev->ibs = 1;
	} else {
		for (int i = 0; i < nitems; i++) {
			uint64_t in_event = 0;
			rc = encode_pfm(items[i], is_default, client, &ev->attr[i], ev->name[i],
					&in_event, why, whylen);
			if (rc < 0)
				return rc;
			if ((rc = merge_period(&period, in_event, ":period=", why, whylen)) < 0)
				return rc;
		}
		ev->n = nitems;
	}

	if (!period) {
		if (ev->ibs)
			period = client == CONFIG_CLIENT_LOAD ? PMU_EVENT_IBS_LOAD_PERIOD
							      : PMU_EVENT_IBS_STORE_PERIOD;
		else
			period = client == CONFIG_CLIENT_LOAD ? PMU_EVENT_LOAD_PERIOD
							      : PMU_EVENT_STORE_PERIOD;
	}
	if (ev->ibs && (period & 15)) {
		/* The kernel refuses IBS periods with any of the low 4 bits set. */
		uint64_t near = (period + 8) & ~UINT64_C(15);
		say(why, whylen, "period %llu: IBS counts ops in steps of 16; use a multiple of "
				 "16 such as %llu", (unsigned long long)period,
		    (unsigned long long)(near ? near : 16));
		return -EINVAL;
	}
	ev->period = period;

	for (int i = 0; i < ev->n; i++) {
		struct perf_event_attr *a = &ev->attr[i];
		a->size = sizeof(*a);
		a->sample_period = period;
		a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR;
		if (ev->ibs)
			a->sample_type |= PERF_SAMPLE_RAW;
		else {
			a->exclude_kernel = 1;
			a->exclude_hv = 1;
		}
		a->disabled = 1;
		a->wakeup_events = 1;
	}
	return 0;
}

int pmu_event_encode(enum config_client client, const char *event, uint64_t period,
		     struct pmu_event *ev, char *why, size_t whylen)
{
	int rc = encode(client, event, period, ev, why, whylen);
	/* Every way the default can be missing reads the same at the start. */
	char prefix[64];
	snprintf(prefix, sizeof(prefix), "no precise %s event on this CPU (", access_word(client));
	if (!event && (rc == -ENOENT || rc == -ENODEV) && why && whylen &&
	    strncmp(why, prefix, strlen(prefix)) != 0) {
		char inner[512];
		snprintf(inner, sizeof(inner), "%s", why);
		say(why, whylen, "%s%s)", prefix, inner);
	}
	return rc;
}

int pmu_event_open(const struct perf_event_attr *attr, pid_t tid, int *precise)
{
	struct perf_event_attr a = *attr;
	int lowest = a.precise_ip ? 1 : 0, err = -EINVAL;
	for (int p = a.precise_ip; p >= lowest; p--) {
		a.precise_ip = (uint64_t)p;
		int fd = perf_fd_open(&a, tid);
		if (fd >= 0) {
			if (precise)
				*precise = p;
			return fd;
		}
		err = fd;
		/* Only a precise level the PMU lacks is worth another try. */
		if (err != -EOPNOTSUPP && err != -EINVAL)
			break;
	}
	return err;
}

int pmu_event_paranoid(void)
{
	long long v;
	if (pmu_sysfs_read_int("/proc/sys/kernel/perf_event_paranoid", &v) < 0)
		return PMU_EVENT_PARANOID_UNKNOWN;
	return (int)v;
}

void pmu_event_explain(int err, int paranoid, int ibs_kernel, enum config_client client,
		       char *why, size_t whylen)
{
	int e = -err;
	const char *name = errno_name(e);
	if (e == EACCES || e == EPERM) {
		if (paranoid == PMU_EVENT_PARANOID_UNKNOWN)
			say(why, whylen, "perf_event_open: %s and kernel.perf_event_paranoid is "
					 "unreadable; allow user-space perf events with `sysctl "
					 "kernel.perf_event_paranoid=2` as root, or give the program "
					 "CAP_PERFMON", name);
		else if (paranoid >= 3)
			say(why, whylen, "perf_event_open: %s: kernel.perf_event_paranoid is %d, "
					 "which refuses perf events to programs without CAP_PERFMON; "
					 "run `sysctl kernel.perf_event_paranoid=2` as root, or give the "
					 "program CAP_PERFMON", name, paranoid);
		else if (ibs_kernel && paranoid >= 2)
			say(why, whylen, "perf_event_open: %s: IBS on this kernel cannot leave out "
					 "kernel samples and kernel.perf_event_paranoid is %d; run "
					 "`sysctl kernel.perf_event_paranoid=1` as root, give the program "
					 "CAP_PERFMON, or use a kernel whose ibs_op PMU has the swfilt "
					 "format", name, paranoid);
		else
			say(why, whylen, "perf_event_open: %s although kernel.perf_event_paranoid "
					 "is %d: a seccomp filter, container or security module refuses "
					 "it; allow perf_event_open there, or give the program "
					 "CAP_PERFMON", name, paranoid);
		return;
	}
	if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV || e == EINVAL)
		say(why, whylen, "no precise %s event on this CPU (perf_event_open: %s)",
		    access_word(client), name);
	else
		say(why, whylen, "cannot open the precise %s event (perf_event_open: %s)",
		    access_word(client), name);
}

int pmu_event_probe(struct pmu_event *ev, char *why, size_t whylen)
{
	if (why && whylen)
		why[0] = '\0';
	for (int i = 0; i < ev->n; i++) {
		int precise = 0;
		int fd = pmu_event_open(&ev->attr[i], 0, &precise);
		if (fd < 0) {
			pmu_event_explain(fd, pmu_event_paranoid(), ev->ibs && !ev->attr[i].exclude_kernel,
					  ev->client, why, whylen);
			return fd;
		}
		fdguard_close(fd);
		ev->attr[i].precise_ip = (uint64_t)precise;
	}
	return 0;
}
