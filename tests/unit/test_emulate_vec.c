/* Unit test of the emulate_vec module (and xsave's frame reading).
 *
 * 1. Against the CPU.  Each row is one instruction (vector, mask, BMI), assembled below into a
 *    stub that loads zmm0-3, zmm16, k1-3, rax, rcx, rdx, rsi (a memory
 *    operand's base) and the flags from a struct vstate, runs it and stores
 *    them back.  The emulator runs the same instruction (decoded in place in
 *    the stub) on the same values; registers, masks and CF PF AF ZF SF OF
 *    must match, for 200 pseudo-random states a row (bytes drawn from a small
 *    alphabet, and registers derived from one another, so that compares
 *    find equal and unequal elements alike).  A row's masked load may run
 *    at the end of a page followed by an unmapped one (fault suppression).
 * 2. Unknown values: after an instruction the module does not know writes a
 *    register, moving that register's value into a general register or the
 *    flags stops the emulator (-ENOTSUP); another register still moves.
 * 3. Masked accesses: the bytes and span emulate_vec_access gives.
 * 4. End to end: from a signal handler, with the frame's XSAVE area, run
 *    glibc's strlen, strncpy, memchr and strcmp (the EVEX or AVX2 versions
 *    its IFUNCs pick here) to their return without a stop, and check their
 *    results.  Exit 77 where the CPU has no AVX2 (the SSE2 versions use
 *    instructions this module does not run).
 *
 * Exit status 0 on success.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

#include "witch/decode.h"
#include "witch/decode_zydis.h"
#include "witch/emulate.h"
#include "witch/emulate_vec.h"
#include "witch/xsave.h"

#include "check.h"

#define FLAGS 0x8d5ull /* CF PF AF ZF SF OF */

struct vstate {
	uint8_t z[5][64]; /* zmm0-3, zmm16 */
	uint64_t k[3];    /* k1-3 */
	uint64_t rax, rcx, rdx, rflags, rsi;
} __attribute__((aligned(64)));

/* ROW name, instruction: the stub name(struct vstate *) and name_insn, the
 * instruction's address. */
__asm__(".macro ROW name, insn:vararg\n"
	".text\n.globl \\name\n.type \\name,@function\n\\name:\n"
	"vmovdqu64 0(%rdi), %zmm0\n vmovdqu64 64(%rdi), %zmm1\n vmovdqu64 128(%rdi), %zmm2\n"
	"vmovdqu64 192(%rdi), %zmm3\n vmovdqu64 256(%rdi), %zmm16\n"
	"kmovq 320(%rdi), %k1\n kmovq 328(%rdi), %k2\n kmovq 336(%rdi), %k3\n"
	"mov 344(%rdi), %rax\n mov 352(%rdi), %rcx\n mov 360(%rdi), %rdx\n mov 376(%rdi), %rsi\n"
	"pushq 368(%rdi)\n popfq\n"
	".globl \\name\\()_insn\n\\name\\()_insn:\n \\insn\n"
	"pushfq\n popq 368(%rdi)\n"
	"vmovdqu64 %zmm0, 0(%rdi)\n vmovdqu64 %zmm1, 64(%rdi)\n vmovdqu64 %zmm2, 128(%rdi)\n"
	"vmovdqu64 %zmm3, 192(%rdi)\n vmovdqu64 %zmm16, 256(%rdi)\n"
	"kmovq %k1, 320(%rdi)\n kmovq %k2, 328(%rdi)\n kmovq %k3, 336(%rdi)\n"
	"mov %rax, 344(%rdi)\n mov %rcx, 352(%rdi)\n mov %rdx, 360(%rdi)\n"
	"vzeroupper\n ret\n"
	".endm\n");

struct row {
	int line;
	const char *name;
	void (*run)(struct vstate *);
	const char *insn;
};

/* One row a line: the stub, and its entry in the section vec_rows (so that
 * each row has its own __LINE__). */
