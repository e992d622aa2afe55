/* small_churn: the runtime's inline code, which no handler times, is
 * seen by the ticks that land in it (handler.c, tick_in_runtime), which
 * stand for none of the program's bytes.
 *
 *   R times (churn_blocks): p = malloc(24) in take_small (a small block:
 *   libwitch's malloc decides in its own fast path that it stays
 *   untracked, then jumps to the C library's), fill(p, 4 ints), sum,
 *   free(p) (libwitch's free looks at one byte of its filter, then jumps
 *   to the C library's).
 *
 * Per repetition the C library's tcache path is ~40 instructions for the
 * pair, libwitch's two fast paths ~15 (6 each and the jumps), the calls,
 * fill's and sum's loops ~35: the runtime's code is ~15 / 90 ~ 0.17 of the
 * instructions.  Ticks sample CPU time, so cost_inline_ns / clock_ns, the
 * share of the ticks' time that interrupted it, reads about that: 0.27-0.29
 * at 2000/s over 6 seeds (its share of cycles is above its share of
 * instructions: a TLS countdown and the filter's byte are loads).  The
 * test asks 0.05-0.6: a tick counted by the handler's own pc (or never
 * counted) leaves that range.
 *
 * Usage: small_churn [REPS]     default REPS = 30,000,000 (~0.5 s)
 */
#include "ka.h"
#include "objects_kernels.h"

KA_FN uint32_t *take_small(void)
{
	uint32_t *p = malloc(24);
	KA_NO_TAIL(p);
	return p;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 30000000);
	uint64_t total = churn_blocks(take_small, reps, 4, "small_churn");
	printf("small_churn reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	return 0;
}
