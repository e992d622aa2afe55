/* Unit test of the config module: table-driven like libpfm4's validate_x86.c.
 * Each row is one WITCH_* variable and value given to config_parse, with the
 * expected result: accepted (and the field it sets, with its value), or
 * -EINVAL with the exact one-line message.  Then config_from_env with
 * setenv/unsetenv.  Failures print the row's line number.
 * Exit status 0 on success.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "witch/budget.h"
#include "witch/config.h"

#include "check.h"

/* Which field of struct witch_config an accepted row sets. */
enum field {
	F_NONE,
	F_CLIENT,
	F_SAMPLER,
	F_RATE,
	F_PERIOD,
	F_WATCHPOINTS,
	F_OUTPUT, /* expected: the value itself */
	F_SEED,   /* also seed_set = 1 */
	F_VERBOSE,
	F_MAX_STEPS,
	F_BUDGET,       /* expected: fwant, and the start rate in want */
	F_DEPTH,
	F_SLOW_REARM,
	F_FP_TOLERANCE, /* expected: fwant */
	F_EVENT,        /* expected: the value itself */
	F_FLUSH,
	F_MEMORY,
	F_OBJECTS,
	F_SIGTRAP,
	F_STARTUP_TIMES,
};

struct row {
	int line;
	const char *name;
	const char *value;
	const char *err; /* NULL: accepted; else the exact message, rc -EINVAL */
	enum field field;
	uint64_t want;   /* the field's value when accepted */
	double fwant;    /* F_FP_TOLERANCE's value when accepted */
};

/* Expected-text fragments, exactly as config.c words them. */
#define E_CLIENT "dead, silent or load"
#define E_SAMPLER "auto, soft or pmu"
#define E_RATE "a whole number of samples per second from 1 to 10000"
#define E_PERIOD "a whole number of events per sample, at least 1000"
#define E_WP "1 to 4, 0 to weigh samples without watching them, or window to decide them by the run-ahead alone"
#define E_OUTPUT "a file path pattern of 1 to 1023 bytes (%p pid, %e program name)"
#define E_SEED "a decimal unsigned 64-bit number"
#define E_VERBOSE "0, 1 or 2"
#define E_STEPS "0 to 1000 single steps"
#define E_BUDGET "a percentage of CPU time from 0.1 to 50 (e.g. 1)"
#define E_DEPTH "1 to 512 frames"
#define E_SLOW "0 or 1"
#define E_TOL "a relative tolerance from 0 to 1 (0.01 = 1%, 0 = exact only)"
#define E_EVENT "a libpfm4 event of 1 to 255 bytes, e.g. MEM_INST_RETIRED:ALL_STORES"
#define E_FLUSH "seconds between profile writes, 0 (only at exit) to 86400"
#define E_MEMORY "a memory cap in MiB from 16 to 1048576"
#define E_OBJECTS "1 to attribute to data objects, or 0 to track no heap blocks"
#define E_UNKNOWN "no such setting (see witch --help)"

#define OK(n, v, f, w) {__LINE__, n, v, NULL, f, w, 0}
#define OKF(n, v, d) {__LINE__, n, v, NULL, F_FP_TOLERANCE, 0, d}
/* a budget d (a fraction) and the rate r it starts at (budget.h: d of a
 * BUDGET_FIRST_TICK_NS first tick, within 10..2000 a second) */
#define OKB(n, v, d, r) {__LINE__, n, v, NULL, F_BUDGET, r, d}
#define BAD(n, v, e) {__LINE__, n, v, n "=" v ": expected " e, F_NONE, 0, 0}
#define UNKNOWN(n, v) {__LINE__, n, v, n "=" v ": " E_UNKNOWN, F_NONE, 0, 0}