#define ROW(name, text)                                                          \
	__asm__("ROW t_" #name ", " text);                                       \
	void t_##name(struct vstate *);                                          \
	extern const char t_##name##_insn[];                                     \
	static const struct row row_##name __attribute__((used, section("vec_rows"), \
							  aligned(8))) = {          \
		__LINE__, #name, t_##name, t_##name##_insn};

ROW(mov_ymm_mem, "vmovdqu (%rsi), %ymm1")
ROW(mov_z_masked, "vmovdqu8 (%rsi), %zmm1{%k1}{z}")
ROW(mov_merge, "vmovdqu8 (%rsi), %zmm1{%k1}")
ROW(mov_q_merge, "vmovdqu64 %zmm2, %zmm16{%k2}")
ROW(mov_a_reg, "vmovdqa %ymm2, %ymm1")
ROW(movdqu_sse, "movdqu (%rsi), %xmm1")
ROW(movaps_sse, "movaps %xmm3, %xmm2")
ROW(bcast_x, "vpbroadcastb %xmm2, %ymm1")
ROW(bcast_gpr, "vpbroadcastb %eax, %zmm16")
ROW(bcast_d_mask, "vpbroadcastd %ecx, %ymm1{%k1}")
ROW(bcast_mem, "vpbroadcastq (%rsi), %zmm2")
ROW(vpxor, "vpxor %ymm1, %ymm2, %ymm3")
ROW(vpxorq, "vpxorq %zmm16, %zmm1, %zmm2")
ROW(vpxorq_self, "vpxorq %xmm16, %xmm16, %xmm16")
ROW(vpor, "vpor %ymm1, %ymm2, %ymm3")
ROW(vpord_mask, "vpord %zmm1, %zmm2, %zmm3{%k1}{z}")
ROW(vpand, "vpand (%rsi), %ymm2, %ymm3")
ROW(vpandn, "vpandn %ymm1, %ymm2, %ymm3")
ROW(pxor, "pxor %xmm1, %xmm2")
ROW(por, "por (%rsi), %xmm2")
ROW(pand, "pand %xmm1, %xmm2")
ROW(pandn, "pandn %xmm1, %xmm2")
ROW(ternlog, "vpternlogd $0xde, %ymm1, %ymm2, %ymm3")
ROW(ternlog_m, "vpternlogq $0x96, %zmm1, %zmm2, %zmm3{%k1}")
ROW(vpminub, "vpminub %ymm1, %ymm2, %ymm3")
ROW(vpminub_z, "vpminub %zmm1, %zmm16, %zmm3{%k1}{z}")
ROW(pminub, "pminub %xmm1, %xmm2")
ROW(vpminud, "vpminud (%rsi), %ymm2, %ymm3")
ROW(vpminuq, "vpminuq %zmm1, %zmm2, %zmm3")
ROW(vpmaxub, "vpmaxub %ymm1, %ymm2, %ymm3")
ROW(vpaddb, "vpaddb %ymm1, %ymm2, %ymm3")
ROW(vpsubb, "vpsubb %zmm1, %zmm2, %zmm3")
ROW(vpaddd, "vpaddd %ymm1, %ymm2, %ymm3")
ROW(vpcmpeqb, "vpcmpeqb %ymm1, %ymm2, %ymm3")
ROW(pcmpeqb, "pcmpeqb %xmm1, %xmm2")
ROW(pcmpeqd, "pcmpeqd (%rsi), %xmm2")
ROW(vpcmpgtb, "vpcmpgtb %ymm1, %ymm2, %ymm3")
ROW(cmpeq_k, "vpcmpeqb %zmm1, %zmm2, %k2")
ROW(cmpeq_k_mem, "vpcmpeqb (%rsi), %zmm1, %k2{%k1}")
ROW(cmpeq_k_y16, "vpcmpeqb %ymm16, %ymm2, %k3")
ROW(cmpgt_k, "vpcmpgtb %zmm1, %zmm2, %k2")
ROW(cmpb_lt, "vpcmpb $1, %zmm1, %zmm2, %k2")
ROW(cmpub_lt, "vpcmpub $1, %ymm2, %ymm16, %k3")
ROW(cmpub_le, "vpcmpub $2, %zmm1, %zmm2, %k2{%k1}")
ROW(cmpb_neq, "vpcmpb $4, %zmm1, %zmm2, %k2")
ROW(cmpub_nlt, "vpcmpub $5, %zmm1, %zmm2, %k2")
ROW(cmpub_nle, "vpcmpub $6, %ymm1, %ymm2, %k2")
ROW(cmpd_lt, "vpcmpd $1, %zmm1, %zmm2, %k2")
ROW(cmpuq_le, "vpcmpuq $2, %zmm1, %zmm2, %k2")
ROW(testnm, "vptestnmb %zmm1, %zmm1, %k1")
ROW(testm, "vptestmb %ymm1, %ymm2, %k2{%k1}")
ROW(testnm_d, "vptestnmd %zmm1, %zmm2, %k2")
ROW(kmovd_r, "kmovd %k1, %eax")
ROW(kmovq_r, "kmovq %k2, %rax")
ROW(kmovb_r, "kmovb %k1, %ecx")
ROW(kmovw_k, "kmovw %eax, %k2")
ROW(kmovd_k, "kmovd %ecx, %k3")
ROW(kmovq_kk, "kmovq %k1, %k2")
ROW(kmovd_mem, "kmovd (%rsi), %k2")
ROW(kortestd, "kortestd %k1, %k2")
ROW(kortestq, "kortestq %k1, %k1")
ROW(kortestb, "kortestb %k2, %k3")
ROW(ktestd, "ktestd %k1, %k2")
ROW(kord, "kord %k1, %k2, %k3")
ROW(kandd, "kandd %k1, %k2, %k3")
ROW(kandnq, "kandnq %k1, %k2, %k3")
ROW(knotd, "knotd %k1, %k2")
ROW(kxorq, "kxorq %k1, %k2, %k3")
ROW(kxnorw, "kxnorw %k1, %k2, %k3")
ROW(kaddd, "kaddd %k1, %k2, %k3")
ROW(kshiftrq, "kshiftrq $3, %k1, %k2")
ROW(kshiftld, "kshiftld $5, %k1, %k2")
ROW(kshiftrd_big, "kshiftrd $40, %k1, %k2")
ROW(kunpckdq, "kunpckdq %k1, %k2, %k3")
ROW(kunpckbw, "kunpckbw %k1, %k2, %k3")
ROW(vpmovmskb, "vpmovmskb %ymm1, %eax")
ROW(pmovmskb, "pmovmskb %xmm1, %ecx")
ROW(vmovmskps, "vmovmskps %ymm1, %eax")
ROW(ptest, "ptest %xmm1, %xmm2")
ROW(vptest, "vptest %ymm1, %ymm2")
ROW(vptest_mem, "vptest (%rsi), %ymm2")
ROW(vmovd_r, "vmovd %xmm1, %eax")
ROW(vmovq_r, "vmovq %xmm1, %rax")
ROW(movq_r, "movq %xmm1, %rcx")
ROW(vmovd_x, "vmovd %eax, %xmm1")
ROW(movq_x, "movq %rax, %xmm2")
ROW(vmovq_xx, "vmovq %xmm2, %xmm1")
ROW(vmovq_mem, "vmovq (%rsi), %xmm1")
ROW(movd_sse_mem, "movd (%rsi), %xmm3")
ROW(vzeroupper, "vzeroupper")
ROW(vzeroall, "vzeroall")
ROW(ucomisd, "ucomisd %xmm1, %xmm2")
ROW(comiss, "comiss %xmm1, %xmm2")
ROW(ucomisd_mem, "vucomisd (%rsi), %xmm1")
ROW(fp_movsd_mem, "movsd (%rsi), %xmm1")
ROW(fp_movsd_reg, "movsd %xmm2, %xmm1")
ROW(fp_vmovsd_reg, "vmovsd %xmm1, %xmm2, %xmm3")
ROW(fp_vmovsd_mem, "vmovsd (%rsi), %xmm3")
ROW(fp_movss_reg_ss, "movss %xmm2, %xmm1")
ROW(fp_addsd, "addsd %xmm1, %xmm2")
ROW(fp_vaddsd, "vaddsd %xmm1, %xmm2, %xmm3")
ROW(fp_subsd_mem, "subsd (%rsi), %xmm2")
ROW(fp_mulsd, "mulsd %xmm1, %xmm2")
ROW(fp_divsd, "divsd %xmm1, %xmm2")
ROW(fp_vdivsd, "vdivsd %xmm1, %xmm2, %xmm16")
ROW(fp_addss_ss, "addss %xmm1, %xmm2")
ROW(fp_vmulss_ss, "vmulss %xmm1, %xmm2, %xmm3")
ROW(fp_divss_ss, "divss %xmm1, %xmm2")
ROW(fp_cvtsi2sd, "cvtsi2sd %rax, %xmm1")
ROW(fp_cvtsi2sdl, "cvtsi2sd %ecx, %xmm1")
ROW(fp_vcvtsi2sd, "vcvtsi2sd %rax, %xmm2, %xmm3")
ROW(fp_cvtsi2ss_ss, "cvtsi2ss %rax, %xmm1")
ROW(fp_cvttsd2si, "cvttsd2si %xmm1, %rax")
ROW(fp_cvttsd2si32, "cvttsd2si %xmm1, %eax")
ROW(fp_cvttsd2si_mem, "cvttsd2si (%rsi), %rcx")
ROW(fp_cvttss2si_ss, "cvttss2si %xmm1, %eax")
ROW(fp_cvtsd2ss, "cvtsd2ss %xmm1, %xmm2")
ROW(fp_cvtss2sd_ss, "cvtss2sd %xmm1, %xmm2")
ROW(fp_xorpd, "xorpd %xmm1, %xmm2")
ROW(fp_andpd, "andpd (%rsi), %xmm2")
ROW(fp_vxorps, "vxorps %ymm1, %ymm2, %ymm3")
ROW(fp_ucomisd, "ucomisd %xmm1, %xmm2")
ROW(fp_fmadd132sd, "vfmadd132sd %xmm1, %xmm2, %xmm3")
ROW(fp_fmadd213sd, "vfmadd213sd %xmm1, %xmm2, %xmm3")
ROW(fp_fmadd231sd_mem, "vfmadd231sd (%rsi), %xmm2, %xmm3")
ROW(fp_fnmadd231sd, "vfnmadd231sd %xmm1, %xmm2, %xmm3")
ROW(fp_fmsub132ss_ss, "vfmsub132ss %xmm1, %xmm2, %xmm3")
ROW(fp_fnmsub213sd, "vfnmsub213sd %xmm1, %xmm2, %xmm16")
ROW(bmi_shlx, "shlx %rcx, %rax, %rdx")
ROW(bmi_shrx, "shrx %ecx, %eax, %edx")
ROW(bmi_sarx, "sarx %rcx, %rax, %rdx")
ROW(bmi_sarx32, "sarx %ecx, %eax, %edx")
ROW(bmi_bzhi, "bzhi %rcx, %rax, %rdx")
ROW(bmi_bzhi32, "bzhi %ecx, %eax, %edx")
ROW(bmi_andn, "andn %rcx, %rax, %rdx")
ROW(bmi_blsr, "blsr %rcx, %rdx")
ROW(bmi_blsmsk, "blsmsk %ecx, %edx")
ROW(bmi_blsi, "blsi %rcx, %rdx")

extern const struct row __start_vec_rows[], __stop_vec_rows[];

static uint64_t rng_state = 0x243f6a8885a308d3ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static const uint8_t alphabet[] = {0x00, 0x01, 0x61, 0x7f, 0x80, 0xff, 0x3f, 0x40};

static void fill(uint8_t *b, size_t n, const uint8_t *like)
{
	for (size_t i = 0; i < n; i++)
		b[i] = like && rnd() % 4 ? like[i] : alphabet[rnd() % sizeof(alphabet)];
}

static uint64_t mask_value(void)
{
	switch (rnd() % 5) {
	case 0: return 0;
	case 1: return ~0ull;
	case 2: return 0xffffffffull;
	default: return rnd();
	}
}

/* The memory operand: 64 bytes before an unmapped page, or 32. */
static uint8_t *page_end;

/* Doubles (or floats) for the fp_ rows: no NaN (whose payload the emulator
 * does not promise), edges of the integer conversions. */
static void fill_fp(uint8_t *b, size_t n, int single)
{
	static const double vals[] = {1.5, -2.25, 3.0, 0.1, 1e10, -7.75, 2147483647.7,
				      -2147483648.9, -2147483649.0, 9.3e18, -9.3e18, 1e19, 0.0, -0.0,
				      1e-310, 1e300, 65536.5};
	for (size_t i = 0; i < n; i += single ? 4 : 8) {
		double d = rnd() % 3 ? vals[rnd() % (sizeof(vals) / sizeof(vals[0]))]
				     : (double)(int64_t)rnd() / (double)(1 + rnd() % 1000);
		if (single) {
			float f = (float)d;
			memcpy(b + i, &f, 4);
		} else {
			memcpy(b + i, &d, 8);
		}
	}
}

static void random_state(struct vstate *s, int near_end)
{
	fill(s->z[1], 64, NULL);
	fill(s->z[0], 64, s->z[1]);
	fill(s->z[2], 64, s->z[1]);
	fill(s->z[3], 64, s->z[2]);
	fill(s->z[4], 64, s->z[1]);
	for (int i = 0; i < 3; i++)
		s->k[i] = mask_value();
	s->rax = rnd();
	s->rcx = rnd() % 3 == 0 ? rnd() : rnd() % 3 ? rnd() % 70 : 0; /* counts, indexes */
	s->rdx = rnd();
	s->rflags = 0x202 | (rnd() & FLAGS);
	uint8_t *mem = page_end - (near_end ? 32 : 64);
	if (near_end) {
		s->k[0] &= 0xffffffffull; /* k1 enables bytes of the first 32 only */
		fill(mem, 32, s->z[1]);
	} else {
		fill(mem, 64, s->z[1]);
	}
	s->rsi = (uint64_t)(uintptr_t)mem;
}

static const int zslot[5] = {0, 1, 2, 3, 16};

static int n_checked;

static void test_against_cpu(void)
{
	for (const struct row *row = __start_vec_rows; row < __stop_vec_rows; row++) {
		for (int trial = 0; trial < 200; trial++) {
			struct vstate in, cpu;
			static struct emulate_vec v;
			uint8_t zmm[XSAVE_NZMM][64];
			uint64_t k[XSAVE_NK] = {0};
			int near_end = trial % 4 == 3 && strstr(row->name, "mask") != NULL;

			random_state(&in, near_end || (trial % 4 == 3 && !strcmp(row->name, "mov_z_masked")));
			if (!strncmp(row->name, "fp_", 3)) {
				int single = strstr(row->name, "_ss") != NULL;
				for (int i = 0; i < 5; i++)
					fill_fp(in.z[i], 64, single);
				fill_fp((uint8_t *)(uintptr_t)in.rsi, 16, single);
			}
			cpu = in;
			row->run(&cpu);

			memset(zmm, 0, sizeof(zmm));
			for (int i = 0; i < 5; i++)
				memcpy(zmm[zslot[i]], in.z[i], 64);
			for (int i = 0; i < 3; i++)
				k[1 + i] = in.k[i];
			emulate_vec_set(&v, zmm, k);
			struct decode_regs regs;
			memset(&regs, 0, sizeof(regs));
			regs.gpr[DECODE_RAX] = in.rax;
			regs.gpr[DECODE_RCX] = in.rcx;
			regs.gpr[DECODE_RDX] = in.rdx;
			regs.gpr[DECODE_RSI] = in.rsi;
			regs.rflags = in.rflags;
			regs.rip = (uint64_t)(uintptr_t)row->insn;
			struct emulate e;
			struct decode_insn di;
			struct decode_zydis z;
			memset(&e, 0, sizeof(e));
			emulate_begin(&e, regs.rip, &v);
			int rc = decode_at_zydis(regs.rip, &regs, &di, &z);
			if (rc == 0)
				rc = emulate_insn(&e, &regs, &di, &z);
			if (rc != 0) {
				FAIL(row->line, "%s: emulate_insn %d", row->name, rc);
				break;
			}
			int bad = 0;
			for (int i = 0; i < 5 && !bad; i++) {
				int unknown = !!(v.zmm_unknown & (1u << zslot[i]));
				bad = unknown || memcmp(v.zmm[zslot[i]], cpu.z[i], 64) != 0;
				CHECK(row->line, !bad, "%s trial %d: zmm%d %s", row->name, trial,
				      zslot[i], unknown ? "unknown" : "differs");
			}
			for (int i = 0; i < 3 && !bad; i++) {
				bad = (v.k_unknown & (2u << i)) || v.k[1 + i] != cpu.k[i];
				CHECK(row->line, !bad, "%s trial %d: k%d %llx, cpu %llx", row->name,
				      trial, i + 1, (unsigned long long)v.k[1 + i],
				      (unsigned long long)cpu.k[i]);
			}
			if (!bad) {
				bad = regs.gpr[DECODE_RAX] != cpu.rax || regs.gpr[DECODE_RCX] != cpu.rcx ||
				      regs.gpr[DECODE_RDX] != cpu.rdx;
				CHECK(row->line, !bad, "%s trial %d: rax %llx rcx %llx, cpu %llx %llx",
				      row->name, trial, (unsigned long long)regs.gpr[DECODE_RAX],
				      (unsigned long long)regs.gpr[DECODE_RCX],
				      (unsigned long long)cpu.rax, (unsigned long long)cpu.rcx);
			}
			if (!bad) {
				/* BMI leaves PF and AF undefined. */
				uint64_t fl = strncmp(row->name, "bmi_", 4) ? FLAGS : FLAGS & ~0x14ull;
				bad = (regs.rflags & fl) != (cpu.rflags & fl);
				CHECK(row->line, !bad, "%s trial %d: flags %llx, cpu %llx", row->name,
				      trial, (unsigned long long)(regs.rflags & FLAGS),
				      (unsigned long long)(cpu.rflags & FLAGS));
			}
			if (bad)
				break;
			n_checked++;
		}
	}
	printf("%d rows, %d states checked against the CPU\n",
	       (int)(__stop_vec_rows - __start_vec_rows), n_checked);
}

/* --- unknown values ----------------------------------------------------------- */

__asm__(".text\n.globl seq_shuf\nseq_shuf:\n vpshufb %ymm1, %ymm2, %ymm3\n"
	".globl seq_msk3\nseq_msk3:\n vpmovmskb %ymm3, %eax\n"
	".globl seq_msk1\nseq_msk1:\n vpmovmskb %ymm1, %eax\n"
	".globl seq_cmp3\nseq_cmp3:\n vpcmpeqb %ymm3, %ymm1, %k1\n"
	".globl seq_kmov1\nseq_kmov1:\n kmovd %k1, %eax\n"
	".globl seq_kor\nseq_kor:\n kortestd %k1, %k2\n"
	".globl seq_vzero\nseq_vzero:\n vzeroall\n"
	".globl seq_msk3b\nseq_msk3b:\n vpmovmskb %ymm3, %eax\n"
	".globl seq_bcast\nseq_bcast:\n vpaddd (%rsi){1to8}, %ymm1, %ymm2\n"
	".globl seq_msk2\nseq_msk2:\n vpmovmskb %ymm2, %eax\n"
	".globl seq_add\nseq_add:\n addsd %xmm4, %xmm5\n"
	".globl seq_mq\nseq_mq:\n movq %xmm5, %rcx\n"
	".globl seq_ldmx\nseq_ldmx:\n ldmxcsr (%rsp)\n ret\n");
extern const char seq_add[], seq_mq[], seq_ldmx[];
extern const char seq_shuf[], seq_msk3[], seq_msk1[], seq_cmp3[], seq_kmov1[], seq_kor[],
	seq_vzero[], seq_msk3b[], seq_bcast[], seq_msk2[];

/* One instruction of a sequence, and what emulate_insn must return. */
struct step {
	int line;
	const char *at;
	int rc;
};

/* Run the step's instruction on regs; an error leaves them as they were. */
static void run_step(struct emulate *e, struct decode_regs *regs, const struct step *st)
{
	struct decode_insn di;
	struct decode_zydis z;
	regs->rip = (uint64_t)(uintptr_t)st->at;
	struct decode_regs before = *regs;
	int rc = decode_at_zydis(regs->rip, regs, &di, &z);
	if (rc == 0)
		rc = emulate_insn(e, regs, &di, &z);
	CHECK(st->line, rc == st->rc, "emulate_insn %d, want %d", rc, st->rc);
	if (rc < 0)
		CHECK(st->line, !memcmp(&before, regs, sizeof(*regs)), "registers changed on an error");
}

static void test_unknown(void)
{
	static const struct step steps[] = {
		{__LINE__, seq_shuf, 0},          /* not emulated: ymm3 unknown */
		{__LINE__, seq_msk3, -ENOTSUP},   /* its value into eax: stop */
		{__LINE__, seq_msk1, 0},          /* ymm1 is still known */
		{__LINE__, seq_cmp3, 0},          /* unknown into k1: goes on */
		{__LINE__, seq_kmov1, -ENOTSUP},  /* k1 into eax: stop */
		{__LINE__, seq_kor, -ENOTSUP},    /* k1 into the flags: stop */
		{__LINE__, seq_vzero, 0},         /* zmm0-15 known zero again */
		{__LINE__, seq_msk3b, 0},
		{__LINE__, seq_bcast, 0},         /* {1toN}: not run, ymm2 unknown */
		{__LINE__, seq_msk2, -ENOTSUP},
		{__LINE__, seq_add, 0},           /* default MXCSR: run */
		{__LINE__, seq_mq, 0},
		{__LINE__, seq_ldmx, 0},          /* a rounding mode not known */
		{__LINE__, seq_add, 0},           /* ... xmm5 unknown */
		{__LINE__, seq_mq, -ENOTSUP},
	};
	static struct emulate_vec v;
	uint8_t zmm[XSAVE_NZMM][64];
	uint64_t k[XSAVE_NK] = {0};
	struct emulate e;
	struct decode_regs regs;

	memset(zmm, 0x5a, sizeof(zmm));
	emulate_vec_set(&v, zmm, k);
	memset(&regs, 0, sizeof(regs));
	memset(&e, 0, sizeof(e));
	emulate_begin(&e, (uint64_t)(uintptr_t)seq_shuf, &v);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		run_step(&e, &regs, &steps[i]);
	CHECK(__LINE__, regs.gpr[DECODE_RAX] == 0, "vpmovmskb of a zeroed ymm3: %llx",
	      (unsigned long long)regs.gpr[DECODE_RAX]);
}

/* --- stores forwarded to general loads ------------------------------------------ */

/* An xmm register stored, then 8 of its bytes loaded into a general
 * register: the load takes the stored value (emulate_vec.c's vec_store:
 * hashtab's counters bumped with one paddq stopped 4% of its windows).
 * A ymm store is not kept (its pieces would fill the store slots): the
 * load of its bytes stops the run. */
__asm__(".text\n.globl fw_st\nfw_st:\n movups %xmm1, (%rdi)\n"
	".globl fw_ld\nfw_ld:\n mov 8(%rdi), %rax\n"
	".globl fw_sty\nfw_sty:\n vmovdqu %ymm1, 32(%rdi)\n"
	".globl fw_ldy\nfw_ldy:\n mov 40(%rdi), %rax\n ret\n");
extern const char fw_st[], fw_ld[], fw_sty[], fw_ldy[];

static void test_store_forward(void)
{
	static const struct step steps[] = {
		{__LINE__, fw_st, 0},
		{__LINE__, fw_ld, 0},          /* rax = xmm1's bytes 8-15 */
		{__LINE__, fw_sty, 0},
		{__LINE__, fw_ldy, -ENOTSUP},  /* a ymm's bytes: not kept */
	};
	static struct emulate_vec v;
	static uint8_t buf[64];
	uint8_t zmm[XSAVE_NZMM][64];
	uint64_t k[XSAVE_NK] = {0}, want;
	struct emulate e;
	struct decode_regs regs;

	memset(zmm, 0, sizeof(zmm));
	for (int b = 0; b < 64; b++)
		zmm[1][b] = (uint8_t)(0x10 + b);
	memcpy(&want, zmm[1] + 8, 8);
	emulate_vec_set(&v, zmm, k);
	memset(&regs, 0, sizeof(regs));
	memset(&e, 0, sizeof(e));
	regs.gpr[DECODE_RDI] = (uint64_t)(uintptr_t)buf;
	emulate_begin(&e, (uint64_t)(uintptr_t)fw_st, &v);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		run_step(&e, &regs, &steps[i]);
		if (steps[i].at == fw_ld)
			CHECK(steps[i].line, regs.gpr[DECODE_RAX] == want, "loaded %llx, want %llx",
			      (unsigned long long)regs.gpr[DECODE_RAX], (unsigned long long)want);
	}
}

