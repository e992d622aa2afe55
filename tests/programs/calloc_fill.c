/* calloc_fill: a calloc'd block whose zeroes the program overwrites, the
 * classic dead store of data-centric attribution (docs/objects.md).
 *
 *   R times: p = calloc(N, 4) in alloc_table (N = 64 Ki ints, 256 KiB:
 *   always tracked, heap.h), fill(p, N) (N scalar stores), sum(p, N),
 *   free(p) (churn_blocks, objects_kernels.h).
 *
 * From the second repetition on, glibc's calloc takes the block from
 * memory the freed one gave back and clears it with memset (a fresh
 * mapping needs no clearing), so each repetition stores 2 x 256 KiB into
 * the block: the zeroes, then fill's values.  The zeroing runs inside the
 * C library's calloc, before the block is in the runtime's table (it is
 * added when calloc returns), so its samples found no object and read
 * `unknown`: half the bytes.  Expected, by bytes:
 *     heap from alloc_table 1.0 (the zeroing and the fill both)
 * for the dead client, WITCH_WATCHPOINTS=0 (the samples' weights by
 * object).
 *
 * Usage: calloc_fill [REPS]     default REPS = 10,000 (~1 s)
 */
#include "ka.h"
#include "objects_kernels.h"

#define N (64u << 10)

KA_FN uint32_t *alloc_table(void)
{
	uint32_t *p = calloc(N, sizeof(uint32_t));
	KA_NO_TAIL(p);
	return p;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 10000);
	uint64_t total = churn_blocks(alloc_table, reps, N, "calloc_fill");
	printf("calloc_fill reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	return 0;
}
