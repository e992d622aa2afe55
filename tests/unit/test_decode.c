/* Unit test of the decode module: table-driven like libpfm4's validate_x86.c.
 * Each row is one instruction (bytes checked with objdump -D -b binary
 * -mi386:x86-64), the register values it depends on, and the accesses and
 * flags decode_at must report.  Failures print the row's line number.
 * Exit status 0 on success.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

#include "witch/decode.h"
#include "witch/decode_zcache.h"
#include "witch/peek.h"
#include "witch/prefault.h"

#include "check.h"

/* ------------------------------------------------------------------ */
/* Table                                                              */

struct exp_acc {
	uint64_t addr;
	uint32_t len;
	uint8_t kind, elem, flags;
};

struct row {
	int line;
	uint8_t code[15];
	uint8_t len;
	uint64_t gpr[DECODE_NGPR];
	uint64_t rflags, fs_base, gs_base;
	int rc;          /* expected return of decode_at */
	uint8_t n_access;
	struct exp_acc acc[DECODE_MAX_ACCESS];
	uint16_t flags;  /* expected DECODE_F_* */
	uint8_t pcrel;   /* bit i: acc[i].addr is an offset from the instruction's pc */
};

/* Bytes and their count from one list, so the two cannot disagree. */
#define CODE(...) .code = { __VA_ARGS__ }, .len = sizeof((uint8_t[]){ __VA_ARGS__ })
#define REGS(...) .gpr = { __VA_ARGS__ }
#define ACC(...) .acc = { __VA_ARGS__ }

/* Short names for the table. */
#define LD DECODE_LOAD
#define ST DECODE_STORE
#define RMW DECODE_RMW
#define INT DECODE_ELEM_INT
#define F32 DECODE_ELEM_F32
#define F64 DECODE_ELEM_F64
#define IMP DECODE_ACC_IMPLICIT
#define MSK DECODE_ACC_MASKED
#define UNK DECODE_ACC_UNKNOWN_ADDR
#define BR DECODE_F_BRANCH
#define CALL DECODE_F_CALL
#define RET DECODE_F_RET
#define REP DECODE_F_REP
#define NOSTEP DECODE_F_NO_STEP
#define STK DECODE_F_STACK
#define LOCKED DECODE_F_LOCKED

/* Register values reused by many rows. */
#define XA 0x10000ull          /* rax: data pointer */
#define XB 0x20000ull          /* rbx */
#define SP 0x7ffe0000ull       /* rsp */
#define BP 0x7ffe0100ull       /* rbp */
#define SI 0x30000ull          /* rsi */
#define DI 0x40000ull          /* rdi */
#define FSB 0x7f0000001000ull  /* fs base (TLS) */
#define GSB 0x7f0000002000ull  /* gs base */