/* --- the bytes a picked store writes ------------------------------------------- */

/* emulate_last_stored: what look.c gives SilentCraft for a picked store, so
 * that its own trap is not needed.  Vector stores of every width whose
 * register is known; a general register's store; not a masked store, not an
 * unknown register, not an instruction that stored elsewhere.  zmm1 holds
 * 0x10, 0x11, ... (byte b: 0x10 + b), rax 0x1122334455667788. */
__asm__(".text\n.globl ls_x\nls_x:\n movups %xmm1, (%rdi)\n"
	".globl ls_y\nls_y:\n vmovdqu %ymm1, 32(%rdi)\n"
	".globl ls_z\nls_z:\n vmovdqu64 %zmm1, (%rdi)\n"
	".globl ls_q\nls_q:\n vmovq %xmm1, 8(%rdi)\n"
	".globl ls_g\nls_g:\n mov %rax, 16(%rdi)\n"
	".globl ls_m\nls_m:\n vmovdqu8 %zmm1, (%rdi){%k1}\n"
	".globl ls_u\nls_u:\n vmovdqu %ymm3, (%rdi)\n"
	".globl ls_add\nls_add:\n add $1, %rax\n ret\n");
extern const char ls_x[], ls_y[], ls_z[], ls_q[], ls_g[], ls_m[], ls_u[], ls_add[];

