/* Unit test of objects.h: which frame's stack an address is in, one id per
 * object across threads, the sampled bytes and the profile records, and the
 * table's cap.  Heap and static objects are tested with their modules
 * (test_heap.c, test_datasym.c); here the stack's pcs are made up, so
 * unwind tables know none of them and an object is keyed by the pc itself.
 * Exit status 0 on success.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "witch/cost.h"
#include "witch/heap.h"
#include "witch/objects.h"
#include "witch/outbuf.h"
#include "witch/rng.h"

#include "check.h"

/* A made-up stack: three frames, innermost first.  Frame i owns
 * [sps[i], sps[i+1]); the outermost runs to STACK_HI. */
#define SP0 0x7ff000100000ull
#define SP1 (SP0 + 0x100)
#define SP2 (SP0 + 0x300)
#define STACK_HI (SP0 + 0x2000)
#define PC_PICK 0x401000ull /* the sampled instruction, past a call the run-ahead made */
#define PC_INT 0x401500ull  /* the interrupted instruction */
#define PC_1 0x402000ull
#define PC_2 0x403000ull

static const uint64_t pcs[3] = {PC_PICK, PC_1, PC_2};
static const uint64_t sps[3] = {SP0, SP1, SP2};

static const struct stack_row {
	int line;
	uint64_t addr;
	uint64_t want_pc; /* 0: unknown */
} stack_rows[] = {
	{__LINE__, SP0, PC_INT},                 /* frame 0 is the interrupted function's */
	{__LINE__, SP1 - 1, PC_INT},
	{__LINE__, SP0 - 8, PC_PICK},            /* below it: the run-ahead's callee */
	{__LINE__, SP0 - (16u << 10), PC_PICK},  /* as far below as a pick may push */
	{__LINE__, SP0 - (16u << 10) - 1, 0},    /* further: not this stack */
	{__LINE__, SP1, PC_1},
	{__LINE__, SP2 - 1, PC_1},
	{__LINE__, SP2, PC_2},
	{__LINE__, STACK_HI - 1, PC_2},
	{__LINE__, STACK_HI, 0},                 /* above the thread's stack */
	{__LINE__, 0x1000, 0},
};

/* The profile records, read back: the pc of stack object id, its sampled
 * bytes, and the unknown's. */
struct emitted {
	uint64_t stack_pc[OBJECTS_ID_MAX + 1];
	double sampled[OBJECTS_ID_MAX + 1];
	int bad_lines;
};

static void emit_read(struct emitted *e)
{
	char line[256];
	struct outbuf out;
	memset(e, 0, sizeof(*e));
	int fd = memfd_create("objects_emit", 0);
	CHECK(__LINE__, fd >= 0, "memfd_create");
	if (fd < 0)
		return;
	outbuf_init(&out, fd);
	CHECK(__LINE__, objects_emit(&out) == 0, "objects_emit");
	CHECK(__LINE__, outbuf_flush(&out) == 0, "outbuf_flush");
	FILE *r = lseek(fd, 0, SEEK_SET) == 0 ? fdopen(fd, "r") : NULL;
	while (r && fgets(line, sizeof(line), r)) {
		unsigned id;
		unsigned long long pc;
		double bytes;
		if (sscanf(line, "object %u stack 0 0x%llx", &id, &pc) == 2 && id <= OBJECTS_ID_MAX)
			e->stack_pc[id] = pc;
		else if (sscanf(line, "object_sampled %u %lg", &id, &bytes) == 2 && id <= OBJECTS_ID_MAX)
			e->sampled[id] = bytes;
		else
			e->bad_lines++;
	}
	if (r)
		fclose(r);
	else
		close(fd);
}

static uint32_t classify(uint64_t addr, const uint64_t *p, int *dropped)
{
	static struct rng rng = {1};
	struct objects_where w = {PC_INT, p, sps, 3, STACK_HI, 0, &rng, NULL};
	return objects_classify(addr, &w, dropped);
}

