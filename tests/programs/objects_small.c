/* objects_small: small heap blocks from two allocation sites are named by
 * their sites, though few of them are tracked (docs/objects.md).
 *
 *   K = 8192.  4K blocks of 512 bytes, allocated interleaved so that their
 *   addresses mix: three from alloc_a, then one from alloc_b, K times:
 *     alloc_a  3K blocks (12 MiB) -> "heap from alloc_a (objects_small.c:L)"
 *     alloc_b   K blocks  (4 MiB) -> "heap from alloc_b (objects_small.c:L)"
 *   All stay live.  Per repetition, fill (objects_kernels.h) every block in
 *   allocation order: 128 4-byte stores a block, the same loop for both
 *   sites, so time per byte is the same and the samples split like the
 *   bytes: a 0.75, b 0.25.
 *
 * Blocks under 16 KiB past their site's first four are tracked one in
 * 16 KiB / 512 = 32 (heap.h), so ~97% of the samples fall in a block the
 * runtime does not know.  Those are heap all the same, and each gets a
 * site drawn from the live sampled blocks' mix (heap_mix.h): ~768 of a's
 * and ~256 of b's, each standing for k x 16 KiB (E = 512), so the mix reads
 * b 0.25 with sd ~0.014.  Before the mix, the few samples in tracked
 * blocks were scaled up 32x and the rest were `unknown`: shares of 0-0.2
 * and 0.7-0.9 unknown, from run to run.
 *
 * dead: each repetition's fill overwrites the last one's, no load between:
 * every store but the last repetition's is waste, fraction (R-1)/R, and
 * the waste splits as the stores: a 0.75, b 0.25.
 *
 * The pointer array (static, 256 KiB) is stored once, at allocation: under
 * 0.002 of the bytes at the default repetitions.
 *
 * Usage: objects_small [REPS]     default REPS = 110 (~0.5 s)
 */
#include "ka.h"
#include "objects_kernels.h"

#define K 8192u
#define BLOCK 512u
#define WORDS (BLOCK / 4)

static uint32_t *blocks[4 * K];

KA_FN uint32_t *alloc_a(void)
{
	uint32_t *p = malloc(BLOCK);
	KA_NO_TAIL(p);
	return p;
}

KA_FN uint32_t *alloc_b(void)
{
	uint32_t *p = malloc(BLOCK);
	KA_NO_TAIL(p);
	return p;
}

KA_FN void fill_all(uint64_t seed)
{
	for (uint32_t i = 0; i < 4 * K; i++)
		fill(blocks[i], WORDS, seed + i);
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 110);
	for (uint32_t i = 0; i < 4 * K; i++) {
		blocks[i] = i % 4 == 3 ? alloc_b() : alloc_a();
		if (!blocks[i]) {
			fprintf(stderr, "objects_small: out of memory\n");
			return 2;
		}
	}
	for (long r = 0; r < reps; r++)
		fill_all(2 * (uint64_t)r + 1);
	uint64_t total = 0;
	for (uint32_t i = 0; i < 4 * K; i++)
		total += sum(blocks[i], WORDS);
	printf("objects_small reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	for (uint32_t i = 0; i < 4 * K; i++)
		free(blocks[i]);
	return 0;
}