static const struct row rows[] = {
	/* WITCH_CLIENT */
	OK("WITCH_CLIENT", "dead", F_CLIENT, CONFIG_CLIENT_DEAD),
	OK("WITCH_CLIENT", "silent", F_CLIENT, CONFIG_CLIENT_SILENT),
	OK("WITCH_CLIENT", "load", F_CLIENT, CONFIG_CLIENT_LOAD),
	BAD("WITCH_CLIENT", "", E_CLIENT),
	BAD("WITCH_CLIENT", "Dead", E_CLIENT),
	BAD("WITCH_CLIENT", "dead ", E_CLIENT),
	BAD("WITCH_CLIENT", " dead", E_CLIENT),
	BAD("WITCH_CLIENT", "deadx", E_CLIENT),
	BAD("WITCH_CLIENT", "dea", E_CLIENT),
	BAD("WITCH_CLIENT", "0", E_CLIENT),

	/* WITCH_SAMPLER */
	OK("WITCH_SAMPLER", "auto", F_SAMPLER, CONFIG_SAMPLER_AUTO),
	OK("WITCH_SAMPLER", "soft", F_SAMPLER, CONFIG_SAMPLER_SOFT),
	OK("WITCH_SAMPLER", "pmu", F_SAMPLER, CONFIG_SAMPLER_PMU),
	BAD("WITCH_SAMPLER", "", E_SAMPLER),
	BAD("WITCH_SAMPLER", "PMU", E_SAMPLER),
	BAD("WITCH_SAMPLER", "software", E_SAMPLER),

	/* WITCH_RATE: 1 .. 10000, strict decimal */
	OK("WITCH_RATE", "1", F_RATE, 1),
	OK("WITCH_RATE", "200", F_RATE, 200),
	OK("WITCH_RATE", "10000", F_RATE, 10000),
	BAD("WITCH_RATE", "10001", E_RATE), /* handlers cannot keep up past it */
	OK("WITCH_RATE", "0200", F_RATE, 200),
	OK("WITCH_RATE", "000000000000000000000000000001", F_RATE, 1),
	BAD("WITCH_RATE", "0", E_RATE),
	BAD("WITCH_RATE", "100001", E_RATE),
	BAD("WITCH_RATE", "abc", E_RATE),
	BAD("WITCH_RATE", "-5", E_RATE),
	BAD("WITCH_RATE", "+5", E_RATE),
	BAD("WITCH_RATE", " 5", E_RATE),
	BAD("WITCH_RATE", "5 ", E_RATE),
	BAD("WITCH_RATE", "5k", E_RATE),
	BAD("WITCH_RATE", "0x10", E_RATE),
	BAD("WITCH_RATE", "1e3", E_RATE),
	BAD("WITCH_RATE", "2.5", E_RATE),
	BAD("WITCH_RATE", "", E_RATE),
	BAD("WITCH_RATE", "4294967496", E_RATE),           /* 200 + 2^32 */
	BAD("WITCH_RATE", "18446744073709551616", E_RATE), /* 2^64: overflow */
	BAD("WITCH_RATE", "99999999999999999999999", E_RATE),

	/* WITCH_PERIOD: 1000 .. 2^63-1 */
	OK("WITCH_PERIOD", "1000", F_PERIOD, 1000),
	OK("WITCH_PERIOD", "10007", F_PERIOD, 10007),
	OK("WITCH_PERIOD", "9223372036854775807", F_PERIOD, 9223372036854775807ull),
	BAD("WITCH_PERIOD", "999", E_PERIOD),
	BAD("WITCH_PERIOD", "0", E_PERIOD),
	BAD("WITCH_PERIOD", "9223372036854775808", E_PERIOD),
	BAD("WITCH_PERIOD", "18446744073709551615", E_PERIOD),
	BAD("WITCH_PERIOD", "18446744073709551616", E_PERIOD),
	BAD("WITCH_PERIOD", "", E_PERIOD),
	BAD("WITCH_PERIOD", "-1000", E_PERIOD),
	BAD("WITCH_PERIOD", "10k", E_PERIOD),

	/* WITCH_WATCHPOINTS: 1 .. 4; 0 samples without watching (verdicts none);
	 * window decides by the run-ahead alone (verdicts window, none armed) */
	OK("WITCH_WATCHPOINTS", "0", F_WATCHPOINTS, 0),
	OK("WITCH_WATCHPOINTS", "window", F_WATCHPOINTS, 0),
	OK("WITCH_WATCHPOINTS", "1", F_WATCHPOINTS, 1),
	OK("WITCH_WATCHPOINTS", "2", F_WATCHPOINTS, 2),
	OK("WITCH_WATCHPOINTS", "3", F_WATCHPOINTS, 3),
	OK("WITCH_WATCHPOINTS", "4", F_WATCHPOINTS, 4),
	BAD("WITCH_WATCHPOINTS", "5", E_WP),
	BAD("WITCH_WATCHPOINTS", "-1", E_WP),
	BAD("WITCH_WATCHPOINTS", "", E_WP),
	BAD("WITCH_WATCHPOINTS", "all", E_WP),
	BAD("WITCH_WATCHPOINTS", "Window", E_WP),
	BAD("WITCH_WATCHPOINTS", "window ", E_WP),
	BAD("WITCH_WATCHPOINTS", "4294967297", E_WP), /* 1 + 2^32 */

	/* WITCH_OUTPUT: 1 .. 1023 bytes, taken as written (long ones below) */
	OK("WITCH_OUTPUT", "x", F_OUTPUT, 0),
	OK("WITCH_OUTPUT", "/tmp/witch-%e-%p.prof", F_OUTPUT, 0),
	OK("WITCH_OUTPUT", "out with spaces %% %x", F_OUTPUT, 0),
	OK("WITCH_OUTPUT", " ", F_OUTPUT, 0),
	BAD("WITCH_OUTPUT", "", E_OUTPUT),

	/* WITCH_SEED: any decimal uint64 */
	OK("WITCH_SEED", "0", F_SEED, 0),
	OK("WITCH_SEED", "1", F_SEED, 1),
	OK("WITCH_SEED", "12345678901234567890", F_SEED, 12345678901234567890ull),
	OK("WITCH_SEED", "18446744073709551615", F_SEED, UINT64_MAX),
	OK("WITCH_SEED", "018446744073709551615", F_SEED, UINT64_MAX),
	BAD("WITCH_SEED", "18446744073709551616", E_SEED),
	BAD("WITCH_SEED", "18446744073709551620", E_SEED),
	BAD("WITCH_SEED", "99999999999999999999", E_SEED),
	BAD("WITCH_SEED", "184467440737095516150", E_SEED),
	BAD("WITCH_SEED", "", E_SEED),
	BAD("WITCH_SEED", "-1", E_SEED),
	BAD("WITCH_SEED", "0x10", E_SEED),
	BAD("WITCH_SEED", " 5", E_SEED),
	BAD("WITCH_SEED", "5 ", E_SEED),

	/* WITCH_VERBOSE: 0 .. 2 */
	OK("WITCH_VERBOSE", "0", F_VERBOSE, 0),
	OK("WITCH_VERBOSE", "1", F_VERBOSE, 1),
	OK("WITCH_VERBOSE", "2", F_VERBOSE, 2),
	BAD("WITCH_VERBOSE", "3", E_VERBOSE),
	BAD("WITCH_VERBOSE", "-1", E_VERBOSE),
	BAD("WITCH_VERBOSE", "", E_VERBOSE),
	BAD("WITCH_VERBOSE", "yes", E_VERBOSE),

	/* WITCH_MAX_STEPS: 0 .. 1000 */
	OK("WITCH_MAX_STEPS", "0", F_MAX_STEPS, 0),
	OK("WITCH_MAX_STEPS", "32", F_MAX_STEPS, 32),
	OK("WITCH_MAX_STEPS", "1000", F_MAX_STEPS, 1000),
	BAD("WITCH_MAX_STEPS", "1001", E_STEPS),
	BAD("WITCH_MAX_STEPS", "", E_STEPS),
	BAD("WITCH_MAX_STEPS", "-1", E_STEPS),

	/* WITCH_BUDGET: a percentage, 0.1 .. 50, kept as a fraction */
	/* the start rate: 0.01 * 1e9 / 500e3 = 20; 0.001: 2, raised to 10;
	 * 0.025: 50; 0.5: 1000 */
	OKB("WITCH_BUDGET", "1", 0.01, 20),
	OKB("WITCH_BUDGET", "0.1", 0.001, 10),
	OKB("WITCH_BUDGET", "2.5", 0.025, 50),
	OKB("WITCH_BUDGET", "50", 0.5, 1000),
	BAD("WITCH_BUDGET", "0", E_BUDGET),
	BAD("WITCH_BUDGET", "0.05", E_BUDGET),
	BAD("WITCH_BUDGET", "51", E_BUDGET),
	BAD("WITCH_BUDGET", "-1", E_BUDGET),
	BAD("WITCH_BUDGET", "1%", E_BUDGET),
	BAD("WITCH_BUDGET", "0x10", E_BUDGET),
	OKB("WITCH_BUDGET", "5e-1", 0.005, 10), /* 0.005: 10 a second */
	BAD("WITCH_BUDGET", "", E_BUDGET),

	/* WITCH_DEPTH: 1 .. 512 */
	OK("WITCH_DEPTH", "1", F_DEPTH, 1),
	OK("WITCH_DEPTH", "128", F_DEPTH, 128),
	OK("WITCH_DEPTH", "512", F_DEPTH, 512),
	BAD("WITCH_DEPTH", "0", E_DEPTH),
	BAD("WITCH_DEPTH", "513", E_DEPTH),
	BAD("WITCH_DEPTH", "", E_DEPTH),
	BAD("WITCH_DEPTH", "deep", E_DEPTH),

	/* WITCH_SLOW_REARM: 0 or 1 */
	OK("WITCH_SLOW_REARM", "0", F_SLOW_REARM, 0),
	OK("WITCH_SLOW_REARM", "1", F_SLOW_REARM, 1),
	BAD("WITCH_SLOW_REARM", "2", E_SLOW),
	BAD("WITCH_SLOW_REARM", "yes", E_SLOW),
	BAD("WITCH_SLOW_REARM", "", E_SLOW),

	/* WITCH_SIGTRAP: 0 or 1 (1, the default: traps as perf SIGTRAPs) */
	/* WITCH_STARTUP_TIMES: 0 or 1 */
	OK("WITCH_STARTUP_TIMES", "0", F_STARTUP_TIMES, 0),
	OK("WITCH_STARTUP_TIMES", "1", F_STARTUP_TIMES, 1),
	BAD("WITCH_STARTUP_TIMES", "2", E_SLOW),
	BAD("WITCH_STARTUP_TIMES", "on", E_SLOW),
	OK("WITCH_SIGTRAP", "0", F_SIGTRAP, 0),
	OK("WITCH_SIGTRAP", "1", F_SIGTRAP, 1),
	BAD("WITCH_SIGTRAP", "2", E_SLOW),
	BAD("WITCH_SIGTRAP", "on", E_SLOW),
	BAD("WITCH_SIGTRAP", "", E_SLOW),

	/* WITCH_FP_TOLERANCE: a plain decimal in [0, 1] */
	OKF("WITCH_FP_TOLERANCE", "0.01", 0.01),
	OKF("WITCH_FP_TOLERANCE", "0", 0.0),
	OKF("WITCH_FP_TOLERANCE", "1", 1.0),
	OKF("WITCH_FP_TOLERANCE", ".5", 0.5),
	OKF("WITCH_FP_TOLERANCE", "1e-4", 0.0001),
	BAD("WITCH_FP_TOLERANCE", "", E_TOL),
	BAD("WITCH_FP_TOLERANCE", "1.5", E_TOL),
	BAD("WITCH_FP_TOLERANCE", "-0.01", E_TOL),
	BAD("WITCH_FP_TOLERANCE", "+0.01", E_TOL),
	BAD("WITCH_FP_TOLERANCE", " 0.01", E_TOL),
	BAD("WITCH_FP_TOLERANCE", "0.01 ", E_TOL),
	BAD("WITCH_FP_TOLERANCE", "1%", E_TOL),
	BAD("WITCH_FP_TOLERANCE", "nan", E_TOL),
	BAD("WITCH_FP_TOLERANCE", "0x1p-4", E_TOL),
	BAD("WITCH_FP_TOLERANCE", "1e400", E_TOL),

	/* WITCH_EVENT: only its length here (pmu_event_encode judges it) */
	OK("WITCH_EVENT", "MEM_INST_RETIRED:ALL_STORES@5000011", F_EVENT, 0),
	OK("WITCH_EVENT", "ibs_op", F_EVENT, 0),
	OK("WITCH_EVENT", "x", F_EVENT, 0),
	BAD("WITCH_EVENT", "", E_EVENT),

	/* WITCH_FLUSH: seconds, 0 = only at exit */
	OK("WITCH_FLUSH", "0", F_FLUSH, 0),
	OK("WITCH_FLUSH", "1", F_FLUSH, 1),
	OK("WITCH_FLUSH", "86400", F_FLUSH, 86400),
	BAD("WITCH_FLUSH", "86401", E_FLUSH),
	BAD("WITCH_FLUSH", "-1", E_FLUSH),
	BAD("WITCH_FLUSH", "1s", E_FLUSH),
	BAD("WITCH_FLUSH", "", E_FLUSH),

	/* WITCH_MEMORY_MB */
	OK("WITCH_MEMORY_MB", "16", F_MEMORY, 16),
	OK("WITCH_MEMORY_MB", "1048576", F_MEMORY, 1048576),
	BAD("WITCH_MEMORY_MB", "15", E_MEMORY),
	BAD("WITCH_MEMORY_MB", "1048577", E_MEMORY),
	BAD("WITCH_MEMORY_MB", "1G", E_MEMORY),

	/* WITCH_OBJECTS */
	OK("WITCH_OBJECTS", "0", F_OBJECTS, 0),
	OK("WITCH_OBJECTS", "1", F_OBJECTS, 1),
	BAD("WITCH_OBJECTS", "2", E_OBJECTS),
	BAD("WITCH_OBJECTS", "on", E_OBJECTS),
	BAD("WITCH_OBJECTS", "", E_OBJECTS),
	BAD("WITCH_OBJECTS", "-1", E_OBJECTS),

	/* not a setting */
	UNKNOWN("WITCH_FOO", "1"),
	UNKNOWN("WITCH_rate", "200"),
	UNKNOWN("WITCH_RATE ", "200"),
	UNKNOWN("", ""),
};

