/* Unit test of densetab.c: the lock-free index over dense records.
 *
 * Rows intern keys (with the hash each is given: colliding hashes make
 * chains) and say what must come back: ids are handed out 1, 2, ... in the
 * order keys are first seen, a key seen again gets its id back, a key
 * never added is not found, and past the cap nothing new is added (0).
 * Then threads intern the same keys at once: every key must get one id that
 * all threads agree on, every live id must hold a key, and the holes (ids
 * taken by a thread that lost the race) must never be live.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "witch/densetab.h"

#include "check.h"

#define CAP 64
#define MAX_OPS 12

#define THREADS 4
#define KEYS 48
/* Every thread may take an id for every key before one publishes it. */
#define RACE_CAP (THREADS * KEYS)
#define RACE_SLOTS 1024 /* a power of two, over 2 x RACE_CAP */

static uint64_t records[RACE_CAP + 1]; /* the key each id's record holds */

static int key_matches(uint32_t id, const void *arg)
{
	return __atomic_load_n(&records[id], __ATOMIC_RELAXED) == *(const uint64_t *)arg;
}

static void key_fill(uint32_t id, const void *arg)
{
	__atomic_store_n(&records[id], *(const uint64_t *)arg, __ATOMIC_RELAXED);
}

struct op {
	uint64_t key, hash;
	uint32_t want; /* the id interning it returns (0: full) */
};

struct row {
	int line;
	uint32_t cap;
	struct op ops[MAX_OPS];
	uint64_t absent; /* a key densetab_find must not find (hash 0) */
};

static const struct row rows[] = {
	/* first seen, first numbered; again, the same id */
	{__LINE__, CAP, {{100, 5, 1}, {200, 9, 2}, {100, 5, 1}, {300, 1, 3}, {200, 9, 2}}, 400},
	/* one hash for all: a chain the probes walk past other keys */
	{__LINE__, CAP, {{1, 7, 1}, {2, 7, 2}, {3, 7, 3}, {2, 7, 2}, {1, 7, 1}, {3, 7, 3}}, 4},
	/* hashes that wrap around the end of the slots */
	{__LINE__, CAP, {{10, 2 * CAP - 1, 1}, {11, 2 * CAP - 1, 2}, {12, 0, 3}, {11, 2 * CAP - 1, 2}}, 13},
	/* the cap: the third key finds no room, the first two still answer */
	{__LINE__, 2, {{1, 3, 1}, {2, 4, 2}, {3, 5, 0}, {1, 3, 1}, {3, 5, 0}, {2, 4, 2}}, 3},
};

static void test_rows(void)
{
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		const struct row *row = &rows[r];
		struct densetab t;
		memset(records, 0, sizeof(records));
		CHECK(row->line, densetab_init(&t, row->cap, 2 * CAP) == 0, "init failed");
		uint32_t live = 0;
		for (int i = 0; i < MAX_OPS && row->ops[i].key; i++) {
			const struct op *op = &row->ops[i];
			uint32_t id = densetab_intern(&t, op->hash, key_matches, key_fill, &op->key);
			CHECK(row->line, id == op->want, "op %d: key %llu got id %u, want %u", i,
			      (unsigned long long)op->key, id, op->want);
			if (op->want) {
				uint32_t found = densetab_find(&t, op->hash, key_matches, &op->key);
				CHECK(row->line, found == op->want, "op %d: find gave %u", i, found);
				live = op->want > live ? op->want : live;
			}
		}
		CHECK(row->line, densetab_find(&t, 0, key_matches, &row->absent) == 0,
		      "found a key never added");
		CHECK(row->line, densetab_taken(&t) == live, "taken %u, want %u", densetab_taken(&t),
		      live);
		for (uint32_t id = 1; id <= live; id++)
			CHECK(row->line, densetab_is_live(&t, id), "id %u not live", id);
		CHECK(row->line, !densetab_is_live(&t, 0) && !densetab_is_live(&t, live + 1),
		      "ids outside 1..%u live", live);
	}
}

/* ---- threads racing on the same keys ---- */
static struct densetab race;
static uint32_t got[THREADS][KEYS];

static pthread_barrier_t race_start;

/* All threads intern key k together (a barrier before each), so that
 * several find it absent and race to publish it. */
static void *race_thread(void *arg)
{
	int me = (int)(intptr_t)arg;
	for (int k = 0; k < KEYS; k++) {
		uint64_t key = 1000 + (uint64_t)k;
		pthread_barrier_wait(&race_start);
		got[me][k] = densetab_intern(&race, key % 5, key_matches, key_fill, &key);
	}
	return NULL;
}

static void test_race(void)
{
	for (int round = 0; round < 50; round++) {
		pthread_t th[THREADS];
		memset(records, 0, sizeof(records));
		if (densetab_init(&race, RACE_CAP, RACE_SLOTS) != 0) {
			FAIL(__LINE__, "init failed");
			return;
		}
		pthread_barrier_init(&race_start, NULL, THREADS);
		for (int i = 0; i < THREADS; i++)
			pthread_create(&th[i], NULL, race_thread, (void *)(intptr_t)i);
		for (int i = 0; i < THREADS; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&race_start);
		uint32_t live = 0;
		for (uint32_t id = 1; id <= densetab_taken(&race); id++) {
			if (!densetab_is_live(&race, id))
				continue; /* a hole */
			live++;
			uint64_t key_i = records[id] - 1000;
			CHECK(__LINE__, key_i < KEYS && got[0][key_i] == id,
			      "round %d: live id %u holds key %llu, whose id is another", round, id,
			      (unsigned long long)records[id]);
		}
		CHECK(__LINE__, live == KEYS, "round %d: %u live ids for %d keys", round, live, KEYS);
		for (int k = 0; k < KEYS; k++) {
			CHECK(__LINE__, got[0][k] != 0, "round %d: key %d got no id", round, k);
			for (int i = 1; i < THREADS; i++)
				CHECK(__LINE__, got[i][k] == got[0][k], "round %d: key %d: thread %d got %u, thread 0 %u",
				      round, k, i, got[i][k], got[0][k]);
		}
	}
}

int main(void)
{
	test_rows();
	test_race();
	if (check_failures)
		fprintf(stderr, "test_densetab: %d failures\n", check_failures);
	return check_failures != 0;
}
