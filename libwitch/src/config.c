/* config: parse WITCH_* environment variables (see config.h). */
#include "witch/config.h"
#include "witch/budget.h"
#include "witch/log.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void config_defaults(struct witch_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->client = CONFIG_CLIENT_DEAD;
	cfg->sampler = CONFIG_SAMPLER_AUTO;
	cfg->rate = budget_start_rate(CONFIG_DEFAULT_BUDGET);
	strcpy(cfg->output, CONFIG_DEFAULT_OUTPUT);
	cfg->max_steps = CONFIG_DEFAULT_MAX_STEPS;
	cfg->budget = CONFIG_DEFAULT_BUDGET;
	cfg->depth = CONFIG_DEFAULT_DEPTH;
	cfg->fp_tolerance = CONFIG_DEFAULT_FP_TOLERANCE;
	cfg->flush = CONFIG_DEFAULT_FLUSH;
	cfg->memory_mb = CONFIG_DEFAULT_MEMORY_MB;
	cfg->objects = 1;
	cfg->sigtrap = 1;
}

const char *config_client_name(enum config_client c)
{
	static const char *const names[] = {"dead", "silent", "load"};
	return names[c];
}

const char *config_verdicts_name(enum config_verdicts v)
{
	static const char *const names[] = {"traps", "window", "none"};
	return names[v];
}