/* A config whose every field differs from the defaults and from what any
 * accepted row sets, so that a row that changes the wrong field shows. */
static void poison(struct witch_config *c)
{
	memset(c, 0, sizeof(*c));
	c->client = (enum config_client)77;
	c->sampler = (enum config_sampler)77;
	c->rate = 777777;
	c->period = 777;
	c->watchpoints = 77;
	c->verdicts = (enum config_verdicts)77;
	strcpy(c->output, "poison");
	c->seed = 7777;
	c->seed_set = 0;
	c->verbose = 77;
	c->max_steps = 7777;
	c->budget = 77.0;
	c->depth = 7777;
	c->slow_rearm = 77;
	c->fp_tolerance = 77.0;
	strcpy(c->event, "poison");
	c->flush = 777777;
	c->memory_mb = 7;
	c->objects = 77;
}

/* Apply what an accepted row should set to a copy of the poisoned config. */
static void apply(struct witch_config *c, const struct row *r)
{
	switch (r->field) {
	case F_NONE: break;
	case F_CLIENT: c->client = (enum config_client)r->want; break;
	case F_SAMPLER: c->sampler = (enum config_sampler)r->want; break;
	case F_RATE: c->rate = (uint32_t)r->want; c->budget = 0; break;
	case F_PERIOD: c->period = r->want; break;
	case F_WATCHPOINTS:
		c->watchpoints = (uint32_t)r->want;
		c->verdicts = !strcmp(r->value, "window") ? CONFIG_VERDICTS_WINDOW
			    : r->want == 0		 ? CONFIG_VERDICTS_NONE
							 : CONFIG_VERDICTS_TRAPS;
		break;
	case F_OUTPUT: strcpy(c->output, r->value); break;
	case F_SEED: c->seed = r->want; c->seed_set = 1; break;
	case F_VERBOSE: c->verbose = (int)r->want; break;
	case F_MAX_STEPS: c->max_steps = (uint32_t)r->want; break;
	case F_BUDGET: c->budget = r->fwant; c->rate = (uint32_t)r->want; break;
	case F_DEPTH: c->depth = (uint32_t)r->want; break;
	case F_SLOW_REARM: c->slow_rearm = (int)r->want; break;
	case F_FP_TOLERANCE: c->fp_tolerance = r->fwant; break;
	case F_EVENT: strcpy(c->event, r->value); break;
	case F_FLUSH: c->flush = (uint32_t)r->want; break;
	case F_MEMORY: c->memory_mb = (uint32_t)r->want; break;
	case F_OBJECTS: c->objects = (int)r->want; break;
	case F_SIGTRAP: c->sigtrap = (int)r->want; break;
	case F_STARTUP_TIMES: c->startup_times = (int)r->want; break;
	}
}

