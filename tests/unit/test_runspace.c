/* Unit test of runspace: the handler runs' workspaces, a pool a process.
 *
 * What must hold (runspace.h):
 *   - a runspace is held by one run at a time: none is handed out twice
 *     before it is given back, under concurrent takes and gives (the race
 *     rows stamp each runspace while they hold it and check the stamp is
 *     still theirs before giving it back);
 *   - the pool lays out a new runspace only when none is free: after k
 *     held at once, runspace_count() is k, and a runspace given back is the
 *     next one taken (LIFO, so the process touches as few as it can);
 *   - past the pool's room, take says NULL (the run is skipped), and a
 *     give makes room again;
 *   - each is laid out on first take: its decodings' tables and its
 *     scratch arrays inside the pool's region, which owns_address covers;
 *   - the tables given at init are left untouched until the first layout,
 *     which makes them present, and each runspace is present once laid
 *     out (prefault.h; where the kernel cannot, this is not checked);
 *   - in a fork's child every runspace is free again.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <sys/mman.h>

#include "check.h"
#include "witch/prefault.h"
#include "witch/runspace.h"

#define MAX_HELD 1100 /* above RUNSPACE_MAX: the pool's room is found by taking */

static struct runspace *held[MAX_HELD];

#define TABLE_PAGE 4096u
static int prefault_supported;

/* 1 if the page holding p is in memory, 0 if not, -1 if unmapped. */
static int resident(const void *p)
{
	unsigned char v = 0;
	uintptr_t page = (uintptr_t)p & ~(uintptr_t)(TABLE_PAGE - 1);
	return mincore((void *)page, TABLE_PAGE, &v) == 0 ? (v & 1) : -1;
}

static int laid_out_inside(const struct runspace *r)
{
	return r->zcache.tag && r->zcache.slot &&
	       runspace_owns_address((uint64_t)(uintptr_t)r->zcache.slot) &&
	       runspace_owns_address((uint64_t)(uintptr_t)&r->zcache.slot[DECODE_ZCACHE_SLOTS - 1]) &&
	       r->scratch.trap_pcs && runspace_owns_address((uint64_t)(uintptr_t)r->scratch.pcs) &&
	       runspace_owns_address((uint64_t)(uintptr_t)(r->scratch.trap_pcs + 7)) &&
	       runspace_owns_address((uint64_t)(uintptr_t)(r + 1) - 1);
}

/* Takes until the pool says NULL: its room. */
static int take_all(void)
{
	int n = 0;
	while (n < MAX_HELD && (held[n] = runspace_take()) != NULL)
		n++;
	return n;
}

