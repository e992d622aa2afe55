/* median: the median of a few numbers (see median.h). */
#include "witch/median.h"

double median_sort(double *v, int n)
{
	if (n <= 0)
		return 0;
	for (int i = 1; i < n; i++) {
		double x = v[i];
		int j = i;
		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