static const uint64_t ls_rax = 0x1122334455667788ull;

/* A run of the ls_ snippets begun: rdi at buf, rax ls_rax, the vector
 * state zmm and k (emulate_last_stored's and emulate_overlay_stored's rows). */
static void ls_begin(struct emulate *e, struct decode_regs *regs, struct emulate_vec *v,
		     uint8_t zmm[XSAVE_NZMM][64], uint64_t *k, uint8_t *buf, const char *at)
{
	emulate_vec_set(v, zmm, k);
	memset(regs, 0, sizeof(*regs));
	memset(e, 0, sizeof(*e));
	regs->gpr[DECODE_RDI] = (uint64_t)(uintptr_t)buf;
	regs->gpr[DECODE_RAX] = ls_rax;
	emulate_begin(e, (uint64_t)(uintptr_t)at, v);
}

static void test_last_stored(void)
{
	static const struct {
		int line;
		const char *before; /* run first (seq_shuf: ymm3 unknown), or NULL */
		const char *at;
		uint32_t off, len;  /* what is asked, from rdi */
		int rc;
		int from_rax;       /* the bytes are rax's, else zmm1's */
	} rows[] = {
		{__LINE__, NULL, ls_x, 0, 16, 0, 0},
		{__LINE__, NULL, ls_y, 32, 32, 0, 0},
		{__LINE__, NULL, ls_z, 0, 64, 0, 0},
		{__LINE__, NULL, ls_q, 8, 8, 0, 0},
		{__LINE__, NULL, ls_g, 16, 8, 0, 1},
		{__LINE__, NULL, ls_y, 0, 32, -1, 0},   /* it stored at 32 */
		{__LINE__, NULL, ls_y, 32, 16, -1, 0},  /* not its width */
		{__LINE__, NULL, ls_m, 0, 64, -1, 0},   /* masked */
		{__LINE__, seq_shuf, ls_u, 0, 32, -1, 0}, /* ymm3 unknown */
		{__LINE__, ls_y, ls_add, 32, 32, -1, 0}, /* the last instruction stored nothing */
	};
	static struct emulate_vec v;
	static uint8_t buf[128];
	uint8_t zmm[XSAVE_NZMM][64];
	uint64_t k[XSAVE_NK] = {0, 0xffff};

	memset(zmm, 0, sizeof(zmm));
	for (int b = 0; b < 64; b++)
		zmm[1][b] = (uint8_t)(0x10 + b);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct emulate e;
		struct decode_regs regs;
		uint8_t got[64], want[64];
		ls_begin(&e, &regs, &v, zmm, k, buf, rows[i].at);
		if (rows[i].before) {
			struct step st = {rows[i].line, rows[i].before, 0};
			run_step(&e, &regs, &st);
		}
		int stores = e.n_stores;
		emulate_vstore_forget(&e);
		struct step st = {rows[i].line, rows[i].at, 0};
		run_step(&e, &regs, &st);
		int rc = emulate_last_stored(&e, stores, regs.gpr[DECODE_RDI] + rows[i].off,
					     rows[i].len, got);
		CHECK(rows[i].line, rc == rows[i].rc, "emulate_last_stored %d, want %d", rc, rows[i].rc);
		memcpy(want, rows[i].from_rax ? (const uint8_t *)&ls_rax : zmm[1], rows[i].len);
		if (rc == 0)
			CHECK(rows[i].line, !memcmp(got, want, rows[i].len), "the stored bytes");
	}
}

