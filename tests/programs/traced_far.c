/* traced_far: stores decided ~100 cycles after they run, past the end of
 * the tick's window (64 modelled cycles, look.h) but well within
 * LOOK_DECIDE_INSNS instructions: the run ahead goes on past the window for
 * their verdicts (look.c, look_decide_ahead), with the callee's calling
 * context, as traced_calls' come inside it.
 *
 *   a[]: N = 256K 8-byte words.  Per repetition r = 0..R-1:
 *     step(a, r):  for i < N:
 *                    a[i] = v                        (a store, in step)
 *                    CHAIN opaque LCG steps on v     (registers only: an
 *                                                     imul and an add each,
 *                                                     ~4 cycles, dependent)
 *                    i odd:  kill(a, i)   a[i] = v   (a store, in kill)
 *                    i even: s += look(a, i)         (a load, in look)
 *     total += sum(a)                                (loads every a[i])
 *   kill and look are leaf functions (no frame), called from step: each
 *   call pushes its return address, which its ret reads.
 *
 * DeadSpy definitions (a store is dead iff the next access to its bytes is
 * a store), as in traced_calls.c:
 *   - step's store to a[i], i odd: next comes kill's store: waste, pair
 *     <step, kill>.  i even: look's load: use, <step, look>.
 *   - the return address a call in step pushes: the callee's ret reads it:
 *     use.
 *   - kill's store: sum's load: use, <kill, sum>.
 *   Per two elements: 8 + 8 (step) + 8 + 8 (return addresses) + 8 (kill) =
 *   40 bytes stored, 8 of them waste => fraction 0.2; the one waste pair is
 *   <step, kill> (share 1.0).
 *
 * Which verdicts the run ahead finds: step's stores (16 of the 40 bytes)
 * are decided CHAIN steps (~100 modelled cycles, ~50 instructions) later,
 * always past the window that picked them, so only the run past it can
 * decide them; a return address is decided ~3 instructions after its
 * push, nearly always inside the window; kill's wait for sum, a whole
 * array later, and trap.  By bytes, ~80% of the samples are decided ahead
 * (~40% without the run past the window): the test checks more than 60%.
 *
 * Build: as the other known-answer programs (-O2 -fno-inline, KA_FN).
 *
 * Usage: traced_far [REPS] [--phase-times]   default REPS = 80 (~0.6 s)
 */
#include "traced.h"

#define N (1u << 18)
#define CHAIN 24

KA_FN static uint64_t step(uint64_t *a, uint64_t seed)
{
	uint64_t v = seed, s = 0;
	for (uint64_t i = 0; i < N; i++) {
		a[i] = v;
		for (int k = 0; k < CHAIN; k++)
			KA_LCG_OPAQUE(v);
		if (i & 1)
			kill(a, i, v);
		else
			s += look(a, i);
	}
	return s;
}

TRACED_MAIN("traced_far", 80)
