/* alloc_churn: the C library's work inside malloc and free, called
 * through the runtime's allocation tracking, is the program's.
 *
 *   R times: p = malloc(32 KiB) in alloc_block (16 KiB or more: always
 *   tracked, heap.h, so the call goes through the runtime's wrapper to the
 *   C library's malloc), fill(p, 16 ints), sum, free(p) (tracked too).
 *
 * glibc's malloc and free store into the chunk headers and the arena's
 * bins every repetition; with the wrapper's frame between them and the
 * program, those samples were taken for the runtime's own stores and
 * dropped (skip_runtime_addr: 214-446 of ~1,000 samples), and their
 * bytes with them.  Expected: only free's store of the saved errno is
 * still skipped (errno is the runtime's too, thread.h: never watched), one
 * of free's stores: under 20% of the samples (measured 1.4-2.6% when
 * glibc took its multi-threaded paths, with the arena lock's stores in
 * each free; 6-13% single-threaded);
 * fill's 64 bytes and the C library's stores split the rest: the oracle
 * counts 48 bytes a repetition in _int_malloc and 28 in _int_free (4 more
 * in free, the saved errno), so fill's share of the sampled bytes is
 * 64 / 140 = 0.457 (1.0 if malloc's and free's samples were dropped).
 *
 * Usage: alloc_churn [REPS]     default REPS = 10,000,000 (~0.3 s)
 */
#include "ka.h"
#include "objects_kernels.h"

#define N 16u
#define BLOCK_BYTES (32u << 10)

KA_FN uint32_t *alloc_block(void)
{
	uint32_t *p = malloc(BLOCK_BYTES);
	KA_NO_TAIL(p);
	return p;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 10000000);
	uint64_t total = churn_blocks(alloc_block, reps, N, "alloc_churn");
	printf("alloc_churn reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	return 0;
}
