/* startstep: a short process's fixed cost, step by step (see startstep.h). */
#include "witch/startstep.h"
#include "witch/cost.h"
#include "witch/lbss.h"
#include "witch/log.h"

#include <stdint.h>
#include <x86intrin.h>

#define STARTSTEP_MAX 48

/* (touched only when asked for: not among the pages every start touches) */
static struct {
	const char *name;
	uint64_t tsc;
} startstep_marks[STARTSTEP_MAX] WITCH_LBSS;
static int startstep_n, startstep_on;

void startstep_begin(uint64_t tsc, int on)
{
	startstep_on = on;
	if (!on)
		return;
	startstep_marks[0].name = "entry";
	startstep_marks[0].tsc = tsc;
	startstep_n = 1;
}

void startstep_mark(const char *name)
{
	if (!startstep_on || startstep_n >= STARTSTEP_MAX)
		return;
	startstep_marks[startstep_n].name = name;
	startstep_marks[startstep_n++].tsc = __rdtsc();
}

void startstep_say(void)
{
	char line[2048];
	int n = 0;
	if (!startstep_on || startstep_n < 2)
		return;
	for (int i = 1; i < startstep_n && n < (int)sizeof(line) - 64; i++)
		n += log_snprintf(line + n, sizeof(line) - (size_t)n, " %s=%lu", startstep_marks[i].name,
				  (unsigned long)(cost_tsc_ns(startstep_marks[i].tsc -
							      startstep_marks[i - 1].tsc) / 1000.0 + 0.5));
	log_verbose(0, "startup steps (us):%s", line); /* asked for: whatever the verbosity */
}
