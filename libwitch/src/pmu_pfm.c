/* pmu_pfm: libpfm4, opened on demand, and the CPU it finds (see pmu_pfm.h). */
#include "witch/pmu_pfm.h"

#include <cpuid.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pmu_pfm_fn pmu_pfm;

static const char *pfm_load(void)
{
	void *h = dlopen("libpfm.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return "libpfm.so.4 not found (install libpfm4)";
	pmu_pfm.initialize = (int (*)(void))dlsym(h, "pfm_initialize");
	pmu_pfm.strerror = (const char *(*)(int))dlsym(h, "pfm_strerror");
	pmu_pfm.get_pmu_info = (int (*)(pfm_pmu_t, pfm_pmu_info_t *))dlsym(h, "pfm_get_pmu_info");
	pmu_pfm.get_event_info =
		(int (*)(int, pfm_os_t, pfm_event_info_t *))dlsym(h, "pfm_get_event_info");
	pmu_pfm.get_event_attr_info = (int (*)(int, int, pfm_os_t, pfm_event_attr_info_t *))dlsym(
		h, "pfm_get_event_attr_info");
	pmu_pfm.get_os_event_encoding = (int (*)(const char *, int, pfm_os_t, void *))dlsym(
		h, "pfm_get_os_event_encoding");
	if (!pmu_pfm.initialize || !pmu_pfm.strerror || !pmu_pfm.get_pmu_info ||
	    !pmu_pfm.get_event_info || !pmu_pfm.get_event_attr_info ||
	    !pmu_pfm.get_os_event_encoding)
		return "libpfm.so.4 lacks a function libwitch needs";
	return NULL;
}

static int pfm_state; /* 0 untried, 1 ready, -1 not loadable, else pfm_initialize's pfm_err_t */
static const char *pfm_load_error;

int pmu_pfm_ready(char *why, size_t whylen)
{
	if (pfm_state == 0) {
		pfm_load_error = pfm_load();
		if (pfm_load_error) {
			pfm_state = -1;
		} else {
			int rc = pmu_pfm.initialize();
			pfm_state = rc == PFM_SUCCESS ? 1 : rc;
		}
	}
	if (pfm_state == -1) {
		if (why && whylen)
			snprintf(why, whylen, "cannot load libpfm4: %s", pfm_load_error);
		return -ENODEV;
	}
	if (pfm_state == 1)
		return 0;
	const char *forced = getenv("LIBPFM_FORCE_PMU");
	if (why && whylen)
		snprintf(why, whylen, "cannot initialize libpfm4: %s%s%s", pmu_pfm.strerror(pfm_state),
			 forced ? ", LIBPFM_FORCE_PMU=" : "", forced ? forced : "");
	return -ENODEV;
}

int pmu_pfm_cpu_is_amd(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0, &a, &b, &c, &d))
		return 0;
	return b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163; /* "AuthenticAMD" */
}

void pmu_pfm_detect(struct pmu_cpus *d)
{
	pfm_pmu_t p;
	memset(d, 0, sizeof(*d));
	pfm_for_all_pmus(p)
	{
		pfm_pmu_info_t info;
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pmu_pfm.get_pmu_info(p, &info) != PFM_SUCCESS || !info.is_present ||
		    info.type != PFM_PMU_TYPE_CORE)
			continue;
		if (strncmp(info.name, "amd64", 5) == 0)
			d->amd = 1;
		if (d->n < 4)
			snprintf(d->name[d->n++], sizeof(d->name[0]), "%s", info.name);
	}
	/* libpfm4 may not know a new AMD part, but IBS does not need it; a
	 * forced model, though, is what the caller wants to see. */
	const char *forced = getenv("LIBPFM_FORCE_PMU");
	if (d->n == 0 && !(forced && *forced) && pmu_pfm_cpu_is_amd())
		d->amd = 1;
}