/* emulate_overlay_stored: what LoadCraft's sample reads where the window
 * stored first (sample.c): the program's bytes as the caller read them,
 * with the window's stores of known value put over them.  The buffer is
 * 0xee throughout; ls_g stores rax at 16, ls_y ymm1 at 32 (a vector
 * store, whose value the overlay does not take: -ENOTSUP, buffer
 * untouched). */
static void test_overlay_stored(void)
{
	static const struct {
		int line;
		const char *at;
		uint32_t off, len;   /* what is overlaid, from rdi */
		int rc;
		uint32_t from, n;    /* rax's bytes expected at [off + from, + n), else 0xee */
	} rows[] = {
		{__LINE__, ls_g, 0, 32, 0, 16, 8},
		{__LINE__, ls_g, 20, 8, 0, 0, 4},  /* its last four bytes lead */
		{__LINE__, ls_g, 0, 16, 0, 0, 0},  /* apart: untouched */
		{__LINE__, ls_y, 32, 32, -ENOTSUP, 0, 0},
		{__LINE__, ls_y, 0, 32, 0, 0, 0},
	};
	static struct emulate_vec v;
	static uint8_t mem[128];
	uint8_t zmm[XSAVE_NZMM][64];
	uint64_t k[XSAVE_NK] = {0, 0xffff};
	memset(zmm, 0, sizeof(zmm));
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct emulate e;
		struct decode_regs regs;
		uint8_t got[64], want[64];
		ls_begin(&e, &regs, &v, zmm, k, mem, rows[i].at);
		struct step st = {rows[i].line, rows[i].at, 0};
		run_step(&e, &regs, &st);
		memset(got, 0xee, sizeof(got));
		memset(want, 0xee, sizeof(want));
		/* rax's bytes from where the store's overlap with the range begins */
		uint32_t lead = rows[i].off > 16 ? rows[i].off - 16 : 0;
		memcpy(want + rows[i].from, (const uint8_t *)&ls_rax + lead, rows[i].n);
		int rc = emulate_overlay_stored(&e, regs.gpr[DECODE_RDI] + rows[i].off, got, rows[i].len);
		CHECK(rows[i].line, rc == rows[i].rc, "emulate_overlay_stored %d, want %d", rc,
		      rows[i].rc);
		CHECK(rows[i].line, !memcmp(got, want, rows[i].len), "the overlaid bytes");
	}
}

