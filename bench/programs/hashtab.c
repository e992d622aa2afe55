/* hashtab: a string-keyed cache on an open-addressing hash table, driven by
 * a skewed request stream in two threads, each with its own table.
 *
 * Why it is realistic: it is the cache-aside pattern of a web or database
 * front end.  Requests name keys like "user:123456" drawn from a Zipf-like
 * distribution (a few keys are very hot); 80% are gets, and a miss loads
 * the value from the "backing store" (a computation) and inserts it; 15%
 * are writes that refresh a key (usually with the value it already has);
 * 5% invalidate a key.  The table uses linear probing with stored hashes,
 * tombstones for deletions, grows and rehashes at 70% occupancy, and keeps
 * at most MAX_LIVE entries by CLOCK eviction (a reference bit set on each
 * hit, cleared by the sweeping hand).  Each round starts from an empty
 * table, so growth and rehashing recur; SCALE multiplies the rounds.
 * Thread t's table and request stream are its own (seeded by t), so the
 * output does not depend on scheduling.
 *
 * Wasted operations by design (rough shares; the oracle measures them):
 *  - redundant loads: the main client here.  table_find reloads the stored
 *    hash and key bytes of the hot keys' buckets on every request for them
 *    (the bucket has not changed since), and the probe sequence re-reads
 *    the same neighbours; hash_key reads key bytes that format_key
 *    rewrote with the same values; libm's exp in zipf_draw rereads its
 *    constant tables.
 *  - silent stores:
 *    * table_find's hit path sets the reference bit with `e->used = 1`,
 *      which for a hot key is already 1.
 *    * cache_put's refresh writes the value the entry already holds.
 *    * format_key rewrites the "user:" prefix and often the leading digits
 *      of the request buffer with what the previous request left there.
 *    * strncpy in table_insert pads the key with zeros over the zeros the
 *      memset just wrote.
 *  - dead stores: table_insert zeroes a slot (memset) and then fills in
 *    every field, strncpy the key; all but the padding is overwritten
 *    before any read.  A small share.
 *
 * Usage: hashtab [SCALE]     (SCALE >= 1, default 1: about 0.5 s wall
 * time natively, two threads busy)
 *
 * Kernels are noinline, for stable calling contexts, and noclone: without
 * it GCC specialises some into name.constprop.0 clones, and reports would
 * not show the names used here.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

#define NTHREADS 2
#define KEY_UNIVERSE (1u << 17)   /* distinct keys that may be requested */
#define MAX_LIVE (1u << 14)       /* cache capacity in entries */
#define INITIAL_CAP 1024u         /* slots; a power of two */
#define OPS_PER_ROUND 400000u
#define ROUNDS_PER_SCALE 15
#define KEY_MAX 24

enum { SLOT_EMPTY = 0, SLOT_TOMBSTONE = 1 }; /* real hashes are >= 2 */

struct entry {
	uint64_t hash;        /* SLOT_EMPTY, SLOT_TOMBSTONE or the key's hash */
	char key[KEY_MAX];    /* NUL-terminated */
	uint64_t value;
	uint32_t hits;        /* gets that found it */
	uint8_t used;         /* CLOCK reference bit */
	uint8_t pad[3];
};

struct table {
	struct entry *slots;
	size_t cap;           /* a power of two */
	size_t live;
	size_t tombstones;
	size_t clock_hand;
};

struct stats {
	uint64_t gets, hits, misses, puts, deletes, evictions, rehashes;
	uint64_t checksum;
};

struct worker {
	int id;
	long rounds;
	struct stats stats;
};

/* A key id with a Zipf-like (exponent 1) distribution of ranks: inversion
 * of the continuous approximation P(rank < k) = ln(k + 1) / ln(N + 1). */
__attribute__((noinline, noclone)) static uint32_t
zipf_draw(uint64_t *rng)
{
	double u = (double)(bench_xorshift64(rng) >> 11) * 0x1.0p-53;
	double x = exp(u * log((double)KEY_UNIVERSE + 1.0)) - 1.0;
	uint64_t rank = x < KEY_UNIVERSE ? (uint64_t)x : KEY_UNIVERSE - 1;
	/* Scatter ranks over the ids so hot keys are not neighbours (an odd
	 * multiplier permutes a power-of-two range). */
	return (uint32_t)((rank * 2654435761u) % KEY_UNIVERSE);
}

