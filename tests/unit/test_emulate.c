/* Unit test of the emulate module: table-driven like test_decode.c.
 *
 * 1. Known answers.  Each row is a short run of instructions (usually one;
 *    bytes checked with objdump -D -b binary -mi386:x86-64), the registers
 *    and arithmetic flags before, and what emulate_insn must leave: the
 *    return code of the last instruction (the ones before it must return 0),
 *    the registers that change (every other one must not), rip, the flags,
 *    and the bytes an emulated store touched.  Each expected value is worked
 *    out by hand in the row's comment.  Failures print the row's line.
 *    On any error the instruction must leave regs and the run unchanged.
 * 2. Flags and results against the CPU running this test: add, sub, adc, sbb,
 *    and, or, xor, cmp, inc, dec, neg, shl/shr/sar/rol/ror by an immediate, imul
 *    (2 operands) at each width, on edge values and pseudo-random operands
 *    and carry-in (fixed seed).
 * 3. emulate_context: the calling context rewritten for emulated calls and
 *    returns (below test_differential).
 * 4. Every instruction of libc's code, one at a time from registers that
 *    point into a buffer of this test's and vector registers all known:
 *    the general registers an instruction changes are among those its
 *    decoding says it writes (the form's dep_writes), and one that fails
 *    changes none.  emulate_insn saves and restores only those (with rip
 *    and the flags) for an instruction that fails half done.
 *
 * Exit status 0 on success.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "witch/decode.h"
#include "witch/emulate.h"
#include "witch/emulate_vec.h"

#include "check.h"

/* Arithmetic flags.  (0x8d5 would include AF, 0x10, which the emulator does
 * not compute: it is left as it was, and never compared here.) */
#define CF 0x001ull
#define PF 0x004ull
#define ZF 0x040ull
#define SF 0x080ull
#define OF 0x800ull
#define ARITH (CF | PF | ZF | SF | OF)
#define RFLAGS_BASE 0x202ull /* IF and the always-one bit: every row starts from it */

/* Register indices for the table. */
#define RAX DECODE_RAX
#define RCX DECODE_RCX
#define RDX DECODE_RDX
#define RBX DECODE_RBX
#define RSP DECODE_RSP
#define RBP DECODE_RBP
#define RSI DECODE_RSI
#define RDI DECODE_RDI
#define R8 DECODE_R8
#define R9 DECODE_R9
#define R10 DECODE_R10
#define R11 DECODE_R11
#define R12 DECODE_R12
#define R15 DECODE_R15

static const char *const gpr_name[DECODE_NGPR] = {
	"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
	"r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15",
};

/* ------------------------------------------------------------------ */
/* Known answers                                                      */

struct outreg {
	uint8_t reg1;  /* gpr index + 1; 0 ends the list */
	uint8_t pcrel; /* val is an offset from the code's address */
	uint64_t val;
};

enum { RIP_NEXT = 0, RIP_REL, RIP_ABS };

#define MAX_CODE 32

struct row {
	int line;
	uint8_t code[MAX_CODE];
	uint8_t len;
	uint8_t n_insn;          /* instructions to run; 0 means 1 */
	uint64_t gpr[DECODE_NGPR];
	uint64_t fin;            /* arithmetic flags before */
	uint64_t fs, gs;         /* fs_base, gs_base */
	int rc;                  /* of the last instruction */
	struct outreg out[4];    /* the registers that change, and to what */
	uint8_t fl_set;          /* fl holds the flags after; else they must not change */
	uint64_t fl;
	uint64_t fign;           /* flags the CPU leaves undefined: not compared */
	uint8_t rip_kind;        /* RIP_NEXT: past the bytes (rc 0) or unchanged (rc < 0) */
	uint64_t rip;
	uint64_t st_addr;        /* st_len > 0: bytes the run must have noted as stored, */
	uint32_t st_len;         /* and not the bytes either side; else no store noted */
};

#define CODE(...) .code = { __VA_ARGS__ }, .len = sizeof((uint8_t[]){ __VA_ARGS__ })
#define IN(...) .gpr = { __VA_ARGS__ }
#define OUT(...) .out = { __VA_ARGS__ }
#define W(reg, v) { (reg) + 1, 0, (uint64_t)(v) }
#define WPC(reg, off) { (reg) + 1, 1, (uint64_t)(int64_t)(off) }
#define FL(f) .fl_set = 1, .fl = (f)
#define IGN(f) .fign = (f)
#define TO(off) .rip_kind = RIP_REL, .rip = (uint64_t)(int64_t)(off)
#define TOABS(a) .rip_kind = RIP_ABS, .rip = (uint64_t)(a)
#define ST(a, n) .st_addr = (a), .st_len = (n)
#define N(n) .n_insn = (n)
#define RC(x) .rc = (x)
#define NOTSUP RC(-ENOTSUP)
#define EFAULT_ RC(-EFAULT)

#define ALLF (CF | PF | ZF | SF | OF)
#define M1 0xffffffffffffffffull
#define MIN64 0x8000000000000000ull
#define MAX64 0x7fffffffffffffffull

/* Rows run from here: 64-byte aligned so no row straddles a page; the bytes
 * after a row's code are 0xcc (int3). */
static uint8_t code_buf[64] __attribute__((aligned(64)));

static int n_rows;

/* emulate_copy into poisoned memory: the whole of *e but the store
 * arrays' entries past n_stores, which keep the poison.  A field it does
 * not copy (one added after the arrays, say) reads 0xa5 and fails. */
static void check_copy(int line, const struct emulate *e)
{
	struct emulate got, want = *e;
	memset(&got, 0xa5, sizeof(got));
	emulate_copy(&got, e);
	for (int i = e->n_stores; i < EMULATE_MAX_STORES; i++) {
		memset(&want.store_addr[i], 0xa5, sizeof(want.store_addr[i]));
		memset(&want.store_len[i], 0xa5, sizeof(want.store_len[i]));
		memset(&want.store_value[i], 0xa5, sizeof(want.store_value[i]));
		memset(&want.store_known[i], 0xa5, sizeof(want.store_known[i]));
	}
	CHECK(line, memcmp(&got, &want, sizeof(got)) == 0, "emulate_copy of %d stores differs",
	      e->n_stores);
}

static void run_rows(const struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		uint64_t pc = (uint64_t)(uintptr_t)code_buf;
		struct decode_regs regs;
		struct emulate e;
		int rc = 0, k, n_insn = r->n_insn ? r->n_insn : 1, bad = 0;

		n_rows++;
		memset(code_buf, 0xcc, sizeof(code_buf));
		memcpy(code_buf, r->code, r->len);
		memset(&regs, 0, sizeof(regs));
		memcpy(regs.gpr, r->gpr, sizeof(regs.gpr));
		regs.rip = pc;
		regs.rflags = RFLAGS_BASE | r->fin;
		regs.fs_base = r->fs;
		regs.gs_base = r->gs;
		memset(&e, 0, sizeof(e));
		emulate_begin(&e, pc, NULL);

		for (k = 0; k < n_insn; k++) {
			struct decode_regs before = regs;
			int n_stores = e.n_stores, n_calls = e.n_calls, frames = e.frames_left;
			struct decode_insn in;
			struct decode_zydis z;
			int drc = decode_at_zydis(regs.rip, &regs, &in, &z);
			if (drc != 0) {
				FAIL(r->line, "insn %d at +%lld: decode_at returned %d", k,
				     (long long)(regs.rip - pc), drc);
				bad = 1;
				break;
			}
			const char *mn = ZydisMnemonicGetString((ZydisMnemonic)in.mnemonic);
			rc = emulate_insn(&e, &regs, &in, &z);
			if (k < n_insn - 1 && rc != 0) {
				FAIL(r->line, "insn %d (%s) returned %d, expected 0", k, mn, rc);
				bad = 1;
				break;
			}
			if (rc != 0) {
				CHECK(r->line, memcmp(&regs, &before, sizeof(regs)) == 0,
				      "%s: returned %d but changed regs", mn, rc);
				CHECK(r->line, e.n_stores == n_stores && e.n_calls == n_calls &&
						       e.frames_left == frames,
				      "%s: returned %d but changed the run", mn, rc);
			}
			if (k == n_insn - 1 && rc != r->rc) {
				FAIL(r->line, "%s returned %d, expected %d", mn, rc, r->rc);
				bad = 1;
			}
		}
		if (bad)
			continue;
		check_copy(r->line, &e);

		uint64_t want[DECODE_NGPR];
		memcpy(want, r->gpr, sizeof(want));
		for (int o = 0; o < 4 && r->out[o].reg1; o++)
			want[r->out[o].reg1 - 1] = r->out[o].val + (r->out[o].pcrel ? pc : 0);
		for (int g = 0; g < DECODE_NGPR; g++)
			CHECK(r->line, regs.gpr[g] == want[g], "%s = %#llx, expected %#llx",
			      gpr_name[g], (unsigned long long)regs.gpr[g],
			      (unsigned long long)want[g]);

		uint64_t want_rip = r->rip_kind == RIP_REL   ? pc + r->rip
				    : r->rip_kind == RIP_ABS ? r->rip
				    : r->rc == 0             ? pc + r->len
							     : pc;
		CHECK(r->line, regs.rip == want_rip, "rip = pc%+lld, expected pc%+lld",
		      (long long)(regs.rip - pc), (long long)(want_rip - pc));

		uint64_t mask = ARITH & ~r->fign;
		uint64_t want_fl = (r->fl_set ? r->fl : r->fin) & mask;
		CHECK(r->line, (regs.rflags & mask) == want_fl,
		      "flags %#llx, expected %#llx (compared: %#llx)",
		      (unsigned long long)(regs.rflags & ARITH), (unsigned long long)want_fl,
		      (unsigned long long)mask);
		CHECK(r->line, (regs.rflags & ~ARITH) == RFLAGS_BASE,
		      "non-arithmetic flags changed: rflags %#llx", (unsigned long long)regs.rflags);
		CHECK(r->line, regs.fs_base == r->fs && regs.gs_base == r->gs, "fs/gs base changed");

		if (r->st_len) {
			CHECK(r->line, emulate_stored(&e, r->st_addr, r->st_len),
			      "emulate_stored(%#llx, %u) false", (unsigned long long)r->st_addr,
			      r->st_len);
			CHECK(r->line, emulate_stored(&e, r->st_addr + r->st_len - 1, 1),
			      "last stored byte not stored");
			CHECK(r->line, !emulate_stored(&e, r->st_addr - 1, 1),
			      "the byte before the store reported stored");
			CHECK(r->line, !emulate_stored(&e, r->st_addr + r->st_len, 1),
			      "the byte after the store reported stored");
		} else {
			CHECK(r->line, e.n_stores == 0, "%d store(s) noted, expected none",
			      e.n_stores);
		}
	}
}

/* Memory the rows load from.  Stores are only noted: these must keep their
 * values (checked after the table). */
static const uint64_t data_init[4] = {
	0x8877665544332211ull, 0x0123456789abcdefull, 0x401000ull, M1,
};
static const uint64_t stk_init[8] = {
	0x5000, 0x5001, 0x5002, 0x5003, 0x5004, 0x5005, 0x5006, 0x5007,
};

/* Where the jump, call and ret rows go: readable memory, as emulate_insn
 * checks the page it leads to before anyone decodes there. */
static const uint8_t code_target[64];

