/* traced_calls: stores decided a few instructions later, in a callee: the
 * run ahead decides them (sample.c, verdicts from the window), with the
 * callee's calling context.
 *
 *   a[]: N = 1M 8-byte words.  Per repetition r = 0..R-1:
 *     step(a, r):  for i < N:
 *                    a[i] = lcg                      (a store, in step)
 *                    i odd:  kill(a, i)   a[i] = lcg (a store, in kill)
 *                    i even: s += look(a, i)         (a load, in look)
 *     total += sum(a)                                (loads every a[i])
 *   kill and look are leaf functions (no frame: no push, no sub rsp), called
 *   from step: each call pushes its return address, which its ret reads.
 *
 * DeadSpy definitions (a store is dead iff the next access to its bytes is
 * a store):
 *   - step's store to a[i], i odd: next comes kill's store: waste, pair
 *     <step, kill>.  i even: next comes look's load: use, <step, look>.
 *   - kill's store to a[i]: next comes sum's load: use, <kill, sum>.
 *   - the return address a call in step pushes: next comes the ret in the
 *     callee: use, <step, kill> or <step, look>.  (The next call pushes
 *     into the same slot only after that ret.)
 *   Per two elements: stores 8 (step, odd) + 8 (step, even) + 8 + 8 (two
 *   return addresses) + 8 (kill) = 40 bytes, of which 8 are waste =>
 *   fraction 0.2; the one waste pair is <step, kill> (share 1.0), the top
 *   pair; every pair watched in step traps in kill or look.
 *   main's own stores (its calls) are a handful a repetition.
 *
 * Every decision but kill's (sum runs a whole array later) comes within a
 * few instructions of the store, in a callee's frame: the window decides
 * them (the profile's verdicts_traced) with the context
 * [kill or look, step, main, ...] made from the tick's context and the
 * call run ahead.  A wrong frame there would put the trap in step.
 *
 * Build: as the other known-answer programs (-O2 -fno-inline, KA_FN).
 *
 * Usage: traced_calls [REPS] [--phase-times]   default REPS = 250 (~0.5 s)
 */
#include "traced.h"

#define N (1u << 20)

KA_FN static uint64_t step(uint64_t *a, uint64_t seed)
{
	uint64_t v = seed, s = 0;
	for (uint64_t i = 0; i < N; i++) {
		KA_LCG_OPAQUE(v);
		a[i] = v;
		if (i & 1)
			kill(a, i, v ^ 1);
		else
			s += look(a, i);
	}
	return s;
}

TRACED_MAIN("traced_calls", 250)