static void check_same(int line, const struct witch_config *got, const struct witch_config *want)
{
	CHECK(line, got->client == want->client, "client %d, want %d", got->client, want->client);
	CHECK(line, got->sampler == want->sampler, "sampler %d, want %d", got->sampler,
	      want->sampler);
	CHECK(line, got->rate == want->rate, "rate %u, want %u", got->rate, want->rate);
	CHECK(line, got->period == want->period, "period %llu, want %llu",
	      (unsigned long long)got->period, (unsigned long long)want->period);
	CHECK(line, got->watchpoints == want->watchpoints, "watchpoints %u, want %u",
	      got->watchpoints, want->watchpoints);
	CHECK(line, strcmp(got->output, want->output) == 0, "output \"%.60s\", want \"%.60s\"",
	      got->output, want->output);
	CHECK(line, got->seed == want->seed, "seed %llu, want %llu", (unsigned long long)got->seed,
	      (unsigned long long)want->seed);
	CHECK(line, got->seed_set == want->seed_set, "seed_set %d, want %d", got->seed_set,
	      want->seed_set);
	CHECK(line, got->verbose == want->verbose, "verbose %d, want %d", got->verbose,
	      want->verbose);
	CHECK(line, got->max_steps == want->max_steps, "max_steps %u, want %u", got->max_steps,
	      want->max_steps);
	CHECK(line, got->budget == want->budget, "budget %g, want %g", got->budget, want->budget);
	CHECK(line, got->depth == want->depth, "depth %u, want %u", got->depth, want->depth);
	CHECK(line, got->slow_rearm == want->slow_rearm, "slow_rearm %d, want %d",
	      got->slow_rearm, want->slow_rearm);
	CHECK(line, got->sigtrap == want->sigtrap, "sigtrap %d, want %d", got->sigtrap,
	      want->sigtrap);
	CHECK(line, got->fp_tolerance == want->fp_tolerance, "fp_tolerance %g, want %g",
	      got->fp_tolerance, want->fp_tolerance);
	CHECK(line, got->flush == want->flush, "flush %u, want %u", got->flush, want->flush);
	CHECK(line, got->memory_mb == want->memory_mb, "memory_mb %u, want %u", got->memory_mb,
	      want->memory_mb);
	CHECK(line, got->objects == want->objects, "objects %d, want %d", got->objects,
	      want->objects);
	CHECK(line, strcmp(got->event, want->event) == 0, "event \"%.60s\", want \"%.60s\"",
	      got->event, want->event);
}

