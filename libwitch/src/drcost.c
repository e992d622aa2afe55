/* drcost: armed debug registers' cost to the program's kernel work (see drcost.h). */
#include "witch/drcost.h"

#include <sys/resource.h>
#include <sys/syscall.h>

#include "witch/rawsys.h"

/* The recent free rate: sums decayed by this at each free stretch (about
 * the last 8); the armed sums by DRCOST_FADE at each tick (~20 ticks to
 * fall below DRCOST_MIN_USER_NS from a tick interval's worth). */
#define DRCOST_DECAY 0.875
#define DRCOST_FADE 0.875
#define DRCOST_MIN_USER_NS 1e6 /* a rate over less user time is noise */

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull + (uint64_t)tv->tv_usec * 1000ull;
}

void drcost_begin(struct drcost *d)
{
	*d = (struct drcost){.state = -1};
}

void drcost_enter(struct drcost *d, double runtime_kernel_ns, struct drcost_sums *s)
{
	struct rusage ru;
	if (d->skip_read)
		return;
	if (rawsys6(SYS_getrusage, RUSAGE_THREAD, (long)&ru, 0, 0, 0, 0) < 0) {
		d->state = -1;
		return;
	}
	drcost_account(d, tv_ns(&ru.ru_utime), tv_ns(&ru.ru_stime), runtime_kernel_ns, s);
}

void drcost_account(struct drcost *d, uint64_t user, uint64_t sys, double runtime_kernel_ns,
		    struct drcost_sums *s)
{
	if (d->skip_read)
		return;
	if (user >= d->user_ns && sys >= d->sys_ns) {
		double du = (double)(user - d->user_ns), ds = (double)(sys - d->sys_ns);
		ds = ds > runtime_kernel_ns ? ds - runtime_kernel_ns : 0;
		/* Every stretch's system time is the program's; a mixed one (or
		 * the first) gives no rate and no cost. */
		s->sys_ns += (uint64_t)ds;
		if (d->state == 0) {
			d->free_user = d->free_user * DRCOST_DECAY + du;
			d->free_sys = d->free_sys * DRCOST_DECAY + ds;
		} else if (d->state == 1) {
			s->user_armed_ns += (uint64_t)du;
			if (d->free_user >= DRCOST_MIN_USER_NS) {
				double expect = du * d->free_sys / d->free_user;
				double cost = ds > expect ? ds - expect : 0;
				s->user_matched_ns += (uint64_t)du;
				s->cost_ns += (uint64_t)cost;
				d->armed_cost += cost;
				d->armed_user += du;
				d->cost_since_tick += cost;
			}
		}
	}
	d->user_ns = user;
	d->sys_ns = sys;
	d->state = -1; /* until this run's exit says */
}

void drcost_leave(struct drcost *d, int armed, int soon)
{
	int now = armed ? 1 : 0;
	if (!d->skip_read)
		d->state = now; /* a new stretch */
	else if (d->state != now)
		d->state = -1; /* it changed in a run that did not read */
	d->skip_read = soon;
}

double drcost_tick(struct drcost *d)
{
	double c = d->cost_since_tick;
	d->cost_since_tick = 0;
	d->ticks++;
	d->armed_cost *= DRCOST_FADE;
	d->armed_user *= DRCOST_FADE;
	return c;
}

int drcost_over(const struct drcost *d, double budget)
{
	return d->armed_user >= DRCOST_MIN_USER_NS && d->armed_cost > budget * d->armed_user;
}
