/* test_heap_table: what a fork child's heap_table_postfork_child costs, and
 * that the child keeps the parent's blocks.
 *
 * The table is 256 KiB (64 pages) reserved at heap_table_init; a program
 * that tracks few blocks (a shell) has written few of its pages.  Reading
 * an unwritten page maps the zero page, a minor fault each (15-20 us on
 * the project's VMs), so a child that read the whole table to free its
 * parent's half-written slots paid 64 faults, ~1 ms a shell command.  Now
 * such a slot stays busy in the child, passed over (heap_table.c), and the
 * hook reads none of the table.  (With inserts under way in other threads
 * as the process forks, test_heap's test_fork: the child keeps its
 * parent's blocks and tracks its own.)
 *
 * Cases, each a fork child reporting through its exit status:
 *   - one block inserted (one page written): the hook takes at most 4
 *     minor faults (the whole scan: 63), and the child finds the block;
 *   - blocks over the whole table (every page written): at most 4 faults
 *     again, and the child finds them all.
 * And first, what heap_table_may_hold answers a free (table rows): yes at
 * a tracked block's start, in its KiB and 64 MiB on (they share a
 * counter); no in the KiBs beside it, and none once the block is removed.
 */

#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "witch/heap_table.h"

static long minor_faults(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

/* The fork child's answer: its exit status, 0 when all held. */
static int in_child(int (*body)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		_exit(body());
	int status = -1;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 100;
	return WEXITSTATUS(status);
}

#define BLOCK0 0x10000000ull
#define BLOCKS 4096 /* at 64-byte granules, hashed over the whole table */

static int few_pages_child(void)
{
	long before = minor_faults();
	heap_table_postfork_child();
	long faults = minor_faults() - before;
	uint64_t s = 0, v = 0;
	int found = heap_table_find(BLOCK0 + 10, 0, &s, &v) == 0 && s == BLOCK0;
	if (faults > 4)
		fprintf(stderr, "child: the hook took %ld minor faults\n", faults);
	if (!found)
		fprintf(stderr, "child: the parent's block is gone\n");
	return (faults > 4) | (!found << 1);
}

static int all_pages_child(void)
{
	long before = minor_faults();
	heap_table_postfork_child();
	long faults = minor_faults() - before;
	if (faults > 4)
		fprintf(stderr, "child: the hook took %ld minor faults\n", faults);
	int missing = 0;
	for (uint64_t i = 0; i < BLOCKS; i++) {
		uint64_t s = 0, v = 0, at = BLOCK0 + 4096 * (i + 1);
		missing += heap_table_find(at + 20, 0, &s, &v) != 0 || s != at;
	}
	if (missing)
		fprintf(stderr, "child: %d of %d blocks gone\n", missing, BLOCKS);
	return (faults > 4) | ((missing != 0) << 1);
}

#define HOLD0 0x20000000ull /* apart from BLOCK0's blocks */

static void test_may_hold(void)
{
	static const struct {
		int line;
		uint64_t at;
		int tracked; /* HOLD0 is tracked: 1; removed again: 0 */
		int want;
	} rows[] = {
		{__LINE__, HOLD0, 1, 1},
		{__LINE__, HOLD0 + 512, 1, 1},        /* its KiB */
		{__LINE__, HOLD0 + (64ull << 20), 1, 1}, /* 64 MiB on: the same counter */
		{__LINE__, HOLD0 + 1024, 1, 0},       /* the next KiB: no block ever */
		{__LINE__, HOLD0 - 1024, 1, 0},
		{__LINE__, HOLD0, 0, 0},              /* removed: its counter back to 0 */
		{__LINE__, HOLD0 + 512, 0, 0},
		{__LINE__, HOLD0 + 1024, 0, 0},
	};
	int tracked = 0;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].tracked && !tracked) {
			int rc = heap_table_insert(HOLD0, 64, 64, 3, 0);
			CHECK(rows[i].line, rc == 0, "heap_table_insert: %d", rc);
		} else if (!rows[i].tracked && tracked) {
			CHECK(rows[i].line, heap_table_remove(HOLD0, 64) != 0, "heap_table_remove found nothing");
		}
		tracked = rows[i].tracked;
		int got = heap_table_may_hold((const void *)(uintptr_t)rows[i].at);
		CHECK(rows[i].line, got == rows[i].want, "may_hold(%#llx) with the block %s: %d, not %d",
		      (unsigned long long)rows[i].at, tracked ? "tracked" : "removed", got, rows[i].want);
	}
}

int main(void)
{
	int rc = heap_table_init();
	CHECK(__LINE__, rc == 0, "heap_table_init: %d", rc);
	if (rc != 0)
		return 1;
	test_may_hold();
	rc = heap_table_insert(BLOCK0, 48, 48, 7, 0);
	CHECK(__LINE__, rc == 0, "heap_table_insert: %d", rc);
	rc = in_child(few_pages_child);
	CHECK(__LINE__, rc == 0, "one page written: child status %d (1: too many faults, 2: block lost)",
	      rc);

	int failed = 0;
	for (uint64_t i = 0; i < BLOCKS; i++)
		failed += heap_table_insert(BLOCK0 + 4096 * (i + 1), 48, 48, 7, 0) != 0;
	CHECK(__LINE__, failed == 0, "%d inserts failed", failed);
	rc = in_child(all_pages_child);
	CHECK(__LINE__, rc == 0, "every page written: child status %d (1: too many faults, 2: blocks lost)",
	      rc);
	printf("test_heap_table: a fork child with no insert under way reads none of the table\n");
	return check_failures != 0;
}
