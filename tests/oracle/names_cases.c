/* names_cases: the oracle names contexts and objects as `witch report`
 * names libwitch's (tools/oracle/frames.h); check_names.py finds the lines
 * by their markers (a comment "at:NAME" on the line).
 *
 *   fill_inl   always inlined into store_site: its stores' context is
 *              fill_inl (inlined, at:store) < store_site (at:fill_call) < main
 *   alloc_inl  always inlined into make_a and make_b: both blocks are
 *              "heap from alloc_inl (names_cases.c:at:alloc)"
 *   dup_site   strdup's block (malloc called from the C library) is named by
 *              the program's call, "heap from dup_site (...:at:dup)"
 *   where_ret  prints its return address: store_site's caller frame (main)
 *              is shown at the call, that address minus one
 *   below main the start-up frames keep their names (__libc_start_call_main)
 *   print_site snprintf is glibc's weak alias of the global __snprintf:
 *              named __snprintf, as libdwfl and perf name it
 *   hdr_site   calls hdr_alloc, inlined from a system header (as
 *              std::vector's allocate is; #line at the end of this file):
 *              its block is "heap from hdr_site (...:at:hdr)"
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096

static inline __attribute__((always_inline)) void fill_inl(volatile uint64_t *p, uint64_t v)
{
	for (size_t i = 0; i < N; i++)
		p[i] = v + i; /* at:store */
}

static inline __attribute__((always_inline)) uint64_t *alloc_inl(size_t n)
{
	uint64_t *p = malloc(n * sizeof(uint64_t)); /* at:alloc */
	if (p) /* not a tail call: the caller's frame stays */
		p[0] = 0;
	return p;
}

static volatile uint64_t scratch[N];

/* Stores enough to be among the oracle's largest contexts. */
__attribute__((noipa)) static void where_ret(void)
{
	for (size_t i = 0; i < N; i++)
		scratch[i] = i;
	printf("ret %p\n", __builtin_return_address(0));
}

__attribute__((noipa)) static uint64_t store_site(volatile uint64_t *p, uint64_t v)
{
	fill_inl(p, v); /* at:fill_call */
	return p[v % N];
}

__attribute__((noipa)) static uint64_t *make_a(void)
{
	return alloc_inl(N);
}

__attribute__((noipa)) static uint64_t *make_b(void)
{
	return alloc_inl(N);
}

__attribute__((noipa)) static char *dup_site(const char *s)
{
	char *d = strdup(s); /* at:dup */
	if (d)
		d[0] = 'A';
	return d;
}

static inline __attribute__((always_inline)) uint64_t *hdr_alloc(size_t n);

__attribute__((noipa)) static uint64_t *hdr_site(void)
{
	uint64_t *p = hdr_alloc(N); /* at:hdr */
	if (p)
		p[0] = 1;
	return p;
}

__attribute__((noipa)) static int print_site(char *buf, size_t n, int i)
{
	return snprintf(buf, n, "%d: %s", i, "a line long enough to be among the largest"); /* at:snprintf */
}

int main(void)
{
	uint64_t *a = make_a(), *b = make_b(), sum = 0;
	char *d = dup_site("a string the program writes over");
	uint64_t *h = hdr_site();
	if (!a || !b || !d || !h)
		return 1;
	for (size_t i = 0; i < N; i++)
		h[i] = i;
	for (uint64_t r = 0; r < 4; r++) {
		sum += store_site(a, r); /* at:main_call */
		sum += store_site(b, r);
	}
	for (int r = 0; r < 64; r++)
		memset(d, 'x' + r % 2, strlen(d));
	char line[128];
	for (int r = 0; r < 256; r++)
		sum += (uint64_t)print_site(line, sizeof(line), r);
	where_ret(); /* at:ret_call */
	printf("%llu\n", (unsigned long long)sum);
	free(a);
	free(b);
	free(d);
	free(h);
	return 0;
}

/* Last in the file: from here on the code is a system header's. */
#line 1 "/usr/include/witch_names_alloc.h"
static inline __attribute__((always_inline)) uint64_t *hdr_alloc(size_t n)
{
	return malloc(n * sizeof(uint64_t));
}