/* "user:<id>" into buf, as a request parser would hand it over. */
__attribute__((noinline, noclone)) static size_t
format_key(char *buf, uint32_t id)
{
	char digits[12];
	size_t nd = 0;
	do {
		digits[nd++] = (char)('0' + id % 10);
		id /= 10;
	} while (id);
	memcpy(buf, "user:", 5);
	for (size_t i = 0; i < nd; i++)
		buf[5 + i] = digits[nd - 1 - i];
	buf[5 + nd] = '\0';
	return 5 + nd;
}

__attribute__((noinline, noclone)) static uint64_t
hash_key(const char *key)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (const unsigned char *p = (const unsigned char *)key; *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 29;
	return h < 2 ? h + 2 : h; /* keep clear of the slot markers */
}

/* The value the backing store has for a key (stands in for a query). */
static uint64_t backing_store_value(const char *key)
{
	uint64_t v = 0;
	for (const char *p = key; *p; p++)
		v = v * 131 + (unsigned char)*p;
	for (int i = 0; i < 8; i++)
		v = (v ^ (v >> 31)) * 0x7fb5d329728ea185ULL;
	return v;
}

static int table_init(struct table *t, size_t cap)
{
	t->slots = calloc(cap, sizeof *t->slots);
	t->cap = cap;
	t->live = t->tombstones = t->clock_hand = 0;
	return t->slots != NULL;
}

/* The live entry for key, or NULL.  A hit sets the reference bit. */
__attribute__((noinline, noclone)) static struct entry
*table_find(struct table *t, const char *key, uint64_t hash)
{
	size_t mask = t->cap - 1;
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		struct entry *e = &t->slots[i];
		if (e->hash == SLOT_EMPTY)
			return NULL;
		if (e->hash == hash && strcmp(e->key, key) == 0) {
			e->used = 1;
			return e;
		}
	}
}

/* Moves every live entry into a table of new_cap slots (tombstones go). */
__attribute__((noinline, noclone)) static int
table_rehash(struct table *t, size_t new_cap)
{
	struct table nt;
	if (!table_init(&nt, new_cap))
		return 0;
	size_t mask = new_cap - 1;
	for (size_t i = 0; i < t->cap; i++) {
		const struct entry *e = &t->slots[i];
		if (e->hash < 2)
			continue;
		size_t j = e->hash & mask;
		while (nt.slots[j].hash != SLOT_EMPTY)
			j = (j + 1) & mask;
		nt.slots[j] = *e;
		nt.live++;
	}
	free(t->slots);
	*t = nt;
	return 1;
}

static void table_remove(struct table *t, struct entry *e)
{
	e->hash = SLOT_TOMBSTONE;
	t->live--;
	t->tombstones++;
}

/* CLOCK: sweep from the hand, giving referenced entries a second chance. */
__attribute__((noinline, noclone)) static void
table_evict_one(struct table *t)
{
	for (;;) {
		struct entry *e = &t->slots[t->clock_hand];
		t->clock_hand = (t->clock_hand + 1) & (t->cap - 1);
		if (e->hash < 2)
			continue;
		if (e->used) {
			e->used = 0;
			continue;
		}
		table_remove(t, e);
		return;
	}
}

/* Inserts a key known to be absent.  Returns 0 when out of memory. */
__attribute__((noinline, noclone)) static int
table_insert(struct table *t, const char *key, uint64_t hash, uint64_t value,
	     struct stats *st)
{
	if (t->live >= MAX_LIVE) {
		table_evict_one(t);
		st->evictions++;
	}
	if ((t->live + t->tombstones + 1) * 10 > t->cap * 7) {
		/* Mostly tombstones: rehash in place; else double. */
		size_t new_cap = t->live * 2 < t->cap / 2 ? t->cap : t->cap * 2;
		if (!table_rehash(t, new_cap))
			return 0;
		st->rehashes++;
	}
	size_t mask = t->cap - 1;
	size_t i = hash & mask;
	while (t->slots[i].hash >= 2)
		i = (i + 1) & mask;
	struct entry *e = &t->slots[i];
	if (e->hash == SLOT_TOMBSTONE)
		t->tombstones--;
	memset(e, 0, sizeof *e); /* every field is set below */
	e->hash = hash;
	strncpy(e->key, key, KEY_MAX - 1);
	e->value = value;
	e->hits = 0;
	e->used = 1;
	t->live++;
	return 1;
}