/* One config_parse call checked against (expected error or NULL). */
static void run_parse(int line, const char *name, const char *value, const char *want_err,
		      const struct witch_config *want_cfg)
{
	struct witch_config cfg;
	char err[4096];
	poison(&cfg);
	memset(err, '#', sizeof(err));
	err[sizeof(err) - 1] = '\0';
	int rc = config_parse(&cfg, name, value, err, sizeof(err));
	if (!want_err) {
		CHECK(line, rc == 0, "%s=%.40s: rc %d, want 0 (err \"%.200s\")", name, value, rc, err);
	} else {
		CHECK(line, rc == -EINVAL, "%s=%.40s: rc %d, want -EINVAL", name, value, rc);
		CHECK(line, strcmp(err, want_err) == 0, "%s=%.40s: error\n  got  \"%.300s\"\n  want \"%.300s\"",
		      name, value, err, want_err);
	}
	/* accepted: exactly the one field changed; rejected: nothing changed */
	check_same(line, &cfg, want_cfg);
}

static void test_table(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct witch_config want;
		poison(&want);
		if (!r->err)
			apply(&want, r);
		run_parse(r->line, r->name, r->value, r->err, &want);
	}
}

/* WITCH_OUTPUT length limits: 1023 bytes fit output[1024], 1024 do not. */
static void test_output_length(void)
{
	static char value[4096], msg[8192];
	struct witch_config want;
	const char *ex = ": expected " E_OUTPUT;

	memset(value, 'a', CONFIG_PATH_MAX - 1);
	value[CONFIG_PATH_MAX - 1] = '\0';
	poison(&want);
	strcpy(want.output, value);
	run_parse(__LINE__, "WITCH_OUTPUT", value, NULL, &want);

	static const size_t bad_len[] = {CONFIG_PATH_MAX, CONFIG_PATH_MAX + 1, 3000};
	for (size_t i = 0; i < sizeof(bad_len) / sizeof(bad_len[0]); i++) {
		memset(value, 'b', bad_len[i]);
		value[bad_len[i]] = '\0';
		snprintf(msg, sizeof(msg), "WITCH_OUTPUT=%s%s", value, ex);
		poison(&want);
		run_parse(__LINE__, "WITCH_OUTPUT", value, msg, &want);
	}

	/* A short error buffer is filled and terminated, never overrun. */
	struct witch_config cfg;
	char small[32 + 8];
	poison(&cfg);
	memset(small, 'Z', sizeof(small));
	int rc = config_parse(&cfg, "WITCH_OUTPUT", value, small, 32);
	CHECK(__LINE__, rc == -EINVAL, "rc %d, want -EINVAL", rc);
	CHECK(__LINE__, memchr(small, '\0', 32) != NULL, "error not terminated within errlen");
	CHECK(__LINE__, strncmp(small, "WITCH_OUTPUT=bbbbbbbbbbbbbbbbbb", 31) == 0 &&
			    strlen(small) == 31,
	      "truncated error \"%s\", want the first 31 bytes", small);
	for (size_t i = 32; i < sizeof(small); i++)
		CHECK(__LINE__, small[i] == 'Z', "error buffer overrun at byte %zu", i);
}

