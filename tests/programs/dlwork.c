/* dlwork: dead_two_loops' loops in a library that dl_user.c loads with
 * dlopen and unloads with dlclose (see there). */
#include "ka.h"

#define N (8u << 20)

#include "dead_loops.h"

uint64_t dlwork_run(int reps)
{
	uint32_t *a = ka_alloc((size_t)N * sizeof(*a));
	uint64_t total = 0;
	for (int r = 0; r < reps; r++) {
		fill(a, 2 * (uint64_t)r + 1);
		overwrite(a, 2 * (uint64_t)r + 2);
		total += sum(a);
	}
	munmap(a, (size_t)N * sizeof(*a));
	return total;
}
