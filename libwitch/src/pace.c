/* pace: a loop's real speed from its progress between ticks (see pace.h). */
#include "witch/pace.h"
#include "witch/log.h"

#include <string.h>

#define FACTOR_MIN (1.0 / 16) /* a measurement past these is a wrong pairing */
#define FACTOR_MAX 1e6     /* first touches of pages run ~10^4 x slower */
#define POINTER_MIN 0x10000u  /* a register value this large may be an address */
#define AGREE 0.02            /* induction variables agree on R within this */

void pace_forget(struct pace *p)
{
	p->last.key = 0;
}

/* How many of the last window's stretches (first -> last) the program ran
 * from first (where it was at the tick: the rest of the window was run
 * ahead, not by the program) to gpr.  The candidates are the induction
 * variables: registers the loop writes that moved by the same step every
 * iteration.  R is what the largest group of them agrees on; two that agree
 * are one run's progress (or runs' back to back: a merge's output cursor
 * goes on from run to run).  One alone could be any run's: then the
 * pointers the loop never writes (its arrays, its bounds) must be as they
 * were, and nothing else it never writes may have moved (an outer loop's
 * counter, however small: then its counter started again, and the
 * difference would be a fraction of the progress; bench/weights.c's
 * branchy read 0.45 of its bytes); the furthest candidate counts.  0
 * otherwise.  (Two that agree are not held to this: a merge's cursors go
 * on from run to run while its bounds move; held to it, sort's merge_runs
 * read 3.5x its bytes.) */
static double progress_since(const struct pace_window *w, const uint64_t *gpr)
{
	double ratio[DECODE_NGPR];
	int n = 0, pointers = 0, moved = 0;
	for (int r = 0; r < DECODE_NGPR; r++) {
		if (r == DECODE_RSP)
			continue;
		int64_t d = (int64_t)(w->last[r] - w->first[r]);
		if (!(w->written & (1u << r))) {
			/* Moved: an outer loop went on (its counter, however
			 * small); unchanged and large: an array or a bound. */
			if (gpr[r] != w->last[r])
				moved++;
			else if (w->last[r] >= POINTER_MIN)
				pointers++;
			continue;
		}
		if (d == 0 || (w->irregular & (1u << r)))
			continue; /* scratch */
		ratio[n++] = (double)(int64_t)(gpr[r] - w->first[r]) / (double)d;
	}
	int best = 0;
	double sum_best = 0;
	for (int i = 0; i < n; i++) {
		int agree = 0;
		double sum = 0;
		if (ratio[i] * w->iters < 1)
			continue; /* not an iteration on: not this run */
		for (int j = 0; j < n; j++) {
			/* Ticks land mid-iteration: an iteration either way. */
			double tol = AGREE * (ratio[i] > ratio[j] ? ratio[i] : ratio[j]) + 1.0 / w->iters;
			if (ratio[j] - ratio[i] <= tol && ratio[i] - ratio[j] <= tol) {
				agree++;
				sum += ratio[j];
			}
		}
		if (agree > best) {
			best = agree;
			sum_best = sum;
		}
	}
	if (best >= 2)
		return sum_best / best;
	if (best == 0 || pointers == 0 || moved > 0)
		return 0;
	/* One run for sure: the furthest candidate (one reset each run, a
	 * masked index, is behind the true count). */
	double far = 0;
	for (int i = 0; i < n; i++)
		if (ratio[i] > far)
			far = ratio[i];
	return far;
}

void pace_window_begin(struct pace *p, const struct decode_regs *regs, double tick_ns,
		       double cycles_per_ns, pace_read_fn read)
{
	p->tick_ns = tick_ns;
	p->cycles_per_ns = cycles_per_ns;
	p->measured = 0;
	p->other_call = 0;
	p->read = read;
	p->cur.key = 0;
	p->cur.tick_rsp = regs->gpr[DECODE_RSP];
	memcpy(p->cur.tick_gpr, regs->gpr, sizeof p->cur.tick_gpr);
}

/* The loop's frame as the last window left it, but for the words the loop
 * stores to: 0 when a word changed (another call of its function). */
static int frame_same(const struct pace *p, const struct pace_window *w)
{
	uint64_t now[PACE_FRAME_WORDS];
	if (!w->frame_known || !p->read || p->read(w->rsp, now, sizeof now) < 0)
		return 1; /* cannot tell */
	for (int i = 0; i < PACE_FRAME_WORDS; i++)
		if (!(w->frame_stored & (1u << i)) && now[i] != w->frame[i])
			return 0;
	return 1;
}