/* ------------------------------------------------------------------ */
/* config_from_env                                                     */

static const char *const all_vars[] = {
	"WITCH_CLIENT", "WITCH_SAMPLER", "WITCH_RATE", "WITCH_PERIOD",
	"WITCH_WATCHPOINTS", "WITCH_OUTPUT", "WITCH_SEED", "WITCH_VERBOSE",
	"WITCH_MAX_STEPS", "WITCH_BUDGET", "WITCH_DEPTH", "WITCH_SLOW_REARM", "WITCH_FP_TOLERANCE",
	"WITCH_EVENT", "WITCH_FLUSH", "WITCH_MEMORY_MB",
};

static void clear_env(void)
{
	for (size_t i = 0; i < sizeof(all_vars) / sizeof(all_vars[0]); i++)
		unsetenv(all_vars[i]);
}

struct env_var {
	const char *name, *value;
};

struct env_row {
	int line;
	struct env_var set[12]; /* name NULL ends */
	const char *err;        /* NULL: accepted */
	/* expected fields when accepted (defaults otherwise, see below) */
	int client, sampler;
	uint32_t rate, watchpoints, depth, max_steps;
	uint64_t period, seed;
	int seed_set, verbose, slow_rearm;
	const char *output;
};

/* D: the defaults, as documented in config.h and asked of config_defaults */
#define D_CLIENT CONFIG_CLIENT_DEAD
#define D_SAMPLER CONFIG_SAMPLER_AUTO
#define D_RATE 20 /* the default budget's start (budget.h) */
#define D_OUTPUT "witch-%e-%p.prof"

