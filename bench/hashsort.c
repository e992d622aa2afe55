/* hashsort: a more realistic workload for bench/overhead.sh.
 *
 * Per repetition: clear an open-addressing hash table (memset), count 2M
 * keys drawn from a skewed distribution (linear probing, 64-bit keys),
 * gather the occupied slots into an array, qsort it by (count desc, key),
 * and fold the top entries into a checksum.  Mixed loads and stores, calls
 * into libc (memset, qsort with its callback), a table larger than L2 and
 * an access pattern that is not a simple stream.
 *
 * Build: cc -O2 -g bench/hashsort.c -o hashsort   (overhead.sh does this)
 * Usage: hashsort [REPS]     default REPS = 4 (~0.5 s)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAP (1u << 20)       /* slots; 16 MiB of table */
#define KEYS (2u << 20)      /* insertions per repetition */
#define DISTINCT (1u << 19)  /* key universe (skewed) */

struct slot {
	uint64_t key; /* 0 = empty */
	uint64_t count;
};

static struct slot table[CAP];
static struct slot gathered[CAP];

static uint64_t rng;

static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

__attribute__((noinline)) static void count_key(uint64_t key)
{
	uint32_t i = (uint32_t)mix(key) & (CAP - 1);
	while (table[i].key != 0 && table[i].key != key)
		i = (i + 1) & (CAP - 1);
	table[i].key = key;
	table[i].count++;
}

static int by_count(const void *pa, const void *pb)
{
	const struct slot *a = pa, *b = pb;
	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return (a->key > b->key) - (a->key < b->key);
}

int main(int argc, char **argv)
{
	long reps = argc > 1 ? strtol(argv[1], NULL, 10) : 4;
	uint64_t check = 0;

	if (reps < 1) {
		fprintf(stderr, "usage: %s [REPS>0]\n", argv[0]);
		return 2;
	}
	rng = 88172645463325252ULL;
	for (long r = 0; r < reps; r++) {
		memset(table, 0, sizeof table);
		for (uint32_t n = 0; n < KEYS; n++) {
			uint64_t x = xorshift();
			/* skew: the minimum of two draws favours small keys */
			uint64_t a = x % DISTINCT, b = (x >> 32) % DISTINCT;
			count_key((a < b ? a : b) + 1);
		}
		size_t m = 0;
		for (uint32_t i = 0; i < CAP; i++)
			if (table[i].key)
				gathered[m++] = table[i];
		qsort(gathered, m, sizeof gathered[0], by_count);
		for (size_t i = 0; i < 16 && i < m; i++)
			check = check * 31 + gathered[i].key * 7 + gathered[i].count;
		check += m;
	}
	printf("hashsort reps=%ld checksum=%016llx\n", reps, (unsigned long long)check);
	return 0;
}
