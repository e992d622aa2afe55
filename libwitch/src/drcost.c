/* drcost: armed debug registers' cost to the program's kernel work (see drcost.h). */
#include "witch/drcost.h"
#include "witch/lbss.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#include "witch/iocount.h"
#include "witch/rawsys.h"

#define DRCOST_FADE 0.875 /* the recent sums, at every tick (~8 ticks) */
#define PROBE_COPY (16u << 10) /* a pipe's write and read: 2 copies */
#define PROBE_COPIES 4
/* A page's first touch is the kernel's clear of it, one `rep stosb` of
 * 4 KiB, which DR7 slows as it does the copies: on the EPYC, 1.01 us
 * measured (docs/cost.md's table) against 4096 x 0.27 ns a copied byte.
 * Priced so, not timed: 32 faults each way took 1.6-2.4 ms of a process
 * on a VM whose faults cost 12 us, the pipe's copies ~0.17 ms. */
#define PAGE_BYTES 4096.0

/* Measured here (bench/dr_fast_string.c) until drcost_price measures. */
static double fault_ns = 1000.0, byte_ns = 0.28;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns a byte's copy through a pipe takes (raw system calls: it runs in a
 * handler). */
static int probe(double *byte)
{
	static char buf[PROBE_COPY] WITCH_LBSS;
	int p[2];
	long r;
	if ((r = rawsys6(SYS_pipe2, (long)p, O_CLOEXEC, 0, 0, 0, 0)) < 0)
		return (int)r;
	int rc = 0;
	double t0 = now_ns();
	for (int i = 0; i < PROBE_COPIES && rc == 0; i++)
		if (rawsys6(SYS_write, p[1], (long)buf, PROBE_COPY, 0, 0, 0) != PROBE_COPY ||
		    rawsys6(SYS_read, p[0], (long)buf, PROBE_COPY, 0, 0, 0) != PROBE_COPY)
			rc = -EIO;
	*byte = (now_ns() - t0) / (2.0 * PROBE_COPIES * PROBE_COPY);
	rawsys6(SYS_close, p[0], 0, 0, 0, 0, 0);
	rawsys6(SYS_close, p[1], 0, 0, 0, 0, 0);
	return rc;
}

static int priced; /* 0 not yet, 1 being priced, priced or handed */
static int source; /* enum drcost_source, set once the prices are in */

#define FAULT_NS_MAX 1e6 /* a handed price past these is refused */
#define BYTE_NS_MAX 1e3

/* t[armed][run]: the better run armed less the better run not, at least 0. */
static double armed_extra(double t[2][2])
{
	double free_ = t[0][0] < t[0][1] ? t[0][0] : t[0][1];
	double armed = t[1][0] < t[1][1] ? t[1][0] : t[1][1];
	return armed > free_ ? armed - free_ : 0;
}

int drcost_priced(void)
{
	return __atomic_load_n(&priced, __ATOMIC_ACQUIRE);
}

