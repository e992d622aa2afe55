/* dlstatic: dead_two_loops' loops on a static array of a library that
 * dl_static.c loads after the runtime has started (see there). */
#include "ka.h"

#define N (8u << 20)

#include "dead_loops.h"

uint32_t dl_table[N]; /* 32 MiB of .bss: the data symbol to be named */

uint64_t dlstatic_run(int reps)
{
	uint64_t total = 0;
	for (int r = 0; r < reps; r++) {
		fill(dl_table, 2 * (uint64_t)r + 1);
		overwrite(dl_table, 2 * (uint64_t)r + 2);
		total += sum(dl_table);
	}
	return total;
}
