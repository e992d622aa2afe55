/* realloc_copy: the copy a moving realloc makes inside the C library,
 * counted by its bytes (bulk.h, as calloc's clearing is), not weighed by
 * the ticks that land in it.
 *
 *   R times: p = malloc(N) (N = 96 KiB: a heap chunk, under glibc's mmap
 *   threshold, and always tracked, heap.h), guard = malloc(64) right after
 *   it (so p cannot grow in place), fill(p, N) (N bytes, scalar),
 *   p = realloc(p, 2N) in grow (glibc moves it: a new chunk and a copy of
 *   the old one's N + 8 usable bytes), refill(p, N) (overwrites the copy
 *   before any read), sum(p, N), free(p), free(guard).
 *
 * Dead, by bytes (DeadSpy): fill's N bytes are read by the copy (use);
 * the copy's N bytes are next stored by refill (waste, pair
 * <memcpy in realloc from grow, refill>); refill's N are read by sum
 * (use); the copy's 8 bytes past N are never touched again (neither).
 * malloc's and free's own stores (chunk headers, bins) are a few dozen
 * bytes a repetition.  Fraction N / 3N = 1/3, top pair <grow, refill>.
 *
 * Time is not bytes: the copy runs at tens of bytes a cycle (rep movsb, or
 * glibc's vector loop under `witch run`; 16-60x slower with a debug
 * register armed, bulk.h), the scalar fills at ~1.
 *
 * Usage: realloc_copy [REPS]     default REPS = 4,000 (~1 s)
 */
#include "ka.h"
#include "objects_kernels.h"

#define N (96u << 10)

KA_FN uint32_t *grow(uint32_t *p)
{
	uint32_t *q = realloc(p, 2 * N);
	KA_NO_TAIL(q);
	return q;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 4000);
	uint64_t total = 0;
	for (long r = 0; r < reps; r++) {
		uint32_t *p = malloc(N);
		void *guard = malloc(64);
		if (!p || !guard)
			return 2;
		fill(p, N / 4, 2 * (uint64_t)r + 1);
		uint32_t *q = grow(p);
		if (!q)
			return 2;
		if (q == p) {
			fprintf(stderr, "realloc_copy: realloc grew the block in place\n");
			return 3;
		}
		refill(q, N / 4, 2 * (uint64_t)r + 2);
		total += sum(q, N / 4);
		free(q);
		free(guard);
	}
	printf("realloc_copy reps=%ld checksum=%016llx\n", reps, (unsigned long long)total);
	return 0;
}