static void test_stack(void)
{
	uint32_t id_of_pc[4] = {0};
	const uint64_t known[4] = {PC_INT, PC_PICK, PC_1, PC_2};
	for (size_t i = 0; i < sizeof(stack_rows) / sizeof(stack_rows[0]); i++) {
		const struct stack_row *r = &stack_rows[i];
		int dropped;
		uint32_t id = classify(r->addr, pcs, &dropped);
		CHECK(r->line, dropped == 0, "dropped with an empty table");
		if (!r->want_pc) {
			CHECK(r->line, id == 0, "0x%llx: id %u, want unknown", (unsigned long long)r->addr, id);
			continue;
		}
		CHECK(r->line, id != 0, "0x%llx: unknown", (unsigned long long)r->addr);
		for (int k = 0; k < 4; k++)
			if (known[k] == r->want_pc) {
				CHECK(r->line, id_of_pc[k] == 0 || id_of_pc[k] == id,
				      "pc 0x%llx: id %u, earlier %u", (unsigned long long)r->want_pc, id,
				      id_of_pc[k]);
				id_of_pc[k] = id;
			}
		objects_add_sampled(id, 10);
	}
	objects_add_sampled(0, 7);
	static struct emitted e;
	emit_read(&e);
	CHECK(__LINE__, e.bad_lines == 0, "%d lines not object/object_sampled", e.bad_lines);
	/* rows per pc: INT 2, PICK 2, PC_1 2, PC_2 2, 10 bytes each */
	for (int k = 0; k < 4; k++) {
		uint32_t id = id_of_pc[k];
		CHECK(__LINE__, id != 0 && e.stack_pc[id] == known[k], "pc 0x%llx: record says 0x%llx",
		      (unsigned long long)known[k], (unsigned long long)(id ? e.stack_pc[id] : 0));
		CHECK(__LINE__, id != 0 && e.sampled[id] == 20, "pc 0x%llx: sampled %g, want 20",
		      (unsigned long long)known[k], id ? e.sampled[id] : 0);
		CHECK(__LINE__, objects_written_id(id) == id, "id %u not written", id);
	}
	CHECK(__LINE__, e.sampled[0] == 7, "unknown sampled %g, want 7", e.sampled[0]);
	CHECK(__LINE__, objects_written_id(0) == 0, "unknown written");
	/* A fork child's profile starts afresh: no bytes, same objects. */
	objects_postfork_child();
	emit_read(&e);
	CHECK(__LINE__, e.sampled[0] == 0 && e.sampled[id_of_pc[0]] == 0, "bytes after fork: %g %g",
	      e.sampled[0], e.sampled[id_of_pc[0]]);
	CHECK(__LINE__, e.stack_pc[id_of_pc[0]] == PC_INT, "object gone after fork");
}

/* Threads meeting the same objects in different orders agree on their ids. */
#define RACE_PCS 512
static uint32_t race_ids[2][RACE_PCS];

static void *race(void *arg)
{
	int me = (int)(intptr_t)arg;
	for (int k = 0; k < RACE_PCS; k++) {
		int i = me ? RACE_PCS - 1 - k : k;
		uint64_t p[3] = {0x500000ull + 16u * (unsigned)i, PC_1, PC_2};
		int dropped;
		race_ids[me][i] = classify(SP0 - 8, p, &dropped);
		objects_add_sampled(race_ids[me][i], 1);
	}
	return NULL;
}

static void test_race(void)
{
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		CHECK(__LINE__, pthread_create(&th[i], NULL, race, (void *)(intptr_t)i) == 0, "create");
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	static struct emitted e;
	emit_read(&e);
	for (int i = 0; i < RACE_PCS; i++) {
		uint32_t id = race_ids[0][i];
		CHECK(__LINE__, id != 0 && id == race_ids[1][i], "pc %d: ids %u and %u", i, id,
		      race_ids[1][i]);
		CHECK(__LINE__, id != 0 && e.sampled[id] == 2, "pc %d: sampled %g, want 2 (one per thread)",
		      i, id ? e.sampled[id] : 0);
	}
}

