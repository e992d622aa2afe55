/* densetab: a lock-free hash index over densely kept records (see densetab.h). */
#include "witch/densetab.h"
#include "witch/lockguard.h"
#include "witch/firsttouch.h"

#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>

int densetab_init(struct densetab *t, uint32_t cap, uint32_t nslots)
{
	if (cap == 0 || nslots < 2 * cap || (nslots & (nslots - 1)))
		return -EINVAL;
	size_t bytes = (size_t)nslots * sizeof(*t->slots) + cap + 1;
	void *p = lockguard_map(bytes, MAP_NORESERVE);
	if (p == MAP_FAILED)
		return -errno;
	t->slots = p;
	t->live = (uint8_t *)p + (size_t)nslots * sizeof(*t->slots);
	t->nslots = nslots;
	t->cap = cap;
	t->taken = 0;
	return 0;
}

uint32_t densetab_find(const struct densetab *t, uint64_t hash, densetab_match_fn match,
		       const void *arg)
{
	uint32_t mask = t->nslots - 1;
	for (uint32_t p = 0, s = (uint32_t)hash & mask; p < t->nslots; p++, s = (s + 1) & mask) {
		uint32_t id = __atomic_load_n(&t->slots[s], __ATOMIC_ACQUIRE);
		if (id == 0)
			return 0; /* the chain ends */
		if (match(id, arg))
			return id;
	}
	return 0;
}

uint32_t densetab_intern(struct densetab *t, uint64_t hash, densetab_match_fn match,
			 densetab_fill_fn fill, const void *arg)
{
	firsttouch_for_write(&t->slots[(uint32_t)hash & (t->nslots - 1)]); /* a miss writes there */
	uint32_t id = densetab_find(t, hash, match, arg);
	if (id)
		return id;
	if (__atomic_load_n(&t->taken, __ATOMIC_RELAXED) >= t->cap)
		return 0;
	uint32_t mine = __atomic_add_fetch(&t->taken, 1, __ATOMIC_RELAXED);
	if (mine > t->cap)
		return 0;
	fill(mine, arg);
	uint32_t mask = t->nslots - 1;
	for (uint32_t p = 0, s = (uint32_t)hash & mask; p < t->nslots; p++, s = (s + 1) & mask) {
		uint32_t cur = 0;
		if (__atomic_compare_exchange_n(&t->slots[s], &cur, mine, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			__atomic_store_n(&t->live[mine], 1, __ATOMIC_RELEASE);
			return mine;
		}
		if (match(cur, arg))
			return cur; /* published first by another thread: mine stays a hole */
	}
	return 0;
}

uint32_t densetab_taken(const struct densetab *t)
{
	uint32_t n = __atomic_load_n(&t->taken, __ATOMIC_RELAXED);
	return n < t->cap ? n : t->cap;
}

int densetab_is_live(const struct densetab *t, uint32_t id)
{
	return id >= 1 && id <= t->cap && __atomic_load_n(&t->live[id], __ATOMIC_ACQUIRE);
}
