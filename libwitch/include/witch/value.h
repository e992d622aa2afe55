/* value: is a watched location's value the same as the one remembered?
 * (SilentCraft and LoadCraft, Witch 4.6.)
 *
 * The caller guarantees [ov_addr, ov_len) lies inside the images.
 */
#ifndef WITCH_VALUE_H
#define WITCH_VALUE_H

#include <stdint.h>

enum value_verdict {
	VALUE_SAME = 0,      /* every byte equal */
	VALUE_APPROX = 1,    /* FP elements within the tolerance, not all bit-equal */
	VALUE_DIFFERENT = 2,
};

struct value_view {
	uint64_t base;
	uint32_t len;
	const uint8_t *old;
	const uint8_t *now;
};

/* Compare the bytes [ov_addr, ov_len) of two images of the range [v->base,
 * v->base + v->len): v->old (remembered) and v->now. Only the overlapping
 * bytes count: a 4-byte store into an 8-byte watched location says nothing
 * about the other 4. When the access that decides has floating-point elements
 * (elem DECODE_ELEM_F32/F64, elements starting at access_addr), every element
 * that touches the overlap and lies wholly inside the images is compared as a
 * number: equal within |a - b| <= tolerance * max(|a|, |b|) is VALUE_APPROX
 * (RedSpy's and LoadSpy's approximate redundancy).  Elements that stick out of
 * the images, and integer accesses, compare bytes exactly. Async-signal-safe,
 * no libm. */
enum value_verdict value_compare(const struct value_view *v, uint64_t ov_addr, uint32_t ov_len,
				 uint8_t elem, uint64_t access_addr, double tolerance);

#endif