void pace_window_stored(struct pace *p, const uint64_t *addr, const uint32_t *len, int n,
			uint64_t spill_lo, uint64_t spill_hi)
{
	struct pace_window *w = &p->cur;
	uint64_t lo = w->rsp, hi = w->rsp + 8 * PACE_FRAME_WORDS;
	if (!w->key)
		return;
	for (int k = 0; k <= n; k++) {
		uint64_t a = k < n ? addr[k] : spill_lo, e = k < n ? addr[k] + len[k] : spill_hi;
		if (e <= lo || a >= hi || a >= e)
			continue;
		for (uint64_t word = (a < lo ? lo : a) & ~7ull; word < e && word < hi; word += 8)
			if (word >= lo)
				w->frame_stored |= 1u << ((word - lo) / 8);
	}
}

/* The window is back in the last window's loop: the program time between
 * was spent running it, if its registers say so. */
static void measure(struct pace *p, const uint64_t *gpr)
{
	const struct pace_window *w = &p->last;
	double stretches = progress_since(w, gpr);
	double model_ns = stretches * (w->last_cycles - w->first_cycles) / p->cycles_per_ns;
	if (!(model_ns > 0) || p->tick_ns / model_ns < FACTOR_MIN || p->tick_ns / model_ns > FACTOR_MAX)
		return;
	/* The tick stands for the time just measured.  Only for it: a loop's
	 * speed changes (first touches of pages, caches warming, other data),
	 * and the ticks of other runs of it take no part of this one's time. */
	p->factor = p->tick_ns / model_ns;
	p->measured = 1;
	log_verbose(2, "pace: loop %lx: %lu ns of program time, %lu modelled", (unsigned long)w->key,
		    (unsigned long)p->tick_ns, (unsigned long)model_ns);
}

void pace_back_edge(struct pace *p, uint64_t from_pc, const struct decode_regs *regs,
		    double cycles, uint32_t written)
{
	struct pace_window *w = &p->cur;
	uint64_t rsp = regs->gpr[DECODE_RSP];
	if (p->last.key && !p->measured && p->tick_ns > 0 && rsp == p->last.rsp &&
	    regs->rip >= p->last.lo && regs->rip <= p->last.hi) {
		if (frame_same(p, &p->last))
			measure(p, regs->gpr);
		else
			p->other_call = 1;
		p->last.key = 0; /* once */
	}
	if (!w->key) {
		w->key = w->lo = regs->rip;
		w->hi = from_pc;
		w->rsp = rsp;
		w->iters = 0;
		w->steps = 0;
		w->irregular = 0;
		w->frame_stored = 0;
		w->frame_known = 0;
		if (rsp == w->tick_rsp) {
			memcpy(w->first, w->tick_gpr, sizeof w->first);
			w->first_cycles = 0;
		} else {
			memcpy(w->first, regs->gpr, sizeof w->first);
			w->first_cycles = cycles;
			w->iters = -1; /* this edge starts the stretch */
		}
	} else if (rsp != w->rsp) {
		return; /* a loop in a callee, or out in a caller */
	} else {
		/* A register whose step changes from one iteration to the next is
		 * no induction variable (a merge's two cursors, a loaded value). */
		for (int r = 0; r < DECODE_NGPR; r++) {
			uint64_t step = regs->gpr[r] - w->last[r];
			if (w->steps > 0 && step != w->step[r])
				w->irregular |= 1u << r;
			w->step[r] = step;
		}
		w->steps++;
	}
	if (regs->rip < w->lo)
		w->key = w->lo = regs->rip;
	if (from_pc > w->hi)
		w->hi = from_pc;
	memcpy(w->last, regs->gpr, sizeof w->last);
	w->last_cycles = cycles;
	w->written = written;
	w->iters++;
}

struct pace_result pace_window_end(struct pace *p)
{
	struct pace_result res = {1.0, p->measured, p->other_call};
	if (p->cur.key && p->read)
		p->cur.frame_known = p->read(p->cur.rsp, p->cur.frame, sizeof p->cur.frame) == 0;
	p->last = p->cur;
	if (p->last.iters < 1 || p->last.last_cycles <= p->last.first_cycles)
		p->last.key = 0; /* no stretch to count progress by */
	if (p->measured)
		res.factor = p->factor;
	return res;
}