static const struct row rows[] = {
	/* mov [rax+rcx*8+0x10], rdx */
	{ __LINE__, CODE(0x48, 0x89, 0x54, 0xc8, 0x10), REGS([DECODE_RAX] = XA, [DECODE_RCX] = 3),
	  .n_access = 1, ACC({ XA + 3 * 8 + 0x10, 8, ST, INT, 0 }) },
	/* mov eax, [rbx+rsi*4-8] */
	{ __LINE__, CODE(0x8b, 0x44, 0xb3, 0xf8), REGS([DECODE_RBX] = XB, [DECODE_RSI] = 5),
	  .n_access = 1, ACC({ XB + 5 * 4 - 8, 4, LD, INT, 0 }) },
	/* mov rax, [rip+0x100]: relative to the next instruction */
	{ __LINE__, CODE(0x48, 0x8b, 0x05, 0x00, 0x01, 0x00, 0x00),
	  .n_access = 1, ACC({ 7 + 0x100, 8, LD, INT, 0 }), .pcrel = 1 },
	/* call qword ptr [rip+0x100] */
	{ __LINE__, CODE(0xff, 0x15, 0x00, 0x01, 0x00, 0x00), REGS([DECODE_RSP] = SP),
	  .n_access = 2, ACC({ 6 + 0x100, 8, LD, INT, 0 }, { SP - 8, 8, ST, INT, IMP }),
	  .flags = BR | CALL | STK, .pcrel = 1 },
	/* mov rax, fs:[0x28] (stack protector canary) */
	{ __LINE__, CODE(0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00), .fs_base = FSB,
	  .n_access = 1, ACC({ FSB + 0x28, 8, LD, INT, 0 }) },
	/* mov gs:[rbx], ecx */
	{ __LINE__, CODE(0x65, 0x89, 0x0b), REGS([DECODE_RBX] = 0x40), .gs_base = GSB,
	  .n_access = 1, ACC({ GSB + 0x40, 4, ST, INT, 0 }) },
	/* movabs eax, [0x1234] (moffs) */
	{ __LINE__, CODE(0xa1, 0x34, 0x12, 0, 0, 0, 0, 0, 0),
	  .n_access = 1, ACC({ 0x1234, 4, LD, INT, 0 }) },
	/* mov eax, [eax+4] (67 prefix): the effective address wraps at 32 bits */
	{ __LINE__, CODE(0x67, 0x8b, 0x40, 0x04), REGS([DECODE_RAX] = 0x1fffffffeull),
	  .n_access = 1, ACC({ 2, 4, LD, INT, 0 }) },
	/* mov [rsp-8], rax: explicit rsp use is not STACK */
	{ __LINE__, CODE(0x48, 0x89, 0x44, 0x24, 0xf8), REGS([DECODE_RSP] = SP),
	  .n_access = 1, ACC({ SP - 8, 8, ST, INT, 0 }) },
	/* add rsp, 8: no access, explicit rsp write is not STACK */
	{ __LINE__, CODE(0x48, 0x83, 0xc4, 0x08), REGS([DECODE_RSP] = SP) },

	/* --- stack --- */
	/* push rax */
	{ __LINE__, CODE(0x50), REGS([DECODE_RSP] = SP),
	  .n_access = 1, ACC({ SP - 8, 8, ST, INT, IMP }), .flags = STK },
	/* pop rbx */
	{ __LINE__, CODE(0x5b), REGS([DECODE_RSP] = SP),
	  .n_access = 1, ACC({ SP, 8, LD, INT, IMP }), .flags = STK },
	/* call rel32 */
	{ __LINE__, CODE(0xe8, 0x00, 0x00, 0x00, 0x00), REGS([DECODE_RSP] = SP),
	  .n_access = 1, ACC({ SP - 8, 8, ST, INT, IMP }), .flags = BR | CALL | STK },
	/* ret */
	{ __LINE__, CODE(0xc3), REGS([DECODE_RSP] = SP),
	  .n_access = 1, ACC({ SP, 8, LD, INT, IMP }), .flags = BR | RET | STK },
	/* call qword ptr [rax] */
	{ __LINE__, CODE(0xff, 0x10), REGS([DECODE_RAX] = XA, [DECODE_RSP] = SP),
	  .n_access = 2, ACC({ XA, 8, LD, INT, 0 }, { SP - 8, 8, ST, INT, IMP }),
	  .flags = BR | CALL | STK },
	/* push qword ptr [rax+8] */
	{ __LINE__, CODE(0xff, 0x70, 0x08), REGS([DECODE_RAX] = XA, [DECODE_RSP] = SP),
	  .n_access = 2, ACC({ XA + 8, 8, LD, INT, 0 }, { SP - 8, 8, ST, INT, IMP }),
	  .flags = STK },
	/* push word ptr [rax]: 2-byte push */
	{ __LINE__, CODE(0x66, 0xff, 0x30), REGS([DECODE_RAX] = XA, [DECODE_RSP] = SP),
	  .n_access = 2, ACC({ XA, 2, LD, INT, 0 }, { SP - 2, 2, ST, INT, IMP }),
	  .flags = STK },
	/* pop qword ptr [rsp+8]: the address uses rsp after the pop */
	{ __LINE__, CODE(0x8f, 0x44, 0x24, 0x08), REGS([DECODE_RSP] = SP),
	  .n_access = 2, ACC({ SP + 8 + 8, 8, ST, INT, 0 }, { SP, 8, LD, INT, IMP }),
	  .flags = STK },
	/* enter 0x10, 0 */
	{ __LINE__, CODE(0xc8, 0x10, 0x00, 0x00), REGS([DECODE_RSP] = SP, [DECODE_RBP] = BP),
	  .n_access = 1, ACC({ SP - 8, 8, ST, INT, IMP }), .flags = STK },
	/* leave: pops at the old rbp */
	{ __LINE__, CODE(0xc9), REGS([DECODE_RSP] = SP, [DECODE_RBP] = BP),
	  .n_access = 1, ACC({ BP, 8, LD, INT, IMP }), .flags = STK },
	/* pushfq */
	{ __LINE__, CODE(0x9c), REGS([DECODE_RSP] = SP),
	  .n_access = 1, ACC({ SP - 8, 8, ST, INT, IMP }), .flags = NOSTEP | STK },
	/* popfq */
	{ __LINE__, CODE(0x9d), REGS([DECODE_RSP] = SP),
	  .n_access = 1, ACC({ SP, 8, LD, INT, IMP }), .flags = NOSTEP | STK },
	/* iretq: 5-qword frame */
	{ __LINE__, CODE(0x48, 0xcf), REGS([DECODE_RSP] = SP),
	  .n_access = 1, ACC({ SP, 40, LD, INT, IMP }), .flags = BR | NOSTEP | STK },

	/* --- string instructions: one element at the current rsi/rdi --- */
	/* rep movsb */
	{ __LINE__, CODE(0xf3, 0xa4), REGS([DECODE_RSI] = SI, [DECODE_RDI] = DI, [DECODE_RCX] = 5),
	  .n_access = 2, ACC({ DI, 1, ST, INT, IMP }, { SI, 1, LD, INT, IMP }), .flags = REP },
	/* rep movsb with rcx = 0: no iteration, no access */
	{ __LINE__, CODE(0xf3, 0xa4), REGS([DECODE_RSI] = SI, [DECODE_RDI] = DI, [DECODE_RCX] = 0),
	  .n_access = 0, .flags = REP },
	/* rep stosq */
	{ __LINE__, CODE(0xf3, 0x48, 0xab), REGS([DECODE_RDI] = DI, [DECODE_RCX] = 100),
	  .n_access = 1, ACC({ DI, 8, ST, INT, IMP }), .flags = REP },
	/* movsd (string) */
	{ __LINE__, CODE(0xa5), REGS([DECODE_RSI] = SI, [DECODE_RDI] = DI),
	  .n_access = 2, ACC({ DI, 4, ST, INT, IMP }, { SI, 4, LD, INT, IMP }) },
	/* movsd (string) with DF=1: first element still at rsi/rdi */
	{ __LINE__, CODE(0xa5), REGS([DECODE_RSI] = SI, [DECODE_RDI] = DI), .rflags = 0x400,
	  .n_access = 2, ACC({ DI, 4, ST, INT, IMP }, { SI, 4, LD, INT, IMP }) },
	/* fs movsb: segment override applies to the source only */
	{ __LINE__, CODE(0x64, 0xa4), REGS([DECODE_RSI] = 0x10, [DECODE_RDI] = DI), .fs_base = FSB,
	  .n_access = 2, ACC({ DI, 1, ST, INT, IMP }, { FSB + 0x10, 1, LD, INT, IMP }) },
	/* rep movsb with a 67 prefix: ecx counts (0 here), no access */
	{ __LINE__, CODE(0x67, 0xf3, 0xa4), REGS([DECODE_RSI] = SI, [DECODE_RDI] = DI,
					      [DECODE_RCX] = 0x100000000ull),
	  .n_access = 0, .flags = REP },
	/* rep movsb with a 67 prefix: esi/edi addresses wrap at 32 bits */
	{ __LINE__, CODE(0x67, 0xf3, 0xa4), REGS([DECODE_RSI] = 0x100000010ull,
					      [DECODE_RDI] = 0x100000020ull, [DECODE_RCX] = 1),
	  .n_access = 2, ACC({ 0x20, 1, ST, INT, IMP }, { 0x10, 1, LD, INT, IMP }), .flags = REP },
	/* lodsb */
	{ __LINE__, CODE(0xac), REGS([DECODE_RSI] = SI),
	  .n_access = 1, ACC({ SI, 1, LD, INT, IMP }) },
	/* repne scasb */
	{ __LINE__, CODE(0xf2, 0xae), REGS([DECODE_RDI] = DI, [DECODE_RCX] = 3),
	  .n_access = 1, ACC({ DI, 1, LD, INT, IMP }), .flags = REP },
	/* xlatb: [rbx + al] */
	{ __LINE__, CODE(0xd7), REGS([DECODE_RBX] = XB, [DECODE_RAX] = 0x1234),
	  .n_access = 1, ACC({ XB + 0x34, 1, LD, INT, IMP }) },

	/* --- read-modify-write --- */
	/* add [rax], ebx */
	{ __LINE__, CODE(0x01, 0x18), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 4, RMW, INT, 0 }) },
	/* xchg [rax], rbx: locked without the prefix */
	{ __LINE__, CODE(0x48, 0x87, 0x18), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 8, RMW, INT, 0 }), .flags = LOCKED },
	/* xchg rbx, rax: registers only, not locked */
	{ __LINE__, CODE(0x48, 0x87, 0xc3), .n_access = 0 },
	/* lock cmpxchg [rdi], rcx (conditional write of a read operand) */
	{ __LINE__, CODE(0xf0, 0x48, 0x0f, 0xb1, 0x0f), REGS([DECODE_RDI] = DI),
	  .n_access = 1, ACC({ DI, 8, RMW, INT, 0 }), .flags = LOCKED },
	/* lock xadd [rax], ecx */
	{ __LINE__, CODE(0xf0, 0x0f, 0xc1, 0x08), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 4, RMW, INT, 0 }), .flags = LOCKED },
	/* lock cmpxchg16b [rax] */
	{ __LINE__, CODE(0xf0, 0x48, 0x0f, 0xc7, 0x08), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 16, RMW, INT, 0 }), .flags = LOCKED },
	/* bts [rax], rcx: register bit offset 130 selects qword 2 */
	{ __LINE__, CODE(0x48, 0x0f, 0xab, 0x08), REGS([DECODE_RAX] = XA, [DECODE_RCX] = 130),
	  .n_access = 1, ACC({ XA + 16, 8, RMW, INT, 0 }) },
	/* bt dword ptr [rax], ecx: offset -1 selects the dword below */
	{ __LINE__, CODE(0x0f, 0xa3, 0x08), REGS([DECODE_RAX] = XA, [DECODE_RCX] = 0xffffffffu),
	  .n_access = 1, ACC({ XA - 4, 4, LD, INT, 0 }) },
	/* cmovz eax, [rbx]: the load happens whatever the condition */
	{ __LINE__, CODE(0x0f, 0x44, 0x03), REGS([DECODE_RBX] = XB),
	  .n_access = 1, ACC({ XB, 4, LD, INT, 0 }) },

	/* --- floating point and vectors --- */
	/* movss [rax], xmm0 */
	{ __LINE__, CODE(0xf3, 0x0f, 0x11, 0x00), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 4, ST, F32, 0 }) },
	/* movsd [rax], xmm0 (SSE) */
	{ __LINE__, CODE(0xf2, 0x0f, 0x11, 0x00), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 8, ST, F64, 0 }) },
	/* movsd xmm1, [rax] */
	{ __LINE__, CODE(0xf2, 0x0f, 0x10, 0x08), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 8, LD, F64, 0 }) },
	/* movaps [rax], xmm1 */
	{ __LINE__, CODE(0x0f, 0x29, 0x08), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 16, ST, F32, 0 }) },
	/* movapd xmm1, [rax] */
	{ __LINE__, CODE(0x66, 0x0f, 0x28, 0x08), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 16, LD, F64, 0 }) },
	/* movups xmm1, [rax] */
	{ __LINE__, CODE(0x0f, 0x10, 0x08), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 16, LD, F32, 0 }) },
	/* addsd xmm0, [rax] */
	{ __LINE__, CODE(0xf2, 0x0f, 0x58, 0x00), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 8, LD, F64, 0 }) },
	/* cvtss2sd xmm0, dword ptr [rax]: source is F32 */
	{ __LINE__, CODE(0xf3, 0x0f, 0x5a, 0x00), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 4, LD, F32, 0 }) },
	/* cvtsi2sd xmm0, dword ptr [rax]: source is INT */
	{ __LINE__, CODE(0xf2, 0x0f, 0x2a, 0x00), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 4, LD, INT, 0 }) },
	/* fld dword ptr [rax] */
	{ __LINE__, CODE(0xd9, 0x00), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 4, LD, F32, 0 }) },
	/* vmovups [rax], ymm1 */
	{ __LINE__, CODE(0xc5, 0xfc, 0x11, 0x08), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 32, ST, F32, 0 }) },
	/* vmovdqu [rax], ymm2 */
	{ __LINE__, CODE(0xc5, 0xfe, 0x7f, 0x10), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 32, ST, INT, 0 }) },
	/* vmaskmovps [rax], ymm1, ymm2 */
	{ __LINE__, CODE(0xc4, 0xe2, 0x75, 0x2e, 0x10), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 32, ST, F32, MSK }) },
	/* vpmaskmovd [rax], ymm1, ymm2 */
	{ __LINE__, CODE(0xc4, 0xe2, 0x75, 0x8e, 0x10), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 32, ST, INT, MSK }) },
	/* maskmovdqu xmm0, xmm1: implicit [rdi] */
	{ __LINE__, CODE(0x66, 0x0f, 0xf7, 0xc1), REGS([DECODE_RDI] = DI),
	  .n_access = 1, ACC({ DI, 16, ST, INT, IMP | MSK }) },
	/* vmovups zmmword ptr [rax]{k1}, zmm1 (EVEX) */
	{ __LINE__, CODE(0x62, 0xf1, 0x7c, 0x49, 0x11, 0x08), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 64, ST, F32, MSK }) },
	/* vmovups zmmword ptr [rax+0x40]{k1}, zmm1: disp8*N compressed displacement */
	{ __LINE__, CODE(0x62, 0xf1, 0x7c, 0x49, 0x11, 0x48, 0x01), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA + 0x40, 64, ST, F32, MSK }) },
	/* vmovaps zmmword ptr [rax], zmm1 (EVEX, no mask) */
	{ __LINE__, CODE(0x62, 0xf1, 0x7c, 0x48, 0x29, 0x08), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 64, ST, F32, 0 }) },
	/* vmovdqu32 zmm0{k1}{z}, [rax]: masked load */
	{ __LINE__, CODE(0x62, 0xf1, 0x7e, 0xc9, 0x6f, 0x00), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 64, LD, INT, MSK }) },
	/* vaddps zmm0, zmm1, [rax]{1to16}: broadcast reads one element */
	{ __LINE__, CODE(0x62, 0xf1, 0x74, 0x58, 0x58, 0x00), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 4, LD, F32, 0 }) },
	/* vpgatherdd ymm0, [rax+ymm1*4], ymm2: VSIB */
	{ __LINE__, CODE(0xc4, 0xe2, 0x6d, 0x90, 0x04, 0x88), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ 0, 4, LD, INT, UNK | MSK }) },
	/* vpscatterdd [rax+zmm1*4]{k1}, zmm0 */
	{ __LINE__, CODE(0x62, 0xf2, 0x7d, 0x49, 0xa0, 0x04, 0x88), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ 0, 4, ST, INT, UNK | MSK }) },
	/* fxsave [rax]: 512 bytes */
	{ __LINE__, CODE(0x0f, 0xae, 0x00), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 512, ST, INT, 0 }) },

	/* --- no data access --- */
	/* lea rax, [rbx+rcx*2+8] */
	{ __LINE__, CODE(0x48, 0x8d, 0x44, 0x4b, 0x08), REGS([DECODE_RBX] = XB) },
	/* prefetcht0 [rax] */
	{ __LINE__, CODE(0x0f, 0x18, 0x08), REGS([DECODE_RAX] = XA) },
	/* nop dword ptr [rax] */
	{ __LINE__, CODE(0x0f, 0x1f, 0x00), REGS([DECODE_RAX] = XA) },
	/* clflush [rax] */
	{ __LINE__, CODE(0x0f, 0xae, 0x38), REGS([DECODE_RAX] = XA) },

	/* --- control flow and NO_STEP --- */
	/* jmp rel8 */
	{ __LINE__, CODE(0xeb, 0x10), .flags = BR },
	/* jz rel8 */
	{ __LINE__, CODE(0x74, 0x10), .flags = BR | DECODE_F_COND },
	/* jne rel32 */
	{ __LINE__, CODE(0x0f, 0x85, 0x2c, 0x01, 0x00, 0x00), .flags = BR | DECODE_F_COND },
	/* loop rel8 */
	{ __LINE__, CODE(0xe2, 0x10), REGS([DECODE_RCX] = 2), .flags = BR | DECODE_F_COND },
	/* ret 0x10 */
	{ __LINE__, CODE(0xc2, 0x10, 0x00), REGS([DECODE_RSP] = SP),
	  .n_access = 1, ACC({ SP, 8, LD, INT, IMP }), .flags = BR | RET | STK },
	/* jmp qword ptr [rax] */
	{ __LINE__, CODE(0xff, 0x20), REGS([DECODE_RAX] = XA),
	  .n_access = 1, ACC({ XA, 8, LD, INT, 0 }), .flags = BR },
	/* syscall */
	{ __LINE__, CODE(0x0f, 0x05), .flags = NOSTEP },
	/* int3 */
	{ __LINE__, CODE(0xcc), .flags = NOSTEP },
	/* int 0x80 */
	{ __LINE__, CODE(0xcd, 0x80), .flags = NOSTEP },
	/* ud2 */
	{ __LINE__, CODE(0x0f, 0x0b), .flags = NOSTEP },
	/* hlt */
	{ __LINE__, CODE(0xf4), .flags = NOSTEP },
	/* xbegin rel32 */
	{ __LINE__, CODE(0xc7, 0xf8, 0x00, 0x00, 0x00, 0x00), .flags = NOSTEP },
	/* cpuid: safe to step */
	{ __LINE__, CODE(0x0f, 0xa2) },

	/* --- undecodable --- */
	/* push es: invalid in 64-bit mode */
	{ __LINE__, CODE(0x06), .rc = -EILSEQ },
	/* fifteen 0x66 prefixes and no opcode */
	{ __LINE__, CODE(0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
			 0x66, 0x66, 0x66, 0x66), .rc = -EILSEQ },
};

