/* bulk_pieces: what a profiled thread's large memset and memcpy calls
 * become on their way to the C library (bulk.c), as memcount.c (preloaded
 * after libwitch.so) counts them.
 *
 * While a debug register is armed the CPU runs `rep stosb/movsb` without
 * its fast-string microcode (25-30x slower here), and glibc 2.36 sets
 * memory with `rep stosb` from 2 KiB up at any size, and copies with
 * `rep movsb` from 2 KiB up to its stop threshold (on AMD the L2's size).
 * So in a profiled thread with a debug register armed:
 *   - memset of 4 MiB reaches the C library as 4 MiB / 2 KiB = 2048 calls
 *     of at most 2048 bytes (rep stosb starts at 0x800 + 1);
 *   - memcpy of 512 KiB as 256 calls of 2048 bytes (memmove's pieces);
 *   - memcpy of 4 MiB as one call (past the stop threshold glibc copies
 *     with vector loops, unhurt by a debug register);
 *   - memset of 1 KiB as one call (below the threshold, never a rep).
 * (The runtime's own small copies may add calls, never larger ones.)
 * Pieces cost time where nothing is armed (a 64-256 KiB copy ~2x), so with
 * no register armed (WITCH_WATCHPOINTS=0), and unprofiled (no
 * libwitch.so), each is one call of its size.
 *
 * First the program stores once to each 8-byte word of 128 MiB it never
 * touches again (16M stores, ~10-20 ms of user time: at WITCH_RATE=4000, a
 * tick every 0.25 ms of CPU time, dozens of ticks in this loop).  The
 * memory comes mapped and filled (MAP_POPULATE): with malloc's 32768 first
 * touches in the loop, 45-78 of its 51-81 ticks landed in the kernel's
 * page faults and took no sample, 5-6 samples in all, and a run with none
 * left watched failed (once under ctest -j2, stop 87).  The dead client's
 * samples there stay watched: no later access traps them, and a fixed rate
 * expires none (drcost.h).  So registers are armed when the calls below
 * begin.
 * Prints one line per case: "NAME calls LARGEST".
 */

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define WARM_BYTES (128u << 20)

/* Stores the profiler may sample and watch, none accessed again. */
static void warm_up(void)
{
	volatile uint64_t *w = mmap(NULL, WARM_BYTES, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (w == MAP_FAILED)
		exit(2);
	for (size_t i = 0; i < WARM_BYTES / 8; i++)
		w[i] = i;
}

typedef void (*take_fn)(uint64_t *, uint64_t *, uint64_t *, uint64_t *);

/* A call the compiler cannot turn into stores of its own. */
static void *(*volatile set_p)(void *, int, size_t) = memset;
static void *(*volatile cpy_p)(void *, const void *, size_t) = memcpy;

int main(void)
{
	take_fn take = (take_fn)dlsym(RTLD_DEFAULT, "memcount_take");
	if (!take) {
		fprintf(stderr, "bulk_pieces: memcount.so is not preloaded\n");
		return 2;
	}
	size_t big = 4u << 20, mid = 512u << 10;
	char *a = malloc(big), *b = malloc(big);
	if (!a || !b)
		return 2;
	uint64_t sc, sl, mc, ml;
	set_p(b, 7, big); /* (b's pages, before counting) */
	set_p(a, 0, big); /* (a's too) */
	warm_up();
	take(&sc, &sl, &mc, &ml);
	set_p(a, 1, big);
	take(&sc, &sl, &mc, &ml);
	printf("memset_4MiB %llu %llu\n", (unsigned long long)sc, (unsigned long long)sl);
	cpy_p(a, b, mid);
	take(&sc, &sl, &mc, &ml);
	printf("memcpy_512KiB %llu %llu\n", (unsigned long long)mc, (unsigned long long)ml);
	cpy_p(a, b, big);
	take(&sc, &sl, &mc, &ml);
	printf("memcpy_4MiB %llu %llu\n", (unsigned long long)mc, (unsigned long long)ml);
	set_p(a, 3, 1024);
	take(&sc, &sl, &mc, &ml);
	printf("memset_1KiB %llu %llu\n", (unsigned long long)sc, (unsigned long long)sl);
	return a[100] == 3 && a[2000] == 7 ? 0 : 3;
}
