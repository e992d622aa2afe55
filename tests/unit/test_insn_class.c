/* Unit test of the oracle's instruction classifier (tools/oracle/insn_class.c)
 * against the runtime's Zydis decoder: for each row, both must report the
 * row's element type for the memory operand and its stack-op flag, so the
 * oracle compares values exactly where libwitch does (FP with tolerance,
 * the rest bytewise) and skips the same stack ops.  Table-driven, each row
 * keeps its __LINE__.  Bytes checked with objdump -D -b binary -mi386:x86-64.
 */
#include <stdint.h>
#include <string.h>

#include "witch/decode.h"
#include "insn_class.h"

#include "check.h"

struct row {
	int line;
	uint8_t code[15];
	uint8_t len;
	unsigned cls; /* expected insn_class_of */
};

#define CODE(...) .code = { __VA_ARGS__ }, .len = sizeof((uint8_t[]){ __VA_ARGS__ })
#define F32 INSN_ELEM_F32
#define F64 INSN_ELEM_F64
#define INT INSN_ELEM_INT
#define STACK INSN_STACK

static const struct row rows[] = {
	/* SSE moves and arithmetic: the mandatory prefix picks the type */
	{ __LINE__, CODE(0xf3, 0x0f, 0x10, 0x00), F32 },             /* movss xmm0,[rax] */
	{ __LINE__, CODE(0xf2, 0x0f, 0x11, 0x08), F64 },             /* movsd [rax],xmm1 */
	{ __LINE__, CODE(0x0f, 0x11, 0x00), F32 },                   /* movups [rax],xmm0 */
	{ __LINE__, CODE(0x66, 0x0f, 0x11, 0x00), F64 },             /* movupd [rax],xmm0 */
	{ __LINE__, CODE(0x0f, 0x28, 0x00), F32 },                   /* movaps xmm0,[rax] */
	{ __LINE__, CODE(0x66, 0x0f, 0x29, 0x00), F64 },             /* movapd [rax],xmm0 */
	{ __LINE__, CODE(0xf2, 0x0f, 0x58, 0x00), F64 },             /* addsd xmm0,[rax] */
	{ __LINE__, CODE(0x0f, 0x59, 0x00), F32 },                   /* mulps xmm0,[rax] */
	{ __LINE__, CODE(0x66, 0x0f, 0x2e, 0x00), F64 },             /* ucomisd xmm0,[rax] */
	{ __LINE__, CODE(0x0f, 0x2f, 0x00), F32 },                   /* comiss xmm0,[rax] */
	{ __LINE__, CODE(0xf2, 0x0f, 0x12, 0x00), INT },             /* movddup: Zydis says integer */
	{ __LINE__, CODE(0x66, 0x0f, 0x17, 0x00), INT },             /* movhpd: Zydis says integer */
	{ __LINE__, CODE(0x0f, 0x13, 0x00), F32 },                   /* movlps [rax],xmm0 */
	{ __LINE__, CODE(0x0f, 0x16, 0x00), F32 },                   /* movhps xmm0,[rax] */
	{ __LINE__, CODE(0xf3, 0x0f, 0x12, 0x00), F32 },             /* movsldup xmm0,[rax] */
	{ __LINE__, CODE(0x0f, 0x14, 0x00), INT },                   /* unpcklps: Zydis says integer */
	{ __LINE__, CODE(0x66, 0x0f, 0xc6, 0x00, 0x01), F64 },       /* shufpd xmm0,[rax],1 */
	{ __LINE__, CODE(0xf2, 0x44, 0x0f, 0x11, 0x08), F64 },       /* movsd [rax],xmm9 (REX) */
	{ __LINE__, CODE(0x64, 0xf2, 0x0f, 0x10, 0x00), F64 },       /* movsd xmm0,fs:[rax] */
	/* integer data in vector registers, and integer sources of FP converts */
	{ __LINE__, CODE(0xf3, 0x0f, 0x6f, 0x00), INT },             /* movdqu xmm0,[rax] */
	{ __LINE__, CODE(0x66, 0x0f, 0x7f, 0x00), INT },             /* movdqa [rax],xmm0 */
	{ __LINE__, CODE(0xf3, 0x0f, 0x7e, 0x00), INT },             /* movq xmm0,[rax] */
	{ __LINE__, CODE(0x66, 0x0f, 0xd6, 0x00), INT },             /* movq [rax],xmm0 */
	{ __LINE__, CODE(0xf2, 0x48, 0x0f, 0x2a, 0x00), INT },       /* cvtsi2sd xmm0,qword [rax] */
	{ __LINE__, CODE(0x0f, 0x5b, 0x00), INT },                   /* cvtdq2ps xmm0,[rax] */
	/* VEX and EVEX */
	{ __LINE__, CODE(0xc5, 0xfb, 0x10, 0x00), F64 },             /* vmovsd xmm0,[rax] */
	{ __LINE__, CODE(0xc5, 0xfa, 0x11, 0x00), F32 },             /* vmovss [rax],xmm0 */
	{ __LINE__, CODE(0xc5, 0xfc, 0x10, 0x00), F32 },             /* vmovups ymm0,[rax] */
	{ __LINE__, CODE(0xc5, 0xfd, 0x29, 0x08), F64 },             /* vmovapd [rax],ymm1 */
	{ __LINE__, CODE(0xc5, 0xf5, 0x58, 0x00), F64 },             /* vaddpd ymm0,ymm1,[rax] */
	{ __LINE__, CODE(0xc4, 0xe2, 0xf5, 0xb8, 0x00), F64 },       /* vfmadd231pd ymm0,ymm1,[rax] */
	{ __LINE__, CODE(0xc4, 0xe2, 0x75, 0xb8, 0x00), F32 },       /* vfmadd231ps ymm0,ymm1,[rax] */
	{ __LINE__, CODE(0xc4, 0xe2, 0x7d, 0x18, 0x00), F32 },       /* vbroadcastss ymm0,[rax] */
	{ __LINE__, CODE(0xc5, 0xfe, 0x6f, 0x00), INT },             /* vmovdqu ymm0,[rax] */
	{ __LINE__, CODE(0x62, 0xf1, 0xfd, 0x48, 0x10, 0x00), F64 }, /* vmovupd zmm0,[rax] */
	/* x87 */
	{ __LINE__, CODE(0xd9, 0x00), F32 },                         /* fld dword [rax] */
	{ __LINE__, CODE(0xdd, 0x18), F64 },                         /* fstp qword [rax] */
	{ __LINE__, CODE(0xdc, 0x00), F64 },                         /* fadd qword [rax] */
	{ __LINE__, CODE(0xdb, 0x28), INT },                         /* fld tword [rax] */
	/* general-purpose, and the stack movers */
	{ __LINE__, CODE(0x48, 0x89, 0x08), INT },                   /* mov [rax],rcx */
	{ __LINE__, CODE(0x66, 0x89, 0x08), INT },                   /* mov [rax],cx */
	{ __LINE__, CODE(0x53), STACK },                             /* push rbx */
	{ __LINE__, CODE(0x41, 0x5c), STACK },                       /* pop r12 */
	{ __LINE__, CODE(0xe8, 0x00, 0x00, 0x00, 0x00), STACK },     /* call rel32 */
	{ __LINE__, CODE(0xff, 0x10), STACK },                       /* call [rax] */
	{ __LINE__, CODE(0xff, 0x30), STACK },                       /* push qword [rax] */
	{ __LINE__, CODE(0x8f, 0x00), STACK },                       /* pop qword [rax] */
	{ __LINE__, CODE(0xc3), STACK },                             /* ret */
	{ __LINE__, CODE(0xc9), STACK },                             /* leave */
	{ __LINE__, CODE(0x9c), STACK },                             /* pushfq */
	{ __LINE__, CODE(0xff, 0x00), INT },                         /* inc dword [rax] */
};

