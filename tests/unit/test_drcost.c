/* test_drcost: what armed watchpoints cost the program's kernel work (drcost.h).
 *
 * Each row plays a thread's stretches between handler runs:
 *   F<b>/<f>   a stretch with no watchpoint armed: b bytes read or written,
 *              f page faults
 *   A<b>/<f>   ... with watchpoints armed
 *   s          (after a stretch) the run that starts it expects the program
 *              right back: the next entry reads no counts, so this stretch
 *              and the next are one, and mixed (not counted) when their
 *              states differ
 *   T<n>:<ms>  a tick's run ends the stretch, then n ticks each standing for
 *              ms of the program's time; the next stretch is as this one was
 * and checks the sums, then drcost_over at a 1% budget, and how often
 * the thread's counts were read (a system call in the runtime): only at
 * the entry that ends an armed stretch and at the exit that starts one
 * (a stretch that continues through a run read at its entry needs none).
 * Prices are the defaults (drcost_price not called): 0.28 ns a byte,
 * 1000 ns a fault.
 * Expected values, derived per row:
 *   cost = armed bytes x 0.28 + armed faults x 1000;
 *   over = cost x 0.875^ticks after it > 1% of the program time, decayed
 *          alike (each tick: sums x 0.875, then + its ms);
 *   io limit (drcost_io_limit after the last run, an allowance of 10 us):
 *          the last stretch's starting count + (10,000 - the armed cost
 *          since the last tick) / 0.28, its start once that is spent, and
 *          none (NONE) when the last stretch is not armed and counted.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "witch/drcost.h"

struct row {
	int line;
	const char *play;
	uint64_t bytes, faults;
	double cost_ns;
	int over;
	int reads;
	uint64_t io_limit;
};

#define NONE UINT64_MAX

static const struct row rows[] = {
	/* Only the armed stretch counts: 4096 x 0.28 + 2 x 1000.  Reads: at
	 * the exit that starts it and the entry that ends it. */
	{__LINE__, "F4096/0 A4096/2", 4096, 2, 3146.88, 0, 2, 4096 + 35714},
	/* Free stretches cost nothing, and read nothing. */
	{__LINE__, "F100000/10", 0, 0, 0, 0, 0, NONE},
	/* Armed, then free in a run that read nothing: mixed, not counted
	 * (one read, where the armed stretch began). */
	{__LINE__, "A1000/0s F1000/0", 0, 0, 0, 0, 1, NONE},
	/* Armed on both sides of such a run: one armed stretch, 560 + 1000. */
	{__LINE__, "A1000/0s A1000/1", 2000, 1, 1560, 0, 2, 35714},
	/* 28 us, faded once to 24.5, against 1% of 1 ms = 10 us: over.  The
	 * tick's run reads once: its entry's count starts the next stretch. */
	{__LINE__, "A100000/0 T1:1", 100000, 0, 28000, 1, 3, 135714},
	/* 2.8 us, faded to 2.45: not over. */
	{__LINE__, "A10000/0 T1:1", 10000, 0, 2800, 0, 3, 45714},
	/* Ten more ticks of 1 ms: 28 x 0.875^11 = 6.4 us against 1% of
	 * (1 - 0.875^11) / 0.125 = 6.16 ms: not over any more. */
	{__LINE__, "A100000/0 T1:1 T10:1", 100000, 0, 28000, 0, 4, 135714},
	/* A fault stretch after a tick: 12 faults = 12 us, after 0 more ticks
	 * not faded, against the 1 ms tick: over. */
	{__LINE__, "F0/0 T1:1 A0/12", 0, 12, 12000, 1, 2, 35714},
	/* The io limit counts the armed stretches since the tick: 28 us spent
	 * of 10, so the next byte passes it (the stretch began at 100,000). */
	{__LINE__, "A100000/0 A0/0", 100000, 0, 28000, 0, 3, 100000},
	/* 5.6 us spent, then a free stretch of 50,000 bytes that costs
	 * nothing: 70,000 + 4,400 / 0.28. */
	{__LINE__, "A20000/0 F50000/0 A0/0", 20000, 0, 5600, 0, 4, 70000 + 15714},
};

/* The thread's counts as the row has played them. */
static uint64_t now_bytes, now_faults;
static int n_reads;

static int fake_read(uint64_t *bytes, uint64_t *faults)
{
	n_reads++;
	*bytes = now_bytes;
	*faults = now_faults;
	return 0;
}

static void play(const struct row *r, struct drcost_sums *sum, struct drcost *d,
		 uint64_t *io_limit)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", r->play);
	int armed = 0;
	now_bytes = now_faults = 0;
	n_reads = 0;
	drcost_begin(d);
	memset(sum, 0, sizeof(*sum));
	for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
		char *p = tok + 1;
		drcost_enter(d, sum); /* a handler run */
		if (tok[0] == 'T') {
			long n = strtol(p, &p, 10);
			double ms = strtod(p + 1, &p);
			for (long i = 0; i < n; i++)
				drcost_tick(d, ms * 1e6);
			drcost_leave(d, armed, 0);
			*io_limit = drcost_io_limit(d, 10000);
			continue;
		}
		uint64_t b = strtoull(p, &p, 10);
		uint64_t f = strtoull(p + 1, &p, 10);
		armed = tok[0] == 'A';
		drcost_leave(d, armed, *p == 's');
		*io_limit = drcost_io_limit(d, 10000);
		now_bytes += b; /* the program's stretch */
		now_faults += f;
	}
	drcost_enter(d, sum);
}

int main(void)
{
	drcost_set_reader(fake_read);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct drcost_sums s;
		struct drcost d;
		uint64_t io_limit = 0;
		play(r, &s, &d, &io_limit);
		CHECK(r->line, s.bytes_armed == r->bytes && s.faults_armed == r->faults,
		      "%s: armed bytes %llu faults %llu, want %llu %llu", r->play,
		      (unsigned long long)s.bytes_armed, (unsigned long long)s.faults_armed,
		      (unsigned long long)r->bytes, (unsigned long long)r->faults);
		CHECK(r->line, fabs((double)s.cost_ns - r->cost_ns) <= 1, "%s: cost %llu ns, want %.0f",
		      r->play, (unsigned long long)s.cost_ns, r->cost_ns);
		CHECK(r->line, drcost_over(&d, 0.01) == r->over, "%s: over %d, want %d", r->play,
		      drcost_over(&d, 0.01), r->over);
		CHECK(r->line, io_limit == r->io_limit, "%s: io limit %llu, want %llu", r->play,
		      (unsigned long long)io_limit, (unsigned long long)r->io_limit);
		CHECK(r->line, n_reads == r->reads, "%s: %d reads of the counts, want %d", r->play,
		      n_reads, r->reads);
	}
	/* Unpriced, the EPYC's 0.28 ns a byte: armed rep strings are slow. */
	CHECK(__LINE__, !drcost_armed_strings_fast(), "armed strings fast before any price");
	return check_failures != 0;
}
