/* objects_frames: stack arrays filled by a callee, in calls short enough
 * that the sampler's run-ahead reaches the stores from the callers
 * (data-centric attribution, docs/objects.md).
 *
 *   main -> outer -> work, R times.  work's frame holds a[N] and b[N]
 *   (N = 16 ints, 64 bytes each); work calls fill(a), fill(b) (N stores
 *   each) and sums both.
 *
 * Every call is a few dozen cycles, so many ticks land in main, outer or
 * work, and their window runs ahead through the calls into fill: the
 * store it picks is into a frame below the interrupted function's stack
 * pointer, made by a function (fill) up to three calls deeper.  The object
 * is the frame the bytes are in, `stack of work`, never `stack of fill`
 * (fill keeps nothing on the stack) nor a caller's.
 *
 * Expected, by bytes, for the clients that sample explicit stores only
 * (silent; dead also samples the calls' and pushes' stack stores, which
 * belong to other frames): every stored byte is in work's frame:
 *     stack of work 1.0, stack of fill absent.
 * Before the run-ahead's frames were followed, 3-4% of the samples read
 * `stack of fill` (those whose tick was in a caller).
 *
 * Usage: objects_frames [REPS]     default REPS = 16,000,000 (~0.5 s)
 */
#include "ka.h"
#include "objects_kernels.h"

#define N 16u

KA_FN uint64_t work(uint64_t seed)
{
	uint32_t a[N], b[N];
	fill(a, N, seed);
	fill(b, N, seed + 1);
	return sum(a, N) + sum(b, N);
}

KA_FN uint64_t outer(uint64_t seed)
{
	uint64_t t = work(seed);
	KA_NO_TAIL(t);
	return t;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 16000000);
	uint64_t total = 0;

	for (long r = 0; r < reps; r++)
		total += outer(2 * (uint64_t)r + 1);
	printf("objects_frames reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	return 0;
}
