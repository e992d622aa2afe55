/* insn_class: element type and stack-op flag of an x86-64 instruction; see
 * insn_class.h.  Tables follow the Intel SDM opcode maps (vol. 2, app. A). */
#include "insn_class.h"

/* Mandatory-prefix column of an SSE/AVX opcode: none, 66, F3, F2 (VEX pp). */
enum { PP_NONE, PP_66, PP_F3, PP_F2 };

/* ps/ss -> float, pd/sd -> double: the rule for most of map 0F's FP rows. */
static unsigned by_pp(unsigned pp)
{
	return pp == PP_66 || pp == PP_F2 ? INSN_ELEM_F64 : INSN_ELEM_F32;
}

static unsigned map_0f(unsigned op, unsigned pp)
{
	switch (op) {
	case 0x10: case 0x11:             /* movups/upd/ss/sd */
	case 0x28: case 0x29: case 0x2b:  /* movaps/apd, movntps/pd */
	case 0x2c: case 0x2d:             /* cvt(t)ps2pi, cvt(t)ss/sd2si: FP source */
	case 0x51: case 0x52: case 0x53: case 0x54: case 0x55: case 0x56: case 0x57:
	case 0x58: case 0x59: case 0x5a: case 0x5c: case 0x5d: case 0x5e: case 0x5f:
	case 0xc2:                        /* cmpps/pd/ss/sd */
		return by_pp(pp);
	case 0x12: case 0x13: case 0x16: case 0x17:
		/* movlps/movhps and movs[hl]dup are floats; Zydis (so libwitch)
		 * types movlpd/hpd's and movddup's memory operand as integer,
		 * and unpck[lh]ps/pd's (below). */
		return pp == PP_NONE || pp == PP_F3 ? INSN_ELEM_F32 : INSN_ELEM_INT;
	case 0x2e: case 0x2f:             /* (u)comiss/sd */
	case 0xc6:                        /* shufps/pd */
		return pp == PP_66 || pp == PP_F2 ? INSN_ELEM_F64 : INSN_ELEM_F32;
	case 0x5b:                        /* cvtdq2ps reads integers; cvt(t)ps2dq floats */
		return pp == PP_NONE ? INSN_ELEM_INT : INSN_ELEM_F32;
	case 0x7c: case 0x7d: case 0xd0:  /* hadd/hsub/addsub: pd with 66, ps with F2 */
		return pp == PP_66 ? INSN_ELEM_F64 : pp == PP_F2 ? INSN_ELEM_F32 : INSN_ELEM_INT;
	case 0xe6:                        /* cvtdq2pd (F3) reads integers; the others doubles */
		return pp == PP_F3 ? INSN_ELEM_INT : pp == PP_NONE ? INSN_ELEM_INT : INSN_ELEM_F64;
	default:
		return INSN_ELEM_INT;
	}
}

/* Map 0F38: FMA (W selects double) and the FP broadcasts/masked moves. */
static unsigned map_0f38(unsigned op, unsigned w)
{
	if (op >= 0x96 && op <= 0xbf)
		return w ? INSN_ELEM_F64 : INSN_ELEM_F32;
	switch (op) {
	case 0x18: case 0x2c: case 0x2e: case 0x0c: case 0x0e:
		return INSN_ELEM_F32;     /* vbroadcastss, vmaskmovps, vpermilps, vtestps */
	case 0x19: case 0x2d: case 0x2f: case 0x0d: case 0x0f:
		return INSN_ELEM_F64;
	default:
		return INSN_ELEM_INT;
	}
}

/* Map 0F3A: rounding, blends, dot products, permutes with an immediate. */
static unsigned map_0f3a(unsigned op)
{
	switch (op) {
	case 0x04: case 0x08: case 0x0a: case 0x0c: case 0x40: case 0x21:
		return INSN_ELEM_F32;     /* vpermilps, roundps/ss, blendps, dpps, insertps */
	case 0x05: case 0x09: case 0x0b: case 0x0d: case 0x41:
		return INSN_ELEM_F64;
	default:
		return INSN_ELEM_INT;
	}
}

/* One-byte map: the stack movers and x87 memory forms. */
static unsigned map_one(const unsigned char *p)
{
	unsigned op = p[0];

	if ((op >= 0x50 && op <= 0x5f) || op == 0x68 || op == 0x6a || op == 0x9c ||
	    op == 0x9d || op == 0xc2 || op == 0xc3 || op == 0xc8 || op == 0xc9 || op == 0xe8)
		return INSN_STACK;
	if (!(op == 0x8f || op == 0xff || (op >= 0xd8 && op <= 0xdf)))
		return INSN_ELEM_INT; /* no ModRM byte to look at */
	unsigned modrm = p[1], reg = (modrm >> 3) & 7;
	if (op == 0x8f && reg == 0)
		return INSN_STACK;    /* pop m */
	if (op == 0xff && (reg == 2 || reg == 3 || reg == 6))
		return INSN_STACK;    /* call m, call far m, push m */
	if ((modrm >> 6) == 3)
		return INSN_ELEM_INT; /* x87 register forms touch no memory */
	switch (op) {
	case 0xd8:                    /* fadd..fdivr m32 */
		return INSN_ELEM_F32;
	case 0xdc:                    /* fadd..fdivr m64 */
		return INSN_ELEM_F64;
	case 0xd9:                    /* fld/fst/fstp m32 (the rest: control words) */
		return reg == 0 || reg == 2 || reg == 3 ? INSN_ELEM_F32 : INSN_ELEM_INT;
	case 0xdd:                    /* fld/fisttp/fst/fstp m64 */
		return reg == 0 || reg == 2 || reg == 3 ? INSN_ELEM_F64 : INSN_ELEM_INT;
	default:
		return INSN_ELEM_INT;
	}
}

unsigned insn_class_of(const unsigned char *p)
{
	unsigned pp = PP_NONE, w = 0;

	/* Legacy prefixes; the last of 66/F2/F3 is the SSE column (F2/F3 win). */
	for (;;) {
		unsigned b = *p;
		if (b == 0x66) {
			if (pp == PP_NONE)
				pp = PP_66;
		} else if (b == 0xf3) {
			pp = PP_F3;
		} else if (b == 0xf2) {
			pp = PP_F2;
		} else if (!(b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x64 ||
			     b == 0x65 || b == 0x67 || b == 0xf0)) {
			break;
		}
		p++;
	}
	if ((*p & 0xf0) == 0x40) {    /* REX */
		w = (*p >> 3) & 1;
		p++;
	}
	if (*p == 0xc5)               /* VEX2: map 0F */
		return map_0f(p[2], p[1] & 3);
	if (*p == 0xc4) {             /* VEX3 */
		unsigned map = p[1] & 0x1f, vpp = p[2] & 3, vw = p[2] >> 7;
		return map == 1 ? map_0f(p[3], vpp) : map == 2 ? map_0f38(p[3], vw) :
		       map == 3 ? map_0f3a(p[3]) : INSN_ELEM_INT;
	}
	if (*p == 0x62) {             /* EVEX */
		unsigned map = p[1] & 3, epp = p[2] & 3, ew = p[2] >> 7;
		return map == 1 ? map_0f(p[4], epp) : map == 2 ? map_0f38(p[4], ew) :
		       map == 3 ? map_0f3a(p[4]) : INSN_ELEM_INT;
	}
	if (*p == 0x0f) {
		if (p[1] == 0x38)
			return map_0f38(p[2], w);
		if (p[1] == 0x3a)
			return map_0f3a(p[2]);
		return map_0f(p[1], pp);
	}
	return map_one(p);
}
