/* exit7: target program for run_bad_config.sh.
 *
 * Does ~0.1 s of stores and loads (so a profiled run has samples and
 * watchpoint traps to write), prints one deterministic line to stdout and
 * exits with status 7, so the test can tell the program's own exit status
 * and output from anything the runtime might change.
 *
 * Usage: exit7 [REPS]     default REPS = 100
 */
#include "ka.h"

#define N (1u << 20)

static uint32_t buf[N];

KA_FN uint64_t churn(uint32_t *p, uint64_t v)
{
	for (uint32_t i = 0; i < N; i++) {
		uint32_t old = KA_LOAD(p, i);
		KA_LCG(v);
		p[i] = KA_HI(v) ^ old;
	}
	return v;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 100);
	uint64_t v = 7;

	for (long r = 0; r < reps; r++)
		v = churn(buf, v);
	printf("exit7 reps=%ld checksum=%016llx\n", reps, (unsigned long long)v);
	return 7;
}
