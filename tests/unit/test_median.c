/* test_median: median_sort of a few numbers, sorted in place.
 *
 * Each row gives the numbers as a probe would time them and the median
 * worked out by hand: odd counts take the middle one, even counts the mean
 * of the middle two, one stalled timing (a large value) among others does
 * not move it, and the array comes back in ascending order.
 */
#include "witch/median.h"
#include "check.h"

#define MAX_N 8

static const struct {
	int line;
	int n;
	double v[MAX_N];
	double want;
} rows[] = {
	{__LINE__, 1, {7}, 7},
	{__LINE__, 2, {4, 2}, 3},
	{__LINE__, 3, {40, 250, 40}, 40},    /* one stalled among three */
	{__LINE__, 3, {250, 40, 60}, 60},
	{__LINE__, 5, {9, 9.5, 50, 10, 9.8}, 9.8},
	{__LINE__, 5, {5, 4, 3, 2, 1}, 3},   /* descending */
	{__LINE__, 4, {1, 100, 2, 3}, 2.5},
	{__LINE__, 6, {3, 3, 3, 3, 3, 3}, 3}, /* all alike */
	{__LINE__, 7, {-1, 0, 7, 2, 2, 9, 1}, 2},
	{__LINE__, 0, {0}, 0},
};

int main(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double v[MAX_N];
		for (int k = 0; k < MAX_N; k++)
			v[k] = rows[i].v[k];
		double got = median_sort(v, rows[i].n);
		CHECK(rows[i].line, got == rows[i].want, "median %g, want %g", got, rows[i].want);
		for (int k = 1; k < rows[i].n; k++)
			CHECK(rows[i].line, v[k - 1] <= v[k], "not sorted at %d: %g > %g", k, v[k - 1],
			      v[k]);
	}
	if (check_failures)
		fprintf(stderr, "test_median: %d failures\n", check_failures);
	return check_failures != 0;
}