static void test_table(void)
{
	uint64_t data[4], stk[8];
	memcpy(data, data_init, sizeof(data));
	memcpy(stk, stk_init, sizeof(stk));
#define DA(i) ((uint64_t)(uintptr_t)&data[i])
#define SA(i) ((uint64_t)(uintptr_t)&stk[i])
#define CT ((uint64_t)(uintptr_t)&code_target[8])
	/* A jump table and a stack whose entries point at code_target. */
	uint64_t table[2] = {CT, CT}, rstk[4] = {CT, CT, 0, 0};
#define TA(i) ((uint64_t)(uintptr_t)&table[i])
#define RA(i) ((uint64_t)(uintptr_t)&rstk[i])

	const struct row rows[] = {
	/* ---- mov ---------------------------------------------------------- */
	/* mov rax, rcx; flags untouched (they start CF|ZF) */
	{ __LINE__, CODE(0x48, 0x89, 0xc8), IN([RAX] = 0x1111111111111111, [RCX] = 0x8877665544332211),
	  .fin = CF | ZF, OUT(W(RAX, 0x8877665544332211)) },
	/* mov eax, ecx: a 32-bit write clears bits 63..32 */
	{ __LINE__, CODE(0x89, 0xc8), IN([RAX] = M1, [RCX] = 0x8877665544332211),
	  OUT(W(RAX, 0x44332211)) },
	/* mov ax, cx: a 16-bit write merges */
	{ __LINE__, CODE(0x66, 0x89, 0xc8), IN([RAX] = M1, [RCX] = 0x8877665544332211),
	  OUT(W(RAX, 0xffffffffffff2211)) },
	/* mov al, cl: an 8-bit write merges */
	{ __LINE__, CODE(0x88, 0xc8), IN([RAX] = M1, [RCX] = 0x8877665544332211),
	  OUT(W(RAX, 0xffffffffffffff11)) },
	/* mov ah, cl: bits 15..8 only */
	{ __LINE__, CODE(0x88, 0xcc), IN([RAX] = M1, [RCX] = 0x11), OUT(W(RAX, 0xffffffffffff11ff)) },
	/* mov bh, ah: high byte to high byte */
	{ __LINE__, CODE(0x88, 0xe7), IN([RAX] = 0x1234, [RBX] = 0xaaaaaaaaaaaaaaaa),
	  OUT(W(RBX, 0xaaaaaaaaaaaa12aa)) },
	/* mov cl, bh */
	{ __LINE__, CODE(0x88, 0xf9), IN([RBX] = 0x5600, [RCX] = M1), OUT(W(RCX, 0xffffffffffffff56)) },
	/* mov sil, al: with REX, rm 6 is sil, not dh */
	{ __LINE__, CODE(0x40, 0x88, 0xc6), IN([RAX] = 0x7f, [RSI] = 0xffff, [RDX] = 0x3333),
	  OUT(W(RSI, 0xff7f)) },
	/* mov r9d, r8d */
	{ __LINE__, CODE(0x45, 0x89, 0xc1), IN([R8] = 0xdeadbeefcafebabe, [R9] = M1),
	  OUT(W(R9, 0xcafebabe)) },
	/* mov eax, 0x12345678 */
	{ __LINE__, CODE(0xb8, 0x78, 0x56, 0x34, 0x12), IN([RAX] = M1), OUT(W(RAX, 0x12345678)) },
	/* mov rax, -1 (imm32 sign-extended to 64) */
	{ __LINE__, CODE(0x48, 0xc7, 0xc0, 0xff, 0xff, 0xff, 0xff), OUT(W(RAX, M1)) },
	/* mov ecx, 0xffffffff (c7 form): 32-bit, not sign-extended */
	{ __LINE__, CODE(0xc7, 0xc1, 0xff, 0xff, 0xff, 0xff), IN([RCX] = 0xaaaaaaaaaaaaaaaa),
	  OUT(W(RCX, 0xffffffff)) },
	/* movabs rax, 0x123456789abcdef0 */
	{ __LINE__, CODE(0x48, 0xb8, 0xf0, 0xde, 0xbc, 0x9a, 0x78, 0x56, 0x34, 0x12),
	  OUT(W(RAX, 0x123456789abcdef0)) },
	/* mov al, 0x80 */
	{ __LINE__, CODE(0xb0, 0x80), IN([RAX] = 0x1234), OUT(W(RAX, 0x1280)) },
	/* mov ah, 0x7f */
	{ __LINE__, CODE(0xb4, 0x7f), IN([RAX] = 0xffff), OUT(W(RAX, 0x7fff)) },
	/* mov r10w, 0x1234 */
	{ __LINE__, CODE(0x66, 0x41, 0xba, 0x34, 0x12), IN([R10] = M1),
	  OUT(W(R10, 0xffffffffffff1234)) },

	/* ---- movzx / movsx / movsxd --------------------------------------- */
	/* movzx eax, cl */
	{ __LINE__, CODE(0x0f, 0xb6, 0xc1), IN([RAX] = M1, [RCX] = 0xff80), OUT(W(RAX, 0x80)) },
	/* movzx eax, ch */
	{ __LINE__, CODE(0x0f, 0xb6, 0xc5), IN([RAX] = M1, [RCX] = 0xab00), OUT(W(RAX, 0xab)) },
	/* movzx rax, cx */
	{ __LINE__, CODE(0x48, 0x0f, 0xb7, 0xc1), IN([RAX] = M1, [RCX] = 0xffff8001),
	  OUT(W(RAX, 0x8001)) },
	/* movzx ax, cl: 16-bit destination merges */
	{ __LINE__, CODE(0x66, 0x0f, 0xb6, 0xc1), IN([RAX] = M1, [RCX] = 0x80),
	  OUT(W(RAX, 0xffffffffffff0080)) },
	/* movsx eax, cl: sign to bit 31, then the upper half cleared */
	{ __LINE__, CODE(0x0f, 0xbe, 0xc1), IN([RAX] = M1, [RCX] = 0x80), OUT(W(RAX, 0xffffff80)) },
	/* movsx rax, cl */
	{ __LINE__, CODE(0x48, 0x0f, 0xbe, 0xc1), IN([RCX] = 0x80), OUT(W(RAX, 0xffffffffffffff80)) },
	/* movsx rax, cl: positive, bits above cl ignored */
	{ __LINE__, CODE(0x48, 0x0f, 0xbe, 0xc1), IN([RAX] = M1, [RCX] = 0xff7f), OUT(W(RAX, 0x7f)) },
	/* movsx rax, cx */
	{ __LINE__, CODE(0x48, 0x0f, 0xbf, 0xc1), IN([RCX] = 0x8000), OUT(W(RAX, 0xffffffffffff8000)) },
	/* movsx eax, bh */
	{ __LINE__, CODE(0x0f, 0xbe, 0xc7), IN([RAX] = M1, [RBX] = 0x8000), OUT(W(RAX, 0xffffff80)) },
	/* movsxd rax, ecx: negative */
	{ __LINE__, CODE(0x48, 0x63, 0xc1), IN([RCX] = 0x80000000), OUT(W(RAX, 0xffffffff80000000)) },
	/* movsxd rax, ecx: positive, rcx's upper half ignored */
	{ __LINE__, CODE(0x48, 0x63, 0xc1), IN([RAX] = M1, [RCX] = 0xffffffff7fffffff),
	  OUT(W(RAX, 0x7fffffff)) },

	/* ---- lea ---------------------------------------------------------- */
	/* lea rax, [rbx+rcx*4+0x10]: 0x1000 + 12 + 16; flags untouched */
	{ __LINE__, CODE(0x48, 0x8d, 0x44, 0x8b, 0x10), IN([RBX] = 0x1000, [RCX] = 3), .fin = ALLF,
	  OUT(W(RAX, 0x101c)) },
	/* lea rax, [rbx+rcx*8-8]: 0x2000 + 0x80 - 8 */
	{ __LINE__, CODE(0x48, 0x8d, 0x44, 0xcb, 0xf8), IN([RBX] = 0x2000, [RCX] = 0x10),
	  OUT(W(RAX, 0x2078)) },
	/* lea r8, [r9+r10*2+0x12345678]: 0x1000 + 0x20 + 0x12345678 */
	{ __LINE__, CODE(0x4f, 0x8d, 0x84, 0x51, 0x78, 0x56, 0x34, 0x12), IN([R9] = 0x1000, [R10] = 0x10),
	  OUT(W(R8, 0x12346698)) },
	/* lea rax, [rcx*8+0] (no base, disp32) */
	{ __LINE__, CODE(0x48, 0x8d, 0x04, 0xcd, 0x00, 0x00, 0x00, 0x00), IN([RCX] = 5),
	  OUT(W(RAX, 0x28)) },
	/* lea eax, [rbx+rcx]: 0xffffffff00000030 truncated to 32 bits */
	{ __LINE__, CODE(0x8d, 0x04, 0x0b), IN([RAX] = M1, [RBX] = 0xffffffff00000010, [RCX] = 0x20),
	  OUT(W(RAX, 0x30)) },
	/* lea ax, [rbx+rcx]: 16-bit destination merges */
	{ __LINE__, CODE(0x66, 0x8d, 0x04, 0x0b), IN([RAX] = M1, [RBX] = 0x12340010, [RCX] = 0x20),
	  OUT(W(RAX, 0xffffffffffff0030)) },
	/* lea rax, [eax+ecx] (67): the address wraps at 32 bits: 0xffffffff + 2 = 1 */
	{ __LINE__, CODE(0x67, 0x48, 0x8d, 0x04, 0x08), IN([RAX] = 0xffffffff, [RCX] = 2),
	  OUT(W(RAX, 1)) },
	/* lea rax, [rip+0x100]: relative to the next instruction, pc + 7 */
	{ __LINE__, CODE(0x48, 0x8d, 0x05, 0x00, 0x01, 0x00, 0x00), OUT(WPC(RAX, 7 + 0x100)) },
	/* lea rax, [rip-0x10] */
	{ __LINE__, CODE(0x48, 0x8d, 0x05, 0xf0, 0xff, 0xff, 0xff), OUT(WPC(RAX, 7 - 0x10)) },
	/* lea rax, fs:[rbx]: lea computes the offset only, a segment override
	 * adds no base */
	{ __LINE__, CODE(0x64, 0x48, 0x8d, 0x03), IN([RBX] = 0x40), .fs = 0x7f0000001000,
	  OUT(W(RAX, 0x40)) },

	/* ---- add / adc ---------------------------------------------------- */
	/* add rax, rcx: 1 + 2 = 3 (two bits set: PF); the other flags cleared */
	{ __LINE__, CODE(0x48, 0x01, 0xc8), IN([RAX] = 1, [RCX] = 2), .fin = CF | ZF | SF | OF,
	  OUT(W(RAX, 3)), FL(PF) },
	/* add rax, rcx: -1 + 1 = 0 with a carry; no OF (operand signs differ) */
	{ __LINE__, CODE(0x48, 0x01, 0xc8), IN([RAX] = M1, [RCX] = 1), OUT(W(RAX, 0)),
	  FL(CF | ZF | PF) },
	/* add rax, rcx: MAX + 1 = MIN: positive + positive went negative (OF);
	 * low byte 0x00 has even parity */
	{ __LINE__, CODE(0x48, 0x01, 0xc8), IN([RAX] = MAX64, [RCX] = 1), OUT(W(RAX, MIN64)),
	  FL(OF | SF | PF) },
	/* add rax, rcx: MIN + MIN = 0 carry out; negative + negative went
	 * positive (OF) */
	{ __LINE__, CODE(0x48, 0x01, 0xc8), IN([RAX] = MIN64, [RCX] = MIN64), OUT(W(RAX, 0)),
	  FL(CF | OF | ZF | PF) },
	/* add eax, ecx: 0xffffffff + 2 = 1, carry out of bit 31; the upper
	 * half is cleared; 1 has odd parity */
	{ __LINE__, CODE(0x01, 0xc8), IN([RAX] = 0x12345678ffffffff, [RCX] = 2), OUT(W(RAX, 1)),
	  FL(CF) },
	/* add al, cl: 0x7f + 1 = 0x80: OF at bit 7; 0x80 has odd parity */
	{ __LINE__, CODE(0x00, 0xc8), IN([RAX] = 0xffffffffffffff7f, [RCX] = 1),
	  OUT(W(RAX, 0xffffffffffffff80)), FL(OF | SF) },
	/* add ax, cx: 0xffff + 1 = 0: carry out of bit 15, bits 63..16 kept */
	{ __LINE__, CODE(0x66, 0x01, 0xc8), IN([RAX] = 0xaaaaaaaaaaaaffff, [RCX] = 1),
	  OUT(W(RAX, 0xaaaaaaaaaaaa0000)), FL(CF | ZF | PF) },
	/* add ah, cl: 0x80 + 0x80 = 0x00 in ah: CF, OF, ZF */
	{ __LINE__, CODE(0x00, 0xcc), IN([RAX] = 0x80ff, [RCX] = 0x80), OUT(W(RAX, 0x00ff)),
	  FL(CF | OF | ZF | PF) },
	/* add rax, -1 (imm8 sign-extended): 5 + 0xffff...ff = 4 with a carry;
	 * 4 has odd parity */
	{ __LINE__, CODE(0x48, 0x83, 0xc0, 0xff), IN([RAX] = 5), OUT(W(RAX, 4)), FL(CF) },
	/* add eax, 0x80000000: 0x80000000 * 2 = 0 (CF, OF) */
	{ __LINE__, CODE(0x05, 0x00, 0x00, 0x00, 0x80), IN([RAX] = 0x80000000), OUT(W(RAX, 0)),
	  FL(CF | OF | ZF | PF) },
	/* adc rax, rcx with CF: -1 + 0 + 1 = 0, carry out; no OF */
	{ __LINE__, CODE(0x48, 0x11, 0xc8), IN([RAX] = M1, [RCX] = 0), .fin = CF, OUT(W(RAX, 0)),
	  FL(CF | ZF | PF) },
	/* adc rax, rcx without CF: 1 + 2 = 3 */
	{ __LINE__, CODE(0x48, 0x11, 0xc8), IN([RAX] = 1, [RCX] = 2), OUT(W(RAX, 3)), FL(PF) },
	/* adc eax, ecx with CF: 0x7fffffff + 0 + 1 = 0x80000000: the carry-in
	 * alone overflows (OF); low byte 0x00 */
	{ __LINE__, CODE(0x11, 0xc8), IN([RAX] = 0x7fffffff, [RCX] = 0), .fin = CF,
	  OUT(W(RAX, 0x80000000)), FL(OF | SF | PF) },
	/* adc al, cl with CF: 0xff + 0xff + 1 = 0x1ff: al = 0xff, CF; no OF
	 * (-1 + -1 + 1 = -1) */
	{ __LINE__, CODE(0x10, 0xc8), IN([RAX] = 0xff, [RCX] = 0xff), .fin = CF, OUT(W(RAX, 0xff)),
	  FL(CF | SF | PF) },

	/* ---- sub / sbb / cmp ---------------------------------------------- */
	/* sub rax, rcx: 5 - 3 = 2 (one bit: odd parity); all flags cleared */
	{ __LINE__, CODE(0x48, 0x29, 0xc8), IN([RAX] = 5, [RCX] = 3), .fin = ALLF, OUT(W(RAX, 2)),
	  FL(0) },
	/* sub rax, rcx: 3 - 5 = -2 with a borrow; 0xfe has 7 bits */
	{ __LINE__, CODE(0x48, 0x29, 0xc8), IN([RAX] = 3, [RCX] = 5), OUT(W(RAX, 0xfffffffffffffffe)),
	  FL(CF | SF) },
	/* sub rax, rcx: MIN - 1 = MAX: negative - positive went positive (OF);
	 * 0xff has 8 bits */
	{ __LINE__, CODE(0x48, 0x29, 0xc8), IN([RAX] = MIN64, [RCX] = 1), OUT(W(RAX, MAX64)),
	  FL(OF | PF) },
	/* sub rax, rcx: equal */
	{ __LINE__, CODE(0x48, 0x29, 0xc8), IN([RAX] = 0x1234, [RCX] = 0x1234), OUT(W(RAX, 0)),
	  FL(ZF | PF) },
	/* sub ecx, 1: 0 - 1 = 0xffffffff, upper half cleared */
	{ __LINE__, CODE(0x83, 0xe9, 0x01), IN([RCX] = 0xffffffff00000000), OUT(W(RCX, 0xffffffff)),
	  FL(CF | SF | PF) },
	/* sub al, cl: 0x80 - 1 = 0x7f: -128 - 1 overflows; 0x7f has 7 bits */
	{ __LINE__, CODE(0x28, 0xc8), IN([RAX] = 0x1180, [RCX] = 1), OUT(W(RAX, 0x117f)), FL(OF) },
	/* sbb rax, rcx with CF: 5 - 5 - 1 = -1, a borrow */
	{ __LINE__, CODE(0x48, 0x19, 0xc8), IN([RAX] = 5, [RCX] = 5), .fin = CF, OUT(W(RAX, M1)),
	  FL(CF | SF | PF) },
	/* sbb rax, rcx without CF: 5 - 5 = 0 */
	{ __LINE__, CODE(0x48, 0x19, 0xc8), IN([RAX] = 5, [RCX] = 5), OUT(W(RAX, 0)), FL(ZF | PF) },
	/* sbb eax, eax with CF: -1, zero-extended */
	{ __LINE__, CODE(0x19, 0xc0), IN([RAX] = 0x123), .fin = CF, OUT(W(RAX, 0xffffffff)),
	  FL(CF | SF | PF) },
	/* sbb rax, rcx with CF: MIN - 0 - 1 = MAX overflows */
	{ __LINE__, CODE(0x48, 0x19, 0xc8), IN([RAX] = MIN64, [RCX] = 0), .fin = CF,
	  OUT(W(RAX, MAX64)), FL(OF | PF) },
	/* cmp rax, rcx: 3 - 5, no register written */
	{ __LINE__, CODE(0x48, 0x39, 0xc8), IN([RAX] = 3, [RCX] = 5), FL(CF | SF) },
	/* cmp eax, 0: eax is 0; cmp writes nothing, so rax keeps its upper half */
	{ __LINE__, CODE(0x83, 0xf8, 0x00), IN([RAX] = 0xffffffff00000000), FL(ZF | PF) },
	/* cmp al, 0x80: 0x7f - 0x80 = 0xff: borrow, and positive - negative went
	 * negative (OF) */
	{ __LINE__, CODE(0x3c, 0x80), IN([RAX] = 0x7f), FL(CF | OF | SF | PF) },
	/* cmp rax, -1 (imm32 sign-extended) */
	{ __LINE__, CODE(0x48, 0x3d, 0xff, 0xff, 0xff, 0xff), IN([RAX] = M1), FL(ZF | PF) },

	/* ---- test / and / or / xor ---------------------------------------- */
	/* test rax, rcx: 0xf0 & 0x0f = 0; CF, OF, SF cleared */
	{ __LINE__, CODE(0x48, 0x85, 0xc8), IN([RAX] = 0xf0, [RCX] = 0x0f), .fin = CF | OF | SF,
	  FL(ZF | PF) },
	/* test eax, eax: 0x80000000, no write (upper half kept) */
	{ __LINE__, CODE(0x85, 0xc0), IN([RAX] = 0xffffffff80000000), FL(SF | PF) },
	/* test al, 1: 3 & 1 = 1, odd parity */
	{ __LINE__, CODE(0xa8, 0x01), IN([RAX] = 3), .fin = ZF, FL(0) },
	/* and rax, rcx: 0xff00... & 0x0ff0... = 0x0f00...; low byte 0x00 */
	{ __LINE__, CODE(0x48, 0x21, 0xc8), IN([RAX] = 0xff00ff00ff00ff00, [RCX] = 0x0ff00ff00ff00ff0),
	  .fin = CF | OF, OUT(W(RAX, 0x0f000f000f000f00)), FL(PF) },
	/* and eax, -16: 0x12345670 (0x70 has 3 bits), upper half cleared */
	{ __LINE__, CODE(0x83, 0xe0, 0xf0), IN([RAX] = 0xffffffff12345678), OUT(W(RAX, 0x12345670)),
	  FL(0) },
	/* or rax, rcx */
	{ __LINE__, CODE(0x48, 0x09, 0xc8), IN([RAX] = MIN64, [RCX] = 3), OUT(W(RAX, MIN64 | 3)),
	  FL(SF | PF) },
	/* or al, 0 */
	{ __LINE__, CODE(0x0c, 0x00), IN([RAX] = 0x100), .fin = CF, FL(ZF | PF) },
	/* xor eax, eax */
	{ __LINE__, CODE(0x31, 0xc0), IN([RAX] = 0xdeadbeefdeadbeef), .fin = CF | SF | OF,
	  OUT(W(RAX, 0)), FL(ZF | PF) },
	/* xor rax, rcx: 0xfe has 7 bits */
	{ __LINE__, CODE(0x48, 0x31, 0xc8), IN([RAX] = 0xff, [RCX] = 1), OUT(W(RAX, 0xfe)), FL(0) },
	/* xor ah, ah */
	{ __LINE__, CODE(0x30, 0xe4), IN([RAX] = 0xffff), OUT(W(RAX, 0x00ff)), FL(ZF | PF) },

	/* ---- inc / dec (CF kept) / neg / not ------------------------------ */
	/* inc rax: MAX + 1 overflows; CF stays set */
	{ __LINE__, CODE(0x48, 0xff, 0xc0), IN([RAX] = MAX64), .fin = CF, OUT(W(RAX, MIN64)),
	  FL(CF | OF | SF | PF) },
	/* inc rax: -1 + 1 = 0, and CF stays clear (no carry flag from inc) */
	{ __LINE__, CODE(0x48, 0xff, 0xc0), IN([RAX] = M1), OUT(W(RAX, 0)), FL(ZF | PF) },
	/* inc eax: 0xffffffff + 1 = 0; CF kept */
	{ __LINE__, CODE(0xff, 0xc0), IN([RAX] = M1), .fin = CF, OUT(W(RAX, 0)), FL(CF | ZF | PF) },
	/* inc al: 0xff + 1 = 0 in al only; SF, OF recomputed to 0 */
	{ __LINE__, CODE(0xfe, 0xc0), IN([RAX] = 0x12ff), .fin = SF | OF, OUT(W(RAX, 0x1200)),
	  FL(ZF | PF) },
	/* inc r8w: 0x7fff + 1 overflows at 16 bits */
	{ __LINE__, CODE(0x66, 0x41, 0xff, 0xc0), IN([R8] = 0xffffffffffff7fff),
	  OUT(W(R8, 0xffffffffffff8000)), FL(OF | SF | PF) },
	/* dec rcx: MIN - 1 = MAX overflows */
	{ __LINE__, CODE(0x48, 0xff, 0xc9), IN([RCX] = MIN64), OUT(W(RCX, MAX64)), FL(OF | PF) },
	/* dec ecx: 1 - 1 = 0; CF kept */
	{ __LINE__, CODE(0xff, 0xc9), IN([RCX] = 1), .fin = CF, OUT(W(RCX, 0)), FL(CF | ZF | PF) },
	/* dec ecx: 0 - 1 = 0xffffffff: no CF from dec */
	{ __LINE__, CODE(0xff, 0xc9), IN([RCX] = 0), OUT(W(RCX, 0xffffffff)), FL(SF | PF) },
	/* dec bh: 0 - 1 = 0xff in bh */
	{ __LINE__, CODE(0xfe, 0xcf), IN([RBX] = 0x0080), OUT(W(RBX, 0xff80)), FL(SF | PF) },
	/* neg rax: -(1): CF because the operand was not 0 */
	{ __LINE__, CODE(0x48, 0xf7, 0xd8), IN([RAX] = 1), OUT(W(RAX, M1)), FL(CF | SF | PF) },
	/* neg rax: -(0) = 0, CF cleared */
	{ __LINE__, CODE(0x48, 0xf7, 0xd8), IN([RAX] = 0), .fin = CF, FL(ZF | PF) },
	/* neg rax: -(MIN) = MIN overflows */
	{ __LINE__, CODE(0x48, 0xf7, 0xd8), IN([RAX] = MIN64), FL(CF | OF | SF | PF) },
	/* neg eax: -5 = 0xfffffffb (7 bits in 0xfb), zero-extended */
	{ __LINE__, CODE(0xf7, 0xd8), IN([RAX] = 0xffffffff00000005), OUT(W(RAX, 0xfffffffb)),
	  FL(CF | SF) },
	/* neg cl: -(0x80) = 0x80 overflows at 8 bits */
	{ __LINE__, CODE(0xf6, 0xd9), IN([RCX] = 0x1280), FL(CF | OF | SF) },
	/* not rax: flags untouched */
	{ __LINE__, CODE(0x48, 0xf7, 0xd0), IN([RAX] = 0x00ff00ff00ff00ff), .fin = CF | ZF | OF,
	  OUT(W(RAX, 0xff00ff00ff00ff00)) },
	/* not eax: zero-extended */
	{ __LINE__, CODE(0xf7, 0xd0), IN([RAX] = 0xffffffff00000000), OUT(W(RAX, 0xffffffff)) },
	/* not al */
	{ __LINE__, CODE(0xf6, 0xd0), IN([RAX] = 0xaaaa), .fin = SF, OUT(W(RAX, 0xaa55)) },

	/* ---- shifts ------------------------------------------------------- */
	/* shl rax, 1: bit 63 (1) goes to CF; OF = new bit 63 ^ CF = 1 ^ 1 = 0 */
	{ __LINE__, CODE(0x48, 0xd1, 0xe0), IN([RAX] = 0xc000000000000001),
	  OUT(W(RAX, 0x8000000000000002)), FL(CF | SF) },
	/* shl rax, 1: OF = new bit 63 ^ CF = 1 ^ 0 */
	{ __LINE__, CODE(0x48, 0xd1, 0xe0), IN([RAX] = 0x4000000000000000), OUT(W(RAX, MIN64)),
	  FL(OF | SF | PF) },
	/* shr rax, 1: bit 0 to CF; OF = the operand's old bit 63 */
	{ __LINE__, CODE(0x48, 0xd1, 0xe8), IN([RAX] = 0x8000000000000003),
	  OUT(W(RAX, 0x4000000000000001)), FL(CF | OF) },
	/* sar rax, 1: sign kept; OF = 0 */
	{ __LINE__, CODE(0x48, 0xd1, 0xf8), IN([RAX] = 0x8000000000000003), .fin = OF,
	  OUT(W(RAX, 0xc000000000000001)), FL(CF | SF) },
	/* sar al, 1: 0x81 -> 0xc0 (2 bits) */
	{ __LINE__, CODE(0xd0, 0xf8), IN([RAX] = 0x81), OUT(W(RAX, 0xc0)), FL(CF | SF | PF) },
	/* shl ah, 1: 0x80 -> 0, CF; OF = 0 ^ 1 */
	{ __LINE__, CODE(0xd0, 0xe4), IN([RAX] = 0x80ff), OUT(W(RAX, 0x00ff)), FL(CF | OF | ZF | PF) },
	/* shl eax, 4: 0xf0000001 -> 0x10; CF = bit 28 of the operand (1);
	 * upper half cleared */
	{ __LINE__, CODE(0xc1, 0xe0, 0x04), IN([RAX] = 0xfffffffff0000001), OUT(W(RAX, 0x10)),
	  FL(CF), IGN(OF) },
	/* shr eax, 8: 0x12345678 -> 0x123456; CF = bit 7 (0x78: 0); 0x56 has 4 bits */
	{ __LINE__, CODE(0xc1, 0xe8, 0x08), IN([RAX] = 0x12345678), OUT(W(RAX, 0x123456)), FL(PF),
	  IGN(OF) },
	/* sar eax, 31: 0x80000000 -> 0xffffffff; CF = bit 30 (0) */
	{ __LINE__, CODE(0xc1, 0xf8, 0x1f), IN([RAX] = 0x80000000), OUT(W(RAX, 0xffffffff)),
	  FL(SF | PF), IGN(OF) },
	/* sar rax, 63 */
	{ __LINE__, CODE(0x48, 0xc1, 0xf8, 0x3f), IN([RAX] = MIN64), OUT(W(RAX, M1)), FL(SF | PF),
	  IGN(OF) },
	/* shl ax, 15: 3 -> 0x8000; CF = bit 1 of the operand (1) */
	{ __LINE__, CODE(0x66, 0xc1, 0xe0, 0x0f), IN([RAX] = 0xffffffffffff0003),
	  OUT(W(RAX, 0xffffffffffff8000)), FL(CF | SF | PF), IGN(OF) },
	/* shr r9b, 7: 0x80 -> 1; CF = bit 6 (0) */
	{ __LINE__, CODE(0x41, 0xc0, 0xe9, 0x07), IN([R9] = 0x180), OUT(W(R9, 0x101)), FL(0),
	  IGN(OF) },
	/* shl rax, cl (63): 1 -> MIN; CF = bit 1 (0) */
	{ __LINE__, CODE(0x48, 0xd3, 0xe0), IN([RAX] = 1, [RCX] = 63), OUT(W(RAX, MIN64)),
	  FL(SF | PF), IGN(OF) },
	/* shl rax, cl with cl = 0x44: the count is masked to 6 bits, 4 */
	{ __LINE__, CODE(0x48, 0xd3, 0xe0), IN([RAX] = 1, [RCX] = 0x44), OUT(W(RAX, 0x10)), FL(0),
	  IGN(OF) },
	/* shr eax, cl (31): 0x80000000 -> 1; CF = bit 30 (0) */
	{ __LINE__, CODE(0xd3, 0xe8), IN([RAX] = 0x80000000, [RCX] = 31), OUT(W(RAX, 1)), FL(0),
	  IGN(OF) },
	/* sar rdx, cl (3): -8 -> -1, CF = bit 2 (0) */
	{ __LINE__, CODE(0x48, 0xd3, 0xfa), IN([RDX] = 0xfffffffffffffff8, [RCX] = 3),
	  OUT(W(RDX, M1)), FL(SF | PF), IGN(OF) },
	/* shl rax, cl with cl = 0: nothing changes, flags included */
	{ __LINE__, CODE(0x48, 0xd3, 0xe0), IN([RAX] = 0x1234, [RCX] = 0), .fin = ALLF },
	/* shl rax, cl with cl = 64: masked to 0, nothing changes */
	{ __LINE__, CODE(0x48, 0xd3, 0xe0), IN([RAX] = 0x1234, [RCX] = 64), .fin = CF | SF },
	/* shl al, 0: flags kept, al kept */
	{ __LINE__, CODE(0xc0, 0xe0, 0x00), IN([RAX] = 0xffff), .fin = ZF | OF },
	/* shl eax, 0: flags kept, but the 32-bit destination is still written,
	 * so the upper half is cleared (as with cmov false; checked on the CPU
	 * running this: shl $0, %eax clears bits 63..32) */
	{ __LINE__, CODE(0xc1, 0xe0, 0x00), IN([RAX] = 0xffffffff00001234), .fin = CF | PF,
	  OUT(W(RAX, 0x1234)) },
	/* shr eax, cl with cl = 32: masked to 0, same */
	{ __LINE__, CODE(0xd3, 0xe8), IN([RAX] = 0xffffffff00001234, [RCX] = 32), .fin = ZF,
	  OUT(W(RAX, 0x1234)) },
	/* shl al, 8: a count >= an 8-bit width is not emulated (documented) */
	{ __LINE__, CODE(0xc0, 0xe0, 0x08), IN([RAX] = 1), NOTSUP },

	/* ---- imul (ZF, SF, PF undefined) ---------------------------------- */
	/* imul rax, rcx: -3 * 7 = -21 fits */
	{ __LINE__, CODE(0x48, 0x0f, 0xaf, 0xc1), IN([RAX] = (uint64_t)-3, [RCX] = 7), .fin = CF | OF,
	  OUT(W(RAX, (uint64_t)-21)), FL(0), IGN(ZF | SF | PF) },
	/* imul rax, rcx: 2^32 * 2^32 = 2^64, truncated to 0: overflow */
	{ __LINE__, CODE(0x48, 0x0f, 0xaf, 0xc1), IN([RAX] = 0x100000000, [RCX] = 0x100000000),
	  OUT(W(RAX, 0)), FL(CF | OF), IGN(ZF | SF | PF) },
	/* imul rax, rcx: 2^62 * 2 = 2^63 is not a signed 64-bit value */
	{ __LINE__, CODE(0x48, 0x0f, 0xaf, 0xc1), IN([RAX] = 0x4000000000000000, [RCX] = 2),
	  OUT(W(RAX, MIN64)), FL(CF | OF), IGN(ZF | SF | PF) },
	/* imul rax, rcx: -2^62 * 2 = -2^63 is */
	{ __LINE__, CODE(0x48, 0x0f, 0xaf, 0xc1), IN([RAX] = 0xc000000000000000, [RCX] = 2),
	  .fin = CF | OF, OUT(W(RAX, MIN64)), FL(0), IGN(ZF | SF | PF) },
	/* imul eax, ecx: 0x10000 * 0x8000 = 2^31 overflows 32 bits; zero-extended */
	{ __LINE__, CODE(0x0f, 0xaf, 0xc1), IN([RAX] = 0xffffffff00010000, [RCX] = 0x8000),
	  OUT(W(RAX, 0x80000000)), FL(CF | OF), IGN(ZF | SF | PF) },
	/* imul eax, ecx: -1 * 0x7fffffff = -0x7fffffff fits */
	{ __LINE__, CODE(0x0f, 0xaf, 0xc1), IN([RAX] = 0xffffffff, [RCX] = 0x7fffffff),
	  OUT(W(RAX, 0x80000001)), FL(0), IGN(ZF | SF | PF) },
	/* imul rax, rcx, 10 */
	{ __LINE__, CODE(0x48, 0x6b, 0xc1, 0x0a), IN([RAX] = M1, [RCX] = 5), OUT(W(RAX, 50)), FL(0),
	  IGN(ZF | SF | PF) },
	/* imul rax, rcx, 0x40000000: 4 * 2^30 = 2^32 fits in 64 bits */
	{ __LINE__, CODE(0x48, 0x69, 0xc1, 0x00, 0x00, 0x00, 0x40), IN([RCX] = 4),
	  OUT(W(RAX, 0x100000000)), FL(0), IGN(ZF | SF | PF) },
	/* imul eax, ecx, 0x40000000: 2^32 does not fit in 32: eax = 0 */
	{ __LINE__, CODE(0x69, 0xc1, 0x00, 0x00, 0x00, 0x40), IN([RAX] = M1, [RCX] = 4),
	  OUT(W(RAX, 0)), FL(CF | OF), IGN(ZF | SF | PF) },
	/* imul ax, cx, -1: -(-32768) = 32768 does not fit in 16: ax = 0x8000 */
	{ __LINE__, CODE(0x66, 0x6b, 0xc1, 0xff), IN([RAX] = 0xffffffffffff1234, [RCX] = 0x8000),
	  OUT(W(RAX, 0xffffffffffff8000)), FL(CF | OF), IGN(ZF | SF | PF) },
	/* ---- one-operand mul/imul: rdx:rax = rax * src (ZF, SF, PF undefined) */
	/* imul rcx: 3 * 4 = 12, rdx = 0 (the sign of 12): fits */
	{ __LINE__, CODE(0x48, 0xf7, 0xe9), IN([RAX] = 3, [RCX] = 4, [RDX] = 77), .fin = CF | OF,
	  OUT(W(RAX, 12), W(RDX, 0)), FL(0), IGN(ZF | SF | PF) },
	/* imul rcx: -3 * 4 = -12: rdx = all ones, its sign extension: fits */
	{ __LINE__, CODE(0x48, 0xf7, 0xe9), IN([RAX] = (uint64_t)-3, [RCX] = 4),
	  OUT(W(RAX, (uint64_t)-12), W(RDX, M1)), FL(0), IGN(ZF | SF | PF) },
	/* imul rcx: 2^62 * 4 = 2^64: rax = 0, rdx = 1: does not fit */
	{ __LINE__, CODE(0x48, 0xf7, 0xe9), IN([RAX] = 0x4000000000000000, [RCX] = 4),
	  OUT(W(RAX, 0), W(RDX, 1)), FL(CF | OF), IGN(ZF | SF | PF) },
	/* mul rcx: 10 * 3 = 30, rdx = 0 */
	{ __LINE__, CODE(0x48, 0xf7, 0xe1), IN([RAX] = 10, [RCX] = 3, [RDX] = 77),
	  OUT(W(RAX, 30), W(RDX, 0)), FL(0), IGN(ZF | SF | PF) },
	/* mul rcx: 2^63 * 4 = 2^65: rax = 0, rdx = 2 */
	{ __LINE__, CODE(0x48, 0xf7, 0xe1), IN([RAX] = MIN64, [RCX] = 4),
	  OUT(W(RAX, 0), W(RDX, 2)), FL(CF | OF), IGN(ZF | SF | PF) },
	/* mul ecx: 0xffffffff * 2 = 0x1fffffffe: eax = 0xfffffffe, edx = 1, both
	 * zero-extended */
	{ __LINE__, CODE(0xf7, 0xe1), IN([RAX] = 0xaaaaaaaaffffffff, [RCX] = 2, [RDX] = M1),
	  OUT(W(RAX, 0xfffffffe), W(RDX, 1)), FL(CF | OF), IGN(ZF | SF | PF) },
	/* mul cl: al 16 * 16 = 256: ax = 0x0100, the rest of rax kept, rdx too */
	{ __LINE__, CODE(0xf6, 0xe1), IN([RAX] = 0x1234567890abcd10, [RCX] = 16, [RDX] = 5),
	  OUT(W(RAX, 0x1234567890ab0100)), FL(CF | OF), IGN(ZF | SF | PF) },

	/* ---- div/idiv: rax = rdx:rax / src, rdx = remainder; flags undefined */
	/* div rcx: 100 / 7 = 14 r 2 */
	{ __LINE__, CODE(0x48, 0xf7, 0xf1), IN([RAX] = 100, [RCX] = 7, [RDX] = 0),
	  OUT(W(RAX, 14), W(RDX, 2)), IGN(CF | OF | ZF | SF | PF) },
	/* div rcx: rdx:rax = 2^64 + 5, / 2 = 2^63 + 2 r 1 (the high half counts) */
	{ __LINE__, CODE(0x48, 0xf7, 0xf1), IN([RAX] = 5, [RCX] = 2, [RDX] = 1),
	  OUT(W(RAX, 0x8000000000000002), W(RDX, 1)), IGN(CF | OF | ZF | SF | PF) },
	/* div ecx: edx:eax = 0x1_00000000 / 3 = 0x55555555 r 1, zero-extended */
	{ __LINE__, CODE(0xf7, 0xf1), IN([RAX] = 0xffffffff00000000, [RCX] = 3, [RDX] = 1),
	  OUT(W(RAX, 0x55555555), W(RDX, 1)), IGN(CF | OF | ZF | SF | PF) },
	/* idiv rcx: -7 / 2 = -3 r -1 (truncated toward zero) */
	{ __LINE__, CODE(0x48, 0xf7, 0xf9), IN([RAX] = (uint64_t)-7, [RCX] = 2, [RDX] = M1),
	  OUT(W(RAX, (uint64_t)-3), W(RDX, M1)), IGN(CF | OF | ZF | SF | PF) },
	/* div cl: ax 0x0107 / 16 = 16 r 7: al = 0x10, ah = 7, the rest kept */
	{ __LINE__, CODE(0xf6, 0xf1), IN([RAX] = 0x1234567890ab0107, [RCX] = 16, [RDX] = 5),
	  OUT(W(RAX, 0x1234567890ab0710)), IGN(CF | OF | ZF | SF | PF) },
	/* div rcx by zero: the program's own #DE, not emulated */
	{ __LINE__, CODE(0x48, 0xf7, 0xf1), IN([RAX] = 1, [RCX] = 0), NOTSUP },
	/* div rcx: quotient 2^64 does not fit (#DE): not emulated */
	{ __LINE__, CODE(0x48, 0xf7, 0xf1), IN([RAX] = 0, [RCX] = 1, [RDX] = 1), NOTSUP },
	/* idiv rcx: MIN64 / -1 does not fit (#DE): not emulated */
	{ __LINE__, CODE(0x48, 0xf7, 0xf9), IN([RAX] = MIN64, [RCX] = M1, [RDX] = M1), NOTSUP },

	/* ---- bit counts, bswap, xchg -------------------------------------- */
	/* tzcnt rax, rcx: 0x10 -> 4; CF = (src == 0), ZF = (result == 0) */
	{ __LINE__, CODE(0xf3, 0x48, 0x0f, 0xbc, 0xc1), IN([RCX] = 0x10), .fin = CF | ZF,
	  OUT(W(RAX, 4)), FL(0), IGN(OF | SF | PF) },
	/* tzcnt rax, rcx: 0 -> 64, CF */
	{ __LINE__, CODE(0xf3, 0x48, 0x0f, 0xbc, 0xc1), IN([RCX] = 0), OUT(W(RAX, 64)), FL(CF),
	  IGN(OF | SF | PF) },
	/* tzcnt eax, ecx: 1 -> 0: ZF */
	{ __LINE__, CODE(0xf3, 0x0f, 0xbc, 0xc1), IN([RAX] = M1, [RCX] = 1), OUT(W(RAX, 0)), FL(ZF),
	  IGN(OF | SF | PF) },
	/* lzcnt rax, rcx: 1 -> 63 */
	{ __LINE__, CODE(0xf3, 0x48, 0x0f, 0xbd, 0xc1), IN([RCX] = 1), OUT(W(RAX, 63)), FL(0),
	  IGN(OF | SF | PF) },
	/* lzcnt eax, ecx: 0 -> 32, CF */
	{ __LINE__, CODE(0xf3, 0x0f, 0xbd, 0xc1), IN([RCX] = 0), OUT(W(RAX, 32)), FL(CF),
	  IGN(OF | SF | PF) },
	/* popcnt rax, rcx: 0xff -> 8, every arithmetic flag clear */
	{ __LINE__, CODE(0xf3, 0x48, 0x0f, 0xb8, 0xc1), IN([RCX] = 0xff), .fin = ALLF,
	  OUT(W(RAX, 8)), FL(0) },
	/* popcnt rax, rcx: 0 -> 0, ZF */
	{ __LINE__, CODE(0xf3, 0x48, 0x0f, 0xb8, 0xc1), IN([RAX] = 5, [RCX] = 0), OUT(W(RAX, 0)),
	  FL(ZF) },
	/* bsf rax, rcx: 0x100 -> 8, ZF clear (CF, OF, SF, PF undefined) */
	{ __LINE__, CODE(0x48, 0x0f, 0xbc, 0xc1), IN([RCX] = 0x100), .fin = ZF, OUT(W(RAX, 8)),
	  FL(0), IGN(CF | OF | SF | PF) },
	/* bsf rax, rcx: 0 -> ZF, rax kept */
	{ __LINE__, CODE(0x48, 0x0f, 0xbc, 0xc1), IN([RAX] = 77, [RCX] = 0), FL(ZF),
	  IGN(CF | OF | SF | PF) },
	/* bsr rax, rcx: 0x8100 -> 15 */
	{ __LINE__, CODE(0x48, 0x0f, 0xbd, 0xc1), IN([RCX] = 0x8100), OUT(W(RAX, 15)), FL(0),
	  IGN(CF | OF | SF | PF) },
	/* xtest outside a transaction (a run never starts in one): ZF, the
	 * other arithmetic flags cleared */
	{ __LINE__, CODE(0x0f, 0x01, 0xd6), .fin = CF | SF | OF, FL(ZF) },
	/* bswap rax */
	{ __LINE__, CODE(0x48, 0x0f, 0xc8), IN([RAX] = 0x0102030405060708),
	  OUT(W(RAX, 0x0807060504030201)) },
	/* bswap eax: the upper half cleared */
	{ __LINE__, CODE(0x0f, 0xc8), IN([RAX] = 0xffffffff11223344), OUT(W(RAX, 0x44332211)) },
	/* xchg rax, rcx */
	{ __LINE__, CODE(0x48, 0x91), IN([RAX] = 1, [RCX] = 2), OUT(W(RAX, 2), W(RCX, 1)) },
	/* xchg [rbx], rax: locked without a prefix; the run sees a load and a
	 * store: rax = data[0], 8 bytes stored there; flags kept */
	{ __LINE__, CODE(0x48, 0x87, 0x03), IN([RAX] = 1, [RBX] = DA(0)), .fin = CF,
	  OUT(W(RAX, 0x8877665544332211)), ST(DA(0), 8) },

	/* ---- atomics (the lock prefix changes nothing a run sees) ---------- */
	/* lock add [rbx], eax: 0x44332211 + 1 = 0x44332212 stored (4 bytes);
	 * 0x12 has 2 bits: PF */
	{ __LINE__, CODE(0xf0, 0x01, 0x03), IN([RAX] = 1, [RBX] = DA(0)), FL(PF), ST(DA(0), 4) },
	/* lock xadd [rbx], rcx: rcx = the old 0x8877665544332211, ...221
	 * stored; SF (bit 63), 0x21 has 2 bits: PF; no carry, no overflow
	 * (signs differ) */
	{ __LINE__, CODE(0xf0, 0x48, 0x0f, 0xc1, 0x0b), IN([RCX] = 0x10, [RBX] = DA(0)),
	  OUT(W(RCX, 0x8877665544332211)), FL(SF | PF), ST(DA(0), 8) },
	/* xadd rax, rax: the sum wins (src is written first) */
	{ __LINE__, CODE(0x48, 0x0f, 0xc1, 0xc0), IN([RAX] = 3), OUT(W(RAX, 6)), FL(PF) },
	/* lock cmpxchg [rbx], rcx, rax equal to data[0]: rcx stored; ZF and PF
	 * of the compare's 0 */
	{ __LINE__, CODE(0xf0, 0x48, 0x0f, 0xb1, 0x0b),
	  IN([RAX] = 0x8877665544332211, [RCX] = 5, [RBX] = DA(0)), FL(ZF | PF), ST(DA(0), 8) },
	/* ... rax one more: rax - data[0] = 1 (no flag), rax = data[0]; no
	 * store noted (the CPU's write-back of the old value is none the
	 * oracle sees) */
	{ __LINE__, CODE(0xf0, 0x48, 0x0f, 0xb1, 0x0b),
	  IN([RAX] = 0x8877665544332212, [RCX] = 5, [RBX] = DA(0)), .fin = ZF,
	  OUT(W(RAX, 0x8877665544332211)), FL(0) },
	/* lock cmpxchg [rbx], ecx, eax 0: 0 - 0x44332211 = 0xbbccddef: SF, CF,
	 * 0xef has 7 bits (no PF); eax = 0x44332211, the upper half cleared */
	{ __LINE__, CODE(0xf0, 0x0f, 0xb1, 0x0b), IN([RAX] = 0xffffffff00000000, [RBX] = DA(0)),
	  OUT(W(RAX, 0x44332211)), FL(SF | CF) },
	/* cmpxchg rcx, rdx: a register destination, not emulated */
	{ __LINE__, CODE(0x48, 0x0f, 0xb1, 0xd1), IN([RAX] = 1, [RCX] = 2), NOTSUP },

	/* ---- cdqe / cwde / cqo / cdq -------------------------------------- */
	/* cdqe */
	{ __LINE__, CODE(0x48, 0x98), IN([RAX] = 0x1234567880000000), .fin = ALLF,
	  OUT(W(RAX, 0xffffffff80000000)) },
	{ __LINE__, CODE(0x48, 0x98), IN([RAX] = 0xffffffff7fffffff), OUT(W(RAX, 0x7fffffff)) },
	/* cwde: eax = sign-extended ax; upper half cleared */
	{ __LINE__, CODE(0x98), IN([RAX] = 0xffffffff00008000), OUT(W(RAX, 0xffff8000)) },
	/* cqo */
	{ __LINE__, CODE(0x48, 0x99), IN([RAX] = MIN64, [RDX] = 0x1234), OUT(W(RDX, M1)) },
	{ __LINE__, CODE(0x48, 0x99), IN([RAX] = 1, [RDX] = M1), OUT(W(RDX, 0)) },
	/* cdq: edx = 0xffffffff, upper half of rdx cleared */
	{ __LINE__, CODE(0x99), IN([RAX] = 0x80000000, [RDX] = 0x1234), OUT(W(RDX, 0xffffffff)) },
	{ __LINE__, CODE(0x99), IN([RAX] = 0xffffffff7fffffff, [RDX] = M1), OUT(W(RDX, 0)) },

	/* ---- setcc -------------------------------------------------------- */
	/* setz al, ZF: al = 1 */
	{ __LINE__, CODE(0x0f, 0x94, 0xc0), IN([RAX] = M1), .fin = ZF, OUT(W(RAX, 0xffffffffffffff01)) },
	/* setz al, no ZF: al = 0 */
	{ __LINE__, CODE(0x0f, 0x94, 0xc0), IN([RAX] = 0xffff), OUT(W(RAX, 0xff00)) },
	/* setb cl, CF */
	{ __LINE__, CODE(0x0f, 0x92, 0xc1), .fin = CF, OUT(W(RCX, 1)) },
	/* setl al: SF != OF */
	{ __LINE__, CODE(0x0f, 0x9c, 0xc0), .fin = SF, OUT(W(RAX, 1)) },
	/* setl al: SF == OF */
	{ __LINE__, CODE(0x0f, 0x9c, 0xc0), IN([RAX] = 0xff), .fin = SF | OF, OUT(W(RAX, 0)) },
	/* setle al: ZF */
	{ __LINE__, CODE(0x0f, 0x9e, 0xc0), .fin = ZF | SF | OF, OUT(W(RAX, 1)) },
	/* setnbe al: CF = ZF = 0 */
	{ __LINE__, CODE(0x0f, 0x97, 0xc0), .fin = SF, OUT(W(RAX, 1)) },
	/* setnbe al: CF */
	{ __LINE__, CODE(0x0f, 0x97, 0xc0), IN([RAX] = 0x1ff), .fin = CF, OUT(W(RAX, 0x100)) },
	/* setnle al: ZF = 0, SF == OF */
	{ __LINE__, CODE(0x0f, 0x9f, 0xc0), .fin = SF | OF, OUT(W(RAX, 1)) },
	/* setp al */
	{ __LINE__, CODE(0x0f, 0x9a, 0xc0), .fin = PF, OUT(W(RAX, 1)) },
	/* seto ah */
	{ __LINE__, CODE(0x0f, 0x90, 0xc4), IN([RAX] = 0xffff), .fin = OF, OUT(W(RAX, 0x01ff)) },
	/* setns bh */
	{ __LINE__, CODE(0x0f, 0x99, 0xc7), OUT(W(RBX, 0x100)) },

	/* ---- cmovcc ------------------------------------------------------- */
	/* cmovz rax, rcx, ZF: moved */
	{ __LINE__, CODE(0x48, 0x0f, 0x44, 0xc1), IN([RAX] = 1, [RCX] = 2), .fin = ZF, OUT(W(RAX, 2)) },
	/* cmovz rax, rcx, no ZF: kept */
	{ __LINE__, CODE(0x48, 0x0f, 0x44, 0xc1), IN([RAX] = 1, [RCX] = 2) },
	/* cmovz eax, ecx, no ZF: not moved, but the 32-bit destination is
	 * written: upper half cleared */
	{ __LINE__, CODE(0x0f, 0x44, 0xc1), IN([RAX] = 0xffffffff12345678, [RCX] = 2),
	  OUT(W(RAX, 0x12345678)) },
	/* cmovz eax, ecx, ZF */
	{ __LINE__, CODE(0x0f, 0x44, 0xc1), IN([RAX] = M1, [RCX] = 0xaaaaaaaa87654321), .fin = ZF,
	  OUT(W(RAX, 0x87654321)) },
	/* cmovs ax, cx, SF: 16-bit merge */
	{ __LINE__, CODE(0x66, 0x0f, 0x48, 0xc1), IN([RAX] = M1, [RCX] = 0x1234), .fin = SF,
	  OUT(W(RAX, 0xffffffffffff1234)) },
	/* cmovs ax, cx, no SF: kept whole */
	{ __LINE__, CODE(0x66, 0x0f, 0x48, 0xc1), IN([RAX] = M1, [RCX] = 0x1234) },
	/* cmovl rax, rcx: SF != OF */
	{ __LINE__, CODE(0x48, 0x0f, 0x4c, 0xc1), IN([RAX] = 1, [RCX] = 2), .fin = OF, OUT(W(RAX, 2)) },
	/* cmovnbe rax, rcx: CF, not moved */
	{ __LINE__, CODE(0x48, 0x0f, 0x47, 0xc1), IN([RAX] = 1, [RCX] = 2), .fin = CF },
	/* cmovle rax, rcx: ZF = 0, SF == OF, not moved */
	{ __LINE__, CODE(0x48, 0x0f, 0x4e, 0xc1), IN([RAX] = 1, [RCX] = 2), .fin = SF | OF },
	/* cmovz rax, [rbx], ZF: a load */
	{ __LINE__, CODE(0x48, 0x0f, 0x44, 0x03), IN([RBX] = DA(1)), .fin = ZF,
	  OUT(W(RAX, 0x0123456789abcdef)) },
	/* cmovz rax, [rbx], no ZF: kept */
	{ __LINE__, CODE(0x48, 0x0f, 0x44, 0x03), IN([RAX] = 7, [RBX] = DA(1)) },
	/* cmovz rax, [rbx] at an unreadable address, no ZF: the CPU reads the
	 * source whatever the condition (the emulator's comment says so too),
	 * so this faults */
	{ __LINE__, CODE(0x48, 0x0f, 0x44, 0x03), IN([RAX] = 7, [RBX] = 0x10), EFAULT_ },

	/* ---- jcc ---------------------------------------------------------- */
	/* jz +0x10 (74 10): taken to pc + 2 + 0x10 */
	{ __LINE__, CODE(0x74, 0x10), .fin = ZF, TO(0x12) },
	/* jz: not taken */
	{ __LINE__, CODE(0x74, 0x10), .fin = CF | SF },
	/* jz -0x10: taken backwards to pc + 2 - 0x10 */
	{ __LINE__, CODE(0x74, 0xf0), .fin = ZF, TO(2 - 0x10) },
	/* jnz rel32 +0x100: pc + 6 + 0x100 */
	{ __LINE__, CODE(0x0f, 0x85, 0x00, 0x01, 0x00, 0x00), TO(6 + 0x100) },
	/* jnz rel32: not taken */
	{ __LINE__, CODE(0x0f, 0x85, 0x00, 0x01, 0x00, 0x00), .fin = ZF },
	/* jb: CF */
	{ __LINE__, CODE(0x72, 0x10), .fin = CF, TO(0x12) },
	{ __LINE__, CODE(0x72, 0x10), .fin = ZF | SF | OF | PF },
	/* jl: SF != OF */
	{ __LINE__, CODE(0x7c, 0x10), .fin = SF, TO(0x12) },
	{ __LINE__, CODE(0x7c, 0x10), .fin = OF, TO(0x12) },
	{ __LINE__, CODE(0x7c, 0x10), .fin = SF | OF },
	/* jle: ZF or SF != OF */
	{ __LINE__, CODE(0x7e, 0x10), .fin = OF, TO(0x12) },
	{ __LINE__, CODE(0x7e, 0x10), .fin = ZF | SF | OF, TO(0x12) },
	{ __LINE__, CODE(0x7e, 0x10), .fin = CF | PF },
	/* jnbe: CF = ZF = 0 */
	{ __LINE__, CODE(0x77, 0x10), .fin = SF | OF | PF, TO(0x12) },
	{ __LINE__, CODE(0x77, 0x10), .fin = ZF },
	{ __LINE__, CODE(0x77, 0x10), .fin = CF },
	/* jbe */
	{ __LINE__, CODE(0x76, 0x10), .fin = CF, TO(0x12) },
	/* jnle: ZF = 0 and SF == OF */
	{ __LINE__, CODE(0x7f, 0x10), .fin = SF | OF, TO(0x12) },
	{ __LINE__, CODE(0x7f, 0x10), .fin = SF },
	/* jo, jno, js, jns, jp, jnp */
	{ __LINE__, CODE(0x70, 0x10), .fin = OF, TO(0x12) },
	{ __LINE__, CODE(0x71, 0x10), .fin = OF },
	{ __LINE__, CODE(0x78, 0x10), .fin = SF, TO(0x12) },
	{ __LINE__, CODE(0x79, 0x10), .fin = SF },
	{ __LINE__, CODE(0x7a, 0x10), .fin = PF, TO(0x12) },
	{ __LINE__, CODE(0x7b, 0x10), TO(0x12) },
	/* jnb: CF = 0 */
	{ __LINE__, CODE(0x73, 0x10), TO(0x12) },

	/* ---- jmp ---------------------------------------------------------- */
	/* jmp +0x10 */
	{ __LINE__, CODE(0xeb, 0x10), .fin = ALLF, TO(0x12) },
	/* jmp -2: to itself */
	{ __LINE__, CODE(0xeb, 0xfe), TO(0) },
	/* jmp rel32 +0x100 */
	{ __LINE__, CODE(0xe9, 0x00, 0x01, 0x00, 0x00), TO(5 + 0x100) },
	/* jmp rel32 -0x100 */
	{ __LINE__, CODE(0xe9, 0x00, 0xff, 0xff, 0xff), TO(5 - 0x100) },
	/* jmp rax */
	{ __LINE__, CODE(0xff, 0xe0), IN([RAX] = CT), TOABS(CT) },
	/* jmp rax to an unmapped page: -EFAULT, nothing changes */
	{ __LINE__, CODE(0xff, 0xe0), IN([RAX] = 0x10), EFAULT_ },
	/* jmp r11 */
	{ __LINE__, CODE(0x41, 0xff, 0xe3), IN([R11] = CT + 1), TOABS(CT + 1) },
	/* jmp [rbx]: the target is table[0] */
	{ __LINE__, CODE(0xff, 0x23), IN([RBX] = TA(0)), TOABS(CT) },
	/* jmp [rbx+rcx*8] (a switch table) */
	{ __LINE__, CODE(0xff, 0x24, 0xcb), IN([RBX] = TA(0) - 8, [RCX] = 2), TOABS(CT) },
	/* jmp [rbx], unreadable */
	{ __LINE__, CODE(0xff, 0x23), IN([RBX] = 0x10), EFAULT_ },

	/* ---- push / pop / leave ------------------------------------------- */
	/* push rax: rsp - 8, the slot noted as stored (not written) */
	{ __LINE__, CODE(0x50), IN([RAX] = 0x77, [RSP] = SA(2)), OUT(W(RSP, SA(1))), ST(SA(1), 8) },
	/* push r12 */
	{ __LINE__, CODE(0x41, 0x54), IN([R12] = 0x77, [RSP] = SA(2)), OUT(W(RSP, SA(1))),
	  ST(SA(1), 8) },
	/* push -1 (imm8) */
	{ __LINE__, CODE(0x6a, 0xff), IN([RSP] = SA(4)), OUT(W(RSP, SA(3))), ST(SA(3), 8) },
	/* push qword [rbx]: a load and a store */
	{ __LINE__, CODE(0xff, 0x33), IN([RBX] = DA(0), [RSP] = SA(4)), OUT(W(RSP, SA(3))),
	  ST(SA(3), 8) },
	/* pop rcx: reads stk[1] */
	{ __LINE__, CODE(0x59), IN([RSP] = SA(1)), OUT(W(RCX, 0x5001), W(RSP, SA(2))) },
	/* pop r15 */
	{ __LINE__, CODE(0x41, 0x5f), IN([RSP] = SA(5), [R15] = M1), OUT(W(R15, 0x5005), W(RSP, SA(6))) },
	/* pop rsp: rsp gets the loaded value, not the incremented one */
	{ __LINE__, CODE(0x5c), IN([RSP] = SA(0)), OUT(W(RSP, 0x5000)) },
	/* pop qword [rbx]: rsp + 8, the destination noted */
	{ __LINE__, CODE(0x8f, 0x03), IN([RBX] = DA(1), [RSP] = SA(0)), OUT(W(RSP, SA(1))),
	  ST(DA(1), 8) },
	/* pop rax, unreadable stack */
	{ __LINE__, CODE(0x58), IN([RSP] = 0x10), EFAULT_ },
	/* push ax: 16-bit push not emulated */
	{ __LINE__, CODE(0x66, 0x50), IN([RSP] = SA(2)), NOTSUP },
	/* push rax; pop rcx: the pop loads the pushed (unwritten) bytes, whose
	 * value the push noted */
	{ __LINE__, CODE(0x50, 0x59), N(2), IN([RAX] = 0x77, [RSP] = SA(2)),
	  OUT(W(RCX, 0x77)), TO(2), ST(SA(1), 8) },
	/* leave: rsp = rbp + 8, rbp = [rbp] */
	{ __LINE__, CODE(0xc9), IN([RBP] = SA(1), [RSP] = SA(0)), OUT(W(RSP, SA(2)), W(RBP, 0x5001)) },

	/* ---- loads -------------------------------------------------------- */
	/* mov rax, [rbx] */
	{ __LINE__, CODE(0x48, 0x8b, 0x03), IN([RBX] = DA(0)), .fin = ALLF,
	  OUT(W(RAX, 0x8877665544332211)) },
	/* mov eax, [rbx+4]: zero-extended */
	{ __LINE__, CODE(0x8b, 0x43, 0x04), IN([RAX] = M1, [RBX] = DA(0)), OUT(W(RAX, 0x88776655)) },
	/* mov al, [rbx]: merged */
	{ __LINE__, CODE(0x8a, 0x03), IN([RAX] = M1, [RBX] = DA(0)), OUT(W(RAX, 0xffffffffffffff11)) },
	/* mov ah, [rbx+1] */
	{ __LINE__, CODE(0x8a, 0x63, 0x01), IN([RAX] = M1, [RBX] = DA(0)),
	  OUT(W(RAX, 0xffffffffffff22ff)) },
	/* movzx eax, byte [rbx+7] */
	{ __LINE__, CODE(0x0f, 0xb6, 0x43, 0x07), IN([RAX] = M1, [RBX] = DA(0)), OUT(W(RAX, 0x88)) },
	/* movsx rax, byte [rbx+7] */
	{ __LINE__, CODE(0x48, 0x0f, 0xbe, 0x43, 0x07), IN([RBX] = DA(0)),
	  OUT(W(RAX, 0xffffffffffffff88)) },
	/* movsxd rax, dword [rbx+4] */
	{ __LINE__, CODE(0x48, 0x63, 0x43, 0x04), IN([RBX] = DA(0)), OUT(W(RAX, 0xffffffff88776655)) },
	/* mov rax, [rbx+rcx*8]: data[1] */
	{ __LINE__, CODE(0x48, 0x8b, 0x04, 0xcb), IN([RBX] = DA(0), [RCX] = 1),
	  OUT(W(RAX, 0x0123456789abcdef)) },
	/* add rax, [rbx+0x18]: 1 + data[3] (-1) = 0 */
	{ __LINE__, CODE(0x48, 0x03, 0x43, 0x18), IN([RAX] = 1, [RBX] = DA(0)), OUT(W(RAX, 0)),
	  FL(CF | ZF | PF) },
	/* cmp [rbx+8], rax: a load, no store */
	{ __LINE__, CODE(0x48, 0x39, 0x43, 0x08), IN([RAX] = 0x0123456789abcdef, [RBX] = DA(0)),
	  FL(ZF | PF) },
	/* test byte [rbx], 0x11: 0x11 (2 bits) */
	{ __LINE__, CODE(0xf6, 0x03, 0x11), IN([RBX] = DA(0)), .fin = ZF, FL(PF) },
	/* mov rax, fs:[8]: fs_base + 8 */
	{ __LINE__, CODE(0x64, 0x48, 0x8b, 0x04, 0x25, 0x08, 0x00, 0x00, 0x00), .fs = DA(0),
	  OUT(W(RAX, 0x0123456789abcdef)) },
	/* mov rax, gs:[rbx]: gs_base + 0x10 */
	{ __LINE__, CODE(0x65, 0x48, 0x8b, 0x03), IN([RBX] = 0x10), .gs = DA(0),
	  OUT(W(RAX, 0x401000)) },
	/* mov rax, [rip-7]: its own 7 bytes and the 0xcc after them */
	{ __LINE__, CODE(0x48, 0x8b, 0x05, 0xf9, 0xff, 0xff, 0xff), OUT(W(RAX, 0xccfffffff9058b48)) },
	/* mov rax, [rbx] at 0x10: -EFAULT, nothing changed */
	{ __LINE__, CODE(0x48, 0x8b, 0x03), IN([RAX] = 0x55, [RBX] = 0x10), .fin = CF, EFAULT_ },
	/* mov eax, [rbx] at 0 */
	{ __LINE__, CODE(0x8b, 0x03), IN([RAX] = M1), EFAULT_ },
	/* add rax, [rbx] at 0x10 */
	{ __LINE__, CODE(0x48, 0x03, 0x03), IN([RAX] = 1, [RBX] = 0x10), .fin = ZF, EFAULT_ },
	/* movzx eax, byte [0x10] (absolute) */
	{ __LINE__, CODE(0x0f, 0xb6, 0x04, 0x25, 0x10, 0x00, 0x00, 0x00), IN([RAX] = 3), EFAULT_ },

	/* ---- stores ------------------------------------------------------- */
	/* mov [rbx], rax: no register changes; data[1] noted */
	{ __LINE__, CODE(0x48, 0x89, 0x03), IN([RAX] = 0x5555, [RBX] = DA(1)), .fin = SF,
	  ST(DA(1), 8) },
	/* mov [rbx+2], cl */
	{ __LINE__, CODE(0x88, 0x4b, 0x02), IN([RCX] = 0x99, [RBX] = DA(0)), ST(DA(0) + 2, 1) },
	/* mov word [rbx+6], 0x1234 */
	{ __LINE__, CODE(0x66, 0xc7, 0x43, 0x06, 0x34, 0x12), IN([RBX] = DA(0)), ST(DA(0) + 6, 2) },
	/* mov [rbx], rax at 0x10: a store is only noted, never checked */
	{ __LINE__, CODE(0x48, 0x89, 0x03), IN([RBX] = 0x10), ST(0x10, 8) },
	/* add [rbx], rax: data[3] (-1) + 1 = 0: flags, a store, no register */
	{ __LINE__, CODE(0x48, 0x01, 0x03), IN([RAX] = 1, [RBX] = DA(3)), FL(CF | ZF | PF),
	  ST(DA(3), 8) },
	/* inc dword [rbx]: 0x44332211 + 1 = 0x44332212 (0x12: 2 bits); CF kept */
	{ __LINE__, CODE(0xff, 0x03), IN([RBX] = DA(0)), .fin = CF | ZF, FL(CF | PF), ST(DA(0), 4) },
	/* setz byte [rbx] */
	{ __LINE__, CODE(0x0f, 0x94, 0x03), IN([RBX] = DA(0)), .fin = ZF, ST(DA(0), 1) },
	/* mov [rbx], rax; mov rcx, [rbx]: the load of stored bytes gets the
	 * stored value */
	{ __LINE__, CODE(0x48, 0x89, 0x03, 0x48, 0x8b, 0x0b), N(2), IN([RAX] = 0x5555, [RBX] = DA(1)),
	  OUT(W(RCX, 0x5555)), TO(6), ST(DA(1), 8) },
	/* mov [rbx], rax; mov ecx, [rbx+2]: a part of the stored eight */
	{ __LINE__, CODE(0x48, 0x89, 0x03, 0x8b, 0x4b, 0x02), N(2),
	  IN([RAX] = 0x1122334455667788, [RBX] = DA(1)), OUT(W(RCX, 0x33445566)), TO(6),
	  ST(DA(1), 8) },
	/* mov [rbx+7], al; mov rcx, [rbx]: one stored byte in the loaded eight,
	 * put over data[1]'s (0x0123456789abcdef) top byte */
	{ __LINE__, CODE(0x88, 0x43, 0x07, 0x48, 0x8b, 0x0b), N(2), IN([RAX] = 0x5a, [RBX] = DA(1)),
	  OUT(W(RCX, 0x5a23456789abcdef)), TO(6), ST(DA(1) + 7, 1) },
	/* mov [rbx], al; mov [rbx+1], ax; mov rcx, [rbx]: two stores, the later
	 * beside the earlier, both over data[1]'s low bytes */
	{ __LINE__, CODE(0x88, 0x03, 0x66, 0x89, 0x43, 0x01, 0x48, 0x8b, 0x0b), N(3),
	  IN([RAX] = 0x7711, [RBX] = DA(1)), OUT(W(RCX, 0x0123456789771111)), TO(9),
	  ST(DA(1), 3) },
	/* mov [rbx], eax; mov ecx, [rbx+4]: the next four bytes are not stored,
	 * the load reads data[1]'s upper half */
	{ __LINE__, CODE(0x89, 0x03, 0x8b, 0x4b, 0x04), N(2), IN([RBX] = DA(1), [RCX] = M1),
	  OUT(W(RCX, 0x01234567)), ST(DA(1), 4) },
	/* mov [rbx+8], rax; mov cl, [rbx+7]: the byte before the store */
	{ __LINE__, CODE(0x48, 0x89, 0x43, 0x08, 0x8a, 0x4b, 0x07), N(2), IN([RBX] = DA(0), [RCX] = M1),
	  OUT(W(RCX, 0xffffffffffffff88)), ST(DA(1), 8) },
	/* mov [rbx], rax; add [rbx], rax: the read-modify-write loads the stored
	 * 1 and stores 2 */
	{ __LINE__, CODE(0x48, 0x89, 0x03, 0x48, 0x01, 0x03), N(2), IN([RAX] = 1, [RBX] = DA(1)),
	  FL(0), TO(6), ST(DA(1), 8) },
	/* vmovdqu [rbx], ymm0; mov rcx, [rbx]: the vector store's value is not
	 * known */
	{ __LINE__, CODE(0xc5, 0xfe, 0x7f, 0x03, 0x48, 0x8b, 0x0b), N(2),
	  IN([RBX] = DA(0)), NOTSUP, TO(4), ST(DA(0), 32) },
	/* nine mov [rbx], rax: all noted */
	{ __LINE__, CODE(0x48, 0x89, 0x03, 0x48, 0x89, 0x03, 0x48, 0x89, 0x03, 0x48, 0x89, 0x03,
			 0x48, 0x89, 0x03, 0x48, 0x89, 0x03, 0x48, 0x89, 0x03, 0x48, 0x89, 0x03,
			 0x48, 0x89, 0x03),
	  N(9), IN([RBX] = DA(1)), TO(27), ST(DA(1), 8) },
	/* eight mov [rbx], rax; mov [rbx+16], rax; mov rcx, [rbx+16]: the latest
	 * store that covers the load answers it */
	{ __LINE__, CODE(0x48, 0x89, 0x03, 0x48, 0x89, 0x03, 0x48, 0x89, 0x03, 0x48, 0x89, 0x03,
			 0x48, 0x89, 0x03, 0x48, 0x89, 0x03, 0x48, 0x89, 0x03, 0x48, 0x89, 0x03,
			 0x48, 0x89, 0x43, 0x10, 0x48, 0x8b, 0x4b, 0x10),
	  N(10), IN([RAX] = 9, [RBX] = DA(0)), OUT(W(RCX, 9)), TO(32), ST(DA(0), 8) },

	/* ---- call / ret --------------------------------------------------- */
	/* call +0x100: rsp - 8, slot noted, rip = pc + 5 + 0x100 */
	{ __LINE__, CODE(0xe8, 0x00, 0x01, 0x00, 0x00), IN([RSP] = SA(2)), OUT(W(RSP, SA(1))),
	  TO(5 + 0x100), ST(SA(1), 8) },
	/* call rax */
	{ __LINE__, CODE(0xff, 0xd0), IN([RAX] = CT, [RSP] = SA(2)), OUT(W(RSP, SA(1))),
	  TOABS(CT), ST(SA(1), 8) },
	/* call [rbx]: table[1] */
	{ __LINE__, CODE(0xff, 0x13), IN([RBX] = TA(1), [RSP] = SA(2)), OUT(W(RSP, SA(1))),
	  TOABS(CT), ST(SA(1), 8) },
	/* call [rbx], unreadable */
	{ __LINE__, CODE(0xff, 0x13), IN([RBX] = 0x10, [RSP] = SA(2)), EFAULT_ },
	/* ret: to rstk[1] */
	{ __LINE__, CODE(0xc3), IN([RSP] = RA(1)), OUT(W(RSP, RA(2))), TOABS(CT) },
	/* ret 0x10: rsp + 8 + 16 */
	{ __LINE__, CODE(0xc2, 0x10, 0x00), IN([RSP] = RA(0)), OUT(W(RSP, RA(3))), TOABS(CT) },
	/* ret, unreadable stack */
	{ __LINE__, CODE(0xc3), IN([RSP] = 0x10), EFAULT_ },
	/* call +1; (int3); ret: back to pc + 5 without reading the stack */
	{ __LINE__, CODE(0xe8, 0x01, 0x00, 0x00, 0x00, 0xcc, 0xc3), N(2), IN([RSP] = SA(4)), TO(5),
	  ST(SA(3), 8) },
	/* push rax; ret: a jump to rax, whose value the push noted */
	{ __LINE__, CODE(0x50, 0xc3), N(2), IN([RAX] = CT, [RSP] = SA(4)), TOABS(CT),
	  ST(SA(3), 8) },
	/* five call +0: the fifth is deeper than EMULATE_MAX_CALLS (4) */
	{ __LINE__, CODE(0xe8, 0, 0, 0, 0, 0xe8, 0, 0, 0, 0, 0xe8, 0, 0, 0, 0, 0xe8, 0, 0, 0, 0,
			 0xe8, 0, 0, 0, 0),
	  N(5), IN([RSP] = SA(6)), NOTSUP, OUT(W(RSP, SA(2))), TO(20), ST(SA(2), 32) },

	/* ---- not emulated: -ENOTSUP, nothing changed ---------------------- */
	/* syscall */
	{ __LINE__, CODE(0x0f, 0x05), IN([RAX] = 39), NOTSUP },
	/* rep movsb */
	{ __LINE__, CODE(0xf3, 0xa4), IN([RCX] = 1, [RSI] = DA(0), [RDI] = DA(1)), NOTSUP },
	/* cpuid */
	{ __LINE__, CODE(0x0f, 0xa2), NOTSUP },
	/* pushfq */
	{ __LINE__, CODE(0x9c), IN([RSP] = SA(2)), NOTSUP },
	/* stc: a flag change outside the emulated instructions */
	{ __LINE__, CODE(0xf9), NOTSUP },
	/* bt rax, rcx */
	{ __LINE__, CODE(0x48, 0x0f, 0xa3, 0xc8), IN([RAX] = 1), NOTSUP },
	/* loop +0x10 */
	{ __LINE__, CODE(0xe2, 0x10), IN([RCX] = 2), NOTSUP },
	/* ucomiss xmm0, xmm1: sets ZF, PF, CF */
	{ __LINE__, CODE(0x0f, 0x2e, 0xc1), NOTSUP },
	/* movd eax, xmm0: writes a general register */
	{ __LINE__, CODE(0x66, 0x0f, 0x7e, 0xc0), NOTSUP },
	/* ud2 */
	{ __LINE__, CODE(0x0f, 0x0b), NOTSUP },

	/* ---- no general register, flag or branch: a no-op ----------------- */
	/* addps xmm0, xmm1 (emulate.h: vector arithmetic is a no-op) */
	{ __LINE__, CODE(0x0f, 0x58, 0xc1), IN([RAX] = 1), .fin = ZF },
	/* vaddps ymm0, ymm1, ymm2 */
	{ __LINE__, CODE(0xc5, 0xf4, 0x58, 0xc2), .fin = CF },
	/* pxor xmm0, xmm0 */
	{ __LINE__, CODE(0x66, 0x0f, 0xef, 0xc0) },
	/* fadd st0, st1 */
	{ __LINE__, CODE(0xd8, 0xc1) },
	/* nop; nop dword [rax]; endbr64 */
	{ __LINE__, CODE(0x90) },
	{ __LINE__, CODE(0x0f, 0x1f, 0x00) },
	{ __LINE__, CODE(0xf3, 0x0f, 0x1e, 0xfa) },
	/* addps xmm0, [rbx]: a vector load of unstored bytes */
	{ __LINE__, CODE(0x0f, 0x58, 0x03), IN([RBX] = DA(0)) },
	/* movups [rbx], xmm0: a 16-byte store, noted */
	{ __LINE__, CODE(0x0f, 0x11, 0x03), IN([RBX] = DA(0)), ST(DA(0), 16) },
	/* movups [rbx], xmm0; movups xmm1, [rbx+8]: loads stored bytes */
	{ __LINE__, CODE(0x0f, 0x11, 0x03, 0x0f, 0x10, 0x4b, 0x08), N(2), IN([RBX] = DA(0)), NOTSUP,
	  TO(3), ST(DA(0), 16) },
	};

	run_rows(rows, sizeof(rows) / sizeof(rows[0]));

	/* Stores are only noted: the memory they name is as it was. */
	CHECK(__LINE__, memcmp(data, data_init, sizeof(data)) == 0, "an emulated store wrote data[]");
	CHECK(__LINE__, memcmp(stk, stk_init, sizeof(stk)) == 0, "an emulated store wrote stk[]");
#undef DA
#undef SA
}