/* Rows are decoded from here: 64-byte aligned so no row straddles a page. */
static uint8_t code_buf[64] __attribute__((aligned(64)));

static void run_table(void)
{
	size_t i;
	unsigned a;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct decode_regs regs;
		struct decode_insn out;
		uint64_t pc = (uint64_t)(uintptr_t)code_buf;
		int rc;

		memset(code_buf, 0xcc, sizeof(code_buf));
		memcpy(code_buf, r->code, r->len);
		memset(&regs, 0, sizeof(regs));
		memcpy(regs.gpr, r->gpr, sizeof(regs.gpr));
		regs.rip = pc;
		regs.rflags = r->rflags ? r->rflags : 0x202;
		regs.fs_base = r->fs_base;
		regs.gs_base = r->gs_base;

		rc = decode_at(pc, &regs, &out);
		if (rc != r->rc) {
			FAIL(r->line, "decode_at returned %d, expected %d", rc, r->rc);
			continue;
		}
		if (rc < 0)
			continue;
		const char *mn = ZydisMnemonicGetString((ZydisMnemonic)out.mnemonic);
		CHECK(r->line, out.pc == pc, "%s: pc %#llx", mn, (unsigned long long)out.pc);
		CHECK(r->line, out.len == r->len, "%s: len %u, expected %u", mn, out.len, r->len);
		CHECK(r->line, out.flags == r->flags, "%s: flags %#x, expected %#x", mn,
		      out.flags, r->flags);
		if (out.n_access != r->n_access) {
			FAIL(r->line, "%s: n_access %u, expected %u", mn, out.n_access, r->n_access);
			continue;
		}
		for (a = 0; a < r->n_access; a++) {
			const struct exp_acc *e = &r->acc[a];
			const struct decode_access *g = &out.access[a];
			uint64_t want = e->addr + ((r->pcrel >> a) & 1 ? pc : 0);

			CHECK(r->line, g->addr == want, "%s: access %u addr %#llx, expected %#llx",
			      mn, a, (unsigned long long)g->addr, (unsigned long long)want);
			CHECK(r->line, g->len == e->len, "%s: access %u len %u, expected %u", mn, a,
			      g->len, e->len);
			CHECK(r->line, g->kind == e->kind, "%s: access %u kind %u, expected %u", mn,
			      a, g->kind, e->kind);
			CHECK(r->line, g->elem == e->elem, "%s: access %u elem %u, expected %u", mn,
			      a, g->elem, e->elem);
			CHECK(r->line, g->flags == e->flags, "%s: access %u flags %#x, expected %#x",
			      mn, a, g->flags, e->flags);
		}
	}
}

/* ------------------------------------------------------------------ */
/* decode_find_prev                                                   */

/* A small function: offsets of each instruction start. */
static const uint8_t fn_code[] = {
	0x55,                         /*  0: push rbp */
	0x48, 0x89, 0xe5,             /*  1: mov rbp, rsp */
	0x48, 0x8b, 0x44, 0xc8, 0x10, /*  4: mov rax, [rax+rcx*8+0x10] */
	0x0f, 0x1f, 0x44, 0x00, 0x00, /*  9: nop dword ptr [rax+rax] */
	0x5d,                         /* 14: pop rbp */
	0xc3,                         /* 15: ret */
	0x06,                         /* 16: invalid in 64-bit mode */
	0x90,                         /* 17: nop */
};
static uint8_t fn_buf[64] __attribute__((aligned(64)));

static const uint8_t add_m_rbx[] = { 0x48, 0x01, 0x18 };             /* add [rax], rbx */
static const uint8_t mov_store[] = { 0x48, 0x89, 0x54, 0xc8, 0x10 }; /* mov [rax+rcx*8+0x10], rdx */
static const uint8_t nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };      /* nop dword ptr [rax+rax] */

/* A cache over zeroed memory of its own, as a thread's arena gives it,
 * backed by shared (NULL: none); the memory to free after, NULL (a failed
 * check) when there is none. */
static void *zcache_fresh(struct decode_zcache *zc, struct decode_zshared *shared)
{
	void *zmem = calloc(1, DECODE_ZCACHE_MEM_SIZE);
	CHECK(__LINE__, zmem != NULL, "no memory for a decode cache");
	if (zmem)
		decode_zcache_init(zc, zmem, shared);
	return zmem;
}

/* A shared cache over zeroed memory; the memory to free after. */
static void *zshared_fresh(struct decode_zshared *zs)
{
	void *mem = calloc(1, DECODE_ZSHARED_MEM_SIZE);
	CHECK(__LINE__, mem != NULL, "no memory for a shared decode cache");
	if (mem)
		decode_zshared_init(zs, mem);
	return mem;
}

/* decode_at_zydis_cached: a hit gives what decoding gives, addresses from
 * the registers of this call; a run forgets what the last decoded. */