static uint64_t cache_get(struct table *t, const char *key,
			  struct stats *st)
{
	uint64_t hash = hash_key(key);
	struct entry *e = table_find(t, key, hash);
	st->gets++;
	if (e) {
		e->hits++;
		st->hits++;
		return e->value;
	}
	st->misses++;
	uint64_t v = backing_store_value(key);
	if (!table_insert(t, key, hash, v, st)) {
		fprintf(stderr, "hashtab: out of memory\n");
		exit(1);
	}
	return v;
}

__attribute__((noinline, noclone)) static void
cache_put(struct table *t, const char *key, uint64_t value, struct stats *st)
{
	uint64_t hash = hash_key(key);
	struct entry *e = table_find(t, key, hash);
	st->puts++;
	if (e) {
		e->value = value; /* usually what it already was */
		return;
	}
	if (!table_insert(t, key, hash, value, st)) {
		fprintf(stderr, "hashtab: out of memory\n");
		exit(1);
	}
}

static void cache_delete(struct table *t, const char *key, struct stats *st)
{
	struct entry *e = table_find(t, key, hash_key(key));
	st->deletes++;
	if (e)
		table_remove(t, e);
}

__attribute__((noinline, noclone)) static void
run_requests(struct table *t, uint64_t *rng, uint32_t nops, struct stats *st)
{
	char key[KEY_MAX];
	for (uint32_t op = 0; op < nops; op++) {
		format_key(key, zipf_draw(rng));
		unsigned kind = (unsigned)(bench_xorshift64(rng) % 100);
		if (kind < 80) {
			st->checksum += cache_get(t, key, st);
		} else if (kind < 95) {
			/* one write in 16 really changes the value */
			uint64_t v = backing_store_value(key);
			if (bench_xorshift64(rng) % 16 == 0)
				v ^= op;
			cache_put(t, key, v, st);
		} else {
			cache_delete(t, key, st);
		}
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(w->id + 1);
	for (long round = 0; round < w->rounds; round++) {
		struct table t;
		if (!table_init(&t, INITIAL_CAP)) {
			fprintf(stderr, "hashtab: out of memory\n");
			exit(1);
		}
		run_requests(&t, &rng, OPS_PER_ROUND, &w->stats);
		/* Fold the surviving entries' hit counts in slot order. */
		for (size_t i = 0; i < t.cap; i++)
			if (t.slots[i].hash >= 2)
				w->stats.checksum = w->stats.checksum * 31 +
						    t.slots[i].hits;
		free(t.slots);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long scale = bench_parse_scale("hashtab", argc, argv);
	struct worker workers[NTHREADS];
	pthread_t threads[NTHREADS];
	for (int i = 0; i < NTHREADS; i++) {
		workers[i] = (struct worker){ .id = i,
					      .rounds = scale * ROUNDS_PER_SCALE };
		int err = pthread_create(&threads[i], NULL, worker_main,
					 &workers[i]);
		if (err) {
			fprintf(stderr, "hashtab: pthread_create: %s\n",
				strerror(err));
			return 1;
		}
	}
	struct stats total = { 0 };
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(threads[i], NULL);
		const struct stats *s = &workers[i].stats;
		total.gets += s->gets;
		total.hits += s->hits;
		total.puts += s->puts;
		total.deletes += s->deletes;
		total.evictions += s->evictions;
		total.rehashes += s->rehashes;
		total.checksum = total.checksum * 1000003 ^ s->checksum;
	}
	printf("hashtab: threads=%d gets=%llu hits=%llu puts=%llu deletes=%llu "
	       "evictions=%llu rehashes=%llu checksum=%016llx\n", NTHREADS,
	       (unsigned long long)total.gets, (unsigned long long)total.hits,
	       (unsigned long long)total.puts,
	       (unsigned long long)total.deletes,
	       (unsigned long long)total.evictions,
	       (unsigned long long)total.rehashes,
	       (unsigned long long)total.checksum);
	return 0;
}
