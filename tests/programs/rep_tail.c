/* rep_tail: a short `rep stosq` among long work that stores nothing; which
 * of its elements a sample watches decides the answer.
 *
 *   buf: 32 qwords (256 bytes), static.  Per repetition:
 *     fill(buf)    rep stosq: buf[0..31] = 0                 256 bytes
 *     head(buf)    buf[0] = lcg                                 8 bytes
 *     work()       ~2,000 cycles of register-only arithmetic (an LCG chain
 *                  of 256 steps): no stores but its call's return address
 *
 * Dead (byte counts, DeadSpy): fill's buf[0] is next stored by head (waste,
 * pair <fill, head>, 8 bytes); buf[1..31] by the next fill (waste, <fill,
 * fill>, 248 bytes); head's buf[0] by the next fill (waste, <head, fill>, 8
 * bytes).  The calls' return-address pushes are read by their ret: use, a
 * handful of bytes (the call sites push 8 bytes each, 3 calls: 24 bytes).
 * Per repetition 264 bytes waste, 24 use:
 *     fraction 264 / 288 = 0.917
 *     shares fill:fill 248/264 = 0.939, fill:head 0.030, head:fill 0.030
 *
 * Why it exists: a sample of a rep string instruction stands for all its
 * elements.  The runtime's run-ahead window (look.c) meets the rep from
 * ticks in work() just before it; a pick that watched the rep's first
 * element there (its decoded access) put the whole sample on buf[0], whose
 * fate is head's: <fill, head> then read about half the waste.  Watching an
 * element drawn uniformly gives each its 1/32.
 *
 * Usage: rep_tail [REPS]   default REPS = 1800000 (~0.5 s)
 */
#include "ka.h"

#define QWORDS 32

static uint64_t buf[QWORDS];

KA_FN static void fill(uint64_t *p)
{
	uint64_t n = QWORDS, zero = 0;
	__asm__ volatile("rep stosq" : "+D"(p), "+c"(n) : "a"(zero) : "memory");
}

KA_FN static void head(uint64_t *p, uint64_t v)
{
	p[0] = v;
}

KA_FN static uint64_t work(uint64_t v)
{
	for (int i = 0; i < 256; i++)
		KA_LCG_OPAQUE(v);
	return v;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 1800000);
	uint64_t v = 1, total = 0;

	for (long r = 0; r < reps; r++) {
		fill(buf);
		head(buf, v);
		v = work(v);
		total += v; /* buf is never read: every byte stored is dead */
	}
	printf("rep_tail reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	return 0;
}
