/* fresh_pages: a loop that touches fresh pages beside a cache-resident
 * one, storing known bytes: most of the first's time is the kernel's (a
 * page fault a store), whose ticks arrive at the faulting store
 * (faultlog.h) and stand for no bytes of the program's.
 *
 *   region = mmap(R * 32 MiB), once; no transparent huge pages
 *   for r in 1..R:
 *     touch(chunk r)   one 8-byte store into each of its 8192 pages: a
 *                      page fault each (~2-10 us on a VM), 64 KiB stored
 *     ka_stream(buf, n)   n = 16M steps: buf[i & 1023] = lcg, one 8-byte store
 *                      a step into 8 KiB (L1), ~4 cycles each: 128 MiB
 *
 * Bytes stored per repetition: touch 8 * 8192 = 64 KiB, stream 8 * 16M =
 * 128 MiB; main's few stores are nothing beside these.  Shares:
 *   touch  = 64 KiB / (64 KiB + 128 MiB) = 1 / 2049 = 0.0005
 *   stream = 2048 / 2049 = 0.9995
 * CPU time says otherwise: touch takes ~20-80 ms a repetition, nearly all
 * of it in the kernel, stream ~20 ms.  A sampler that weighed a tick
 * arriving from a fault at the window's rate after it would give touch
 * most of the bytes.
 *
 * Usage: fresh_pages [REPS]     default REPS = 4
 */
#include "ka.h"

#include <sys/mman.h>

#define CHUNK (32ul << 20)
#define PAGE 4096ul
#define STREAM_STEPS (16ul << 20)

static uint64_t buf[KA_STREAM_WORDS];

KA_FN static void touch(uint64_t *chunk)
{
	for (uint64_t i = 0; i < CHUNK / PAGE; i++)
		chunk[i * (PAGE / 8)] = i;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 4);
	unsigned char *region = mmap(NULL, CHUNK * (size_t)reps, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	madvise(region, CHUNK * (size_t)reps, MADV_NOHUGEPAGE); /* a fault a page */
	uint64_t sum = 0;
	for (long r = 0; r < reps; r++) {
		touch((uint64_t *)(region + CHUNK * (size_t)r));
		ka_stream(buf, STREAM_STEPS, (uint64_t)r);
		sum += buf[r & (KA_STREAM_WORDS - 1)];
	}
	printf("fresh_pages: %llu\n", (unsigned long long)(sum & 0xffff));
	return 0;
}