/* Strict decimal: digits only, no sign, no spaces, no overflow. */
static int parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static int parse_range(const char *value, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t v;
	if (parse_u64(value, &v) < 0 || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

/* A plain decimal number in [lo, hi] (1e-4 allowed); no sign, spaces,
 * hex, inf or nan. */
static int parse_decimal(const char *s, double lo, double hi, double *out)
{
	char *end;
	if (!((*s >= '0' && *s <= '9') || *s == '.'))
		return -EINVAL;
	for (const char *c = s; *c; c++)
		if (*c == 'x' || *c == 'X' || *c == 'p' || *c == 'P')
			return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end != '\0' || end == s || !(v >= lo && v <= hi))
		return -EINVAL;
	*out = v;
	return 0;
}

static int bad(char *err, size_t errlen, const char *name, const char *value,
	       const char *expected)
{
	log_snprintf(err, errlen, "%s=%s: expected %s", name, value, expected);
	return -EINVAL;
}

int config_parse(struct witch_config *cfg, const char *name, const char *value,
		 char *err, size_t errlen)
{
	uint64_t v;
	if (!strcmp(name, "WITCH_CLIENT")) {
		if (!strcmp(value, "dead"))
			cfg->client = CONFIG_CLIENT_DEAD;
		else if (!strcmp(value, "silent"))
			cfg->client = CONFIG_CLIENT_SILENT;
		else if (!strcmp(value, "load"))
			cfg->client = CONFIG_CLIENT_LOAD;
		else
			return bad(err, errlen, name, value, "dead, silent or load");
	} else if (!strcmp(name, "WITCH_SAMPLER")) {
		if (!strcmp(value, "auto"))
			cfg->sampler = CONFIG_SAMPLER_AUTO;
		else if (!strcmp(value, "soft"))
			cfg->sampler = CONFIG_SAMPLER_SOFT;
		else if (!strcmp(value, "pmu"))
			cfg->sampler = CONFIG_SAMPLER_PMU;
		else
			return bad(err, errlen, name, value, "auto, soft or pmu");
	} else if (!strcmp(name, "WITCH_RATE")) {
		if (parse_range(value, 1, CONFIG_MAX_RATE, &v) < 0)
			return bad(err, errlen, name, value,
				   "a whole number of samples per second from 1 to 10000");
		cfg->rate = (uint32_t)v;
		cfg->budget = 0; /* a fixed rate */
	} else if (!strcmp(name, "WITCH_PERIOD")) {
		if (parse_range(value, 1000, UINT64_MAX >> 1, &v) < 0)
			return bad(err, errlen, name, value,
				   "a whole number of events per sample, at least 1000");
		cfg->period = v;
	} else if (!strcmp(name, "WITCH_WATCHPOINTS")) {
		int window = !strcmp(value, "window");
		if (window)
			v = 0;
		else if (parse_range(value, 0, CONFIG_MAX_WATCHPOINTS, &v) < 0)
			return bad(err, errlen, name, value,
				   "1 to 4, 0 to weigh samples without watching them, or window "
				   "to decide them by the run-ahead alone");
		cfg->watchpoints = (uint32_t)v;
		cfg->verdicts = window ? CONFIG_VERDICTS_WINDOW
			      : v == 0 ? CONFIG_VERDICTS_NONE
				       : CONFIG_VERDICTS_TRAPS;
	} else if (!strcmp(name, "WITCH_OUTPUT")) {
		if (!*value || strlen(value) >= sizeof(cfg->output))
			return bad(err, errlen, name, value,
				   "a file path pattern of 1 to 1023 bytes (%p pid, %e program name)");
		strcpy(cfg->output, value);
	} else if (!strcmp(name, "WITCH_SEED")) {
		if (parse_u64(value, &v) < 0)
			return bad(err, errlen, name, value, "a decimal unsigned 64-bit number");
		cfg->seed = v;
		cfg->seed_set = 1;
	} else if (!strcmp(name, "WITCH_VERBOSE")) {
		if (parse_range(value, 0, 2, &v) < 0)
			return bad(err, errlen, name, value, "0, 1 or 2");
		cfg->verbose = (int)v;
	} else if (!strcmp(name, "WITCH_MAX_STEPS")) {
		if (parse_range(value, 0, 1000, &v) < 0)
			return bad(err, errlen, name, value, "0 to 1000 single steps");
		cfg->max_steps = (uint32_t)v;
	} else if (!strcmp(name, "WITCH_BUDGET")) {
		double pct;
		if (parse_decimal(value, 0.1, 50.0, &pct) < 0)
			return bad(err, errlen, name, value,
				   "a percentage of CPU time from 0.1 to 50 (e.g. 1)");
		cfg->budget = pct / 100;
		cfg->rate = budget_start_rate(cfg->budget);
	} else if (!strcmp(name, "WITCH_DEPTH")) {
		if (parse_range(value, 1, CONFIG_MAX_DEPTH, &v) < 0)
			return bad(err, errlen, name, value, "1 to 512 frames");
		cfg->depth = (uint32_t)v;
	} else if (!strcmp(name, "WITCH_SLOW_REARM")) {
		if (parse_range(value, 0, 1, &v) < 0)
			return bad(err, errlen, name, value, "0 or 1");
		cfg->slow_rearm = (int)v;
	} else if (!strcmp(name, "WITCH_STARTUP_TIMES")) {
		if (parse_range(value, 0, 1, &v) < 0)
			return bad(err, errlen, name, value, "0 or 1");
		cfg->startup_times = (int)v;
	} else if (!strcmp(name, "WITCH_SIGTRAP")) {
		if (parse_range(value, 0, 1, &v) < 0)
			return bad(err, errlen, name, value, "0 or 1");
		cfg->sigtrap = (int)v;
	} else if (!strcmp(name, "WITCH_FP_TOLERANCE")) {
		if (parse_decimal(value, 0.0, 1.0, &cfg->fp_tolerance) < 0)
			return bad(err, errlen, name, value,
				   "a relative tolerance from 0 to 1 (0.01 = 1%, 0 = exact only)");
	} else if (!strcmp(name, "WITCH_FLUSH")) {
		if (parse_range(value, 0, 86400, &v) < 0)
			return bad(err, errlen, name, value,
				   "seconds between profile writes, 0 (only at exit) to 86400");
		cfg->flush = (uint32_t)v;
		cfg->flush_set = 1;
	} else if (!strcmp(name, "WITCH_MEMORY_MB")) {
		if (parse_range(value, 16, 1u << 20, &v) < 0)
			return bad(err, errlen, name, value, "a memory cap in MiB from 16 to 1048576");
		cfg->memory_mb = (uint32_t)v;
	} else if (!strcmp(name, "WITCH_OBJECTS")) {
		if (parse_range(value, 0, 1, &v) < 0)
			return bad(err, errlen, name, value,
				   "1 to attribute to data objects, or 0 to track no heap blocks");
		cfg->objects = (int)v;
	} else if (!strcmp(name, "WITCH_EVENT")) {
		/* Only the length here: pmu_event_encode judges the event itself. */
		if (!*value || strlen(value) >= sizeof(cfg->event))
			return bad(err, errlen, name, value,
				   "a libpfm4 event of 1 to 255 bytes, e.g. MEM_INST_RETIRED:ALL_STORES");
		strcpy(cfg->event, value);
	} else {
		log_snprintf(err, errlen, "%s=%s: no such setting (see witch --help)", name, value);
		return -EINVAL;
	}
	return 0;
}

static const char *const config_names[] = {
	"WITCH_CLIENT", "WITCH_SAMPLER", "WITCH_RATE", "WITCH_PERIOD",
	"WITCH_WATCHPOINTS", "WITCH_OUTPUT", "WITCH_SEED", "WITCH_VERBOSE",
	"WITCH_MAX_STEPS", "WITCH_BUDGET", "WITCH_DEPTH", "WITCH_SLOW_REARM",
	"WITCH_FP_TOLERANCE", "WITCH_EVENT", "WITCH_FLUSH", "WITCH_MEMORY_MB",
	"WITCH_OBJECTS", "WITCH_SIGTRAP", "WITCH_STARTUP_TIMES",
};

int config_from_env(struct witch_config *cfg, char *err, size_t errlen)
{
	const char *rate = getenv("WITCH_RATE"), *budget = getenv("WITCH_BUDGET");
	if (rate && budget) {
		log_snprintf(err, errlen,
			     "WITCH_RATE=%s and WITCH_BUDGET=%s: set one of them (a fixed rate, or "
			     "a CPU budget the rate follows)", rate, budget);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(config_names) / sizeof(config_names[0]); i++) {
		const char *value = getenv(config_names[i]);
		if (!value)
			continue;
		int rc = config_parse(cfg, config_names[i], value, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int config_env_hand_down(const char *name, const char *value)
{
	int (*libc_setenv)(const char *, const char *, int) =
		(int (*)(const char *, const char *, int))dlsym(RTLD_NEXT, "setenv");
	if (!libc_setenv)
		return -ENOSYS;
	return libc_setenv(name, value, 1) < 0 ? -errno : 0;
}