static void test_zcache(void)
{
	struct decode_zcache zc = {0};
	static uint8_t code[64];
	uint64_t pc = (uint64_t)(uintptr_t)code;
	struct decode_regs regs;
	struct decode_insn in, ref;
	const struct decode_zydis *z;
	struct decode_zydis zref;

	void *zmem = zcache_fresh(&zc, NULL);
	if (!zmem)
		return;
	memset(&regs, 0, sizeof(regs));
	memcpy(code, mov_store, sizeof(mov_store)); /* mov [rax+rcx*8+0x10], rdx */
	decode_zcache_begin(&zc);
	regs.gpr[DECODE_RAX] = 0x1000;
	regs.gpr[DECODE_RCX] = 2;
	int rc = decode_at_zydis_cached(&zc, pc, &regs, &in, &z);
	CHECK(__LINE__, rc == 0 && in.n_access == 1 && in.access[0].addr == 0x1020 &&
			    zc.misses == 1 && zc.hits == 0,
	      "first: rc %d n %u addr %#llx misses %llu hits %llu", rc, in.n_access,
	      (unsigned long long)in.access[0].addr, (unsigned long long)zc.misses,
	      (unsigned long long)zc.hits);
	regs.gpr[DECODE_RAX] = 0x2000; /* a later iteration: the same code, new registers */
	rc = decode_at_zydis_cached(&zc, pc, &regs, &in, &z);
	CHECK(__LINE__, rc == 0 && in.access[0].addr == 0x2020 && zc.hits == 1,
	      "hit: rc %d addr %#llx hits %llu", rc, (unsigned long long)in.access[0].addr,
	      (unsigned long long)zc.hits);
	rc = decode_at_zydis(pc, &regs, &ref, &zref);
	CHECK(__LINE__, rc == 0 && memcmp(&in, &ref, sizeof(in)) == 0 &&
			    memcmp(&z->insn, &zref.insn, sizeof(zref.insn)) == 0 &&
			    memcmp(z->ops, zref.ops, sizeof(zref.ops)) == 0,
	      "a hit differs from decoding (rc %d)", rc);
	/* New code at the same pc: the next run decodes it. */
	memcpy(code, add_m_rbx, sizeof(add_m_rbx)); /* add [rax], rbx */
	decode_zcache_begin(&zc);
	rc = decode_at_zydis_cached(&zc, pc, &regs, &in, &z);
	CHECK(__LINE__, rc == 0 && in.len == sizeof(add_m_rbx) && in.access[0].addr == 0x2000 &&
			    in.access[0].kind == DECODE_RMW && zc.misses == 2,
	      "new run: rc %d len %u addr %#llx kind %u misses %llu", rc, in.len,
	      (unsigned long long)in.access[0].addr, in.access[0].kind,
	      (unsigned long long)zc.misses);
	/* A generation that wraps forgets every slot too. */
	zc.gen = UINT32_MAX;
	memcpy(code, mov_store, sizeof(mov_store));
	decode_zcache_begin(&zc);
	rc = decode_at_zydis_cached(&zc, pc, &regs, &in, &z);
	CHECK(__LINE__, rc == 0 && in.len == sizeof(mov_store) && zc.gen == 1 && zc.misses == 3,
	      "wrap: rc %d len %u gen %u misses %llu", rc, in.len, zc.gen,
	      (unsigned long long)zc.misses);
	/* A kept decoding tells the prev cache where it ends, once a run, so a
	 * note the direct-mapped prev cache lost comes back with a hit. */
	static struct decode_cache prev; /* 64 KiB: off the stack */
	uint64_t known = 0;
	memset(&prev, 0, sizeof(prev));
	zc.prev = &prev;
	decode_zcache_begin(&zc);
	rc = decode_at_zydis_cached(&zc, pc, &regs, &in, &z);
	CHECK(__LINE__, rc == 0 && zc.hits == 2 &&
			    decode_cache_prev(&prev, pc + sizeof(mov_store), &known) == 0 && known == pc,
	      "a hit's note: rc %d hits %llu known %#llx", rc, (unsigned long long)zc.hits,
	      (unsigned long long)known);
	free(zmem);
}

/* Code changed at one byte, its length the same: the next run must decode
 * it anew.  Rows of lengths 1-11 and a byte at the start, middle or end,
 * for any way of comparing the kept bytes (an inline compare by
 * overlapping words was tried and measured no faster: 2026-12-03). */
static const struct {
	int line;
	uint8_t len;
	uint8_t code[15];
	uint8_t at; /* the byte that changes (xor 0x08: another register or displacement) */
} zcache_change_rows[] = {
	{__LINE__, 1, {0x50}, 0},                                         /* push rax -> push rcx... */
	{__LINE__, 3, {0x48, 0x89, 0x18}, 2},                             /* mov [rax], rbx */
	{__LINE__, 5, {0x48, 0x89, 0x54, 0xc8, 0x10}, 4},                 /* mov [rax+rcx*8+0x10], rdx */
	{__LINE__, 5, {0x48, 0x89, 0x54, 0xc8, 0x10}, 2},
	{__LINE__, 7, {0x48, 0x89, 0x98, 0x00, 0x01, 0x00, 0x00}, 3},     /* mov [rax+0x100], rbx */
	{__LINE__, 10, {0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}, 9},          /* movabs rax, imm64 */
	{__LINE__, 10, {0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}, 5},
	{__LINE__, 11, {0x48, 0xc7, 0x80, 0, 1, 0, 0, 1, 2, 3, 4}, 10},   /* mov qword [rax+0x100], imm32 */
	{__LINE__, 11, {0x48, 0xc7, 0x80, 0, 1, 0, 0, 1, 2, 3, 4}, 3},
};

static void test_zcache_change(void)
{
	struct decode_zcache zc = {0};
	static uint8_t code[64];
	uint64_t pc = (uint64_t)(uintptr_t)code;
	struct decode_regs regs;
	struct decode_insn in;
	const struct decode_zydis *z;

	memset(&regs, 0, sizeof(regs));
	for (size_t i = 0; i < sizeof(zcache_change_rows) / sizeof(zcache_change_rows[0]); i++) {
		void *zmem = zcache_fresh(&zc, NULL);
		if (!zmem)
			return;
		memset(code, 0x90, sizeof(code));
		memcpy(code, zcache_change_rows[i].code, zcache_change_rows[i].len);
		decode_zcache_begin(&zc);
		int rc = decode_at_zydis_cached(&zc, pc, &regs, &in, &z);
		decode_zcache_begin(&zc); /* unchanged: a hit */
		rc |= decode_at_zydis_cached(&zc, pc, &regs, &in, &z);
		CHECK(zcache_change_rows[i].line, rc == 0 && in.len == zcache_change_rows[i].len &&
							  zc.hits == 1 && zc.misses == 1,
		      "unchanged: rc %d len %u hits %llu misses %llu", rc, in.len,
		      (unsigned long long)zc.hits, (unsigned long long)zc.misses);
		code[zcache_change_rows[i].at] ^= 0x08;
		decode_zcache_begin(&zc);
		rc = decode_at_zydis_cached(&zc, pc, &regs, &in, &z);
		CHECK(zcache_change_rows[i].line, rc == 0 && zc.misses == 2 && zc.hits == 1,
		      "byte %u changed: rc %d hits %llu misses %llu (want a miss)",
		      zcache_change_rows[i].at, rc, (unsigned long long)zc.hits,
		      (unsigned long long)zc.misses);
		free(zmem);
	}
}

/* A window runs ahead through ~40-200 instructions: a second pass over
 * 100 of them finds them all but a few (the old direct-mapped 128 slots
 * kept about two thirds: conflicts). */
static void test_zcache_window(void)
{
	struct decode_zcache zc = {0};
	static uint8_t code[512] __attribute__((aligned(512))); /* within one page */
	enum { N = 100 };
	struct decode_regs regs;
	struct decode_insn in;
	const struct decode_zydis *z;

	void *zmem = zcache_fresh(&zc, NULL);
	if (!zmem)
		return;
	memset(&regs, 0, sizeof(regs));
	for (int i = 0; i < N; i++)
		memcpy(code + 5 * i, nop5, sizeof(nop5));
	for (int pass = 0; pass < 2; pass++) {
		decode_zcache_begin(&zc);
		for (int i = 0; i < N; i++)
			if (decode_at_zydis_cached(&zc, (uint64_t)(uintptr_t)(code + 5 * i), &regs, &in,
						   &z) < 0)
				CHECK(__LINE__, 0, "nop5 %d does not decode", i);
	}
	CHECK(__LINE__, zc.misses >= N && zc.hits >= N - 5,
	      "second pass: %llu hits of %d (misses %llu)", (unsigned long long)zc.hits, N,
	      (unsigned long long)zc.misses);
	free(zmem);
}

/* A process's shared cache of 512 sets is turned on when a thread's shadow
 * says it would save misses (decode_zcache.h).  Each row's windows run
 * over a loop of `insns` distinct 5-byte nops, one run a pass, with
 * `caches` threads' caches taking turns.  A pass over more pcs than a
 * thread's 256 slots misses every one of them (a cyclic walk past a set's
 * four ways evicts each before its reuse); the shared 2048 slots hold
 * 1,500 (Poisson 2.9 a set: ~18% of them in sets of more than four,
 * missed), so 1,500 saves ~80% of the lookups and turns it on, 100 saves
 * none, and 30,000 miss in both (the misses are not halved).  It is asked
 * every 256 shadowed lookups (1 in 4: ~375 a pass of 1,500) once there
 * are 512, over all since the cache began: in pass 3 of 1,500, where the
 * cache has missed ~2.7 passes and the shadow ~1 + 1.7 * 0.18.  The first
 * cache gets there first, and from then on every cache's misses are
 * served (until 2026-12-04 each grew its own, two a process: the third
 * went on missing every pcs). */
