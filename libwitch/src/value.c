/* value: same-value tests for SilentCraft and LoadCraft (see value.h). */
#include "witch/value.h"
#include "witch/decode.h"

#include <string.h>

static int bytes_equal(const struct value_view *v, uint64_t addr, uint32_t len)
{
	size_t off = (size_t)(addr - v->base);
	return memcmp(v->old + off, v->now + off, len) == 0;
}

static double fp_load(const uint8_t *p, uint32_t size)
{
	if (size == 4) {
		float f;
		memcpy(&f, p, sizeof(f));
		return f;
	}
	double d;
	memcpy(&d, p, sizeof(d));
	return d;
}

static double fp_abs(double x)
{
	return x < 0 ? -x : x;
}

/* NaNs are never close; infinities only when bit-equal (checked first). */
static int fp_close(double a, double b, double tolerance)
{
	if (a != a || b != b)
		return 0;
	double scale = fp_abs(a) > fp_abs(b) ? fp_abs(a) : fp_abs(b);
	return fp_abs(a - b) <= tolerance * scale;
}

enum value_verdict value_compare(const struct value_view *v, uint64_t ov_addr, uint32_t ov_len,
				 uint8_t elem, uint64_t access_addr, double tolerance)
{
	uint32_t size = elem == DECODE_ELEM_F32 ? 4 : elem == DECODE_ELEM_F64 ? 8 : 0;

	if (size == 0 || access_addr > ov_addr)
		return bytes_equal(v, ov_addr, ov_len) ? VALUE_SAME : VALUE_DIFFERENT;

	enum value_verdict verdict = VALUE_SAME;
	uint64_t ov_end = ov_addr + ov_len;
	uint64_t e = access_addr + (ov_addr - access_addr) / size * size;
	for (; e < ov_end; e += size) {
		if (e >= v->base && e + size <= v->base + v->len) {
			size_t off = (size_t)(e - v->base);
			if (memcmp(v->old + off, v->now + off, size) == 0)
				continue;
			if (!fp_close(fp_load(v->old + off, size), fp_load(v->now + off, size),
				      tolerance))
				return VALUE_DIFFERENT;
			verdict = VALUE_APPROX;
		} else {
			/* Only part of this element was remembered: its bytes in
			 * the overlap must match exactly. */
			uint64_t lo = e > ov_addr ? e : ov_addr;
			uint64_t hi = e + size < ov_end ? e + size : ov_end;
			if (!bytes_equal(v, lo, (uint32_t)(hi - lo)))
				return VALUE_DIFFERENT;
		}
	}
	return verdict;
}
