/* msort: bottom-up merge sort; see msort.h. */
#include "msort.h"

#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"

/* Runs this long are insertion-sorted first (fewer merge passes). */
#define RUN 16

static void insertion_sort(UChar *a, SizeT n, SizeT size, UChar *hold,
			   Int (*cmp)(const void *, const void *))
{
	for (SizeT i = 1; i < n; i++) {
		SizeT j = i;
		if (cmp(a + (j - 1) * size, a + i * size) <= 0)
			continue;
		VG_(memcpy)(hold, a + i * size, size);
		while (j > 0 && cmp(a + (j - 1) * size, hold) > 0) {
			VG_(memcpy)(a + j * size, a + (j - 1) * size, size);
			j--;
		}
		VG_(memcpy)(a + j * size, hold, size);
	}
}

/* from[lo, mid) and from[mid, hi), each sorted, into to[lo, hi); equal
 * elements keep their order (the left run's first). */
static void merge(const UChar *from, UChar *to, SizeT lo, SizeT mid, SizeT hi, SizeT size,
		  Int (*cmp)(const void *, const void *))
{
	SizeT i = lo, j = mid, k = lo;
	while (i < mid && j < hi) {
		if (cmp(from + j * size, from + i * size) < 0)
			VG_(memcpy)(to + k++ * size, from + j++ * size, size);
		else
			VG_(memcpy)(to + k++ * size, from + i++ * size, size);
	}
	if (i < mid)
		VG_(memcpy)(to + k * size, from + i * size, (mid - i) * size);
	else if (j < hi)
		VG_(memcpy)(to + k * size, from + j * size, (hi - j) * size);
}

void msort(void *base, SizeT n, SizeT size, Int (*cmp)(const void *, const void *))
{
	if (n < 2 || size == 0)
		return;
	UChar *a = base;
	UChar *hold = VG_(malloc)("oracle.msort.hold", size);
	for (SizeT lo = 0; lo < n; lo += RUN)
		insertion_sort(a + lo * size, n - lo < RUN ? n - lo : RUN, size, hold, cmp);
	VG_(free)(hold);
	if (n <= RUN)
		return;
	UChar *tmp = VG_(malloc)("oracle.msort.tmp", n * size);
	UChar *from = a, *to = tmp;
	for (SizeT width = RUN; width < n; width *= 2) {
		for (SizeT lo = 0; lo < n; lo += 2 * width) {
			SizeT mid = lo + width < n ? lo + width : n;
			SizeT hi = lo + 2 * width < n ? lo + 2 * width : n;
			merge(from, to, lo, mid, hi, size, cmp);
		}
		UChar *t = from;
		from = to;
		to = t;
	}
	if (from != a)
		VG_(memcpy)(a, from, n * size);
	VG_(free)(tmp);
}