static const struct {
	int line;
	unsigned insns, caches;
	int turned_on[3];  /* each cache's, after the passes */
	double miss_after; /* each cache's lookups Zydis decodes in a last pass, at most */
} zcache_grow_rows[] = {
	{__LINE__, 100, 1, {0}, 0.0},
	{__LINE__, 1500, 1, {1}, 0.30},
	{__LINE__, 30000, 1, {0}, 1.0},
	{__LINE__, 1500, 3, {1, 0, 0}, 0.30},
};

static int zcache_pass(struct decode_zcache *zc, const uint8_t *code, unsigned insns,
		       unsigned len)
{
	struct decode_regs regs;
	struct decode_insn in;
	const struct decode_zydis *z;
	memset(&regs, 0, sizeof(regs));
	decode_zcache_begin(zc);
	for (unsigned i = 0; i < insns; i++)
		if (decode_at_zydis_cached(zc, (uint64_t)(uintptr_t)(code + len * i), &regs, &in, &z) < 0 ||
		    in.len != len || z->insn.length != len)
			return -1;
	return 0;
}

/* 1 where the kernel makes pages present in bulk (prefault.h). */
static int prefault_works(void)
{
	static int known = -1;
	if (known < 0) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		known = p != MAP_FAILED && prefault_range(p, 4096) == 0;
		if (p != MAP_FAILED)
			munmap(p, 4096);
	}
	return known;
}

static void test_zcache_grow(void)
{
	enum { MAX_INSNS = 30000, PASSES = 12, CACHES = 3 };
	uint8_t *code = malloc(5 * MAX_INSNS);
	struct decode_zcache zc[CACHES];
	struct decode_zshared zs;
	void *zmem[CACHES] = {0}, *smem = NULL;
	CHECK(__LINE__, code != NULL, "no memory for code");
	if (!code)
		return;
	for (int i = 0; i < MAX_INSNS; i++)
		memcpy(code + 5 * i, nop5, sizeof(nop5));
	int can_prefault = prefault_works(); /* (its probe a page, before any count) */
	for (size_t r = 0; r < sizeof(zcache_grow_rows) / sizeof(zcache_grow_rows[0]); r++) {
		unsigned n = zcache_grow_rows[r].insns, nc = zcache_grow_rows[r].caches;
		int line = zcache_grow_rows[r].line;
		if (!(smem = zshared_fresh(&zs)))
			goto out;
		for (unsigned c = 0; c < nc; c++)
			if (!(zmem[c] = zcache_fresh(&zc[c], &zs)))
				goto out;
		int passes = n > 10000 ? 4 : PASSES; /* a 30,000 pass has ~7 periods */
		unsigned long made_present = prefault_pages();
		for (int p = 0; p < passes; p++)
			for (unsigned c = 0; c < nc; c++)
				if (zcache_pass(&zc[c], code, n, 5) < 0)
					CHECK(line, 0, "a nop5 does not decode as one");
		/* Turned on, its tags are made present at once (prefault.h), where
		 * the kernel can; left off, none of them. */
		unsigned long want_present = 0;
		size_t tags = sizeof(struct decode_zshared_tag) * DECODE_ZSHARED_SLOTS;
		if (zcache_grow_rows[r].turned_on[0] && can_prefault)
			want_present = (((uintptr_t)smem + tags + 4095) >> 12) - ((uintptr_t)smem >> 12);
		CHECK(line, prefault_pages() - made_present == want_present,
		      "%u pcs: %lu pages made present, want %lu", n, prefault_pages() - made_present,
		      want_present);
		for (unsigned c = 0; c < nc; c++) {
			CHECK(line, decode_zcache_grown(&zc[c]) == zcache_grow_rows[r].turned_on[c],
			      "cache %u of %u pcs: turned on %d, want %d", c, n,
			      decode_zcache_grown(&zc[c]), zcache_grow_rows[r].turned_on[c]);
			uint64_t m0 = zc[c].misses - zc[c].shared_hits;
			zcache_pass(&zc[c], code, n, 5);
			double miss = (double)(zc[c].misses - zc[c].shared_hits - m0) / n;
			CHECK(line, miss <= zcache_grow_rows[r].miss_after,
			      "cache %u, %u pcs: a last pass decoded %.2f, want at most %.2f", c, n,
			      miss, zcache_grow_rows[r].miss_after);
		}
		for (unsigned c = 0; c < nc; c++) {
			free(zmem[c]);
			zmem[c] = NULL;
		}
		free(smem);
		smem = NULL;
	}
	/* In a fork's child a slot another thread was writing (seq odd) is
	 * freed, or no thread could ever write it again. */
	struct decode_zshared *ps = decode_zshared_process();
	CHECK(__LINE__, ps != NULL, "no process shared cache");
	if (ps) {
		unsigned on = ps->on;
		ps->on = 1;
		ps->tag[5] = (struct decode_zshared_tag){.pc = 0x1000, .seq = 7, .len = 3};
		ps->tag[6] = (struct decode_zshared_tag){.pc = 0x2000, .seq = 8, .len = 3};
		decode_zcache_postfork_child();
		CHECK(__LINE__, ps->tag[5].seq == 8 && ps->tag[5].len == 0 && ps->tag[6].seq == 8 &&
					ps->tag[6].len == 3,
		      "postfork: seq %u len %u, seq %u len %u", ps->tag[5].seq, ps->tag[5].len,
		      ps->tag[6].seq, ps->tag[6].len);
		ps->tag[5] = ps->tag[6] = (struct decode_zshared_tag){0};
		ps->on = on;
	}
out:
	for (unsigned c = 0; c < CACHES; c++)
		free(zmem[c]);
	free(smem);
	free(code);
}

/* The shared cache read in place (decode_zcache.h), step by step:
 * - while one run is inside, no other writes a shared slot;
 * - a lookup found in the shared cache is used where it is, not copied;
 * - a run that reuses a shared slot drops its own reference to it: with
 *   five pcs of one shared set (P first, so in way 0), a run that refers
 *   to P and then writes a fifth over way 0 must decode P anew, not take
 *   the fifth's decoding for it. */
static void test_zcache_inside(void)
{
	enum { N = 8192 };
	uint8_t *code = malloc(5 * N);
	struct decode_zshared zs;
	struct decode_zcache a, b;
	void *smem = zshared_fresh(&zs), *amem = NULL, *bmem = NULL;
	struct decode_regs regs;
	struct decode_insn in;
	const struct decode_zydis *z;
	CHECK(__LINE__, code != NULL, "no memory for code");
	if (!code || !smem || !(amem = zcache_fresh(&a, &zs)) || !(bmem = zcache_fresh(&b, &zs)))
		goto out;
	for (int i = 0; i < N; i++)
		memcpy(code + 5 * i, nop5, sizeof(nop5));
	memset(&regs, 0, sizeof(regs));
	zs.on = 1;
	uint64_t pcs[5];
	int found = 0;
	uint64_t set0 = 0;
	for (int i = 0; i < N && found < 5; i++) {
		uint64_t pc = (uint64_t)(uintptr_t)(code + 5 * i);
		uint64_t set = (pc * 0x9E3779B97F4A7C15ull) >> (64 - DECODE_ZCACHE_GROWN_BITS);
		if (found == 0)
			set0 = set;
		if (set == set0)
			pcs[found++] = pc;
	}
	CHECK(__LINE__, found == 5, "only %d pcs of one shared set in %d nops", found, N);
	if (found < 5)
		goto out;
	/* b is inside: a's new decodings are not written to the shared cache. */
	decode_zcache_enter(&b);
	decode_zcache_begin(&a);
	for (int k = 0; k < 4; k++)
		decode_at_zydis_cached(&a, pcs[k], &regs, &in, &z);
	unsigned kept = 0;
	for (unsigned i = 0; i < DECODE_ZSHARED_SLOTS; i++)
		kept += zs.tag[i].len != 0;
	CHECK(__LINE__, kept == 0 && zs.runs == 1, "another run inside: %u slots written, runs %u",
	      kept, zs.runs);
	decode_zcache_leave(&b);
	/* b is out: a's next run writes them (P in way 0, then 1-3). */
	memset(a.tag, 0, sizeof(struct decode_zcache_tag) * DECODE_ZCACHE_SLOTS); /* forgotten */
	decode_zcache_enter(&a);
	decode_zcache_begin(&a);
	for (int k = 0; k < 4; k++)
		decode_at_zydis_cached(&a, pcs[k], &regs, &in, &z);
	decode_zcache_leave(&a);
	uint64_t first = set0 * DECODE_ZCACHE_WAYS;
	CHECK(__LINE__, zs.tag[first].pc == pcs[0] && zs.tag[first + 3].pc == pcs[3],
	      "the shared set holds %#llx .. %#llx", (unsigned long long)zs.tag[first].pc,
	      (unsigned long long)zs.tag[first + 3].pc);
	/* b refers to P in place, then writes the fifth over way 0. */
	decode_zcache_enter(&b);
	decode_zcache_begin(&b);
	int rc = decode_at_zydis_cached(&b, pcs[0], &regs, &in, &z);
	CHECK(__LINE__, rc == 0 && b.shared_hits == 1 && z == &zs.slot[first].z && in.pc == pcs[0],
	      "P from the shared cache: rc %d, shared hits %llu, in place %d", rc,
	      (unsigned long long)b.shared_hits, z == &zs.slot[first].z);
	rc = decode_at_zydis_cached(&b, pcs[4], &regs, &in, &z);
	CHECK(__LINE__, rc == 0 && zs.tag[first].pc == pcs[4],
	      "the fifth not written over way 0: rc %d, way 0 holds %#llx", rc,
	      (unsigned long long)zs.tag[first].pc);
	rc = decode_at_zydis_cached(&b, pcs[0], &regs, &in, &z);
	CHECK(__LINE__, rc == 0 && in.pc == pcs[0] && z->form.in.pc == pcs[0],
	      "P after its slot was reused: decoded as %#llx, want %#llx", (unsigned long long)in.pc,
	      (unsigned long long)pcs[0]);
	decode_zcache_leave(&b);
	CHECK(__LINE__, zs.runs == 0, "runs %u after every run left", zs.runs);
out:
	free(amem);
	free(bmem);
	free(smem);
	free(code);
}