/* Past OBJECTS_MAX objects a new one is unknown and says dropped; known
 * ones still resolve. */
static void test_cap(void)
{
	uint32_t first = 0, last_id = 0;
	int n_new = 0, dropped = 0;
	for (int i = 0; i < OBJECTS_MAX + 10; i++) {
		uint64_t p[3] = {0x600000ull + 16u * (unsigned)i, PC_1, PC_2};
		uint32_t id = classify(SP0 - 8, p, &dropped);
		if (i == 0)
			first = id;
		if (id) {
			n_new++;
			last_id = id;
		} else {
			CHECK(__LINE__, dropped == 1, "object %d: unknown but not dropped", i);
		}
	}
	/* 4 + RACE_PCS objects exist from the tests before, and ids are handed
	 * out in order: the first new one is past them, and past any hole
	 * test_race's two threads left (a key both added at once keeps one
	 * id; the other is a hole, densetab.h): 1 in ~450 runs. */
	CHECK(__LINE__, first > 4 + RACE_PCS, "first new id %u, want past %d", first, 4 + RACE_PCS);
	CHECK(__LINE__, n_new == OBJECTS_MAX - (int)first + 1, "%d new objects from id %u, want %d",
	      n_new, first, OBJECTS_MAX - (int)first + 1);
	uint64_t p[3] = {0x600000ull, PC_1, PC_2};
	CHECK(__LINE__, classify(SP0 - 8, p, &dropped) == first && dropped == 0,
	      "a known object after the cap");
	CHECK(__LINE__, last_id != 0, "no object at all");
}

/* A handler on a stack below a heap block (an altstack, a coroutine's
 * stack), its caller on the thread's: the walked frames span the block,
 * which stays the heap's, and the same address between two frames close
 * together would be a stack slot (objects.c asks the heap nothing then). */
static void test_stack_switch(void)
{
	heap_set_sample_bytes(0); /* every block tracked */
	int rc = cost_init(0);
	if (rc == 0)
		rc = heap_init();
	if (rc < 0) {
		FAIL(__LINE__, "cost_init or heap_init: %s", strerror(-rc));
		return;
	}
	char *block = malloc(4096);
	uint64_t b = (uint64_t)(uintptr_t)block, start, size;
	uint32_t s32;
	if (!block || heap_lookup(b + 8, &s32, &start, &size) < 0) {
		FAIL(__LINE__, "the block is not tracked");
		free(block);
		return;
	}
	static struct rng rng = {1};
	const uint64_t p[3] = {PC_INT, PC_1, PC_2};
	const uint64_t apart[3] = {b - 0x1000, SP0, SP1};   /* 0x7ff0... far above */
	const uint64_t close[3] = {b - 0x1000, b + 0x1000, b + 0x2000};
	const uint64_t stack_only[3] = {SP0, SP1, SP2};
	struct objects_where w_apart = {PC_INT, p, apart, 3, STACK_HI, 0, &rng, NULL};
	struct objects_where w_close = {PC_INT, p, close, 3, STACK_HI, 0, &rng, NULL};
	struct objects_where w_stack = {PC_INT, p, stack_only, 3, STACK_HI, 0, &rng, NULL};
	int dropped;
	uint32_t heap_id = objects_classify(b + 8, &w_stack, &dropped);
	uint32_t frame0_id = objects_classify(SP0, &w_stack, &dropped);
	CHECK(__LINE__, heap_id != 0 && frame0_id != 0 && heap_id != frame0_id,
	      "heap %u, frame 0 %u", heap_id, frame0_id);
	CHECK(__LINE__, objects_classify(b + 8, &w_apart, &dropped) == heap_id,
	      "a block between frames far apart not the heap's");
	CHECK(__LINE__, objects_classify(b + 8, &w_close, &dropped) == frame0_id,
	      "a slot between close frames not frame 0's");
	free(block);
}

int main(void)
{
	CHECK(__LINE__, objects_init() == 0 && objects_enabled(), "objects_init");
	test_stack();
	test_race();
	test_stack_switch();
	test_cap();
	return check_failures != 0;
}
