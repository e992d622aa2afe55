/* Unit test of objpend.c: a context's pending sample weight by object.
 *
 * Each row is a context's samples since its last trap, (object, bytes) in
 * order, and the parts objpend_take must give back: one per object in the
 * order first seen, weight its bytes, and the objects past OBJPEND_SLOTS
 * summed into one OBJPEND_REST part last.  After the take the context holds nothing.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "witch/objpend.h"

#include "check.h"

#define MAX_SAMPLES 8

struct sample {
	uint32_t obj;
	double bytes;
};

struct row {
	int line;
	int n;
	struct sample s[MAX_SAMPLES];
	int want_n;
	struct objpend_part want[OBJPEND_SLOTS + 1];
};

static int near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b) + 1);
}

static void run(struct arena *a, const struct row *r)
{
	uint32_t handle = 0;
	struct objpend_part got[OBJPEND_SLOTS + 1];

	for (int i = 0; i < r->n; i++)
		CHECK(r->line, objpend_add(a, &handle, r->s[i].obj, r->s[i].bytes) == 0,
		      "objpend_add %d failed", i);
	CHECK(r->line, handle != 0 || r->n == 0, "no handle after %d samples", r->n);
	int n = objpend_take(a, handle, got);
	CHECK(r->line, n == r->want_n, "%d parts, want %d", n, r->want_n);
	for (int i = 0; i < n && n == r->want_n; i++)
		CHECK(r->line,
		      got[i].obj == r->want[i].obj && near(got[i].weight, r->want[i].weight),
		      "part %d: obj %u weight %g, want %u %g", i, got[i].obj, got[i].weight,
		      r->want[i].obj, r->want[i].weight);
	CHECK(r->line, objpend_take(a, handle, got) == 0, "a second take found parts");
	/* The context goes on: its next samples start afresh. */
	if (r->n > 0) {
		CHECK(r->line, objpend_add(a, &handle, 42, 5) == 0, "add after take");
		n = objpend_take(a, handle, got);
		CHECK(r->line, n == 1 && got[0].obj == 42 && near(got[0].weight, 5),
		      "after a take: %d parts, first obj %u", n, n ? got[0].obj : 0);
	}
}

int main(void)
{
	struct arena a;
	if (arena_init(&a, 1u << 20) < 0) {
		fprintf(stderr, "test_objpend: no arena\n");
		return 1;
	}
	static const struct row rows[] = {
		/* nothing sampled: nothing to split */
		{__LINE__, 0, {{0}}, 0, {{0}}},
		/* one object: the whole weight */
		{__LINE__, 2, {{7, 100}, {7, 50}}, 1, {{7, 150}}},
		/* a table slot and a counter in one context: kept apart, in the
		 * order first seen */
		{__LINE__, 4, {{3, 64}, {0, 8}, {3, 64}, {0, 8}}, 2, {{3, 128}, {0, 16}}},
		/* more objects than slots: the fourth and fifth share the rest */
		{__LINE__, 5, {{1, 10}, {2, 20}, {3, 30}, {4, 40}, {5, 50}}, 4,
		 {{1, 10}, {2, 20}, {3, 30}, {OBJPEND_REST, 90}}},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run(&a, &rows[i]);
	/* An arena whose last quarter is all that is left: refused. */
	struct arena tiny;
	CHECK(__LINE__, arena_init(&tiny, 4096) == 0, "tiny arena");
	tiny.used = tiny.size - tiny.size / 4;
	uint32_t h = 0;
	CHECK(__LINE__, objpend_add(&tiny, &h, 1, 8) == -ENOMEM && h == 0,
	      "a full arena: want -ENOMEM and no handle");
	arena_destroy(&tiny);
	arena_destroy(&a);
	if (check_failures)
		fprintf(stderr, "test_objpend: %d failure(s)\n", check_failures);
	else
		printf("test_objpend: %zu rows passed\n", sizeof(rows) / sizeof(rows[0]));
	return check_failures != 0;
}