/* --- masked accesses ------------------------------------------------------------ */

__asm__(".text\n.globl acc_b\nacc_b:\n vmovdqu8 %zmm1, (%rsi){%k1}\n"
	".globl acc_q\nacc_q:\n vmovdqu64 %zmm1, 8(%rsi){%k2}\n"
	".globl acc_nomask\nacc_nomask:\n vmovdqu8 %zmm1, (%rsi)\n"
	".globl acc_y\nacc_y:\n vmovdqu8 (%rsi), %ymm1{%k1}{z}\n ret\n");
extern const char acc_b[], acc_q[], acc_nomask[], acc_y[];

static void test_access(void)
{
	static const struct {
		int line;
		const char *at;
		uint64_t k1, k2;
		int bytes;        /* -ENOTSUP: not narrowed */
		uint64_t off;     /* the span, from rsi */
		uint32_t len;
	} rows_acc[] = {
		{__LINE__, acc_b, 0xffffffffull, 0, 32, 0, 32},
		{__LINE__, acc_b, 0xf0ull, 0, 4, 4, 4},
		{__LINE__, acc_b, 0x8000000000000001ull, 0, 2, 0, 64}, /* two bytes, 64 apart */
		{__LINE__, acc_b, 0, 0, 0, 0, 64},                   /* nothing stored */
		{__LINE__, acc_q, 0, 0x6, 16, 16, 16},               /* quadwords 1 and 2 */
		{__LINE__, acc_q, 0, 0xff00, 0, 8, 64},              /* beyond the 8 elements */
		{__LINE__, acc_nomask, ~0ull, 0, -ENOTSUP, 0, 64},
		{__LINE__, acc_y, 0xffff0000ffffull, 0, 16, 0, 16},  /* ymm: 32 elements */
	};
	static struct emulate_vec v;
	uint8_t zmm[XSAVE_NZMM][64] = {{0}};
	static uint8_t buf[128];

	for (size_t i = 0; i < sizeof(rows_acc) / sizeof(rows_acc[0]); i++) {
		uint64_t k[XSAVE_NK] = {0, rows_acc[i].k1, rows_acc[i].k2};
		struct decode_regs regs;
		struct decode_insn di;
		struct decode_zydis z;
		struct emulate e;
		emulate_vec_set(&v, zmm, k);
		memset(&regs, 0, sizeof(regs));
		regs.gpr[DECODE_RSI] = (uint64_t)(uintptr_t)buf;
		regs.rip = (uint64_t)(uintptr_t)rows_acc[i].at;
		memset(&e, 0, sizeof(e));
		emulate_begin(&e, regs.rip, &v);
		if (decode_at_zydis(regs.rip, &regs, &di, &z) != 0 || di.n_access != 1) {
			FAIL(rows_acc[i].line, "decode");
			continue;
		}
		struct decode_access a = di.access[0];
		int n = emulate_vec_access(&e, &z, &a);
		CHECK(rows_acc[i].line, n == rows_acc[i].bytes, "bytes %d, want %d", n,
		      rows_acc[i].bytes);
		if (n > 0)
			CHECK(rows_acc[i].line,
			      a.addr == (uint64_t)(uintptr_t)buf + rows_acc[i].off && a.len == rows_acc[i].len,
			      "span +%llu %u, want +%llu %u",
			      (unsigned long long)(a.addr - (uint64_t)(uintptr_t)buf), a.len,
			      (unsigned long long)rows_acc[i].off, rows_acc[i].len);
	}
}

