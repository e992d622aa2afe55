/* config: the runtime's settings, read once from the environment.
 *
 * Variables: WITCH_CLIENT, WITCH_SAMPLER, WITCH_RATE, WITCH_PERIOD,
 * WITCH_WATCHPOINTS, WITCH_OUTPUT, WITCH_SEED, WITCH_VERBOSE,
 * WITCH_MAX_STEPS, WITCH_BUDGET, WITCH_DEPTH, WITCH_SLOW_REARM, WITCH_FP_TOLERANCE,
 * WITCH_EVENT, WITCH_FLUSH, WITCH_MEMORY_MB, WITCH_OBJECTS
 * (README lists them).
 */
#ifndef WITCH_CONFIG_H
#define WITCH_CONFIG_H

#include <stddef.h>
#include <stdint.h>

enum config_client { CONFIG_CLIENT_DEAD, CONFIG_CLIENT_SILENT, CONFIG_CLIENT_LOAD };
enum config_sampler { CONFIG_SAMPLER_AUTO, CONFIG_SAMPLER_SOFT, CONFIG_SAMPLER_PMU };
/* What decides a sample's verdict: a watchpoint's trap (Witch 4.4), or the
 * run-ahead alone (its window and reach, look.h: where debug registers
 * never trap, or WITCH_WATCHPOINTS=window), or nothing: the samples are
 * weighed only (WITCH_WATCHPOINTS=0). */
enum config_verdicts { CONFIG_VERDICTS_TRAPS, CONFIG_VERDICTS_WINDOW, CONFIG_VERDICTS_NONE };

#define CONFIG_DEFAULT_OUTPUT "witch-%e-%p.prof"
/* Past this a tick comes before the handlers of the last one are done
 * (10-30 us each here): the signals queue up until the kernel gives up. */
#define CONFIG_MAX_RATE 10000
#define CONFIG_DEFAULT_MAX_STEPS 32
/* The share of CPU time the soft sampler may spend, by default: what
 * always-on profilers aim for (Google-wide profiling stays under 1%); the
 * rate follows it (budget.h).  WITCH_RATE fixes the rate instead. */
#define CONFIG_DEFAULT_BUDGET 0.01
#define CONFIG_DEFAULT_DEPTH 128
#define CONFIG_MAX_DEPTH 512
#define CONFIG_MAX_WATCHPOINTS 4
#define CONFIG_PATH_MAX 1024
#define CONFIG_EVENT_MAX 256
#define CONFIG_DEFAULT_FLUSH 60 /* seconds between profile writes */
#define CONFIG_DEFAULT_MEMORY_MB 1024 /* ~120 profiled threads at a time */
#define CONFIG_DEFAULT_FP_TOLERANCE 0.01 /* RedSpy's and LoadSpy's 1% */

struct witch_config {
	enum config_client client;
	enum config_sampler sampler;
	uint32_t rate;            /* soft sampler: ticks per CPU-second (the start, with a budget:
				     budget_start_rate) */
	uint64_t period;          /* pmu sampler: events per sample; 0 = per-client default */
	uint32_t watchpoints;     /* 0 = all the hardware has */
	enum config_verdicts verdicts; /* WITCH_WATCHPOINTS=0: none; =window: the run-ahead's */
	char output[CONFIG_PATH_MAX]; /* pattern: %p pid, %e exe basename, %% */
	uint64_t seed;
	int seed_set;
	int verbose;
	uint32_t max_steps;
	double budget;            /* soft sampler: CPU share the profiler may spend, 0 = fixed rate */
	uint32_t depth;
	int slow_rearm;
	int sigtrap;        /* traps as perf SIGTRAPs where the kernel has them */
	double fp_tolerance;      /* relative: FP values this close are approximately equal */
	uint32_t flush;           /* seconds between profile writes, 0 = only at exit */
	int flush_set;            /* WITCH_FLUSH given: the writer runs even in a program with no threads */
	uint32_t memory_mb;       /* cap on what profiled threads reserve */
	int objects;              /* data-centric attribution: track heap blocks (heap.h) */
	int startup_times;        /* at exit, what each start-up and exit step took (startstep.h) */
	char event[CONFIG_EVENT_MAX]; /* pmu sampler: libpfm4 event; "" = per-client default */
};

void config_defaults(struct witch_config *cfg);
/* Parse the WITCH_* variables over the defaults.  Returns 0, or -EINVAL with
 * err holding the one-line message (without "witch: ") naming the variable,
 * its value and what is expected. */
int config_from_env(struct witch_config *cfg, char *err, size_t errlen);
/* Set a variable for the processes this one starts, through the C
 * library's setenv: a program may define its own (bash does, over its
 * variable table, which it fills from the C library's environment at main
 * and exports to what it runs).  Before main.  0 or -errno. */
int config_env_hand_down(const char *name, const char *value);
/* Parse one variable (used by config_from_env and the unit test). */
int config_parse(struct witch_config *cfg, const char *name, const char *value,
		 char *err, size_t errlen);
const char *config_client_name(enum config_client c);
/* "traps", "window" or "none": the profile's `verdicts` record. */
const char *config_verdicts_name(enum config_verdicts v);
/* Whether debug registers are opened and armed. */
static inline int config_arms_watchpoints(const struct witch_config *cfg)
{
	return cfg->verdicts == CONFIG_VERDICTS_TRAPS;
}

#endif