/* Rows are decoded from here: aligned so no row straddles a page. */
static uint8_t code_buf[64] __attribute__((aligned(64)));

/* What the runtime's decoder says, in insn_class's terms. */
static unsigned zydis_class(const struct decode_insn *in)
{
	unsigned cls = (in->flags & DECODE_F_STACK) ? INSN_STACK : 0;
	for (unsigned a = 0; a < in->n_access; a++) {
		if (in->access[a].flags & DECODE_ACC_IMPLICIT)
			continue;
		if (in->access[a].elem == DECODE_ELEM_F32)
			cls |= INSN_ELEM_F32;
		else if (in->access[a].elem == DECODE_ELEM_F64)
			cls |= INSN_ELEM_F64;
	}
	return cls;
}

int main(void)
{
	if (decode_init() < 0) {
		FAIL(__LINE__, "decode_init failed");
		return 1;
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct decode_regs regs;
		struct decode_insn out;

		memset(code_buf, 0xcc, sizeof(code_buf));
		memcpy(code_buf, r->code, r->len);
		unsigned got = insn_class_of(code_buf);
		CHECK(r->line, got == r->cls, "insn_class_of: 0x%x, expected 0x%x", got, r->cls);

		memset(&regs, 0, sizeof(regs));
		regs.rip = (uint64_t)(uintptr_t)code_buf;
		regs.gpr[DECODE_RSP] = 0x7fff0000;
		int rc = decode_at(regs.rip, &regs, &out);
		if (rc < 0) {
			FAIL(r->line, "decode_at returned %d", rc);
			continue;
		}
		CHECK(r->line, out.len == r->len, "decoded length %u, row has %u", out.len, r->len);
		unsigned z = zydis_class(&out);
		CHECK(r->line, z == r->cls, "runtime decoder: 0x%x, expected 0x%x", z, r->cls);
	}
	if (check_failures == 0)
		printf("insn_class: %zu rows agree with the runtime decoder\n",
		       sizeof(rows) / sizeof(rows[0]));
	return check_failures != 0;
}
