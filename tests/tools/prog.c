/*
 * Target program of the witch report tests: built with -O2 -g, never run.
 * The tests write profiles by hand whose pcs point into it, found from
 * `nm` and the line table; the MARK_* comments name the lines they check.
 */
#include <stdio.h>
#include <stdlib.h>

/* Forced inline: its stores must symbolize as an inlined frame. */
static inline __attribute__((always_inline)) void fill(int *a, int n, int v)
{
	for (int i = 0; i < n; i++)
		a[i] = v * i + 7; /* MARK_INLINE_STORE */
}

__attribute__((noinline)) void store_first(int *a, int n)
{
	fill(a, n, 3); /* MARK_CALL_FILL */
}

__attribute__((noinline)) void store_again(int *a, int n)
{
	for (int i = 0; i < n; i++)
		a[i] = i ^ n; /* MARK_KILL */
}

__attribute__((noinline)) long sum(const int *a, int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += a[i]; /* MARK_LOAD */
	return s;
}

/* A second allocation site, in a function of its own (objects tests). */
__attribute__((noinline)) int *make_table(int n)
{
	int *t = calloc((size_t)n, sizeof(int)); /* MARK_CALLOC */

	if (t)
		t[0] = n; /* not a tail call: make_table is a frame */
	return t;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	int *a = malloc((size_t)n * sizeof(*a)); /* MARK_ALLOC */
	int *t = make_table(n); /* MARK_MAIN_TABLE */
	long s;

	if (!a || !t)
		return 1;
	store_first(a, n); /* MARK_MAIN_FIRST */
	store_again(a, n); /* MARK_MAIN_AGAIN */
	s = sum(a, n); /* MARK_MAIN_SUM */
	printf("%ld %d\n", s, t[n - 1]);
	free(t);
	free(a);
	return 0;
}