/* ------------------------------------------------------------------ */
/* Flags against the CPU                                              */

/* Run one instruction on the CPU: a in the destination, b in rcx (cl, cx,
 * ecx), CF = cin before it; returns the destination and the rflags after.
 * pushfq writes below rsp: step over the red zone first (lea leaves the
 * flags alone). */
#define NATIVE(name, type, body)                                                          \
	static uint64_t name(uint64_t a_, uint64_t b_, uint64_t cin, uint64_t *fl)        \
	{                                                                                 \
		type a = (type)a_, b = (type)b_;                                          \
		uint64_t f;                                                               \
		__asm__("lea -128(%%rsp), %%rsp\n\t"                                      \
			"bt $0, %[cin]\n\t" body "\n\t"                                   \
			"pushfq\n\t"                                                      \
			"popq %[f]\n\t"                                                   \
			"lea 128(%%rsp), %%rsp"                                           \
			: [a] "+r"(a), [f] "=&r"(f)                                       \
			: [b] "c"(b), [cin] "r"(cin)                                      \
			: "cc");                                                          \
		*fl = f;                                                                  \
		return (uint64_t)a;                                                       \
	}
#define NATIVE_3(op, body)                          \
	NATIVE(native_##op##16, uint16_t, body)     \
	NATIVE(native_##op##32, uint32_t, body)     \
	NATIVE(native_##op##64, uint64_t, body)
#define NATIVE_4(op, body) NATIVE(native_##op##8, uint8_t, body) NATIVE_3(op, body)

NATIVE_4(add, "add %[b], %[a]")
NATIVE_4(sub, "sub %[b], %[a]")
NATIVE_4(adc, "adc %[b], %[a]") /* CF in from cin, as in the emulated run */
NATIVE_4(sbb, "sbb %[b], %[a]")
NATIVE_4(and, "and %[b], %[a]")
NATIVE_4(or, "or %[b], %[a]")
NATIVE_4(xor, "xor %[b], %[a]")
NATIVE_4(cmp, "cmp %[b], %[a]")
NATIVE_4(inc, "inc %[a]")
NATIVE_4(dec, "dec %[a]")
NATIVE_4(neg, "neg %[a]")
NATIVE_4(shl, "shl %%cl, %[a]") /* by cl: the same flags as by the immediate */
NATIVE_4(shr, "shr %%cl, %[a]")
NATIVE_4(sar, "sar %%cl, %[a]")
NATIVE_4(rol, "rol %%cl, %[a]")
NATIVE_4(ror, "ror %%cl, %[a]")
NATIVE_3(imul, "imul %[b], %[a]") /* no 8-bit two-operand imul */

typedef uint64_t (*native_fn)(uint64_t, uint64_t, uint64_t, uint64_t *);

enum diff_kind { D_BIN, D_UN, D_SHIFT, D_ROTATE, D_IMUL };

/* Encodings: [66 for 16 bits] [48 (REX.W) for 64] [0f] opcode modrm [imm8].
 * The 8-bit opcode is the wider one's minus 1 (w bit clear).
 *   modrm c8 = 11 001 000: reg ecx/cl, rm eax/al ("op eax, ecx": 01 /r etc.)
 *   modrm c0/c8/d8 = 11 /0 /1 /3 000: fe/ff /0 inc, /1 dec, f6/f7 /3 neg of eax
 *   modrm e0/e8/f8 = 11 /4 /5 /7 000: c0/c1 /4 shl, /5 shr, /7 sar eax, imm8
 *   modrm c0/c8 = 11 /0 /1 000: c0/c1 /0 rol, /1 ror eax, imm8
 *   0f af c1 = 11 000 001: imul eax, ecx (reg is the destination) */
struct diff_op {
	int line;
	const char *name;
	enum diff_kind kind;
	uint8_t twobyte; /* 0f escape */
	uint8_t no_write; /* cmp: flags only */
	uint8_t opcode;  /* the 16/32/64-bit form */
	uint8_t modrm;
	native_fn fn[4]; /* 8, 16, 32, 64 bits */
};

#define FNS4(op) { native_##op##8, native_##op##16, native_##op##32, native_##op##64 }
static const struct diff_op diff_ops[] = {
	{ __LINE__, "add", D_BIN, 0, 0, 0x01, 0xc8, FNS4(add) },   /* add eax, ecx: 01 c8 */
	{ __LINE__, "sub", D_BIN, 0, 0, 0x29, 0xc8, FNS4(sub) },   /* sub eax, ecx: 29 c8 */
	{ __LINE__, "adc", D_BIN, 0, 0, 0x11, 0xc8, FNS4(adc) },   /* adc eax, ecx: 11 c8 */
	{ __LINE__, "sbb", D_BIN, 0, 0, 0x19, 0xc8, FNS4(sbb) },   /* sbb eax, ecx: 19 c8 */
	{ __LINE__, "and", D_BIN, 0, 0, 0x21, 0xc8, FNS4(and) },   /* and eax, ecx: 21 c8 */
	{ __LINE__, "or", D_BIN, 0, 0, 0x09, 0xc8, FNS4(or) },     /* or eax, ecx: 09 c8 */
	{ __LINE__, "xor", D_BIN, 0, 0, 0x31, 0xc8, FNS4(xor) },   /* xor eax, ecx: 31 c8 */
	{ __LINE__, "cmp", D_BIN, 0, 1, 0x39, 0xc8, FNS4(cmp) },   /* cmp eax, ecx: 39 c8 */
	{ __LINE__, "inc", D_UN, 0, 0, 0xff, 0xc0, FNS4(inc) },    /* inc eax: ff c0 */
	{ __LINE__, "dec", D_UN, 0, 0, 0xff, 0xc8, FNS4(dec) },    /* dec eax: ff c8 */
	{ __LINE__, "neg", D_UN, 0, 0, 0xf7, 0xd8, FNS4(neg) },    /* neg eax: f7 d8 */
	{ __LINE__, "shl", D_SHIFT, 0, 0, 0xc1, 0xe0, FNS4(shl) }, /* shl eax, n: c1 e0 n */
	{ __LINE__, "shr", D_SHIFT, 0, 0, 0xc1, 0xe8, FNS4(shr) }, /* shr eax, n: c1 e8 n */
	{ __LINE__, "sar", D_SHIFT, 0, 0, 0xc1, 0xf8, FNS4(sar) }, /* sar eax, n: c1 f8 n */
	{ __LINE__, "rol", D_ROTATE, 0, 0, 0xc1, 0xc0, FNS4(rol) }, /* rol eax, n: c1 c0 n */
	{ __LINE__, "ror", D_ROTATE, 0, 0, 0xc1, 0xc8, FNS4(ror) }, /* ror eax, n: c1 c8 n */
	{ __LINE__, "imul", D_IMUL, 1, 0, 0xaf, 0xc1,              /* imul eax, ecx: 0f af c1 */
	  { NULL, native_imul16, native_imul32, native_imul64 } },
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void) /* xorshift64* */
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* An operand of width bits: uniformly random, small, or next to an edge. */
static uint64_t rng_operand(unsigned bits)
{
	uint64_t m = bits == 64 ? ~0ull : (1ull << bits) - 1, sb = 1ull << (bits - 1);
	uint64_t d = rng() % 5;
	switch (rng() % 4) {
	case 0: return d & m;                 /* small positive */
	case 1: return (0 - d) & m;           /* small negative */
	case 2: return (sb + d - 2) & m;      /* around min and max */
	default: return rng() & m;
	}
}

static long n_diff;

static void diff_one(const struct diff_op *op, int wi, uint64_t a, uint64_t b)
{
	static const unsigned widths[4] = { 8, 16, 32, 64 };
	unsigned bits = widths[wi];
	uint64_t m = bits == 64 ? ~0ull : (1ull << bits) - 1;
	uint64_t pc = (uint64_t)(uintptr_t)code_buf;
	uint64_t cin = rng() & 1, junk = rng();
	uint8_t len = 0;

	/* the instruction */
	memset(code_buf, 0xcc, sizeof(code_buf));
	if (bits == 16)
		code_buf[len++] = 0x66;
	if (bits == 64)
		code_buf[len++] = 0x48;
	if (op->twobyte)
		code_buf[len++] = 0x0f;
	code_buf[len++] = bits == 8 ? op->opcode - 1 : op->opcode;
	code_buf[len++] = op->modrm;
	if (op->kind == D_SHIFT || op->kind == D_ROTATE)
		code_buf[len++] = (uint8_t)b;

	/* on the CPU */
	uint64_t nfl, nr = op->fn[wi](a, b, cin, &nfl);

	/* emulated: rax and rcx carry junk above the operand width */
	struct decode_regs regs;
	struct decode_insn in;
	struct decode_zydis z;
	struct emulate e;
	memset(&regs, 0, sizeof(regs));
	uint64_t rax0 = (junk & ~m) | (a & m), rcx0 = (~junk & ~m) | (b & m);
	regs.gpr[DECODE_RAX] = rax0;
	regs.gpr[DECODE_RCX] = rcx0;
	regs.rip = pc;
	regs.rflags = RFLAGS_BASE | cin;
	emulate_begin(&e, pc, NULL);
	n_diff++;
	int rc = decode_at_zydis(pc, &regs, &in, &z);
	if (rc == 0)
		rc = emulate_insn(&e, &regs, &in, &z);
	if (rc != 0) {
		FAIL(op->line, "%s%u %#llx, %#llx: returned %d", op->name, bits,
		     (unsigned long long)a, (unsigned long long)b, rc);
		return;
	}

	/* the register: 8/16-bit writes merge, 32-bit ones zero-extend; cmp
	 * writes nothing */
	uint64_t want = op->no_write ? rax0 : bits >= 32 ? nr & m : (rax0 & ~m) | (nr & m);
	uint64_t mask = ARITH;
	if (op->kind == D_SHIFT && b > 1)
		mask &= ~OF; /* undefined for counts above 1 */
	if (op->kind == D_ROTATE)
		mask = b == 1 ? CF | OF : CF; /* the others kept (bt left them as it left them) */
	if (op->kind == D_IMUL)
		mask = CF | OF; /* SF, ZF, PF undefined */
	CHECK(op->line, regs.gpr[DECODE_RAX] == want,
	      "%s%u %#llx, %#llx (CF=%llu): rax %#llx, CPU %#llx", op->name, bits,
	      (unsigned long long)a, (unsigned long long)b, (unsigned long long)cin,
	      (unsigned long long)regs.gpr[DECODE_RAX], (unsigned long long)want);
	CHECK(op->line, ((regs.rflags ^ nfl) & mask) == 0,
	      "%s%u %#llx, %#llx (CF=%llu): flags %#llx, CPU %#llx (compared: %#llx)", op->name,
	      bits, (unsigned long long)a, (unsigned long long)b, (unsigned long long)cin,
	      (unsigned long long)(regs.rflags & mask), (unsigned long long)(nfl & mask),
	      (unsigned long long)mask);
	CHECK(op->line, regs.gpr[DECODE_RCX] == rcx0 && regs.rip == pc + len,
	      "%s%u: rcx or rip wrong", op->name, bits);
}

static void test_differential(void)
{
	for (size_t o = 0; o < sizeof(diff_ops) / sizeof(diff_ops[0]); o++) {
		const struct diff_op *op = &diff_ops[o];
		for (int wi = 0; wi < 4; wi++) {
			if (!op->fn[wi])
				continue;
			unsigned bits = 8u << wi;
			uint64_t m = bits == 64 ? ~0ull : (1ull << bits) - 1, sb = 1ull << (bits - 1);
			/* 0, 1, -1, min, max */
			const uint64_t edge[5] = { 0, 1, m, sb, sb - 1 };

			if (op->kind == D_SHIFT) {
				/* every count 1..bits-1 on the edges, then random pairs */
				for (int i = 0; i < 5; i++)
					for (uint64_t n = 1; n < bits; n++)
						diff_one(op, wi, edge[i], n);
				for (int i = 0; i < 300; i++)
					diff_one(op, wi, rng_operand(bits), 1 + rng() % (bits - 1));
				continue;
			}
			if (op->kind == D_ROTATE) {
				/* every count the CPU masks to (5 bits, 6 for 64):
				 * 8/16-bit rotates by their width and more too */
				unsigned most = bits == 64 ? 63 : 31;
				for (int i = 0; i < 5; i++)
					for (uint64_t n = 1; n <= most; n++)
						diff_one(op, wi, edge[i], n);
				for (int i = 0; i < 300; i++)
					diff_one(op, wi, rng_operand(bits), 1 + rng() % most);
				continue;
			}
			for (int i = 0; i < 5; i++)
				for (int j = 0; j < 5; j++)
					diff_one(op, wi, edge[i], edge[j]);
			for (int i = 0; i < 300; i++)
				diff_one(op, wi, rng_operand(bits), rng_operand(bits));
		}
	}
}

/* 3. emulate_context: the tick's context [leaf, A, B, C] (callers as return
 *    address - 1) rewritten for emulated calls (return addresses R1, R2,
 *    innermost last) and returns out of the starting frame, with the frames'
 *    stack pointers (objects.c finds a stack slot's frame by them).  The
 *    leaf slot is the caller's to set, so it stays 0x10 here. */
static void test_context(void)
{
	static const struct {
		int line;
		int n_calls;
		int frames_left;
		int max;
		int want_n;                /* or -EINVAL */
		uint64_t want[6];
		uint64_t want_sps[6];      /* frame i owns [sps[i], sps[i+1]) */
	} rows[] = {
		{__LINE__, 0, 0, 8, 4, {0x10, 0xa0, 0xb0, 0xc0}, {0x1000, 0x1100, 0x1200, 0x1300}},
		/* a call from the leaf's frame: its site comes right after the
		 * leaf, and the callee's frame ends at its return address + 8 */
		{__LINE__, 1, 0, 8, 5, {0x10, 0x1ff, 0xa0, 0xb0, 0xc0},
		 {0xff8, 0x1000, 0x1100, 0x1200, 0x1300}},
		/* two calls: the inner one (R2) first */
		{__LINE__, 2, 0, 8, 6, {0x10, 0x2ff, 0x1ff, 0xa0, 0xb0, 0xc0},
		 {0xf00, 0xf08, 0x1000, 0x1100, 0x1200, 0x1300}},
		/* a return out of the leaf's function: A's frame is the leaf's now */
		{__LINE__, 0, 1, 8, 3, {0x10, 0xb0, 0xc0}, {0x1100, 0x1200, 0x1300}},
		/* returned out of every caller but the last... */
		{__LINE__, 0, 3, 8, 1, {0x10}, {0x1300}},
		/* ...and out of that one too: no context left */
		{__LINE__, 0, 4, 8, -EINVAL, {0}, {0}},
		/* too deep: the outermost frames go, then the outermost calls */
		{__LINE__, 1, 0, 3, 3, {0x10, 0x1ff, 0xa0}, {0xff8, 0x1000, 0x1100}},
		{__LINE__, 2, 0, 2, 2, {0x10, 0x2ff}, {0xf00, 0xf08}},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct emulate e;
		uint64_t pcs[8] = {0x10, 0xa0, 0xb0, 0xc0};
		uint64_t sps[8] = {0x1000, 0x1100, 0x1200, 0x1300};
		emulate_begin(&e, 0x10, NULL);
		e.n_calls = rows[i].n_calls;
		e.frames_left = rows[i].frames_left;
		e.call_ret[0] = 0x200;
		e.call_ret[1] = 0x300;
		e.call_slot[0] = 0xff8; /* where each call pushed its return address */
		e.call_slot[1] = 0xf00;
		int n = emulate_context(&e, pcs, sps, 4, rows[i].max);
		CHECK(rows[i].line, n == rows[i].want_n, "emulate_context returned %d, expected %d", n,
		      rows[i].want_n);
		for (int k = 0; k < n && n == rows[i].want_n; k++) {
			CHECK(rows[i].line, pcs[k] == rows[i].want[k], "pcs[%d] = %#llx, expected %#llx",
			      k, (unsigned long long)pcs[k], (unsigned long long)rows[i].want[k]);
			CHECK(rows[i].line, sps[k] == rows[i].want_sps[k],
			      "sps[%d] = %#llx, expected %#llx", k, (unsigned long long)sps[k],
			      (unsigned long long)rows[i].want_sps[k]);
		}
	}
}

/* 4. The registers each instruction of a real code corpus changes, against
 *    its form's dep_writes.  libc's executable segment, swept linearly
 *    (a byte that does not decode is stepped over): compiled code of every
 *    kind the emulator meets in a window. */
struct code_range {
	uint64_t lo, hi;
};

static int find_libc_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct code_range *r = arg;
	(void)size;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libc.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			r->lo = info->dlpi_addr + ph->p_vaddr;
			r->hi = r->lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

static uint64_t sweep_buf[1024] __attribute__((aligned(64)));
static uint8_t sweep_zmm[XSAVE_NZMM][64];
static const uint64_t sweep_k[XSAVE_NK] = {0, 0x5555, 0xff00ff, ~0ull, 3, 0x80, 0xf0f0, 1};

static void test_writes_in_form(void)
{
	struct code_range text = {0, 0};
	dl_iterate_phdr(find_libc_text, &text);
	if (!text.lo) {
		FAIL(__LINE__, "libc's code not found");
		return;
	}
	long n_insns = 0, n_ok = 0, n_failed = 0;
	static struct emulate_vec vec;
	for (int v = 0; v < XSAVE_NZMM; v++) /* small numbers in each lane */
		for (int b = 0; b < 64; b++)
			sweep_zmm[v][b] = (uint8_t)((v * 7 + b) % 5);
	for (uint64_t pc = text.lo; pc + 16 <= text.hi;) {
		struct decode_regs regs;
		memset(&regs, 0, sizeof(regs));
		for (int g = 0; g < DECODE_NGPR; g++) /* mid-buffer, apart from each other */
			regs.gpr[g] = (uint64_t)(uintptr_t)&sweep_buf[256 + 32 * g];
		regs.rip = pc;
		regs.rflags = RFLAGS_BASE;
		struct decode_insn in;
		struct decode_zydis z;
		if (decode_at_zydis(pc, &regs, &in, &z) != 0) {
			pc++;
			continue;
		}
		struct decode_regs before = regs;
		struct emulate e;
		memset(&e, 0, sizeof(e));
		emulate_vec_set(&vec, sweep_zmm, sweep_k);
		emulate_begin(&e, pc, &vec);
		int rc = emulate_insn(&e, &regs, &in, &z);
		n_insns++;
		if (rc != 0) {
			n_failed++;
			if (memcmp(&regs, &before, sizeof(regs)) != 0)
				FAIL(__LINE__, "%s at libc+%#llx returned %d but changed regs",
				     ZydisMnemonicGetString((ZydisMnemonic)in.mnemonic),
				     (unsigned long long)(pc - text.lo), rc);
		} else {
			n_ok++;
			for (int g = 0; g < DECODE_NGPR; g++)
				if (regs.gpr[g] != before.gpr[g] && !(z.form.dep_writes & (1ull << g)))
					FAIL(__LINE__, "%s at libc+%#llx changed %s, not among its writes",
					     ZydisMnemonicGetString((ZydisMnemonic)in.mnemonic),
					     (unsigned long long)(pc - text.lo), gpr_name[g]);
			if (regs.fs_base != before.fs_base || regs.gs_base != before.gs_base)
				FAIL(__LINE__, "%s at libc+%#llx changed fs or gs base",
				     ZydisMnemonicGetString((ZydisMnemonic)in.mnemonic),
				     (unsigned long long)(pc - text.lo));
		}
		pc += in.len;
	}
	/* A sweep that ran nothing tells nothing: libc has ~340,000 instructions. */
	CHECK(__LINE__, n_ok > 100000 && n_failed > 1000,
	      "only %ld of %ld instructions ran and %ld failed", n_ok, n_insns, n_failed);
	printf("test_emulate: libc swept, %ld instructions: %ld ran, %ld failed\n", n_insns, n_ok,
	       n_failed);
}

int main(void)
{
	int rc = decode_init();
	if (rc != 0) {
		fprintf(stderr, "decode_init: %d\n", rc);
		return 1;
	}
	test_table();
	test_differential();
	test_context();
	test_writes_in_form();
	printf("test_emulate: %d table rows, %ld differential cases\n", n_rows, n_diff);
	fflush(stdout);
	if (check_failures) {
		fprintf(stderr, "test_emulate: %d failure(s)\n", check_failures);
		return 1;
	}
	printf("test_emulate: all checks passed\n");
	return 0;
}