/* --- end to end: glibc's string functions from a signal frame -------------------- */

static uint64_t fake_stack[64];
static void sentinel(void)
{
}

struct call {
	int line;
	const char *fn;
	uint64_t fn_addr;
	uint64_t rdi, rsi, rdx;
	uint64_t want_rax;
	int sign;        /* strcmp: compare the sign of eax only */
};

static struct call *cur_call;
static int cur_rc, cur_insns;
static uint64_t cur_rax;

static void on_usr1(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	static struct emulate_vec v;
	struct decode_regs regs;
	struct emulate e;

	(void)sig;
	(void)si;
	memset(&regs, 0, sizeof(regs));
	fake_stack[32] = (uint64_t)(uintptr_t)sentinel;
	regs.gpr[DECODE_RSP] = (uint64_t)(uintptr_t)&fake_stack[32];
	regs.gpr[DECODE_RDI] = cur_call->rdi;
	regs.gpr[DECODE_RSI] = cur_call->rsi;
	regs.gpr[DECODE_RDX] = cur_call->rdx;
	regs.rip = cur_call->fn_addr;
	regs.rflags = 0x202;
	emulate_vec_begin(&v, uc->uc_mcontext.fpregs);
	emulate_begin(&e, regs.rip, &v);
	cur_rc = -EAGAIN;
	for (cur_insns = 0; cur_insns < 100000; cur_insns++) {
		struct decode_insn di;
		struct decode_zydis z;
		if (regs.rip == (uint64_t)(uintptr_t)sentinel) {
			cur_rc = 0;
			break;
		}
		if ((cur_rc = decode_at_zydis(regs.rip, &regs, &di, &z)) != 0 ||
		    (cur_rc = emulate_insn(&e, &regs, &di, &z)) != 0) {
			fprintf(stderr, "stop at %s +%llx: %s\n", cur_call->fn,
				(unsigned long long)(regs.rip - cur_call->fn_addr),
				ZydisMnemonicGetString((ZydisMnemonic)di.mnemonic));
			break;
		}
	}
	cur_rax = regs.gpr[DECODE_RAX];
}

static void test_string_functions(void)
{
	size_t (*volatile f_strlen)(const char *) = strlen;
	char *(*volatile f_strncpy)(char *, const char *, size_t) = strncpy;
	void *(*volatile f_memchr)(const void *, int, size_t) = memchr;
	int (*volatile f_strcmp)(const char *, const char *) = strcmp;
	static char dst[4096];
	static char text[4096];
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_usr1;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);

	for (size_t i = 0; i < sizeof(text) - 1; i++)
		text[i] = (char)('a' + i % 26);
	static const size_t lens[] = {0, 1, 15, 31, 32, 33, 63, 64, 65, 100, 127, 200, 1000};
	for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		for (int at_end = 0; at_end < 2; at_end++) {
			size_t n = lens[li];
			/* A string ending just before the unmapped page, or in the middle. */
			char *s = at_end ? (char *)page_end - n - 1 : text + 1 + li;
			char saved = s[n];
			if (!at_end)
				memcpy(s, text, n);
			else
				memcpy(s, text, n);
			s[n] = 0;
			struct call calls[] = {
				{__LINE__, "strlen", (uint64_t)(uintptr_t)f_strlen,
				 (uint64_t)(uintptr_t)s, 0, 0, n, 0},
				{__LINE__, "strncpy", (uint64_t)(uintptr_t)f_strncpy,
				 (uint64_t)(uintptr_t)dst, (uint64_t)(uintptr_t)s, n + 40,
				 (uint64_t)(uintptr_t)dst, 0},
				{__LINE__, "memchr", (uint64_t)(uintptr_t)f_memchr,
				 (uint64_t)(uintptr_t)s, 0, n + 1, (uint64_t)(uintptr_t)(s + n), 0},
				{__LINE__, "memchr-none", (uint64_t)(uintptr_t)f_memchr,
				 (uint64_t)(uintptr_t)s, '#', n, 0, 0},
				{__LINE__, "strcmp", (uint64_t)(uintptr_t)f_strcmp,
				 (uint64_t)(uintptr_t)s, (uint64_t)(uintptr_t)text, 0,
				 (uint64_t)(int64_t)f_strcmp(s, text), 1},
			};
			for (size_t ci = 0; ci < sizeof(calls) / sizeof(calls[0]); ci++) {
				cur_call = &calls[ci];
				raise(SIGUSR1);
				CHECK(calls[ci].line, cur_rc == 0, "%s of %zu bytes%s: stopped (%d) after %d",
				      calls[ci].fn, n, at_end ? " at a page end" : "", cur_rc, cur_insns);
				int ok = calls[ci].sign
						 ? ((int)cur_rax > 0) - ((int)cur_rax < 0) ==
							   ((int)calls[ci].want_rax > 0) - ((int)calls[ci].want_rax < 0)
						 : cur_rax == calls[ci].want_rax;
				CHECK(calls[ci].line, cur_rc != 0 || ok, "%s of %zu bytes%s: rax %llx, want %llx",
				      calls[ci].fn, n, at_end ? " at a page end" : "",
				      (unsigned long long)cur_rax, (unsigned long long)calls[ci].want_rax);
			}
			if (!at_end)
				s[n] = saved;
		}
	}
}

/* --- the frame's registers, read one at a time ------------------------------------ */

