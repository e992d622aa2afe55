/* emulate_vec: vector and mask registers in the run-ahead (see emulate_vec.h).
 * Semantics from the Intel SDM, vol. 2 (each instruction's Operation). */
#include "witch/emulate_vec.h"
#include "witch/emulate.h"
#include "emulate_operands.h"
#include "emulate_vec_ops.h"

#include <errno.h>
#include <string.h>

#define RFLAGS_AF 0x010ull

/* --- registers ---------------------------------------------------------------- */

int emulate_vec_reg(const struct decode_zop *op)
{
	if (op->type != ZYDIS_OPERAND_TYPE_REGISTER)
		return -1;
	ZydisRegisterClass cl = ZydisRegisterGetClass(op->reg.value);
	if (cl != ZYDIS_REGCLASS_XMM && cl != ZYDIS_REGCLASS_YMM && cl != ZYDIS_REGCLASS_ZMM)
		return -1;
	return ZydisRegisterGetId(op->reg.value);
}

static int kreg_of(const struct decode_zop *op)
{
	if (op->type != ZYDIS_OPERAND_TYPE_REGISTER ||
	    ZydisRegisterGetClass(op->reg.value) != ZYDIS_REGCLASS_MASK)
		return -1;
	return ZydisRegisterGetId(op->reg.value);
}

void emulate_vec_begin(struct emulate_vec *v, const void *fpregs)
{
	v->zmm_unknown = 0;
	v->k_unknown = 0;
	v->loaded = 0;
	v->zmm_loaded = 0;
	v->upper_zeroed = 0;
	v->fpregs = fpregs;
	for (int i = 0; i < EMULATE_CHUNKS; i++)
		v->chunk_base[i] = 1;
}

void emulate_vec_set(struct emulate_vec *v, const uint8_t zmm[XSAVE_NZMM][64],
		     const uint64_t k[XSAVE_NK])
{
	memcpy(v->zmm, zmm, sizeof(v->zmm));
	memcpy(v->k, k, sizeof(v->k));
	v->zmm_unknown = 0;
	v->k_unknown = 0;
	v->loaded = 1;
	v->zmm_loaded = ~0u;
	v->upper_zeroed = 0;
	v->mxcsr = MXCSR_DEFAULT;
	for (int i = 0; i < EMULATE_CHUNKS; i++)
		v->chunk_base[i] = 1;
}

/* The frame's header and mask registers, on first need; a frame that
 * cannot be read leaves every register unknown.  Its vector registers
 * are read one at a time (vec_zmm). */
void emulate_vec_ready(struct emulate_vec *v)
{
	if (v->loaded)
		return;
	v->mxcsr = 0; /* not known: no FP arithmetic */
	if (xsave_frame_of(v->fpregs, &v->frame) < 0) {
		memset(v->k, 0, sizeof(v->k));
		v->zmm_unknown = ~0u;
		v->k_unknown = 0xff;
	} else {
		xsave_frame_k(&v->frame, v->k);
		memcpy(&v->mxcsr, (const uint8_t *)v->fpregs + 24, 4); /* FXSAVE's MXCSR */
	}
	v->loaded = 1;
}

/* zmm r as the run has it: read from the frame at its first use. */
static uint8_t *vec_zmm(struct emulate_vec *v, int r)
{
	emulate_vec_ready(v);
	if (!(v->zmm_loaded & (1u << r))) {
		(void)xsave_frame_zmm(&v->frame, r, v->zmm[r]); /* zero where unknown */
		if (r < 16 && (v->upper_zeroed & (1u << r)))
			memset(v->zmm[r] + 16, 0, 48);
		v->zmm_loaded |= 1u << r;
	}
	return v->zmm[r];
}

static uint64_t low_bits(unsigned n)
{
	return n >= 64 ? ~0ull : (1ull << n) - 1;
}

/* 0: *val is k i; 1: unknown. */
static int k_read(struct emulate_vec *v, int i, uint64_t *val)
{
	if (v->k_unknown & (1u << i))
		return 1;
	emulate_vec_ready(v);
	*val = v->k[i];
	return 0;
}