int drcost_price(int (*arm)(void *ctx, int on), void *ctx, enum drcost_source where)
{
	int no = 0;
	if (!__atomic_compare_exchange_n(&priced, &no, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0; /* another thread does */
	/* The better of two runs each way, interleaved: the armed run is
	 * slower by what DR7 costs. */
	double b[2][2];
	int rc = 0;
	for (int run = 0; run < 2 && rc == 0; run++)
		for (int armed = 0; armed < 2 && rc == 0; armed++)
			if ((rc = arm(ctx, armed)) == 0)
				rc = probe(&b[armed][run]);
	int off = arm(ctx, 0);
	if (rc < 0 || off < 0) {
		/* Failed in the constructor: the first tick tries again (a
		 * tick's failure is not retried: the defaults stay). */
		if (where == DRCOST_AT_START)
			__atomic_store_n(&priced, 0, __ATOMIC_RELEASE);
		return rc < 0 ? rc : off;
	}
	byte_ns = armed_extra(b);
	fault_ns = PAGE_BYTES * byte_ns;
	__atomic_store_n(&source, (int)where, __ATOMIC_RELEASE);
	return 0;
}

int drcost_price_set(double fault, double byte)
{
	/* (negated so that a NaN is refused too) */
	if (!(fault >= 0 && fault <= FAULT_NS_MAX && byte >= 0 && byte <= BYTE_NS_MAX))
		return -EINVAL;
	fault_ns = fault;
	byte_ns = byte;
	__atomic_store_n(&source, DRCOST_HANDED, __ATOMIC_RELEASE);
	__atomic_store_n(&priced, 1, __ATOMIC_RELEASE);
	return 0;
}

int drcost_price_get(double *fault, double *byte)
{
	if (__atomic_load_n(&source, __ATOMIC_ACQUIRE) == DRCOST_DEFAULT)
		return -ENOENT;
	*fault = fault_ns;
	*byte = byte_ns;
	return 0;
}

enum drcost_source drcost_price_source(void)
{
	return (enum drcost_source)__atomic_load_n(&source, __ATOMIC_ACQUIRE);
}

void drcost_postfork_child(void)
{
	if (source != DRCOST_DEFAULT)
		source = DRCOST_HANDED;
	else
		priced = 0;
}

double drcost_fault_ns(void)
{
	return fault_ns;
}

double drcost_byte_ns(void)
{
	return byte_ns;
}

/* A tenth of the EPYC's 0.28 ns: an Emerald Rapids VM priced 0-0.003. */
#define FAST_ARMED_BYTE_NS 0.03

int drcost_armed_strings_fast(void)
{
	return drcost_priced() && byte_ns < FAST_ARMED_BYTE_NS;
}

void drcost_begin(struct drcost *d)
{
	*d = (struct drcost){.state = -1};
}

static int drcost_read_thread(uint64_t *bytes, uint64_t *faults)
{
	struct rusage ru;
	long rc = rawsys6(SYS_getrusage, RUSAGE_THREAD, (long)&ru, 0, 0, 0, 0);
	if (rc < 0)
		return (int)rc;
	*bytes = iocount_bytes();
	*faults = (uint64_t)ru.ru_minflt;
	return 0;
}

static drcost_reader drcost_read = drcost_read_thread;

void drcost_set_reader(drcost_reader fn)
{
	drcost_read = fn ? fn : drcost_read_thread;
}

/* The stretch's counts at its start: 0, or -1 (then it is not counted). */
static int drcost_read_base(struct drcost *d)
{
	if (drcost_read(&d->bytes, &d->faults) < 0) {
		d->base_known = 0;
		return -1;
	}
	d->base_known = 1;
	return 0;
}

/* What an armed stretch cost, given the thread's counts at its end. */
static void drcost_account(struct drcost *d, uint64_t bytes, uint64_t faults,
			   struct drcost_sums *s)
{
	if (bytes >= d->bytes && faults >= d->faults) {
		uint64_t db = bytes - d->bytes, df = faults - d->faults;
		double cost = (double)db * byte_ns + (double)df * fault_ns;
		s->bytes_armed += db;
		s->faults_armed += df;
		s->cost_ns += (uint64_t)cost;
		d->cost_since_tick += cost;
		d->recent_cost += cost;
	}
	d->bytes = bytes;
	d->faults = faults;
}

void drcost_enter(struct drcost *d, struct drcost_sums *s)
{
	if (d->skip_read)
		return;
	uint64_t bytes, faults;
	if (d->state == 1 && d->base_known && drcost_read(&bytes, &faults) == 0)
		drcost_account(d, bytes, faults, s); /* (its end: the next one's start) */
	else
		d->base_known = 0; /* a free stretch costs nothing: no read */
	d->state = -1; /* until this run's exit says */
}

void drcost_leave(struct drcost *d, int armed, int soon)
{
	int now = armed ? 1 : 0;
	if (!d->skip_read)
		d->state = now; /* a new stretch */
	else if (d->state != now)
		d->state = -1; /* it changed in a run that did not read: not counted */
	if (d->state == 1 && !d->base_known && drcost_read_base(d) < 0)
		d->state = -1;
	d->skip_read = soon;
}

double drcost_tick(struct drcost *d, double program_ns)
{
	double c = d->cost_since_tick;
	d->cost_since_tick = 0;
	d->ticks++;
	d->recent_cost *= DRCOST_FADE;
	d->recent_ns = d->recent_ns * DRCOST_FADE + (program_ns > 0 ? program_ns : 0);
	return c;
}

int drcost_over(const struct drcost *d, double budget)
{
	return d->recent_ns > 0 && d->recent_cost > budget * d->recent_ns;
}

uint64_t drcost_io_limit(const struct drcost *d, double allowance_ns)
{
	if (d->state != 1 || !d->base_known || !(byte_ns > 0))
		return UINT64_MAX;
	double left = allowance_ns - d->cost_since_tick;
	if (!(left > 0))
		return d->bytes;
	double bytes = left / byte_ns;
	return bytes < (double)(UINT64_MAX - d->bytes) ? d->bytes + (uint64_t)bytes : UINT64_MAX;
}