/* ymm i holds bytes 16 * i + j (j < 32) when the signal comes: set by
 * the same asm that sends it (a raw tgkill, so no call between them
 * touches them).  The handler reads the frame's registers through
 * xsave_frame_zmm, and runs code ahead whose vzeroupper meets ymm4 read
 * before it and ymm1 read only after it: both must read zero above 128
 * bits then, and their low halves as the frame has them; registers the
 * run never names are never read. */
static uint8_t frame_ymm[16][32] __attribute__((aligned(32)));
static int frame_checked;

static void on_frame_signal(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	static struct emulate_vec v;
	struct xsave_frame f;
	uint8_t z[64];

	(void)sig;
	(void)si;
	frame_checked = 1;
	CHECK(__LINE__, xsave_frame_of(uc->uc_mcontext.fpregs, &f) == 0, "frame not read");
	for (int i = 0; i < 16; i++) {
		CHECK(__LINE__, xsave_frame_zmm(&f, i, z) == 0 && memcmp(z, frame_ymm[i], 32) == 0,
		      "ymm%d from the frame: %02x %02x .. %02x, want %02x %02x .. %02x", i, z[0], z[1],
		      z[31], frame_ymm[i][0], frame_ymm[i][1], frame_ymm[i][31]);
	}
	/* vpor ymm3, ymm4, ymm4; vzeroupper; vpor ymm2, ymm1, ymm1; vpor ymm5, ymm4, ymm4 */
	static const uint8_t code[] = {0xc5, 0xdd, 0xeb, 0xdc, 0xc5, 0xf8, 0x77,
				       0xc5, 0xf5, 0xeb, 0xd1, 0xc5, 0xdd, 0xeb, 0xec};
	static uint8_t buf[64];
	memcpy(buf, code, sizeof(code));
	memset(buf + sizeof(code), 0xcc, sizeof(buf) - sizeof(code));
	struct decode_regs regs;
	struct emulate e;
	memset(&regs, 0, sizeof(regs));
	regs.rip = (uint64_t)(uintptr_t)buf;
	emulate_vec_begin(&v, uc->uc_mcontext.fpregs);
	emulate_begin(&e, regs.rip, &v);
	for (int n = 0; n < 4; n++) {
		struct decode_insn in;
		struct decode_zydis zd;
		int rc = decode_at_zydis(regs.rip, &regs, &in, &zd);
		if (rc == 0)
			rc = emulate_insn(&e, &regs, &in, &zd);
		CHECK(__LINE__, rc == 0, "instruction %d: %d", n, rc);
		if (rc != 0)
			return;
	}
	/* reg holds from's low 128 bits, zero above: ymm3 and ymm4 were read
	 * before the vzeroupper (zeroed then), ymm1 after it (zeroed as read) */
	static const struct {
		int line, reg, from;
	} want[] = {
		{__LINE__, 3, 4},
		{__LINE__, 4, 4},
		{__LINE__, 1, 1},
		{__LINE__, 2, 1},
		{__LINE__, 5, 4},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint8_t expect[64] = {0};
		memcpy(expect, frame_ymm[want[i].from], 16);
		CHECK(want[i].line, !(v.zmm_unknown & (1u << want[i].reg)) && (v.zmm_loaded & (1u << want[i].reg)) &&
				    memcmp(v.zmm[want[i].reg], expect, 64) == 0,
		      "zmm%d after the run: %02x .. %02x %02x, want %02x .. %02x %02x", want[i].reg,
		      v.zmm[want[i].reg][0], v.zmm[want[i].reg][16], v.zmm[want[i].reg][31], expect[0],
		      expect[16], expect[31]);
	}
	CHECK(__LINE__, (v.zmm_loaded & ~0x3eu) == 0, "registers the run never named were read: %#x",
	      v.zmm_loaded);
}

static void test_frame_registers(void)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_frame_signal;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR2, &sa, &old);
	for (int i = 0; i < 16; i++)
		for (int j = 0; j < 32; j++)
			frame_ymm[i][j] = (uint8_t)(16 * i + j + 1);
	long pid = getpid(), tid = syscall(SYS_gettid), rc;
	__asm__ volatile("vmovdqa 0(%[y]), %%ymm0\n\tvmovdqa 32(%[y]), %%ymm1\n\t"
			 "vmovdqa 64(%[y]), %%ymm2\n\tvmovdqa 96(%[y]), %%ymm3\n\t"
			 "vmovdqa 128(%[y]), %%ymm4\n\tvmovdqa 160(%[y]), %%ymm5\n\t"
			 "vmovdqa 192(%[y]), %%ymm6\n\tvmovdqa 224(%[y]), %%ymm7\n\t"
			 "vmovdqa 256(%[y]), %%ymm8\n\tvmovdqa 288(%[y]), %%ymm9\n\t"
			 "vmovdqa 320(%[y]), %%ymm10\n\tvmovdqa 352(%[y]), %%ymm11\n\t"
			 "vmovdqa 384(%[y]), %%ymm12\n\tvmovdqa 416(%[y]), %%ymm13\n\t"
			 "vmovdqa 448(%[y]), %%ymm14\n\tvmovdqa 480(%[y]), %%ymm15\n\t"
			 "syscall"
			 : "=a"(rc)
			 : "a"((long)SYS_tgkill), "D"(pid), "S"(tid), "d"((long)SIGUSR2), [y] "r"(frame_ymm)
			 : "rcx", "r11", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6",
			   "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
	CHECK(__LINE__, rc == 0 && frame_checked, "tgkill %ld, handler ran %d", rc, frame_checked);
	sigaction(SIGUSR2, &old, NULL);
}

int main(void)
{
	if (!__builtin_cpu_supports("avx2")) {
		printf("skip: no AVX2\n");
		return 77;
	}
	int evex = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
	if (decode_init() < 0 || xsave_init() < 0) {
		fprintf(stderr, "init failed\n");
		return 1;
	}
	/* Two pages, the second unmapped. */
	uint8_t *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || mprotect(p + 4096, 4096, PROT_NONE) < 0)
		return 1;
	page_end = p + 4096;
	if (evex) {
		test_against_cpu();
		test_unknown();
	test_store_forward();
	test_last_stored();
	test_overlay_stored();
		test_access();
	} else {
		printf("no AVX-512: the rows against the CPU are skipped\n");
	}
	test_string_functions();
	test_frame_registers();
	if (check_failures)
		fprintf(stderr, "%d failures\n", check_failures);
	return check_failures != 0;
}