static void k_write(struct emulate_vec *v, int i, uint64_t val, int unknown)
{
	emulate_vec_ready(v);
	if (unknown) {
		v->k_unknown |= (uint8_t)(1u << i);
		return;
	}
	v->k[i] = val;
	v->k_unknown &= (uint8_t)~(1u << i);
}

/* --- operands --------------------------------------------------------------- */

static int vargs_of(struct emulate_ctx *c, struct vargs *a, unsigned es)
{
	const struct decode_zinsn *insn = c->insn;
	int evex = !!(insn->attributes & ZYDIS_ATTRIB_HAS_EVEX);

	memset(a, 0, sizeof(*a));
	a->es = es;
	a->legacy = !(insn->attributes & (ZYDIS_ATTRIB_HAS_VEX | ZYDIS_ATTRIB_HAS_EVEX));
	a->wmask = ~0ull;
	for (int i = 0; i < insn->operand_count_visible; i++) {
		const struct decode_zop *op = &c->ops[i];
		if (evex && i == 1 && kreg_of(op) >= 0)
			continue;
		if (op->type == ZYDIS_OPERAND_TYPE_IMMEDIATE) {
			a->has_imm = 1;
			a->imm = op->imm.value.u;
			continue;
		}
		if (a->n == 5)
			return -ENOTSUP;
		a->op[a->n++] = op;
	}
	ZydisRegister mk = insn->avx.mask.reg;
	if (evex && mk != ZYDIS_REGISTER_NONE && mk != ZYDIS_REGISTER_K0) {
		a->masked = 1;
		a->wmask_unknown = k_read(c->e->vec, mk - ZYDIS_REGISTER_K0, &a->wmask);
	}
	return a->n ? 0 : -ENOTSUP;
}

/* Bytes [lo, hi) of the elements mask enables among n of es bytes. */
static int mask_span(uint64_t mask, unsigned n, unsigned es, unsigned *lo, unsigned *hi)
{
	mask &= low_bits(n);
	if (!mask)
		return 0;
	*lo = (unsigned)__builtin_ctzll(mask) * es;
	*hi = (unsigned)(64 - __builtin_clzll(mask)) * es;
	return 1;
}

/* The value of a source operand into out (zeros past its size): 0, 1 when
 * not known, or an error.  A masked memory operand reads only the span of
 * the elements the writemask enables (fault suppression: the rest may be
 * unmapped, as in the page-end paths of glibc's string functions). */
int emulate_vec_src(struct emulate_ctx *c, const struct vargs *a, const struct decode_zop *op,
		    uint8_t out[64])
{
	struct emulate_vec *v = c->e->vec;
	int r = emulate_vec_reg(op);
	uint64_t addr, x;

	memset(out, 0, 64);
	if (r >= 0) {
		emulate_vec_ready(v);
		if (v->zmm_unknown & (1u << r))
			return 1;
		memcpy(out, vec_zmm(v, r), op->size / 8 < 64 ? op->size / 8 : 64);
		return 0;
	}
	if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
		if (reg_read(c->regs, op->reg.value, &x) < 0)
			return -ENOTSUP; /* MMX, x87 */
		memcpy(out, &x, 8);
		return 0;
	}
	if (op->type != ZYDIS_OPERAND_TYPE_MEMORY || op->size == 0 || op->size > 512 ||
	    (op->size & 7))
		return -ENOTSUP;
	if (c->insn->avx.broadcast.mode != ZYDIS_BROADCAST_MODE_INVALID &&
	    !c->insn->avx.broadcast.is_static)
		return -ENOTSUP; /* {1toN}: not in the code this is for */
	if (mem_address(c, op, &addr) < 0)
		return -ENOTSUP;
	unsigned lo = 0, hi = op->size / 8;
	if (a->masked) {
		if (a->wmask_unknown)
			return 1;
		if (!mask_span(a->wmask, hi / a->es, a->es, &lo, &hi))
			return 0;
	}
	int rc = emulate_read_stored(c->e, addr + lo, out + lo, hi - lo);
	return rc == -ENOTSUP ? 1 : rc; /* bytes this run stored, their values not kept */
}

