/* test_drcost: what armed watchpoints cost the program's system time (drcost.h).
 *
 * Each row plays a thread's stretches between handler runs, in ms:
 *   F<u>/<s>   a stretch with no watchpoint armed: u user, s system time
 *   A<u>/<s>   ... with watchpoints armed
 *   k<r>       (after a stretch) r ms of it were the runtime's own round trips
 *   s          (after a stretch) the run that ends it expects the program
 *              right back: the next entry reads no clock, so this stretch
 *              and the next are one, and mixed when their states differ
 *   T<n>       a tick's run ends the stretch, n ticks (each fades the armed
 *              sums by 0.875), and the next stretch is as this one was
 * and the sums drcost_account adds up, then drcost_over at a 1% budget.
 * Expected values, derived per row:
 *   cost = an armed stretch's system time less user x (the recent free
 *          stretches' system / user), when those add up to >= 1 ms user;
 *   over = the faded armed cost > 1% of the faded armed user time, and
 *          that user time >= 1 ms.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "witch/drcost.h"

#define MS 1e6

struct row {
	int line;
	const char *play;
	double cost_ms, matched_ms, armed_ms, sys_ms;
	int over;
};

static const struct row rows[] = {
	/* Rate 1 from the free stretch; 30 armed against 10 expected. */
	{__LINE__, "F10/10 A10/30", 20, 10, 10, 40, 1},
	/* No free stretch before: no rate, the armed time counted apart. */
	{__LINE__, "A10/30", 0, 0, 10, 30, 0},
	/* As fast armed as free: nothing; over needs a cost. */
	{__LINE__, "F10/10 A10/10", 0, 10, 10, 20, 0},
	/* Free stretches under 1 ms of user time give no rate. */
	{__LINE__, "F0.5/5 A10/30", 0, 0, 10, 35, 0},
	/* The runtime's round trips are not the program's: free 10 - 5 = 5
	 * (rate 0.5), armed 30 - 10 = 20 against 5 expected. */
	{__LINE__, "F10/10k5 A10/30k10", 15, 10, 10, 25, 1},
	/* The stretch that ends in a run expecting the program back merges
	 * with the next; armed then free is mixed: counted in neither. */
	{__LINE__, "F10/10 A10/30s F10/10", 0, 0, 0, 50, 0},
	/* ... but the same state on both sides is one armed stretch of 20/60:
	 * 60 - 20 = 40. */
	{__LINE__, "F10/10 A10/30s A10/30", 40, 20, 20, 70, 1},
	/* The recent rate: the older free stretch decays by 0.875 at the
	 * next: rate (10 x 0.875 + 40) / (10 x 0.875 + 10) = 2.6; armed 10/50
	 * costs 50 - 26 = 24. */
	{__LINE__, "F10/10 F10/40 A10/50", 24, 10, 10, 100, 1},
	/* Cheaper armed than free costs nothing (no negative cost). */
	{__LINE__, "F10/30 A10/10", 0, 10, 10, 40, 0},
	/* 20 ticks fade 10 ms of armed user time to 0.69 ms: under 1 ms, not
	 * over any more; after 17 it is 1.03 ms (cost 2.07): over. */
	{__LINE__, "F10/10 A10/30 T20", 20, 10, 10, 40, 0},
	{__LINE__, "F10/10 A10/30 T17", 20, 10, 10, 40, 1},
	/* A cost of 0.5% of the armed user time is within a 1% budget. */
	{__LINE__, "F100/100 A100/100.5", 0.5, 100, 100, 200.5, 0},
	{__LINE__, "F100/100 A100/102", 2, 100, 100, 202, 1},
};

/* Plays r as the handler runs would: each stretch ends at an entry
 * (drcost_account, as drcost_enter with the clock read) and the run there
 * leaves in the next stretch's state. */
static void play(const struct row *r, struct drcost_sums *sum, struct drcost *d)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", r->play);
	double user = 0, sys = 0, kern = 0;
	int armed = 0;
	drcost_begin(d);
	memset(sum, 0, sizeof(*sum));
	for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
		if (tok[0] == 'T') { /* a tick's run ends the stretch and leaves it as it was */
			drcost_account(d, (uint64_t)user, (uint64_t)sys, kern, sum);
			kern = 0;
			for (int i = atoi(tok + 1); i > 0; i--)
				drcost_tick(d);
			drcost_leave(d, armed, 0);
			continue;
		}
		drcost_account(d, (uint64_t)user, (uint64_t)sys, kern, sum);
		char *p = tok + 1;
		double du = strtod(p, &p);
		double ds = strtod(p + 1, &p);
		int soon = 0;
		kern = 0;
		while (*p) {
			if (*p == 'k')
				kern = strtod(p + 1, &p) * MS;
			else if (*p++ == 's')
				soon = 1;
		}
		armed = tok[0] == 'A';
		drcost_leave(d, armed, soon);
		user += du * MS;
		sys += ds * MS;
	}
	drcost_account(d, (uint64_t)user, (uint64_t)sys, kern, sum);
}

static int near(double got_ns, double want_ms)
{
	return fabs(got_ns / MS - want_ms) < 1e-3 * (1 + fabs(want_ms));
}

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct drcost_sums s;
		struct drcost d;
		play(r, &s, &d);
		CHECK(r->line, near((double)s.cost_ns, r->cost_ms), "%s: cost %.3f ms, want %.3f",
		      r->play, (double)s.cost_ns / MS, r->cost_ms);
		CHECK(r->line, near((double)s.user_matched_ns, r->matched_ms),
		      "%s: matched %.3f ms, want %.3f", r->play, (double)s.user_matched_ns / MS,
		      r->matched_ms);
		CHECK(r->line, near((double)s.user_armed_ns, r->armed_ms),
		      "%s: armed %.3f ms, want %.3f", r->play, (double)s.user_armed_ns / MS, r->armed_ms);
		CHECK(r->line, near((double)s.sys_ns, r->sys_ms), "%s: system %.3f ms, want %.3f",
		      r->play, (double)s.sys_ns / MS, r->sys_ms);
		CHECK(r->line, drcost_over(&d, 0.01) == r->over, "%s: over %d, want %d", r->play,
		      drcost_over(&d, 0.01), r->over);
	}
	return check_failures != 0;
}