static const struct env_row env_rows[] = {
	/* nothing set: the defaults */
	{__LINE__, {{NULL, NULL}}, NULL, D_CLIENT, D_SAMPLER, D_RATE, 0, 128, 32, 0, 0, 0, 0, 0,
	 D_OUTPUT},
	/* every variable set to a good value */
	{__LINE__,
	 {{"WITCH_CLIENT", "load"},
	  {"WITCH_SAMPLER", "soft"},
	  {"WITCH_RATE", "1000"},
	  {"WITCH_PERIOD", "5000"},
	  {"WITCH_WATCHPOINTS", "2"},
	  {"WITCH_OUTPUT", "/tmp/x-%p"},
	  {"WITCH_SEED", "42"},
	  {"WITCH_VERBOSE", "2"},
	  {"WITCH_MAX_STEPS", "7"},
	  {"WITCH_DEPTH", "64"},
	  {"WITCH_SLOW_REARM", "1"},
	  {NULL, NULL}},
	 NULL, CONFIG_CLIENT_LOAD, CONFIG_SAMPLER_SOFT, 1000, 2, 64, 7, 5000, 42, 1, 2, 1,
	 "/tmp/x-%p"},
	/* a few set, the rest stay default */
	{__LINE__, {{"WITCH_CLIENT", "silent"}, {"WITCH_SEED", "0"}, {NULL, NULL}}, NULL,
	 CONFIG_CLIENT_SILENT, D_SAMPLER, D_RATE, 0, 128, 32, 0, 0, 1, 0, 0, D_OUTPUT},
	/* a budget (the rate starts at its share of a first tick and follows
	 * it: 0.02 * 1e9 / 500e3 = 40) */
	{__LINE__, {{"WITCH_BUDGET", "2"}, {NULL, NULL}}, NULL,
	 D_CLIENT, D_SAMPLER, 40, 0, 128, 32, 0, 0, 0, 0, 0, D_OUTPUT},
	/* a fixed rate and a budget cannot both be had */
	{.line = __LINE__,
	 .set = {{"WITCH_RATE", "100"}, {"WITCH_BUDGET", "1"}, {NULL, NULL}},
	 .err = "WITCH_RATE=100 and WITCH_BUDGET=1: set one of them (a fixed rate, or a CPU "
		"budget the rate follows)"},
	/* one bad variable */
	{.line = __LINE__,
	 .set = {{"WITCH_RATE", "0"}, {NULL, NULL}},
	 .err = "WITCH_RATE=0: expected " E_RATE},
	/* set but empty is an error, not "unset" */
	{.line = __LINE__,
	 .set = {{"WITCH_RATE", ""}, {NULL, NULL}},
	 .err = "WITCH_RATE=: expected " E_RATE},
	{.line = __LINE__,
	 .set = {{"WITCH_OUTPUT", ""}, {NULL, NULL}},
	 .err = "WITCH_OUTPUT=: expected " E_OUTPUT},
	/* several bad: the first in config.h's order is reported (set in
	 * reverse order, so the environment's own order cannot decide) */
	{.line = __LINE__,
	 .set = {{"WITCH_SLOW_REARM", "9"},
		 {"WITCH_DEPTH", "0"},
		 {"WITCH_CLIENT", "bogus"},
		 {NULL, NULL}},
	 .err = "WITCH_CLIENT=bogus: expected " E_CLIENT},
	{.line = __LINE__,
	 .set = {{"WITCH_SLOW_REARM", "9"}, {"WITCH_WATCHPOINTS", "5"}, {"WITCH_CLIENT", "load"},
	  {NULL, NULL}},
	 .err = "WITCH_WATCHPOINTS=5: expected " E_WP},
	{.line = __LINE__,
	 .set = {{"WITCH_SEED", "18446744073709551616"}, {"WITCH_DEPTH", "513"}, {NULL, NULL}},
	 .err = "WITCH_SEED=18446744073709551616: expected " E_SEED},
	/* good ones around a bad one still fail */
	{.line = __LINE__,
	 .set = {{"WITCH_CLIENT", "dead"}, {"WITCH_SLOW_REARM", "1"}, {"WITCH_VERBOSE", "3"},
	  {NULL, NULL}},
	 .err = "WITCH_VERBOSE=3: expected " E_VERBOSE},
};

