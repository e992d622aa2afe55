/* emulate_vec_ops: what emulate_vec.c and emulate_vec_fp.c share: the
 * instruction table, operands as the SDM writes them, and reading and
 * writing vector registers on the run's copy.  Internal to the two. */
#ifndef WITCH_EMULATE_VEC_OPS_H
#define WITCH_EMULATE_VEC_OPS_H

#include "witch/emulate_vec.h"
#include "emulate_operands.h"
#include "emulate_vec_table.h"

#define MXCSR_DEFAULT 0x1f80u /* exceptions masked, round to nearest, no FTZ/DAZ */

/* An instruction's operands as the SDM writes them: the data operands with
 * an EVEX writemask taken out (Zydis lists it second), then an immediate. */
struct vargs {
	const struct decode_zop *op[5];
	int n;
	int has_imm;
	uint64_t imm;
	int legacy;          /* SSE encoding: the bits above the operand are kept */
	uint64_t wmask;      /* EVEX writemask (all ones without one) */
	int wmask_unknown;
	int masked;          /* a writemask k1-k7 */
	unsigned es;
};

/* The frame's registers, on first need; what it cannot give is unknown. */
void emulate_vec_ready(struct emulate_vec *v);
/* The index of an xmm/ymm/zmm register operand, else -1. */
int emulate_vec_reg(const struct decode_zop *op);
/* A source operand's value into out (zeros past its size): 0, 1 when not
 * known, or an error. */
int emulate_vec_src(struct emulate_ctx *c, const struct vargs *a, const struct decode_zop *op,
		    uint8_t out[64]);
/* Write a vector result (unknown: the register becomes unknown). */
void emulate_vec_dst(struct emulate_ctx *c, const struct vargs *a, const struct decode_zop *op,
		     const uint8_t val[64], int unknown);
/* emulate_vec_fp.c: scalar moves, arithmetic, conversions; FMA (x: the
 * table's variant).  0, or -ENOTSUP / -EFAULT (emulate.c's no-op then). */
int emulate_vec_fp_scalar(struct emulate_ctx *c, const struct vargs *a, enum vop op);
int emulate_vec_fp_fma(struct emulate_ctx *c, const struct vargs *a, unsigned x);

#endif
