/* xsave: vector registers from a signal frame's XSAVE area (see xsave.h). */
#include "witch/xsave.h"

#include <cpuid.h>
#include <errno.h>
#include <stddef.h>
#include <string.h>

/* The kernel's frame (arch/x86/include/uapi/asm/sigcontext.h): the FXSAVE
 * area's software-reserved bytes say whether an XSAVE header follows. */
#define FX_XMM_OFFSET 160
#define FX_SW_OFFSET 464
#define XSAVE_HDR_OFFSET 512
#define FP_XSTATE_MAGIC1 0x46505853u
#define FP_XSTATE_MAGIC2 0x46505845u

enum { C_SSE = 1, C_YMM = 2, C_OPMASK = 5, C_ZMM_HI256 = 6, C_HI16_ZMM = 7, C_N = 8 };

static uint64_t g_xcr0;        /* components the OS enables */
static uint32_t g_off[C_N];    /* standard-format offsets (CPUID 0xD, EBX) */
static uint32_t g_size[C_N];   /* their sizes (EAX) */

int xsave_init(void)
{
	unsigned a, b, c, d;

	g_xcr0 = 0;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) /* OSXSAVE */
		return 0;
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	g_xcr0 = ((uint64_t)hi << 32) | lo;
	for (int i = C_YMM; i < C_N; i++) {
		if (!(g_xcr0 & (1ull << i)))
			continue;
		__cpuid_count(0xd, i, a, b, c, d);
		g_size[i] = a;
		g_off[i] = b;
	}
	return 0;
}

/* The component's bytes in the frame, NULL when in its init state (zero). */
static const uint8_t *component(const uint8_t *fx, uint64_t bv, int i)
{
	return (bv & (1ull << i)) ? fx + g_off[i] : NULL;
}

int xsave_frame_of(const void *fpregs, struct xsave_frame *f)
{
	const uint8_t *fx = fpregs;
	uint32_t magic1, size, magic2;
	uint64_t bv, features;

	memset(f, 0, sizeof(*f));
	if (!fx)
		return -EINVAL;
	memcpy(&magic1, fx + FX_SW_OFFSET, 4);
	if (magic1 != FP_XSTATE_MAGIC1) {
		/* FXSAVE only: right where the CPU has no AVX (XMM0-15 are all). */
		if (g_xcr0 & (1ull << C_YMM))
			return -EINVAL;
		f->fx = fx;
		f->sse = 1;
		return 0;
	}
	memcpy(&features, fx + FX_SW_OFFSET + 8, 8);
	memcpy(&size, fx + FX_SW_OFFSET + 16, 4);
	memcpy(&bv, fx + XSAVE_HDR_OFFSET, 8);
	if (size < XSAVE_HDR_OFFSET + 64)
		return -EINVAL;
	memcpy(&magic2, fx + size, 4); /* the kernel ends the area with it */
	if (magic2 != FP_XSTATE_MAGIC2)
		return -EINVAL;
	/* Every component the OS enables must be in the frame and inside it. */
	for (int i = C_YMM; i < C_N; i++)
		if ((g_xcr0 & (1ull << i)) &&
		    (!(features & (1ull << i)) || g_off[i] + g_size[i] > size))
			return -EINVAL;
	bv &= features;
	f->fx = fx;
	f->sse = (bv & (1ull << C_SSE)) != 0;
	f->ymm = component(fx, bv, C_YMM);
	f->opmask = component(fx, bv, C_OPMASK);
	f->zmm_hi256 = component(fx, bv, C_ZMM_HI256);
	f->hi16_zmm = component(fx, bv, C_HI16_ZMM);
	return 0;
}

int xsave_frame_zmm(const struct xsave_frame *f, int i, uint8_t out[64])
{
	memset(out, 0, 64);
	if (!f->fx || i < 0 || i >= XSAVE_NZMM)
		return -EINVAL;
	if (i >= 16) {
		if (f->hi16_zmm)
			memcpy(out, f->hi16_zmm + 64 * (i - 16), 64);
		return 0;
	}
	if (f->sse)
		memcpy(out, f->fx + FX_XMM_OFFSET + 16 * i, 16);
	if (f->ymm)
		memcpy(out + 16, f->ymm + 16 * i, 16);
	if (f->zmm_hi256)
		memcpy(out + 32, f->zmm_hi256 + 32 * i, 32);
	return 0;
}

int xsave_frame_k(const struct xsave_frame *f, uint64_t k[XSAVE_NK])
{
	memset(k, 0, sizeof(k[0]) * XSAVE_NK);
	if (!f->fx)
		return -EINVAL;
	if (f->opmask)
		memcpy(k, f->opmask, 8 * XSAVE_NK);
	return 0;
}