/* Two threads share a cache whose sets both fill: one runs 1,500 nops of
 * 5 bytes, the other 1,500 `mov [rax], rbx` of 3, so each slot is
 * written over and over with the other's code while the other reads it
 * in place.  A slot written under a reader would give a pc the other's
 * length; no slot may be written while another run is inside. */
struct zrace_arg {
	struct decode_zshared *zs;
	const uint8_t *code;
	unsigned len;
	int bad; /* passes whose decodings were wrong */
	uint64_t shared_hits;
};

static void *zrace_thread(void *p)
{
	struct zrace_arg *a = p;
	struct decode_zcache zc;
	void *zmem = calloc(1, DECODE_ZCACHE_MEM_SIZE);
	if (!zmem) {
		a->bad = -1;
		return NULL;
	}
	decode_zcache_init(&zc, zmem, a->zs);
	for (int pass = 0; pass < 200; pass++) {
		/* A pass in runs of 100 lookups, as handlers run: entered and
		 * left, 20 us apart, so each thread writes while the other is
		 * out and reads in place while it is in. */
		for (unsigned at = 0; at < 1500; at += 100) {
			decode_zcache_enter(&zc);
			if (zcache_pass(&zc, a->code + (size_t)a->len * at, 100, a->len) < 0)
				a->bad++;
			decode_zcache_leave(&zc);
			nanosleep(&(struct timespec){0, 20000}, NULL);
		}
	}
	a->shared_hits = zc.shared_hits;
	free(zmem);
	return NULL;
}

static void test_zcache_race(void)
{
	static const uint8_t mov3[] = {0x48, 0x89, 0x18}; /* mov [rax], rbx */
	struct decode_zshared zs;
	uint8_t *code5 = malloc(5 * 1500), *code3 = malloc(3 * 1500);
	void *smem = zshared_fresh(&zs);
	struct zrace_arg args[2] = {{&zs, code5, 5, 0, 0}, {&zs, code3, 3, 0, 0}};
	pthread_t th[2];
	CHECK(__LINE__, code5 && code3, "no memory for code");
	if (!code5 || !code3 || !smem)
		goto out;
	for (int i = 0; i < 1500; i++) {
		memcpy(code5 + 5 * i, nop5, 5);
		memcpy(code3 + 3 * i, mov3, 3);
	}
	zs.on = 1;
	for (int i = 0; i < 2; i++)
		CHECK(__LINE__, pthread_create(&th[i], NULL, zrace_thread, &args[i]) == 0, "pthread_create");
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 2; i++)
		CHECK(__LINE__, args[i].bad == 0 && args[i].shared_hits > 0,
		      "thread of %u-byte code: %d wrong passes, %llu shared hits", args[i].len,
		      args[i].bad, (unsigned long long)args[i].shared_hits);
out:
	free(smem);
	free(code5);
	free(code3);
}

static void test_find_prev(void)
{
	static struct decode_cache cache; /* 16 KiB: keep it off the stack */
	uint64_t fn = (uint64_t)(uintptr_t)fn_buf, prev = 0;
	int rc;

	memset(&cache, 0, sizeof(cache));
	memcpy(fn_buf, fn_code, sizeof(fn_code));

	rc = decode_find_prev(&cache, fn, fn + 9, &prev);
	CHECK(__LINE__, rc == 0 && prev == fn + 4, "find_prev(+9) rc %d prev +%lld", rc,
	      (long long)(prev - fn));
	CHECK(__LINE__, cache.hits == 0 && cache.misses == 1, "hits %llu misses %llu",
	      (unsigned long long)cache.hits, (unsigned long long)cache.misses);

	prev = 0;
	rc = decode_find_prev(&cache, fn, fn + 9, &prev);
	CHECK(__LINE__, rc == 0 && prev == fn + 4, "find_prev(+9) again rc %d prev +%lld", rc,
	      (long long)(prev - fn));
	CHECK(__LINE__, cache.hits == 1 && cache.misses == 1, "hits %llu misses %llu",
	      (unsigned long long)cache.hits, (unsigned long long)cache.misses);

	rc = decode_find_prev(&cache, fn, fn + 1, &prev);
	CHECK(__LINE__, rc == 0 && prev == fn, "find_prev(+1) rc %d prev +%lld", rc,
	      (long long)(prev - fn));
	rc = decode_find_prev(&cache, fn, fn + 16, &prev);
	CHECK(__LINE__, rc == 0 && prev == fn + 15, "find_prev(+16) rc %d prev +%lld", rc,
	      (long long)(prev - fn));

	/* ctx_pc inside mov rax, [...]: linear decoding overshoots */
	rc = decode_find_prev(&cache, fn, fn + 6, &prev);
	CHECK(__LINE__, rc == -ENOENT, "find_prev(+6) rc %d, expected -ENOENT", rc);
	/* the failure is cached too */
	uint64_t hits = cache.hits;
	rc = decode_find_prev(&cache, fn, fn + 6, &prev);
	CHECK(__LINE__, rc == -ENOENT && cache.hits == hits + 1,
	      "find_prev(+6) again rc %d hits %llu", rc, (unsigned long long)cache.hits);

	/* decoding stops at the invalid byte */
	rc = decode_find_prev(&cache, fn, fn + 18, &prev);
	CHECK(__LINE__, rc == -ENOENT, "find_prev(+18) rc %d, expected -ENOENT", rc);

	rc = decode_find_prev(&cache, fn, fn, &prev);
	CHECK(__LINE__, rc == -ENOENT, "find_prev(ctx == fn) rc %d", rc);
	rc = decode_find_prev(&cache, fn + 4, fn, &prev);
	CHECK(__LINE__, rc == -ENOENT, "find_prev(ctx < fn) rc %d", rc);
	rc = decode_find_prev(&cache, fn, fn + DECODE_MAX_SCAN + 1, &prev);
	CHECK(__LINE__, rc == -E2BIG, "find_prev(too far) rc %d, expected -E2BIG", rc);
}

/* ------------------------------------------------------------------ */
/* Page boundaries                                                    */

static void test_pages(void)
{
	static struct decode_cache cache;
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *base, buf[16];
	uint64_t boundary, prev = 0;
	struct decode_regs regs;
	struct decode_insn out;
	int rc, i;

	base = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		FAIL(__LINE__, "mmap: %s", strerror(errno));
		return;
	}
	boundary = (uint64_t)(uintptr_t)(base + pg);
	memset(base, 0xcc, 2 * pg);
	mprotect(base + pg, pg, PROT_NONE);
	memset(&regs, 0, sizeof(regs));
	regs.gpr[DECODE_RAX] = XA;

	/* add [rax], rbx ending exactly at the PROT_NONE page */
	memcpy(base + pg - 3, add_m_rbx, 3);
	rc = decode_at(boundary - 3, &regs, &out);
	CHECK(__LINE__, rc == 0 && out.len == 3 && out.n_access == 1 &&
		       out.access[0].addr == XA && out.access[0].kind == DECODE_RMW,
	      "insn ending at boundary: rc %d len %u n %u", rc, out.len, out.n_access);

	rc = peek_read(boundary, buf, 1);
	CHECK(__LINE__, rc == -EFAULT, "read of PROT_NONE page: %d", rc);
	rc = peek_read(boundary - 2, buf, 4);
	CHECK(__LINE__, rc == -EFAULT, "read straddling into PROT_NONE page: %d", rc);
	rc = peek_read(boundary - 3, buf, 3);
	CHECK(__LINE__, rc == 0 && buf[0] == 0x48 && buf[2] == 0x18, "read before boundary: %d",
	      rc);
	rc = peek_read(0, buf, 8);
	CHECK(__LINE__, rc == -EFAULT, "read of NULL: %d", rc);

	/* mov [rax+rcx*8+0x10], rdx cut by the boundary: -EFAULT, no fault */
	memcpy(base + pg - 2, mov_store, 2);
	rc = decode_at(boundary - 2, &regs, &out);
	CHECK(__LINE__, rc == -EFAULT, "insn cut by PROT_NONE page: rc %d", rc);

	/* same instruction across two readable pages: the process_vm_readv path */
	mprotect(base + pg, pg, PROT_READ | PROT_WRITE);
	memcpy(base + pg, mov_store + 2, 3);
	regs.gpr[DECODE_RCX] = 3;
	rc = decode_at(boundary - 2, &regs, &out);
	CHECK(__LINE__, rc == 0 && out.len == 5 && out.n_access == 1 &&
		       out.access[0].addr == XA + 3 * 8 + 0x10 && out.access[0].kind == DECODE_STORE,
	      "insn across pages: rc %d len %u n %u", rc, out.len, out.n_access);

	/* find_prev over 5-byte nops, one straddling the boundary */
	for (i = -12; i < 20; i += 5)
		memcpy(base + pg + i, nop5, 5);
	memset(&cache, 0, sizeof(cache));
	rc = decode_find_prev(&cache, boundary - 12, boundary + 8, &prev);
	CHECK(__LINE__, rc == 0 && prev == boundary + 3, "find_prev across pages: rc %d prev %lld",
	      rc, (long long)(prev - boundary));
	/* the straddling nop is itself found */
	rc = decode_find_prev(&cache, boundary - 12, boundary + 3, &prev);
	CHECK(__LINE__, rc == 0 && prev == boundary - 2,
	      "find_prev of straddling insn: rc %d prev %lld", rc, (long long)(prev - boundary));

	/* straddling nop cut by a PROT_NONE page: overshoot, not a fault */
	mprotect(base + pg, pg, PROT_NONE);
	rc = decode_find_prev(&cache, boundary - 12, boundary, &prev);
	CHECK(__LINE__, rc == -ENOENT, "find_prev to boundary, next page PROT_NONE: rc %d", rc);

	/* a wrong fn_start in an unreadable page: -EFAULT, no fault */
	mprotect(base + pg, pg, PROT_READ | PROT_WRITE);
	mprotect(base, pg, PROT_NONE);
	memset(&cache, 0, sizeof(cache));
	rc = decode_find_prev(&cache, boundary - 12, boundary + 8, &prev);
	CHECK(__LINE__, rc == -EFAULT, "find_prev from PROT_NONE page: rc %d", rc);

	munmap(base, 2 * pg);
}

