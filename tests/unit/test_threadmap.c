/* Unit test of threadmap.h: a mapping given back is kept and taken again,
 * zero from clean_from on (the pages the last thread wrote, read, never
 * touched, and a page of zeros it wrote), its first bytes as they were;
 * at most THREADMAP_KEEP are kept; a size other than the one kept is not.
 * Pages past the caller's clean_to are not looked at.
 * Exit status 0 on success.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "witch/threadmap.h"

#include "check.h"

#define PAGE 4096u
#define LEN (64 * PAGE)
#define CLEAN_FROM (4 * PAGE)

/* How the last thread used a page of the mapping. */
enum use { UNTOUCHED, WRITTEN, READ_ONLY, WRITTEN_ZERO };

static const struct {
	int line;
	size_t page;
	enum use use;
} uses[] = {
	{__LINE__, 0, WRITTEN},   /* below clean_from: left as it was */
	{__LINE__, 3, WRITTEN},
	{__LINE__, 4, WRITTEN},   /* the first page cleared */
	{__LINE__, 5, READ_ONLY}, /* the zero page's */
	{__LINE__, 6, UNTOUCHED},
	{__LINE__, 7, WRITTEN_ZERO},
	{__LINE__, 40, WRITTEN},
	{__LINE__, 63, WRITTEN}, /* the last page */
};

static int all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static void test_reuse(void)
{
	unsigned char *map = threadmap_take(LEN);
	CHECK(__LINE__, map != MAP_FAILED, "threadmap_take: a fresh mapping");
	if (map == MAP_FAILED)
		return;
	CHECK(__LINE__, all_zero(map, LEN), "a fresh mapping is not zero");
	volatile unsigned char sink = 0;
	for (size_t i = 0; i < sizeof(uses) / sizeof(uses[0]); i++) {
		unsigned char *p = map + uses[i].page * PAGE;
		if (uses[i].use == WRITTEN)
			memset(p, 0xa5, PAGE);
		else if (uses[i].use == READ_ONLY)
			sink ^= p[100];
		else if (uses[i].use == WRITTEN_ZERO)
			memset(p, 0, PAGE);
	}
	(void)sink;
	threadmap_give(map, LEN, CLEAN_FROM, LEN);
	CHECK(__LINE__, threadmap_kept() == 1, "kept %d, want 1", threadmap_kept());
	unsigned char *again = threadmap_take(LEN);
	CHECK(__LINE__, again == map, "the kept mapping was not taken again");
	CHECK(__LINE__, threadmap_kept() == 0, "kept %d after the take, want 0", threadmap_kept());
	if (again != map)
		return;
	for (size_t i = 0; i < sizeof(uses) / sizeof(uses[0]); i++) {
		const unsigned char *p = map + uses[i].page * PAGE;
		int below = uses[i].page * PAGE < CLEAN_FROM;
		if (below)
			CHECK(uses[i].line, p[0] == 0xa5 && p[PAGE - 1] == 0xa5,
			      "page %zu below clean_from changed", uses[i].page);
		else
			CHECK(uses[i].line, all_zero(p, PAGE), "page %zu not zero", uses[i].page);
	}
	CHECK(__LINE__, all_zero(map + CLEAN_FROM, LEN - CLEAN_FROM), "bytes past clean_from not zero");
	/* Past clean_to nothing is looked at (the caller's word that nothing
	 * there was touched): a page written there stays as it was. */
	memset(map + 20 * PAGE, 0x5a, PAGE);
	memset(map + 50 * PAGE, 0x5a, PAGE);
	threadmap_give(map, LEN, CLEAN_FROM, 48 * PAGE);
	again = threadmap_take(LEN);
	CHECK(__LINE__, again == map, "the kept mapping was not taken again (clean_to)");
	if (again != map)
		return;
	CHECK(__LINE__, all_zero(map + 20 * PAGE, PAGE), "a page before clean_to not zero");
	CHECK(__LINE__, map[50 * PAGE] == 0x5a, "a page past clean_to was looked at");
	memset(map + 50 * PAGE, 0, PAGE);
	threadmap_give(map, LEN, CLEAN_FROM, LEN);
}

static void test_limits(void)
{
	/* Drain what an earlier test kept. */
	void *maps[THREADMAP_KEEP + 1];
	while (threadmap_kept() > 0)
		munmap(threadmap_take(LEN), LEN);
	for (int i = 0; i < THREADMAP_KEEP + 1; i++) {
		maps[i] = threadmap_take(LEN);
		CHECK(__LINE__, maps[i] != MAP_FAILED, "threadmap_take %d", i);
	}
	for (int i = 0; i < THREADMAP_KEEP + 1; i++)
		if (maps[i] != MAP_FAILED)
			threadmap_give(maps[i], LEN, CLEAN_FROM, LEN);
	CHECK(__LINE__, threadmap_kept() == THREADMAP_KEEP, "kept %d of %d, want %d",
	      threadmap_kept(), THREADMAP_KEEP + 1, THREADMAP_KEEP);
	/* A size not the one kept: mapped anew, and not kept when given back. */
	void *other = threadmap_take(2 * LEN);
	CHECK(__LINE__, other != MAP_FAILED, "threadmap_take of another size");
	for (int i = 0; i < THREADMAP_KEEP + 1; i++)
		CHECK(__LINE__, other != maps[i], "a kept mapping of another size was taken");
	while (threadmap_kept() > 0)
		munmap(threadmap_take(LEN), LEN);
	if (other != MAP_FAILED)
		threadmap_give(other, 2 * LEN, CLEAN_FROM, 2 * LEN);
	CHECK(__LINE__, threadmap_kept() == 0, "a mapping of another size was kept");
}

int main(void)
{
	test_reuse();
	test_limits();
	return check_failures != 0;
}
