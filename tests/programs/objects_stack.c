/* objects_stack: a stack array and a heap block wasted on in known
 * proportions (data-centric attribution, docs/objects.md).
 *
 *   S = 128 Ki ints.  Two objects:
 *     local  S ints (512 KiB) in work()'s frame -> "stack of work"
 *     block 3S ints (1.5 MiB), malloc'd in alloc_block
 *                                          -> "heap from alloc_block (objects_stack.c:L)"
 *   Per repetition r, work(block, seed 2r+1) runs, for X = local then block:
 *     fill(X)     X[i] = lcg from the seed    (store only)
 *     refill(X)   X[i] = lcg from the seed    (the same values again)
 *     sum(X)      loads every X[i]
 *     sum(X)      loads every X[i] again
 *   The stores to local are made by fill and refill, called from work: the
 *   bytes are in work's frame, so the object is `stack of work` whoever
 *   stores.  work's frame is at the same address in every repetition (main
 *   calls it from the same depth), so local keeps its bytes' history.
 *
 * dead: fill's stores are killed by refill's (waste, pair <fill, refill>),
 *   refill's are read by sum (use): fraction 0.5, waste shares by bytes:
 *       stack of work 0.25, heap from alloc_block 0.75
 * silent: refill rewrites fill's values (waste, object X); fill writes a
 *   new repetition's values (use; the first repetition's are undecided):
 *   fraction 0.5, shares 0.25 / 0.75.
 * load: the second sum reads what the first read (waste), the first reads
 *   new values (use): fraction 0.5, shares 0.25 / 0.75.
 * (R repetitions: silent and load decide R / (2R - 1), the first fill and
 * sum having nothing before them.)  Each function's accesses get one
 * verdict per client, as in objects_mix.c.
 * The other stack traffic (return addresses pushed by call and read by ret,
 * callee-saved registers pushed and popped) is used, never wasted, and a
 * few bytes per call against 16 x 4S bytes per repetition.
 *
 * Sampling by CPU time: the same fill/refill/sum functions on both objects
 * (one LCG step, ~4 cycles, per 4-byte store, ka.h), so time per byte is
 * equal and the samples split like the bytes.  local stays in L2 and block
 * does not quite; the LCG chain, not the memory, sets the store loops' pace.
 *
 * Build: KA_FLAGS (tests/programs/CMakeLists.txt): -fno-stack-protector
 * -fno-stack-clash-protection keep work's frame one `sub rsp` with no
 * canary or probe stores.
 *
 * Usage: objects_stack [REPS]     default REPS = 250 (~0.5 s, as dead_two_loops)
 */
#include "ka.h"
#include "objects_kernels.h"

#define S (128u << 10)
#define N_BLOCK (3 * S)


KA_FN uint32_t *alloc_block(void)
{
	uint32_t *p = malloc((size_t)N_BLOCK * sizeof(uint32_t));
	KA_NO_TAIL(p);
	return p;
}

KA_FN uint64_t one_object(uint32_t *p, uint32_t n, uint64_t seed)
{
	fill(p, n, seed);
	refill(p, n, seed);
	return sum(p, n) + sum(p, n);
}

KA_FN uint64_t work(uint32_t *block, uint64_t seed)
{
	uint32_t local[S];
	uint64_t t = one_object(local, S, seed);
	return t + one_object(block, N_BLOCK, seed);
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 250);
	uint32_t *block = alloc_block();
	uint64_t total = 0;

	if (!block) {
		fprintf(stderr, "objects_stack: out of memory\n");
		return 2;
	}
	for (long r = 0; r < reps; r++)
		total += work(block, 2 * (uint64_t)r + 1);
	printf("objects_stack reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	free(block);
	return 0;
}