/* ------------------------------------------------------------------ */
/* decode_regs_from_ucontext                                          */

static void __attribute__((noinline)) test_ucontext(void)
{
	static const struct { int greg, gpr; } map[] = {
		{ REG_RAX, DECODE_RAX }, { REG_RCX, DECODE_RCX }, { REG_RDX, DECODE_RDX },
		{ REG_RBX, DECODE_RBX }, { REG_RSP, DECODE_RSP }, { REG_RBP, DECODE_RBP },
		{ REG_RSI, DECODE_RSI }, { REG_RDI, DECODE_RDI }, { REG_R8, DECODE_R8 },
		{ REG_R9, DECODE_R9 },   { REG_R10, DECODE_R10 }, { REG_R11, DECODE_R11 },
		{ REG_R12, DECODE_R12 }, { REG_R13, DECODE_R13 }, { REG_R14, DECODE_R14 },
		{ REG_R15, DECODE_R15 },
	};
	ucontext_t uc;
	struct decode_regs r;
	struct decode_insn out;
	volatile int marker = 0;
	uint64_t sp_near = (uint64_t)(uintptr_t)&marker;
	size_t i;
	int rc;

	/* Synthetic context: each greg a distinct value. */
	memset(&uc, 0, sizeof(uc));
	for (i = 0; i < NGREG; i++)
		uc.uc_mcontext.gregs[i] = (greg_t)(0x1000 + i);
	decode_regs_from_ucontext(&uc, 0xf5, 0x65, &r);
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		CHECK(__LINE__, r.gpr[map[i].gpr] == 0x1000u + (unsigned)map[i].greg,
		      "gpr[%d] = %#llx, expected greg %d", map[i].gpr,
		      (unsigned long long)r.gpr[map[i].gpr], map[i].greg);
	CHECK(__LINE__, r.rip == 0x1000u + REG_RIP, "rip %#llx", (unsigned long long)r.rip);
	CHECK(__LINE__, r.rflags == 0x1000u + REG_EFL, "rflags %#llx",
	      (unsigned long long)r.rflags);
	CHECK(__LINE__, r.fs_base == 0xf5 && r.gs_base == 0x65, "fs/gs base");

	/* Real context from getcontext(): rsp is our stack, rip is in this
	 * function right after the call, and decodes. */
	memset(&uc, 0, sizeof(uc));
	if (getcontext(&uc) != 0) {
		FAIL(__LINE__, "getcontext: %s", strerror(errno));
		return;
	}
	decode_regs_from_ucontext(&uc, 0, 0, &r);
	CHECK(__LINE__, r.gpr[DECODE_RSP] == (uint64_t)uc.uc_mcontext.gregs[REG_RSP] &&
		       r.gpr[DECODE_RSP] - sp_near + 4096 < 8192,
	      "getcontext rsp %#llx, local at %#llx", (unsigned long long)r.gpr[DECODE_RSP],
	      (unsigned long long)sp_near);
	CHECK(__LINE__, r.gpr[DECODE_RBX] == (uint64_t)uc.uc_mcontext.gregs[REG_RBX] &&
		       r.gpr[DECODE_R12] == (uint64_t)uc.uc_mcontext.gregs[REG_R12] &&
		       r.gpr[DECODE_RBP] == (uint64_t)uc.uc_mcontext.gregs[REG_RBP],
	      "getcontext callee-saved registers");
	CHECK(__LINE__, r.rip > (uint64_t)(uintptr_t)test_ucontext &&
		       r.rip < (uint64_t)(uintptr_t)test_ucontext + 4096,
	      "getcontext rip %#llx not in test_ucontext at %#llx", (unsigned long long)r.rip,
	      (unsigned long long)(uintptr_t)test_ucontext);
	rc = decode_at(r.rip, &r, &out);
	CHECK(__LINE__, rc == 0 && out.len > 0, "decode_at(getcontext rip) rc %d", rc);
	(void)marker;
}

/* ------------------------------------------------------------------ */
/* Cost                                                               */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Median ns per call of decode_at at pc, over 101 batches. */
static double median_cost(uint64_t pc, const struct decode_regs *regs, int per_batch)
{
	enum { BATCHES = 101 };
	double t[BATCHES];
	struct decode_insn out;
	int b, i;

	for (b = 0; b < BATCHES; b++) {
		double t0 = now_ns();
		for (i = 0; i < per_batch; i++)
			decode_at(pc, regs, &out);
		t[b] = (now_ns() - t0) / per_batch;
	}
	qsort(t, BATCHES, sizeof(t[0]), cmp_double);
	return t[BATCHES / 2];
}

static void measure(void)
{
	static struct decode_cache cache;
	long pg = sysconf(_SC_PAGESIZE);
	struct decode_regs regs;
	uint64_t pc = (uint64_t)(uintptr_t)code_buf, prev;
	uint8_t *base;
	double t0, hit;
	int i;

	memset(&regs, 0, sizeof(regs));
	regs.gpr[DECODE_RAX] = XA;
	regs.gpr[DECODE_RCX] = 3;
	/* mov [rax+rcx*8+0x10], rdx */
	memcpy(code_buf, mov_store, 5);
	printf("decode_at, store in one page:       median %.1f ns/call\n",
	       median_cost(pc, &regs, 10000));

	base = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base != MAP_FAILED) {
		memcpy(base + pg - 2, mov_store, 5);
		printf("decode_at, store across two pages:  median %.1f ns/call\n",
		       median_cost((uint64_t)(uintptr_t)(base + pg - 2), &regs, 1000));
		munmap(base, 2 * pg);
	}

	memset(&cache, 0, sizeof(cache));
	memcpy(fn_buf, fn_code, sizeof(fn_code));
	decode_find_prev(&cache, (uint64_t)(uintptr_t)fn_buf, (uint64_t)(uintptr_t)fn_buf + 9,
			 &prev);
	t0 = now_ns();
	for (i = 0; i < 1000000; i++)
		decode_find_prev(&cache, (uint64_t)(uintptr_t)fn_buf,
				 (uint64_t)(uintptr_t)fn_buf + 9, &prev);
	hit = (now_ns() - t0) / 1000000;
	printf("decode_find_prev, cache hit:        mean   %.1f ns/call\n", hit);
}

/* What the sampler's look-ahead relies on: registers an instruction writes,
 * registers an access's address uses, and direct branch targets. */
#define R(x) (1u << DECODE_##x)
static const struct {
	int line;
	uint8_t code[15];
	uint8_t len;
	uint16_t regs_written, addr_regs0;
	int64_t target_off; /* branch_target - pc, 0: none */
} lookahead_rows[] = {
	/* add rax, 1 */
	{ __LINE__, {0x48, 0x83, 0xc0, 0x01}, 4, R(RAX), 0, 0 },
	/* mov [rdx+rax*4], ecx: writes no register, address from rdx and rax */
	{ __LINE__, {0x89, 0x0c, 0x82}, 3, 0, R(RDX) | R(RAX), 0 },
	/* mov al, 1: a byte register counts as its full register */
	{ __LINE__, {0xb0, 0x01}, 2, R(RAX), 0, 0 },
	/* push rbx: moves rsp; the stack slot's address uses rsp */
	{ __LINE__, {0x53}, 1, R(RSP), R(RSP), 0 },
	/* jne rel32 +0x12c: target = pc + 6 + 0x12c */
	{ __LINE__, {0x0f, 0x85, 0x2c, 0x01, 0x00, 0x00}, 6, 0, 0, 6 + 0x12c },
	/* jmp rel8 -2: a one-instruction loop */
	{ __LINE__, {0xeb, 0xfe}, 2, 0, 0, 0 - 0 },
	/* call rel32 0: target = next instruction; writes rsp */
	{ __LINE__, {0xe8, 0x00, 0x00, 0x00, 0x00}, 5, R(RSP), R(RSP), 5 },
	/* rep stosq: writes rdi and rcx, address from rdi */
	{ __LINE__, {0xf3, 0x48, 0xab}, 3, R(RDI) | R(RCX), R(RDI), 0 },
};