/* Write a vector result: the writemask merges or zeroes elements; VEX and
 * EVEX zero the register above the operand, SSE keeps it. */
void emulate_vec_dst(struct emulate_ctx *c, const struct vargs *a, const struct decode_zop *op,
		      const uint8_t val[64], int unknown)
{
	struct emulate_vec *v = c->e->vec;
	int r = emulate_vec_reg(op);
	unsigned w = op->size / 8;
	uint8_t out[64];

	emulate_vec_ready(v);
	int old_unknown = !!(v->zmm_unknown & (1u << r));
	if (w > 64 || (a->masked && (a->wmask_unknown || (c->insn->avx.mask.mode ==
		       ZYDIS_MASK_MODE_MERGING && old_unknown))) || (a->legacy && old_unknown))
		unknown = 1;
	if (unknown) {
		v->zmm_unknown |= 1u << r;
		return;
	}
	uint8_t *old = vec_zmm(v, r);
	memcpy(out, old, 64);
	memcpy(out, val, w);
	if (a->masked)
		for (unsigned j = 0; j < w / a->es; j++)
			if (!((a->wmask >> j) & 1)) {
				if (c->insn->avx.mask.mode == ZYDIS_MASK_MODE_MERGING)
					memcpy(out + j * a->es, old + j * a->es, a->es);
				else
					memset(out + j * a->es, 0, a->es);
			}
	if (!a->legacy)
		memset(out + w, 0, 64 - w);
	memcpy(old, out, 64);
	v->zmm_unknown &= ~(1u << r);
}

static uint64_t elem(const uint8_t *b, unsigned j, unsigned es)
{
	uint64_t x = 0;
	memcpy(&x, b + j * es, es);
	return x;
}

static void elem_set(uint8_t *b, unsigned j, unsigned es, uint64_t x)
{
	memcpy(b + j * es, &x, es);
}

/* --- instructions ------------------------------------------------------------- */

/* A vector register stored, whole or its low element (movss, movsd, movd,
 * movq): its value, where known, is kept whole in e->vstore (a picked
 * store's, so that SilentCraft needs no trap on it: sort/silent trapped on
 * 69% of its samples' own xmm and zmm stores) and, up to xmm's width,
 * noted in pieces of up to 8 bytes, so that a general load of its bytes
 * later in the window takes it (a struct's two counters bumped with one
 * paddq, as hashtab's table_evict_one: the load after the call stopped the
 * window, 4% of them), and a trap on the store knows what it wrote
 * (precise.h).  1 (emulate.c notes it as unknown) for a masked or unknown
 * one, or a wider one. */