static void test_pool(void)
{
	CHECK(__LINE__, runspace_take() == NULL, "a take before the pool is mapped");
	char *tables = mmap(NULL, 3 * TABLE_PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(__LINE__, tables != MAP_FAILED, "mmap");
	if (tables == MAP_FAILED)
		return;
	CHECK(__LINE__, runspace_module_init(8, NULL, NULL, tables, 3 * TABLE_PAGE) == 0, "init");
	CHECK(__LINE__, runspace_count() == 0, "laid out before any take: %u", runspace_count());
	CHECK(__LINE__, resident(tables) == 0 && resident(tables + 2 * TABLE_PAGE) == 0,
	      "the tables made present before any run");

	struct runspace *a = runspace_take(), *b = runspace_take();
	CHECK(__LINE__, a && b && a != b, "two held at once are two");
	/* Made present at the first layout, before the run touches them
	 * (where the kernel can: prefault.h). */
	if (prefault_supported) {
		CHECK(__LINE__, resident(tables) == 1 && resident(tables + 2 * TABLE_PAGE) == 1,
		      "the tables not present after the first layout");
		CHECK(__LINE__, a && resident(&a->zcache.slot[DECODE_ZCACHE_SLOTS - 1]) == 1 &&
					resident(&a->scratch.trap_pcs[7]) == 1 &&
					b && resident(&b->zcache.slot[DECODE_ZCACHE_SLOTS - 1]) == 1,
		      "a runspace's decodings or scratch not present once laid out");
	}
	CHECK(__LINE__, runspace_count() == 2, "two held at once: %u laid out", runspace_count());
	CHECK(__LINE__, a && laid_out_inside(a) && b && laid_out_inside(b), "laid out in the region");
	runspace_give(b);
	CHECK(__LINE__, runspace_take() == b, "the last given is the next taken");
	runspace_give(a);
	runspace_give(b);
	for (int i = 0; i < 100; i++) {
		struct runspace *r = runspace_take();
		runspace_give(r);
	}
	CHECK(__LINE__, runspace_count() == 2, "one run at a time lays out no more: %u",
	      runspace_count());

	int room = take_all();
	CHECK(__LINE__, room >= 16 && room <= 1024, "room for %d", room);
	CHECK(__LINE__, (uint32_t)room == runspace_count(), "room %d, laid out %u", room,
	      runspace_count());
	for (int i = 0; i < room; i++) {
		CHECK(__LINE__, laid_out_inside(held[i]), "runspace %d laid out", i);
		for (int j = 0; j < i; j++)
			if (held[j] == held[i])
				FAIL(__LINE__, "runspace %d handed out twice (%d)", i, j);
	}
	CHECK(__LINE__, runspace_take() == NULL, "past the room");
	runspace_give(held[room / 2]);
	CHECK(__LINE__, runspace_take() == held[room / 2], "a give makes room");

	/* A fork's child: every runspace free again, none laid out anew. */
	runspace_postfork_child();
	int again = take_all();
	CHECK(__LINE__, again == room, "after the fork's reset %d of %d free", again, room);
	CHECK(__LINE__, (uint32_t)room == runspace_count(), "laid out anew after the reset: %u",
	      runspace_count());
	for (int i = 0; i < again; i++)
		runspace_give(held[i]);
	CHECK(__LINE__, runspace_owns_address(0) == 0, "address 0 owned");
}

/* --- race: each thread takes, stamps, checks, gives ------------------------ */

#define RACE_THREADS 4
#define RACE_ROUNDS 300000

struct race_arg {
	uint32_t id;
	uint64_t twice, none;
};

static void *race_thread(void *p)
{
	struct race_arg *a = p;
	for (uint32_t i = 0; i < RACE_ROUNDS; i++) {
		struct runspace *r = runspace_take();
		if (!r) {
			a->none++;
			continue;
		}
		/* A stamp another holder of the same runspace would overwrite. */
		__atomic_store_n(&r->trace.n, a->id, __ATOMIC_RELAXED);
		for (volatile int spin = 0; spin < (int)(i & 15); spin++)
			;
		if (__atomic_load_n(&r->trace.n, __ATOMIC_RELAXED) != a->id)
			a->twice++;
		runspace_give(r);
	}
	return NULL;
}

static void test_race(void)
{
	pthread_t th[RACE_THREADS];
	struct race_arg arg[RACE_THREADS];
	for (uint32_t i = 0; i < RACE_THREADS; i++) {
		arg[i] = (struct race_arg){.id = i + 1};
		pthread_create(&th[i], NULL, race_thread, &arg[i]);
	}
	for (int i = 0; i < RACE_THREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < RACE_THREADS; i++) {
		CHECK(__LINE__, arg[i].twice == 0, "thread %d: %lu runspaces held by two", i,
		      (unsigned long)arg[i].twice);
		CHECK(__LINE__, arg[i].none == 0, "thread %d: %lu takes found none free", i,
		      (unsigned long)arg[i].none);
	}
	/* All given back: as many free as there is room. */
	int n = take_all();
	CHECK(__LINE__, (uint32_t)n == runspace_count(), "%d free after the race, %u laid out", n,
	      runspace_count());
	for (int i = 0; i < n; i++)
		runspace_give(held[i]);
}

int main(void)
{
	void *probe = mmap(NULL, TABLE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	prefault_supported = probe != MAP_FAILED && prefault_range(probe, TABLE_PAGE) == 0;
	if (!prefault_supported)
		printf("MADV_POPULATE_WRITE not supported: layouts' residency not checked\n");
	test_pool();
	test_race();
	if (check_failures)
		fprintf(stderr, "%d failure(s)\n", check_failures);
	return check_failures != 0;
}