static void test_env(void)
{
	/* config_defaults itself */
	{
		struct witch_config d;
		memset(&d, 0xa5, sizeof(d));
		config_defaults(&d);
		CHECK(__LINE__, d.client == CONFIG_CLIENT_DEAD, "default client %d", d.client);
		CHECK(__LINE__, d.sampler == CONFIG_SAMPLER_AUTO, "default sampler %d", d.sampler);
		/* 1% of CPU time for a first tick of BUDGET_FIRST_TICK_NS (500 us): 20 a second */
		CHECK(__LINE__, d.rate == 20 && d.rate == budget_start_rate(CONFIG_DEFAULT_BUDGET),
		      "default rate %u", d.rate);
		CHECK(__LINE__, strcmp(d.output, "witch-%e-%p.prof") == 0, "default output \"%s\"",
		      d.output);
		CHECK(__LINE__, d.period == 0 && d.watchpoints == 0 && d.seed_set == 0 &&
				    d.verbose == 0 && d.slow_rearm == 0,
		      "default period %llu watchpoints %u seed_set %d verbose %d slow_rearm %d",
		      (unsigned long long)d.period, d.watchpoints, d.seed_set, d.verbose,
		      d.slow_rearm);
		CHECK(__LINE__, d.max_steps == CONFIG_DEFAULT_MAX_STEPS, "default max_steps %u",
		      d.max_steps);
		CHECK(__LINE__, d.budget == 0.01 && d.budget == CONFIG_DEFAULT_BUDGET, "default budget %g", d.budget);
		CHECK(__LINE__, d.depth == CONFIG_DEFAULT_DEPTH, "default depth %u", d.depth);
		CHECK(__LINE__, d.sigtrap == 1, "default sigtrap %d", d.sigtrap);
		CHECK(__LINE__, d.fp_tolerance == 0.01, "default fp_tolerance %g", d.fp_tolerance);
		CHECK(__LINE__, d.event[0] == '\0', "default event \"%s\"", d.event);
		CHECK(__LINE__, d.flush == 60, "default flush %u", d.flush);
		CHECK(__LINE__, d.memory_mb == 1024, "default memory_mb %u", d.memory_mb);
		CHECK(__LINE__, d.objects == 1, "default objects %d", d.objects);
		CHECK(__LINE__, strcmp(config_client_name(CONFIG_CLIENT_DEAD), "dead") == 0 &&
				    strcmp(config_client_name(CONFIG_CLIENT_SILENT), "silent") == 0 &&
				    strcmp(config_client_name(CONFIG_CLIENT_LOAD), "load") == 0,
		      "config_client_name");
	}

	for (size_t i = 0; i < sizeof(env_rows) / sizeof(env_rows[0]); i++) {
		const struct env_row *r = &env_rows[i];
		struct witch_config cfg;
		char err[2048];

		clear_env();
		/* an unrelated variable that only looks like ours is ignored */
		setenv("WITCHCRAFT", "1", 1);
		for (const struct env_var *v = r->set; v->name; v++)
			setenv(v->name, v->value, 1);
		config_defaults(&cfg);
		strcpy(err, "untouched");
		int rc = config_from_env(&cfg, err, sizeof(err));
		if (r->err) {
			CHECK(r->line, rc == -EINVAL, "rc %d, want -EINVAL", rc);
			CHECK(r->line, strcmp(err, r->err) == 0, "error\n  got  \"%s\"\n  want \"%s\"",
			      err, r->err);
			continue;
		}
		CHECK(r->line, rc == 0, "rc %d, want 0 (err \"%s\")", rc, err);
		struct witch_config want;
		config_defaults(&want);
		want.client = (enum config_client)r->client;
		want.sampler = (enum config_sampler)r->sampler;
		want.rate = r->rate;
		want.period = r->period;
		want.watchpoints = r->watchpoints;
		strcpy(want.output, r->output);
		want.seed = r->seed;
		want.seed_set = r->seed_set;
		want.verbose = r->verbose;
		want.max_steps = r->max_steps;
		want.depth = r->depth;
		want.slow_rearm = r->slow_rearm;
		for (const struct env_var *v = r->set; v->name; v++) {
			if (!strcmp(v->name, "WITCH_RATE"))
				want.budget = 0; /* a fixed rate */
			if (!strcmp(v->name, "WITCH_BUDGET"))
				want.budget = atof(v->value) / 100;
		}
		check_same(r->line, &cfg, &want);
	}
	clear_env();
	unsetenv("WITCHCRAFT");
}

int main(void)
{
	test_table();
	test_output_length();
	test_env();
	if (check_failures) {
		fprintf(stderr, "test_config: %d failure(s)\n", check_failures);
		return 1;
	}
	printf("test_config: %zu parse rows, %zu environment rows, all passed\n",
	       sizeof(rows) / sizeof(rows[0]), sizeof(env_rows) / sizeof(env_rows[0]));
	return 0;
}