static int vec_store(struct emulate_ctx *c, const struct vargs *a, const struct decode_zop *dst,
		     const struct decode_zop *src)
{
	uint8_t x[64];
	uint64_t addr;
	unsigned bytes = dst->size / 8;

	if (a->masked || src->type != ZYDIS_OPERAND_TYPE_REGISTER || emulate_vec_reg(src) < 0 ||
	    bytes == 0 || bytes > sizeof(x) || (bytes != 4 && (bytes & 7)) ||
	    mem_address(c, dst, &addr) < 0)
		return 1;
	if (emulate_vec_src(c, a, src, x) != 0)
		return 1; /* its value is not known */
	c->e->vstore_addr = addr;
	c->e->vstore_len = bytes;
	memcpy(c->e->vstore, x, bytes);
	/* pieces for xmm only, and only with room: a piece takes a store
	 * slot, and the ymm stores of libc's copy loops would fill them four
	 * at a time */
	if (bytes > 16 || c->e->n_stores + (int)((bytes + 7) / 8) > EMULATE_MAX_STORES / 2)
		return 1;
	for (unsigned k = 0; k < bytes; k += 8) {
		unsigned n = bytes - k < 8 ? bytes - k : 8;
		uint64_t piece = 0;
		memcpy(&piece, x + k, n);
		int rc = mem_note_store(c, addr + k, n * 8, 1, piece);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Element-wise arithmetic, logic and compares.  SSE: dst op= src; VEX and
 * EVEX: dst = src1 op src2 (vpternlog also reads dst).  A compare writes a
 * vector of all-ones elements, or (EVEX) a mask. */
static int vec_elementwise(struct emulate_ctx *c, const struct vargs *a, enum vop op)
{
	uint8_t x[64], y[64], d[64], out[64];
	const struct decode_zop *dst = a->op[0];
	int s1 = a->n == 2 ? 0 : 1, rc, unknown = 0;

	if (a->n < 2 || a->n > 3)
		return -ENOTSUP;
	if ((rc = emulate_vec_src(c, a, a->op[s1], x)) < 0)
		return rc;
	unknown |= rc;
	if ((rc = emulate_vec_src(c, a, a->op[a->n - 1], y)) < 0)
		return rc;
	unknown |= rc;
	int kdst = kreg_of(dst);
	unsigned w = (kdst >= 0 ? a->op[1]->size : dst->size) / 8, n = w / a->es;
	unsigned sh = 64 - 8 * a->es;
	if (w > 64 || w == 0)
		return -ENOTSUP;
	if (op == V_TERNLOG) {
		if ((rc = emulate_vec_src(c, a, dst, d)) < 0)
			return rc;
		unknown |= rc;
	}
	uint64_t bits = 0;
	for (unsigned j = 0; j < n && !unknown; j++) {
		uint64_t p = elem(x, j, a->es), q = elem(y, j, a->es), r = 0;
		int64_t ps = (int64_t)(p << sh) >> sh, qs = (int64_t)(q << sh) >> sh;
		int t;
		switch (op) {
		case V_AND: r = p & q; break;
		case V_ANDN: r = ~p & q; break;
		case V_OR: r = p | q; break;
		case V_XOR: r = p ^ q; break;
		case V_MINU: r = p < q ? p : q; break;
		case V_MAXU: r = p > q ? p : q; break;
		case V_ADD: r = p + q; break;
		case V_SUB: r = p - q; break;
		case V_TERNLOG:
			for (int b = 0; b < 64; b++) {
				unsigned i = (unsigned)(((elem(d, j, a->es) >> b) & 1) << 2 |
							((p >> b) & 1) << 1 | ((q >> b) & 1));
				r |= ((a->imm >> i) & 1ull) << b;
			}
			break;
		case V_CMPEQ: r = p == q; break;
		case V_CMPGT: r = ps > qs; break;
		case V_TESTM: r = (p & q) != 0; break;
		case V_TESTNM: r = (p & q) == 0; break;
		case V_CMP:
		case V_CMPU:
			switch (a->imm & 7) { /* eq lt le false ne nlt nle true */
			case 0: t = p == q; break;
			case 1: t = op == V_CMP ? ps < qs : p < q; break;
			case 2: t = op == V_CMP ? ps <= qs : p <= q; break;
			case 3: t = 0; break;
			case 4: t = p != q; break;
			case 5: t = op == V_CMP ? ps >= qs : p >= q; break;
			case 6: t = op == V_CMP ? ps > qs : p > q; break;
			default: t = 1; break;
			}
			r = (uint64_t)t;
			break;
		default: return -ENOTSUP;
		}
		if (kdst >= 0)
			bits |= (r & 1) << j;
		else
			elem_set(out, j, a->es, op >= V_CMPEQ && op <= V_TESTNM ? (r ? ~0ull : 0) : r);
	}
	if (kdst >= 0) {
		k_write(c->e->vec, kdst, bits & a->wmask, unknown || a->wmask_unknown);
		return 0;
	}
	if (op >= V_CMP && op <= V_TESTNM)
		return -ENOTSUP; /* these write masks only */
	emulate_vec_dst(c, a, dst, out, unknown);
	return 0;
}

static int vec_move(struct emulate_ctx *c, const struct vargs *a, enum vop op)
{
	uint8_t x[64];
	const struct decode_zop *dst = a->op[0], *src = a->op[a->n - 1];
	uint64_t v;
	int rc;

	if (a->n != 2)
		return -ENOTSUP;
	if (dst->type == ZYDIS_OPERAND_TYPE_MEMORY)
		return op == V_MOV || op == V_MOVD ? vec_store(c, a, dst, src)
						   : 1; /* else emulate.c notes it */
	if (emulate_vec_reg(dst) < 0) { /* movd/movq to a general register */
		if (op != V_MOVD || dst->type != ZYDIS_OPERAND_TYPE_REGISTER || emulate_vec_reg(src) < 0)
			return 1; /* MMX: not ours */
		if ((rc = emulate_vec_src(c, a, src, x)) != 0)
			return rc < 0 ? rc : -ENOTSUP; /* an unknown value into a register */
		memcpy(&v, x, 8);
		return op_write(c, 0, v);
	}
	if (op == V_MOVD && (src->type == ZYDIS_OPERAND_TYPE_REGISTER && emulate_vec_reg(src) < 0 &&
			     decode_gpr_index(src->reg.value) < 0))
		return 1; /* from MMX */
	struct vargs r = *a;
	if (op == V_BCAST)
		r.masked = 0; /* one element is read, whatever the mask */
	if ((rc = emulate_vec_src(c, &r, src, x)) < 0)
		return rc;
	if (op == V_MOVD) /* the low element; the rest of the xmm is zeroed */
		memset(x + a->es, 0, 64 - a->es);
	if (op == V_BCAST)
		for (unsigned j = 1; j < 64 / a->es; j++)
			memcpy(x + j * a->es, x, a->es);
	if (op == V_MOVD) { /* movd/movq write the whole xmm */
		struct decode_zop d = *dst;
		d.size = 128;
		emulate_vec_dst(c, a, &d, x, rc);
		return 0;
	}
	emulate_vec_dst(c, a, dst, x, rc);
	return 0;
}

/* pmovmskb, movmskps/pd: the elements' top bits into a general register. */
static int vec_movmsk(struct emulate_ctx *c, const struct vargs *a)
{
	uint8_t x[64];
	int rc;

	if (a->n != 2)
		return -ENOTSUP;
	if ((rc = emulate_vec_src(c, a, a->op[1], x)) != 0)
		return rc < 0 ? rc : -ENOTSUP;
	if (emulate_vec_reg(a->op[1]) < 0)
		return -ENOTSUP; /* pmovmskb on MMX */
	uint64_t bits = 0;
	unsigned n = a->op[1]->size / 8 / a->es;
	for (unsigned j = 0; j < n; j++)
		bits |= (uint64_t)(x[j * a->es + a->es - 1] >> 7) << j;
	return op_write(c, 0, bits);
}

/* ptest: ZF = !(a & b), CF = !(~a & b); ucomis/comis: ZF PF CF as the
 * comparison orders them.  Both clear OF, SF, AF. */
static int vec_flags(struct emulate_ctx *c, const struct vargs *a, enum vop op)
{
	uint8_t x[64], y[64];
	int rc;

	if (a->n != 2)
		return -ENOTSUP;
	if ((rc = emulate_vec_src(c, a, a->op[0], x)) != 0 || (rc = emulate_vec_src(c, a, a->op[1], y)) != 0)
		return rc < 0 ? rc : -ENOTSUP;
	uint64_t f = 0;
	if (op == V_PTEST) {
		int zf = 1, cf = 1;
		for (unsigned i = 0; i < a->op[0]->size / 8; i++) {
			zf &= !(x[i] & y[i]);
			cf &= !(~x[i] & y[i]);
		}
		f = (zf ? RFLAGS_ZF : 0) | (cf ? RFLAGS_CF : 0);
	} else {
		double p, q;
		if (a->es == 8) {
			memcpy(&p, x, 8);
			memcpy(&q, y, 8);
		} else {
			float pf, qf;
			memcpy(&pf, x, 4);
			memcpy(&qf, y, 4);
			p = pf;
			q = qf;
		}
		if (p != p || q != q)
			f = RFLAGS_ZF | RFLAGS_PF | RFLAGS_CF;
		else if (p < q)
			f = RFLAGS_CF;
		else if (p == q)
			f = RFLAGS_ZF;
	}
	set_flags(c->regs, RFLAGS_ARITH | RFLAGS_AF, f);
	return 0;
}

/* The mask instructions (VEX-encoded, no writemask). */
static int vec_kop(struct emulate_ctx *c, const struct vargs *a, enum vop op)
{
	struct emulate_vec *v = c->e->vec;
	unsigned bits = 8 * a->es;
	uint64_t m = low_bits(bits), x = 0, y = 0, r;
	int ux = 0, uy = 0, kd = kreg_of(a->op[0]);

	if (op == V_KMOV) {
		const struct decode_zop *src = a->op[1];
		if (a->n != 2)
			return -ENOTSUP;
		if (kd < 0 && a->op[0]->type == ZYDIS_OPERAND_TYPE_MEMORY)
			return 1; /* a store: emulate.c notes it */
		if (kreg_of(src) >= 0)
			ux = k_read(v, kreg_of(src), &x);
		else if (op_read(c, 1, &x) < 0)
			return -ENOTSUP;
		if (kd >= 0) {
			k_write(v, kd, x & m, ux);
			return 0;
		}
		return ux ? -ENOTSUP : op_write(c, 0, x & m);
	}
	int s = (op == V_KORTEST || op == V_KTEST) ? 0 : 1;
	if (a->n < s + 1 || kreg_of(a->op[s]) < 0)
		return -ENOTSUP;
	ux = k_read(v, kreg_of(a->op[s]), &x);
	if (a->n > s + 1) {
		if (kreg_of(a->op[s + 1]) < 0)
			return -ENOTSUP;
		uy = k_read(v, kreg_of(a->op[s + 1]), &y);
	}
	x &= m;
	y &= m;
	if (op == V_KORTEST || op == V_KTEST) {
		if (ux || uy)
			return -ENOTSUP;
		uint64_t f;
		if (op == V_KORTEST)
			f = ((x | y) == 0 ? RFLAGS_ZF : 0) | ((x | y) == m ? RFLAGS_CF : 0);
		else
			f = ((x & y) == 0 ? RFLAGS_ZF : 0) | ((~x & y & m) == 0 ? RFLAGS_CF : 0);
		set_flags(c->regs, RFLAGS_ARITH | RFLAGS_AF, f);
		return 0;
	}
	switch (op) {
	case V_KOR: r = x | y; break;
	case V_KAND: r = x & y; break;
	case V_KANDN: r = ~x & y; break;
	case V_KXOR: r = x ^ y; break;
	case V_KXNOR: r = ~(x ^ y); break;
	case V_KNOT: r = ~x; break;
	case V_KADD: r = x + y; break;
	case V_KSHL: r = (a->imm & 0xff) >= bits ? 0 : x << (a->imm & 0xff); break;
	case V_KSHR: r = (a->imm & 0xff) >= bits ? 0 : x >> (a->imm & 0xff); break;
	case V_KUNPCK: /* the low halves: src1's above src2's */
		r = ((x & low_bits(bits / 2)) << (bits / 2)) | (y & low_bits(bits / 2));
		break;
	default: return -ENOTSUP;
	}
	k_write(v, kd, r & m, ux || uy);
	return 0;
}

/* vzeroupper: bits 128 and up of zmm0-15; vzeroall: all of zmm0-15. */
static int vec_zero(struct emulate_ctx *c, enum vop op)
{
	struct emulate_vec *v = c->e->vec;

	emulate_vec_ready(v);
	for (int i = 0; i < 16; i++) {
		if (op == V_ZEROALL) {
			memset(v->zmm[i], 0, 64);
			v->zmm_loaded |= 1u << i;
			v->zmm_unknown &= ~(1u << i);
		} else if (v->zmm_loaded & (1u << i)) {
			memset(v->zmm[i] + 16, 0, 48);
		} else {
			v->upper_zeroed |= (uint16_t)(1u << i); /* when it is read (vec_zmm) */
		}
	}
	return 0;
}

int emulate_vec_insn(struct emulate_ctx *c, const struct decode_insn *in)
{
	struct vargs a;
	struct vdesc d = vec_desc(c->insn->mnemonic);
	int rc;

	if (!c->e->vec || d.op == V_NONE)
		return 1;
	/* Nothing after this may fail once a register is written: emulate_insn
	 * gives up at an unreadable next instruction, so check it first. */
	if (!emulate_code_readable(c->e, c->next_rip))
		return -EFAULT;
	if (d.op == V_ZEROUPPER || d.op == V_ZEROALL)
		return vec_zero(c, d.op);
	if ((rc = vargs_of(c, &a, d.es)) == 0) {
		switch (d.op) {
		case V_MOV: case V_MOVD: case V_BCAST:
			rc = vec_move(c, &a, d.op);
			break;
		case V_MOVMSK:
			rc = vec_movmsk(c, &a);
			break;
		case V_PTEST: case V_UCOMI:
			rc = vec_flags(c, &a, d.op);
			break;
		case V_MOVS:
			if (a.n == 2 && a.op[0]->type == ZYDIS_OPERAND_TYPE_MEMORY) {
				rc = vec_store(c, &a, a.op[0], a.op[1]); /* its low element */
				break;
			}
			/* fallthrough */
		case V_FADD: case V_FSUB: case V_FMUL: case V_FDIV: case V_CVTI2F:
		case V_CVTTF2I: case V_CVTF2F:
			rc = emulate_vec_fp_scalar(c, &a, d.op);
			break;
		case V_FMA:
			emulate_vec_ready(c->e->vec);
			rc = emulate_vec_fp_fma(c, &a, d.x);
			break;
		default:
			rc = d.op >= V_KMOV ? vec_kop(c, &a, d.op) : vec_elementwise(c, &a, d.op);
			break;
		}
	}
	/* A form not handled here ({1toN}, MMX) or a load that cannot be read
	 * (nothing written yet): emulate.c's no-op, whose written registers
	 * become unknown, unless it writes general registers or flags. */
	return rc == -ENOTSUP || rc == -EFAULT ? 1 : rc;
}

void emulate_vec_clobber(struct emulate_ctx *c)
{
	struct emulate_vec *v = c->e->vec;

	if (!v)
		return;
	switch (c->insn->mnemonic) {
	case ZYDIS_MNEMONIC_XRSTOR: case ZYDIS_MNEMONIC_XRSTOR64: case ZYDIS_MNEMONIC_XRSTORS:
	case ZYDIS_MNEMONIC_XRSTORS64: case ZYDIS_MNEMONIC_FXRSTOR: case ZYDIS_MNEMONIC_FXRSTOR64:
		emulate_vec_ready(v);
		v->zmm_unknown = ~0u; /* the whole state from memory */
		v->k_unknown = 0xff;
		v->mxcsr = 0;
		return;
	case ZYDIS_MNEMONIC_LDMXCSR: case ZYDIS_MNEMONIC_VLDMXCSR:
		emulate_vec_ready(v);
		v->mxcsr = 0; /* a rounding mode not known: no FP arithmetic */
		return;
	default:
		break;
	}
	v->zmm_unknown |= c->insn->vec_written;
	v->k_unknown |= c->insn->k_written;
}

int emulate_vec_access(const struct emulate *e, const struct decode_zydis *z,
		       struct decode_access *a)
{
	const struct decode_zinsn *insn = &z->insn;
	ZydisRegister mk = insn->avx.mask.reg;
	struct emulate_vec *v = e->vec;
	uint64_t mask;
	unsigned lo, hi;

	if (!v || !(insn->attributes & ZYDIS_ATTRIB_HAS_EVEX) || mk == ZYDIS_REGISTER_NONE ||
	    mk == ZYDIS_REGISTER_K0 || (a->flags & DECODE_ACC_UNKNOWN_ADDR))
		return -ENOTSUP;
	const struct decode_zop *op = NULL;
	for (int i = 0; i < insn->operand_count_visible && !op; i++)
		if (z->ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY)
			op = &z->ops[i];
	if (!op || op->element_size < 8 || (op->element_size & 7) || op->size / 8 != a->len ||
	    k_read(v, mk - ZYDIS_REGISTER_K0, &mask) != 0)
		return -ENOTSUP;
	unsigned es = op->element_size / 8, n = a->len / es;
	if (!mask_span(mask, n, es, &lo, &hi))
		return 0;
	a->addr += lo;
	a->len = hi - lo;
	return __builtin_popcountll(mask & low_bits(n)) * (int)es;
}
