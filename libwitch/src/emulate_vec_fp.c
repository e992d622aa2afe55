/* emulate_vec_fp: the scalar SSE/AVX float and double part of emulate_vec
 * (see emulate_vec.h; emulate_vec_ops.h shares the operand helpers). */
#include "witch/emulate_vec.h"
#include "emulate_vec_ops.h"

#include <errno.h>
#include <string.h>

static double fp_get(const uint8_t *b, unsigned es)
{
	double d;
	float f;
	if (es == 8) {
		memcpy(&d, b, 8);
		return d;
	}
	memcpy(&f, b, 4);
	return f;
}

/* Only reached for an FMA instruction the program runs: the CPU has FMA. */
__attribute__((target("fma"))) static double fma_d(double a, double b, double c)
{
	return __builtin_fma(a, b, c);
}

__attribute__((target("fma"))) static float fma_f(float a, float b, float c)
{
	return __builtin_fmaf(a, b, c);
}

/* vfmadd/vfmsub/vfnmadd/vfnmsub{132,213,231}{sd,ss}: one rounding, as the
 * SDM's; the upper elements are the destination's. */
int emulate_vec_fp_fma(struct emulate_ctx *c, const struct vargs *a, unsigned x)
{
	uint8_t r[3][64];
	int rc;

	if (a->masked || a->n != 3 || (c->e->vec->mxcsr & 0xffc0u) != MXCSR_DEFAULT)
		return -ENOTSUP;
	for (int i = 0; i < 3; i++) {
		struct decode_zop o = *a->op[i];
		if (i < 2)
			o.size = 128; /* the whole xmm: its upper elements are kept */
		if ((rc = emulate_vec_src(c, a, &o, r[i])) != 0)
			return rc < 0 ? rc : -ENOTSUP;
	}
	/* 132: op1 * op3 + op2; 213: op2 * op1 + op3; 231: op2 * op3 + op1. */
	static const int order[4][3] = {{0, 0, 0}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}};
	const int *o = order[x & 3];
	double p = fp_get(r[o[0]], a->es), q = fp_get(r[o[1]], a->es), t = fp_get(r[o[2]], a->es);
	if (p != p || q != q || t != t)
		return -ENOTSUP;
	if ((x >> 2) & 2)
		p = -p; /* nmadd, nmsub: -(a * b) */
	if ((x >> 2) & 1)
		t = -t; /* msub, nmsub: - c */
	if (a->es == 8) {
		double v = fma_d(p, q, t);
		memcpy(r[0], &v, 8);
	} else {
		float v = fma_f((float)p, (float)q, (float)t);
		memcpy(r[0], &v, 4);
	}
	struct decode_zop d = *a->op[0];
	d.size = 128;
	emulate_vec_dst(c, a, &d, r[0], 0);
	return 0;
}

/* Scalar SSE/AVX: movss/movsd, arithmetic and conversions on the low
 * element, the rest from the destination (SSE) or the first source (VEX).
 * Arithmetic only under the default MXCSR, where C's double and float
 * arithmetic is the instruction's; a NaN operand (whose payload the
 * compiler may take from either side) leaves the result unknown. */
int emulate_vec_fp_scalar(struct emulate_ctx *c, const struct vargs *a, enum vop op)
{
	struct emulate_vec *v = c->e->vec;
	const struct decode_zop *dst = a->op[0], *s2 = a->op[a->n - 1];
	uint8_t x[64], y[64];
	int rc, unknown = 0;

	if (a->masked || a->n < 2 || a->n > 3 || (op == V_MOVS && dst->type != ZYDIS_OPERAND_TYPE_REGISTER))
		return -ENOTSUP; /* a store (emulate.c notes it), a writemask */
	emulate_vec_ready(v);
	if (op != V_MOVS && (v->mxcsr & 0xffc0u) != MXCSR_DEFAULT)
		return -ENOTSUP;
	if ((rc = emulate_vec_src(c, a, s2, y)) < 0)
		return rc;
	if (op == V_CVTTF2I) { /* truncation; out of range or NaN: the integer indefinite */
		double f = fp_get(y, a->es), lim = dst->size == 64 ? 0x1p63 : 0x1p31;
		if (rc || emulate_vec_reg(dst) >= 0)
			return -ENOTSUP;
		int out = f != f || f >= lim || (dst->size == 64 ? f < -lim : f <= -lim - 1.0);
		uint64_t r = out ? 1ull << (dst->size - 1) : (uint64_t)(int64_t)f;
		return op_write(c, 0, r);
	}
	unknown |= rc;
	/* The upper elements: SSE keeps the destination's, VEX takes src1's. */
	struct decode_zop up = *a->op[a->n == 2 ? 0 : 1];
	up.size = 128; /* Zydis sizes a scalar operand by its element */
	if ((rc = emulate_vec_src(c, a, &up, x)) < 0)
		return rc;
	unknown |= rc && !(op == V_MOVS && s2->type == ZYDIS_OPERAND_TYPE_MEMORY);
	if (op == V_MOVS && s2->type == ZYDIS_OPERAND_TYPE_MEMORY) {
		memset(x, 0, 64); /* a load zeroes the xmm above the element */
		memcpy(x, y, a->es);
	} else if (op == V_MOVS) {
		memcpy(x, y, a->es);
	} else if (op == V_CVTI2F) {
		uint64_t u;
		memcpy(&u, y, 8);
		int64_t i = (int64_t)sign_extend(u, s2->size);
		if (a->es == 8) {
			double d = (double)i;
			memcpy(x, &d, 8);
		} else {
			float f = (float)i;
			memcpy(x, &f, 4);
		}
	} else if (!unknown) {
		double p = fp_get(x, op == V_CVTF2F ? 12 - a->es : a->es);
		double q = fp_get(y, op == V_CVTF2F ? 12 - a->es : a->es);
		if ((p != p && op != V_CVTF2F) || q != q)
			unknown = 1;
		double r = op == V_FADD ? p + q : op == V_FSUB ? p - q : op == V_FMUL ? p * q
			 : op == V_FDIV ? p / q : q;
		if (a->es == 8) {
			memcpy(x, &r, 8);
		} else { /* float arithmetic rounds once, in float */
			float pf = (float)p, qf = (float)q;
			float rf = op == V_FADD ? pf + qf : op == V_FSUB ? pf - qf : op == V_FMUL ? pf * qf
				 : op == V_FDIV ? pf / qf : (float)q;
			memcpy(x, &rf, 4);
		}
	}
	struct decode_zop d = *dst;
	d.size = 128;
	emulate_vec_dst(c, a, &d, x, unknown);
	return 0;
}

