/* drcost: armed debug registers' cost to the program's kernel work (see drcost.h). */
#include "witch/drcost.h"
#include "witch/lbss.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#include "witch/iocount.h"
#include "witch/rawsys.h"

#define DRCOST_FADE 0.875 /* the recent sums, at every tick (~8 ticks) */
#define PROBE_FAULTS 32
#define PROBE_COPY (16u << 10) /* a pipe's write and read: 2 copies */
#define PROBE_COPIES 4

/* Measured here (bench/dr_fast_string.c) until drcost_price measures. */
static double fault_ns = 1000.0, byte_ns = 0.28;

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ns a page's first touch takes, and a byte's copy through a pipe (raw
 * system calls: it runs in a handler). */
static int probe(double *fault, double *byte)
{
	static char buf[PROBE_COPY] WITCH_LBSS;
	int p[2];
	long r = rawsys6(SYS_mmap, 0, PROBE_FAULTS * 4096l, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r < 0 && r > -4096)
		return (int)r;
	char *m = (char *)r;
	double t0 = now_ns();
	for (int i = 0; i < PROBE_FAULTS; i++)
		((volatile char *)m)[i * 4096] = 1;
	*fault = (now_ns() - t0) / PROBE_FAULTS;
	rawsys6(SYS_munmap, (long)m, PROBE_FAULTS * 4096l, 0, 0, 0, 0);
	if ((r = rawsys6(SYS_pipe2, (long)p, O_CLOEXEC, 0, 0, 0, 0)) < 0)
		return (int)r;
	int rc = 0;
	t0 = now_ns();
	for (int i = 0; i < PROBE_COPIES && rc == 0; i++)
		if (rawsys6(SYS_write, p[1], (long)buf, PROBE_COPY, 0, 0, 0) != PROBE_COPY ||
		    rawsys6(SYS_read, p[0], (long)buf, PROBE_COPY, 0, 0, 0) != PROBE_COPY)
			rc = -EIO;
	*byte = (now_ns() - t0) / (2.0 * PROBE_COPIES * PROBE_COPY);
	rawsys6(SYS_close, p[0], 0, 0, 0, 0, 0);
	rawsys6(SYS_close, p[1], 0, 0, 0, 0, 0);
	return rc;
}

static int priced; /* 0 not yet, 1 being priced or priced */

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

int drcost_price(int (*arm)(void *ctx, int on), void *ctx)
{
	int no = 0;
	if (!__atomic_compare_exchange_n(&priced, &no, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return 0; /* another thread does */
	/* The better of two runs each way, interleaved: the armed run is
	 * slower by what DR7 costs. */
	double f[2][2], b[2][2];
	int rc = 0;
	for (int run = 0; run < 2 && rc == 0; run++)
		for (int armed = 0; armed < 2 && rc == 0; armed++)
			if ((rc = arm(ctx, armed)) == 0)
				rc = probe(&f[armed][run], &b[armed][run]);
	int off = arm(ctx, 0);
	if (rc < 0 || off < 0)
		return rc < 0 ? rc : off;
	fault_ns = armed_extra(f);
	byte_ns = armed_extra(b);
	return 0;
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
