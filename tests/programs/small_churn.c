/* small_churn: the runtime's inline code, which no handler times, is
 * seen by the ticks that land in it (handler.c, tick_count_inline).
 *
 *   R times: p = malloc(24) in take (a small block: libwitch's malloc
 *   decides in its own fast path that it stays untracked, then jumps to
 *   the C library's), one store into it, free(p) (libwitch's free looks at
 *   one byte of its filter, then jumps to the C library's).
 *
 * Per repetition the C library's tcache path is ~40 instructions for the
 * pair, libwitch's two fast paths ~15 (6 each and the jumps), the loop and
 * take ~10: the runtime's code is ~15 / 65 ~ 0.23 of the instructions.
 * Ticks sample CPU time, so cost_inline_ns / clock_ns, the share of the
 * ticks' time that interrupted it, reads about that (0.24-0.30 at 2000/s,
 * 8 seeds).  The test asks 0.05-0.6: a tick counted by the handler's own pc
 * (or never counted) leaves that range.
 *
 * Usage: small_churn [REPS]     default REPS = 40,000,000 (~0.5 s)
 */
#include "ka.h"

KA_FN uint32_t *take(void)
{
	uint32_t *p = malloc(24);
	KA_NO_TAIL(p);
	return p;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 40000000);
	uint64_t sum = 0;
	for (long i = 0; i < reps; i++) {
		uint32_t *p = take();
		p[0] = (uint32_t)i;
		sum += KA_LOAD(p, 0);
		free(p);
	}
	printf("small_churn reps=%ld checksum=%016llx\n", reps, (unsigned long long)sum);
	return 0;
}