/* A row's instruction at code_buf (int3 after it), regs zeroed but rip
 * there and a stack pointer: the pc. */
static uint64_t row_code(const uint8_t *code, size_t len, struct decode_regs *regs)
{
	uint64_t pc = (uint64_t)(uintptr_t)code_buf;
	memset(code_buf, 0xcc, sizeof(code_buf));
	memcpy(code_buf, code, len);
	memset(regs, 0, sizeof(*regs));
	regs->rip = pc;
	regs->gpr[DECODE_RSP] = 0x7fff0000;
	return pc;
}

static void test_lookahead_fields(void)
{
	for (size_t i = 0; i < sizeof(lookahead_rows) / sizeof(lookahead_rows[0]); i++) {
		struct decode_regs regs;
		struct decode_insn out;
		int line = lookahead_rows[i].line;
		uint64_t pc = row_code(lookahead_rows[i].code, lookahead_rows[i].len, &regs);

		regs.gpr[DECODE_RCX] = 1;
		CHECK(line, decode_at(pc, &regs, &out) == 0, "decode failed");
		CHECK(line, out.regs_written == lookahead_rows[i].regs_written,
		      "regs_written 0x%x, expected 0x%x", out.regs_written,
		      lookahead_rows[i].regs_written);
		if (lookahead_rows[i].addr_regs0)
			CHECK(line, out.n_access > 0 &&
				    out.access[0].addr_regs == lookahead_rows[i].addr_regs0,
			      "addr_regs 0x%x, expected 0x%x",
			      out.n_access ? out.access[0].addr_regs : 0, lookahead_rows[i].addr_regs0);
		uint64_t want = lookahead_rows[i].target_off ? pc + (uint64_t)lookahead_rows[i].target_off : 0;
		if (lookahead_rows[i].code[0] == 0xeb)
			want = pc; /* jmp $ */
		CHECK(line, out.branch_target == want, "branch_target %+lld, expected %+lld",
		      (long long)(out.branch_target - pc), (long long)(want - pc));
	}
}

/* The registers a decoding says the instruction waits on and gives
 * (decode_zydis.h's form, for the cost model), and the vector and mask
 * registers the emulator clears (decode_zinsn).  Hidden operands count:
 * rsp for push, the flags for add and adc. */
#define GPR(r) (1ull << DECODE_##r)
#define VEC(n) (1ull << (DECODE_DEP_VEC0 + (n)))
#define FLAGS (1ull << DECODE_DEP_FLAGS)
static const struct {
	int line;
	uint8_t code[16];
	size_t len;
	uint64_t reads, writes;
	uint32_t vec_written;
	uint8_t k_written;
} dep_rows[] = {
	/* add rax, rbx */
	{ __LINE__, CODE(0x48, 0x01, 0xd8), GPR(RAX) | GPR(RBX), GPR(RAX) | FLAGS, 0, 0 },
	/* mov [rsp+8], rcx: rsp is an address's, the store no register's */
	{ __LINE__, CODE(0x48, 0x89, 0x4c, 0x24, 0x08), GPR(RSP) | GPR(RCX), 0, 0, 0 },
	/* push rbx */
	{ __LINE__, CODE(0x53), GPR(RBX) | GPR(RSP), GPR(RSP), 0, 0 },
	/* adc eax, ecx: the carry read */
	{ __LINE__, CODE(0x11, 0xc8), GPR(RAX) | GPR(RCX) | FLAGS, GPR(RAX) | FLAGS, 0, 0 },
	/* vpxor xmm4, xmm4, xmm4 */
	{ __LINE__, CODE(0xc5, 0xd9, 0xef, 0xe4), VEC(4), VEC(4), 1u << 4, 0 },
	/* vaddps zmm1{k2}, zmm2, zmm3: merging keeps zmm1's other lanes */
	{ __LINE__, CODE(0x62, 0xf1, 0x6c, 0x4a, 0x58, 0xcb), VEC(1) | VEC(2) | VEC(3), VEC(1),
	  1u << 1, 0 },
	/* kmovw k3, eax */
	{ __LINE__, CODE(0xc5, 0xf8, 0x92, 0xd8), GPR(RAX), 0, 0, 1u << 3 },
	/* vpcmpeqb k1, zmm5, [rdi] */
	{ __LINE__, CODE(0x62, 0xf1, 0x55, 0x48, 0x74, 0x0f), VEC(5) | GPR(RDI), 0, 0, 1u << 1 },
};

static void test_dep_masks(void)
{
	for (size_t i = 0; i < sizeof(dep_rows) / sizeof(dep_rows[0]); i++) {
		struct decode_regs regs;
		struct decode_insn out;
		struct decode_zydis z;
		int line = dep_rows[i].line;
		uint64_t pc = row_code(dep_rows[i].code, dep_rows[i].len, &regs);

		CHECK(line, decode_at_zydis(pc, &regs, &out, &z) == 0, "decode failed");
		CHECK(line, z.form.dep_reads == dep_rows[i].reads, "dep_reads 0x%llx, expected 0x%llx",
		      (unsigned long long)z.form.dep_reads, (unsigned long long)dep_rows[i].reads);
		CHECK(line, z.form.dep_writes == dep_rows[i].writes,
		      "dep_writes 0x%llx, expected 0x%llx", (unsigned long long)z.form.dep_writes,
		      (unsigned long long)dep_rows[i].writes);
		CHECK(line, z.insn.vec_written == dep_rows[i].vec_written,
		      "vec_written 0x%x, expected 0x%x", z.insn.vec_written, dep_rows[i].vec_written);
		CHECK(line, z.insn.k_written == dep_rows[i].k_written, "k_written 0x%x, expected 0x%x",
		      z.insn.k_written, dep_rows[i].k_written);
	}
}

/* The first decode builds the decoder (decode.c: a process that never
 * ticks never pays for it).  Four threads decode at once before anything
 * built it: each gets 0 or -EAGAIN (another builds) until it gets 0, never
 * -EINVAL, and every answer reads `mov [rdi+8], eax` as a 4-byte store at
 * rdi + 8 whose address takes rdi (the register table the build fills). */
#define FIRST_THREADS 4
static const uint8_t first_code[] = {0x89, 0x47, 0x08, 0xc3}; /* mov [rdi+8], eax; ret */
static pthread_barrier_t first_barrier;

struct first_try {
	int bad_rc;   /* a return other than 0 and -EAGAIN, or 0 */
	int wrong;    /* a decode that read the store wrongly */
};

static void *first_decode(void *arg)
{
	struct first_try *t = arg;
	struct decode_regs regs;
	memset(&regs, 0, sizeof(regs));
	regs.gpr[DECODE_RDI] = 0x1000;
	pthread_barrier_wait(&first_barrier);
	for (;;) {
		struct decode_insn in;
		int rc = decode_at((uint64_t)(uintptr_t)first_code, &regs, &in);
		if (rc == -EAGAIN)
			continue; /* another thread builds */
		if (rc != 0)
			t->bad_rc = rc;
		else if (in.n_access != 1 || in.access[0].addr != 0x1008 || in.access[0].len != 4 ||
			 in.access[0].kind != DECODE_STORE ||
			 in.access[0].addr_regs != (1u << DECODE_RDI))
			t->wrong = 1;
		return NULL;
	}
}

static void test_first_decode_builds(void)
{
	pthread_t th[FIRST_THREADS];
	struct first_try tries[FIRST_THREADS];
	memset(tries, 0, sizeof(tries));
	pthread_barrier_init(&first_barrier, NULL, FIRST_THREADS);
	for (int i = 0; i < FIRST_THREADS; i++)
		pthread_create(&th[i], NULL, first_decode, &tries[i]);
	for (int i = 0; i < FIRST_THREADS; i++) {
		pthread_join(th[i], NULL);
		CHECK(__LINE__, tries[i].bad_rc == 0, "thread %d: the first decode returned %d", i,
		      tries[i].bad_rc);
		CHECK(__LINE__, !tries[i].wrong, "thread %d: the first decode misread the store", i);
	}
	pthread_barrier_destroy(&first_barrier);
}

int main(void)
{
	test_first_decode_builds();
	int rc = decode_init();
	if (rc != 0) {
		fprintf(stderr, "decode_init: %d\n", rc);
		return 1;
	}
	run_table();
	test_lookahead_fields();
	test_dep_masks();
	test_find_prev();
	test_zcache();
	test_zcache_change();
	test_zcache_window();
	test_zcache_grow();
	test_zcache_inside();
	test_zcache_race();
	test_pages();
	test_ucontext();
	if (check_failures) {
		fprintf(stderr, "test_decode: %d failure(s)\n", check_failures);
		return 1;
	}
	measure();
	printf("test_decode: %zu table rows, all checks passed\n", sizeof(rows) / sizeof(rows[0]));
	return 0;
}
