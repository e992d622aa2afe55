/* memlat: a load's latency past an L2 hit, from the TSC (see memlat.h). */
#include "witch/memlat.h"
#include "witch/cost.h"

#include <cpuid.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

static double tsc_per_ns;    /* 0: the TSC is not used */
static double probe_ticks;   /* a probe of a line in L1, fences and all */
static double line_ns = MEMLAT_MIN_NS; /* where misses start (memlat_init) */

#define DRAM_PROBES 15

/* CPUID 0x80000007 EDX bit 8: the TSC ticks at a constant rate in every
 * P- and C-state, so ticks are time. */
static int tsc_invariant(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000007, &a, &b, &c, &d))
		return 0;
	return (d >> 8) & 1;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* DRAM's latency past an L2 hit: the median probe of lines just flushed
 * from every cache (an interrupt in one cannot decide). */
static double dram_ns(void)
{
	static uint8_t lines[DRAM_PROBES * 64] __attribute__((aligned(64)));
	double ns[DRAM_PROBES];
	for (int i = 0; i < DRAM_PROBES; i++) {
		volatile uint8_t *line = lines + 64 * i;
		(void)*line;
		_mm_clflush((const void *)line);
		_mm_mfence();
		uint32_t t = memlat_time_load((const void *)line);
		ns[i] = t > probe_ticks ? ((double)t - probe_ticks) / tsc_per_ns : 0;
	}
	qsort(ns, DRAM_PROBES, sizeof ns[0], by_value);
	return ns[DRAM_PROBES / 2];
}

int memlat_init(void)
{
	static volatile uint8_t hot[64];
	if (!tsc_invariant())
		return -ENOTSUP;
	/* (A single 100 us run read whatever a lost CPU made of it.) */
	double rate = cost_measure_tsc_per_ns();
	if (rate <= 0)
		return -ENOTSUP;
	/* The fastest of many: an interrupt can only add. */
	uint32_t best = UINT32_MAX;
	for (int i = 0; i < 256; i++) {
		uint32_t t = memlat_time_load((const void *)hot);
		if (t < best)
			best = t;
	}
	probe_ticks = best;
	tsc_per_ns = rate;
	double line = dram_ns() * MEMLAT_LINE_OF_DRAM;
	if (line > MEMLAT_MIN_NS)
		line = MEMLAT_MIN_NS;
	if (line < MEMLAT_LINE_FLOOR_NS)
		line = MEMLAT_LINE_FLOOR_NS;
	line_ns = line;
	return 0;
}

int memlat_probes_get(double v[MEMLAT_PROBES])
{
	if (tsc_per_ns <= 0)
		return -ENOTSUP;
	v[0] = tsc_per_ns;
	v[1] = probe_ticks;
	v[2] = line_ns;
	return 0;
}

double memlat_tsc_per_ns(void)
{
	return tsc_per_ns;
}

int memlat_probes_set(const double v[MEMLAT_PROBES])
{
	if (!(v[0] > 0) || !(v[1] > 0) || !(v[2] > 0) || !tsc_invariant())
		return -EINVAL;
	tsc_per_ns = v[0];
	probe_ticks = v[1];
	line_ns = v[2];
	return 0;
}

double memlat_line_ns(void)
{
	return line_ns;
}

uint32_t memlat_time_probe(const void *p)
{
	uint32_t ticks = memlat_time_load(p);
	if (memlat_extra_ns(ticks) == 0)
		return ticks;
	volatile uint8_t hot = 0;
	(void)hot;
	if (memlat_extra_ns(memlat_time_load((const void *)&hot)) > 0)
		return 0;
	return ticks;
}

double memlat_extra_ns(uint32_t ticks)
{
	if (tsc_per_ns <= 0 || ticks <= probe_ticks)
		return 0;
	double ns = ((double)ticks - probe_ticks) / tsc_per_ns;
	return ns >= line_ns && ns <= MEMLAT_MAX_NS ? ns : 0;
}
