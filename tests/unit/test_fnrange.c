/* Unit test of fnrange: the thread's cache of function ranges answers as
 * the unwind tables do (unwind_proc_start), from the cache the second
 * time, and not at all where no table covers the pc; a dlclose (the
 * phdrs generation) drops what it kept.  Exit status 0 on success.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "witch/fnrange.h"
#include "witch/phdrs.h"
#include "witch/unwind.h"

#include "check.h"

__attribute__((noinline)) static int fn_small(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static long fn_loop(const int *a, int n)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += a[i] * fn_small(i);
	return s;
}

static struct fnrange cache;

/* Rows: a pc as an offset into a function of this binary or libc's. */
static const struct {
	int line;
	const void *fn;
	int at_end; /* 1: the function's last byte, else its first */
} rows[] = {
	{__LINE__, (const void *)fn_small, 0},
	{__LINE__, (const void *)fn_small, 1},
	{__LINE__, (const void *)fn_loop, 0},
	{__LINE__, (const void *)fn_loop, 1},
	{__LINE__, (const void *)memcpy, 0},
	{__LINE__, (const void *)qsort, 1},
};

static void test_rows(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int line = rows[i].line;
		uint64_t lo, hi, start = 0, pc = (uint64_t)(uintptr_t)rows[i].fn;
		if (unwind_proc_range(pc, &lo, &hi) < 0) {
			FAIL(line, "no unwind table for %#llx", (unsigned long long)pc);
			continue;
		}
		pc = rows[i].at_end ? hi - 1 : lo;
		fnrange_init(&cache);
		uint64_t misses = cache.misses, hits = cache.hits;
		CHECK(line, fnrange_start(&cache, pc, &start) == 0 && start == lo,
		      "first: start %#llx, expected %#llx", (unsigned long long)start,
		      (unsigned long long)lo);
		CHECK(line, cache.misses == misses + 1, "first lookup not a miss");
		start = 0;
		CHECK(line, fnrange_start(&cache, pc, &start) == 0 && start == lo,
		      "again: start %#llx, expected %#llx", (unsigned long long)start,
		      (unsigned long long)lo);
		CHECK(line, cache.hits == hits + 1, "second lookup not a hit");
	}
}

/* Every pc of a stretch of libc's code, twice: the same answers as the
 * tables', and the second pass mostly from the cache. */
static void test_sweep(void)
{
	uint64_t lo, hi;
	if (unwind_proc_range((uint64_t)(uintptr_t)qsort, &lo, &hi) < 0) {
		FAIL(__LINE__, "no unwind table for qsort");
		return;
	}
	uint64_t from = lo > 32768 ? lo - 32768 : lo, to = lo + 32768;
	for (int pass = 0; pass < 2; pass++) {
		uint64_t hits = cache.hits, n = 0, wrong = 0;
		for (uint64_t pc = from; pc < to; pc += 7) {
			uint64_t want, got;
			int rw = unwind_proc_start(pc, &want), rg = fnrange_start(&cache, pc, &got);
			n++;
			if (rw != rg || (rw == 0 && want != got))
				wrong++;
		}
		CHECK(__LINE__, wrong == 0, "pass %d: %llu of %llu pcs differ", pass,
		      (unsigned long long)wrong, (unsigned long long)n);
		if (pass == 1)
			CHECK(__LINE__, cache.hits - hits > n / 2, "pass 2: %llu hits of %llu",
			      (unsigned long long)(cache.hits - hits), (unsigned long long)n);
	}
}

/* Code no unwind table covers: not found, and not kept. */
static void test_no_table(void)
{
	void *page = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED) {
		FAIL(__LINE__, "mmap: %s", strerror(errno));
		return;
	}
	uint64_t pc = (uint64_t)(uintptr_t)page + 100, start = 0;
	for (int i = 0; i < 2; i++) {
		uint64_t misses = cache.misses;
		CHECK(__LINE__, fnrange_start(&cache, pc, &start) == -ENOENT, "a JIT's pc found");
		CHECK(__LINE__, cache.misses == misses + 1, "lookup %d not a miss", i);
	}
	munmap(page, 4096);
}

/* A module unloaded: every range asked again. */
static void test_generation(void)
{
	uint64_t pc = (uint64_t)(uintptr_t)fn_loop, start;
	fnrange_start(&cache, pc, &start);
	uint64_t misses = cache.misses;
	CHECK(__LINE__, fnrange_start(&cache, pc, &start) == 0 && cache.misses == misses,
	      "kept range missed");
	phdrs_close_begin();
	phdrs_close_end();
	CHECK(__LINE__, fnrange_start(&cache, pc, &start) == 0 && cache.misses == misses + 1,
	      "range kept across a dlclose");
}

int main(void)
{
	int a[4] = {1, 2, 3, 4};
	if (phdrs_init() < 0) {
		fprintf(stderr, "test_fnrange: phdrs_init failed\n");
		return 1;
	}
	fnrange_init(&cache);
	test_rows();
	test_sweep();
	test_no_table();
	test_generation();
	if (check_failures) {
		fprintf(stderr, "test_fnrange: %d failure(s) (fn_loop %ld)\n", check_failures,
			fn_loop(a, 4));
		return 1;
	}
	printf("test_fnrange: %zu rows, %llu hits, %llu misses, all checks passed\n",
	       sizeof(rows) / sizeof(rows[0]), (unsigned long long)cache.hits,
	       (unsigned long long)cache.misses);
	return 0;
}
