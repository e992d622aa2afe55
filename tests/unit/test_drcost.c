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
 * and checks the sums, then drcost_over at a 1% budget.  Prices are the
 * defaults (drcost_init not called): 0.28 ns a byte, 1000 ns a fault.
 * Expected values, derived per row:
 *   cost = armed bytes x 0.28 + armed faults x 1000;
 *   over = cost x 0.875^ticks after it > 1% of the program time, decayed
 *          alike (each tick: sums x 0.875, then + its ms).
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
};

static const struct row rows[] = {
	/* Only the armed stretch counts: 4096 x 0.28 + 2 x 1000. */
	{__LINE__, "F4096/0 A4096/2", 4096, 2, 3146.88, 0},
	/* Free stretches cost nothing. */
	{__LINE__, "F100000/10", 0, 0, 0, 0},
	/* Armed, then free in a run that read nothing: mixed, not counted. */
	{__LINE__, "A1000/0s F1000/0", 0, 0, 0, 0},
	/* Armed on both sides of such a run: one armed stretch, 560 + 1000. */
	{__LINE__, "A1000/0s A1000/1", 2000, 1, 1560, 0},
	/* 28 us, faded once to 24.5, against 1% of 1 ms = 10 us: over. */
	{__LINE__, "A100000/0 T1:1", 100000, 0, 28000, 1},
	/* 2.8 us, faded to 2.45: not over. */
	{__LINE__, "A10000/0 T1:1", 10000, 0, 2800, 0},
	/* Ten more ticks of 1 ms: 28 x 0.875^11 = 6.4 us against 1% of
	 * (1 - 0.875^11) / 0.125 = 6.16 ms: not over any more. */
	{__LINE__, "A100000/0 T1:1 T10:1", 100000, 0, 28000, 0},
	/* A fault stretch after a tick: 12 faults = 12 us, after 0 more ticks
	 * not faded, against the 1 ms tick: over. */
	{__LINE__, "F0/0 T1:1 A0/12", 0, 12, 12000, 1},
};

static void play(const struct row *r, struct drcost_sums *sum, struct drcost *d)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", r->play);
	uint64_t bytes = 0, faults = 0;
	int armed = 0;
	drcost_begin(d);
	memset(sum, 0, sizeof(*sum));
	for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
		char *p = tok + 1;
		if (tok[0] == 'T') {
			drcost_account(d, bytes, faults, sum);
			long n = strtol(p, &p, 10);
			double ms = strtod(p + 1, &p);
			for (long i = 0; i < n; i++)
				drcost_tick(d, ms * 1e6);
			drcost_leave(d, armed, 0);
			continue;
		}
		drcost_account(d, bytes, faults, sum);
		uint64_t b = strtoull(p, &p, 10);
		uint64_t f = strtoull(p + 1, &p, 10);
		armed = tok[0] == 'A';
		drcost_leave(d, armed, *p == 's');
		bytes += b;
		faults += f;
	}
	drcost_account(d, bytes, faults, sum);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct drcost_sums s;
		struct drcost d;
		play(r, &s, &d);
		CHECK(r->line, s.bytes_armed == r->bytes && s.faults_armed == r->faults,
		      "%s: armed bytes %llu faults %llu, want %llu %llu", r->play,
		      (unsigned long long)s.bytes_armed, (unsigned long long)s.faults_armed,
		      (unsigned long long)r->bytes, (unsigned long long)r->faults);
		CHECK(r->line, fabs((double)s.cost_ns - r->cost_ns) <= 1, "%s: cost %llu ns, want %.0f",
		      r->play, (unsigned long long)s.cost_ns, r->cost_ns);
		CHECK(r->line, drcost_over(&d, 0.01) == r->over, "%s: over %d, want %d", r->play,
		      drcost_over(&d, 0.01), r->over);
	}
	return check_failures != 0;
}
