/* short_tick: a short process that ticks: N passes of stores over a 64 KiB
 * array (fixed work: its CPU time grows by what a profiler adds).  8000
 * passes take ~49 ms on the project's EPYC VM: 1-2 ticks at the default
 * budget, so the first tick's one-off work is most of what is added.
 *
 * Build: cc -O2 bench/short_tick.c -o short_tick
 * Usage: short_tick [PASSES]     default 8000
 */
#include <stdlib.h>

static volatile unsigned a[16384];

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 8000;
	for (long k = 0; k < n; k++)
		for (unsigned i = 0; i < 16384; i++)
			a[i] = a[i] * 3 + i;
	return 0;
}
