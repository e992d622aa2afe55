/* emulate_operands: how the emulator reads and writes registers, memory
 * operands and flags on its register copy.  Internal to emulate.c: inline,
 * since the run-ahead executes these for every instruction it looks at. */
#ifndef WITCH_EMULATE_OPERANDS_H
#define WITCH_EMULATE_OPERANDS_H

#include "witch/decode.h"
#include "witch/decode_zydis.h"
#include "witch/emulate.h"

#include <Zydis/Zydis.h>
#include <errno.h>
#include <stdint.h>

#define RFLAGS_CF 0x001ull
#define RFLAGS_PF 0x004ull
#define RFLAGS_ZF 0x040ull
#define RFLAGS_SF 0x080ull
#define RFLAGS_OF 0x800ull
#define RFLAGS_ARITH (RFLAGS_CF | RFLAGS_PF | RFLAGS_ZF | RFLAGS_SF | RFLAGS_OF)


/* --- values of a given width ------------------------------------------------ */

static inline uint64_t mask_of(unsigned bits)
{
	return bits >= 64 ? ~0ull : (1ull << bits) - 1;
}

static inline uint64_t sign_bit(unsigned bits)
{
	return 1ull << (bits - 1);
}

static inline uint64_t sign_extend(uint64_t v, unsigned bits)
{
	if (bits >= 64)
		return v;
	v &= mask_of(bits);
	return (v & sign_bit(bits)) ? v | ~mask_of(bits) : v;
}

/* --- registers ------------------------------------------------------------- */

static inline int is_high_byte(ZydisRegister r)
{
	return r == ZYDIS_REGISTER_AH || r == ZYDIS_REGISTER_CH || r == ZYDIS_REGISTER_DH ||
	       r == ZYDIS_REGISTER_BH;
}

static inline int reg_slot(ZydisRegister r)
{
	return decode_gpr_index(ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r));
}

static inline int reg_read(const struct decode_regs *regs, ZydisRegister r, uint64_t *v)
{
	int i = reg_slot(r);
	if (i < 0)
		return -ENOTSUP;
	unsigned bits = ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, r);
	*v = is_high_byte(r) ? (regs->gpr[i] >> 8) & 0xff : regs->gpr[i] & mask_of(bits);
	return 0;
}

/* x86-64: a 32-bit write clears the upper half; 8- and 16-bit writes merge. */
static inline int reg_write(struct decode_regs *regs, ZydisRegister r, uint64_t v)
{
	int i = reg_slot(r);
	if (i < 0)
		return -ENOTSUP;
	unsigned bits = ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, r);
	if (is_high_byte(r))
		regs->gpr[i] = (regs->gpr[i] & ~0xff00ull) | ((v & 0xff) << 8);
	else if (bits == 32)
		regs->gpr[i] = v & 0xffffffffull;
	else
		regs->gpr[i] = (regs->gpr[i] & ~mask_of(bits)) | (v & mask_of(bits));
	return 0;
}

/* --- operands -------------------------------------------------------------- */

struct emulate_ctx {
	struct emulate *e;
	struct decode_regs *regs; /* the copy being advanced */
	const ZydisDecodedInstruction *insn;
	const ZydisDecodedOperand *ops;
	uint64_t next_rip;
};

static inline int mem_address(const struct emulate_ctx *c, const ZydisDecodedOperand *op,
			      uint64_t *addr)
{
	uint64_t a = (uint64_t)op->mem.disp.value, v;

	if (op->mem.base == ZYDIS_REGISTER_RIP)
		a += c->next_rip;
	else if (op->mem.base != ZYDIS_REGISTER_NONE) {
		if (reg_read(c->regs, op->mem.base, &v) < 0)
			return -ENOTSUP;
		a += v;
	}
	if (op->mem.index != ZYDIS_REGISTER_NONE) {
		if (reg_read(c->regs, op->mem.index, &v) < 0)
			return -ENOTSUP; /* a vector index (VSIB) */
		a += v * op->mem.scale;
	}
	if (op->mem.segment == ZYDIS_REGISTER_FS)
		a += c->regs->fs_base;
	else if (op->mem.segment == ZYDIS_REGISTER_GS)
		a += c->regs->gs_base;
	if (c->insn->address_width == 32)
		a &= 0xffffffffull;
	*addr = a;
	return 0;
}

/* A load of bytes an emulated store wrote takes the stored value when the
 * latest such store covers it and its value is known (a general register's,
 * a pushed one, a return address): spills and push/pop pairs run on. */
static inline int mem_forward(const struct emulate *e, uint64_t addr, uint32_t len, uint64_t *v)
{
	if (e->spill_hi && addr < e->spill_hi && e->spill_lo < addr + len)
		return -ENOTSUP;
	for (int i = e->n_stores - 1; i >= 0; i--) {
		uint64_t sa = e->store_addr[i];
		uint32_t sl = e->store_len[i];
		if (!(addr < sa + sl && sa < addr + len))
			continue;
		if (!e->store_known[i] || addr < sa || addr + len > sa + sl)
			return -ENOTSUP; /* unknown, or a part of the load */
		uint64_t x = e->store_value[i] >> (8 * (addr - sa));
		*v = len < 8 ? x & ((1ull << (8 * len)) - 1) : x;
		return 0;
	}
	return 1; /* no store there */
}

static inline int mem_load(const struct emulate_ctx *c, uint64_t addr, unsigned bits, uint64_t *v)
{
	uint32_t len = bits / 8;
	int rc = mem_forward(c->e, addr, len, v);
	if (rc <= 0)
		return rc;
	*v = 0;
	if (emulate_read(c->e, addr, v, len) < 0)
		return -EFAULT;
	return 0;
}

static inline int mem_note_store(struct emulate_ctx *c, uint64_t addr, unsigned bits, int known,
				 uint64_t value)
{
	struct emulate *e = c->e;
	if (e->n_stores == EMULATE_MAX_STORES) {
		/* More stores than slots: keep their span, which answers
		 * emulate_stored conservatively. */
		if (e->spill_hi == 0 || addr < e->spill_lo)
			e->spill_lo = addr;
		if (addr + bits / 8 > e->spill_hi)
			e->spill_hi = addr + bits / 8;
		return 0;
	}
	e->store_addr[e->n_stores] = addr;
	e->store_len[e->n_stores] = bits / 8;
	e->store_known[e->n_stores] = known && bits <= 64;
	e->store_value[e->n_stores] = value;
	e->n_stores++;
	return 0;
}

static inline int op_read(const struct emulate_ctx *c, int i, uint64_t *v)
{
	const ZydisDecodedOperand *op = &c->ops[i];
	uint64_t addr;
	int rc;

	switch (op->type) {
	case ZYDIS_OPERAND_TYPE_REGISTER:
		return reg_read(c->regs, op->reg.value, v);
	case ZYDIS_OPERAND_TYPE_IMMEDIATE:
		*v = op->imm.is_signed ? (uint64_t)op->imm.value.s : op->imm.value.u;
		return 0;
	case ZYDIS_OPERAND_TYPE_MEMORY:
		if ((rc = mem_address(c, op, &addr)) < 0)
			return rc;
		return mem_load(c, addr, op->size, v);
	default:
		return -ENOTSUP;
	}
}

/* A memory destination changes no register: note it and go on. */
static inline int op_write(struct emulate_ctx *c, int i, uint64_t v)
{
	const ZydisDecodedOperand *op = &c->ops[i];
	uint64_t addr;
	int rc;

	switch (op->type) {
	case ZYDIS_OPERAND_TYPE_REGISTER:
		return reg_write(c->regs, op->reg.value, v);
	case ZYDIS_OPERAND_TYPE_MEMORY:
		if ((rc = mem_address(c, op, &addr)) < 0)
			return rc;
		return mem_note_store(c, addr, op->size, 1, v);
	default:
		return -ENOTSUP;
	}
}

/* --- flags ----------------------------------------------------------------- */

static inline uint64_t flags_of_result(uint64_t r, unsigned bits)
{
	uint64_t f = 0;
	r &= mask_of(bits);
	if (r == 0)
		f |= RFLAGS_ZF;
	if (r & sign_bit(bits))
		f |= RFLAGS_SF;
	if (!(__builtin_popcountll(r & 0xff) & 1))
		f |= RFLAGS_PF;
	return f;
}

static inline void set_flags(struct decode_regs *regs, uint64_t which, uint64_t f)
{
	regs->rflags = (regs->rflags & ~which) | (f & which);
}

/* a + b + carry_in, or a - b - borrow_in: result and CF/OF/ZF/SF/PF. */
static inline uint64_t add_flags(uint64_t a, uint64_t b, uint64_t cin, unsigned bits, int sub,
			  uint64_t *f)
{
	uint64_t m = mask_of(bits);
	a &= m;
	b &= m;
	uint64_t r = (sub ? a - b - cin : a + b + cin) & m;
	*f = flags_of_result(r, bits);
	if (sub ? (a < b || (cin && a == b)) : (r < a || (cin && r == a)))
		*f |= RFLAGS_CF;
	uint64_t ov = sub ? (a ^ b) & (a ^ r) : ~(a ^ b) & (a ^ r);
	if (ov & sign_bit(bits))
		*f |= RFLAGS_OF;
	return r;
}

/* Condition codes in their encoding order (jo = 0 ... jg = 15). */
static inline int cond_holds(unsigned cc, uint64_t fl)
{
	int cf = !!(fl & RFLAGS_CF), zf = !!(fl & RFLAGS_ZF), sf = !!(fl & RFLAGS_SF);
	int of = !!(fl & RFLAGS_OF), pf = !!(fl & RFLAGS_PF), v;

	switch (cc >> 1) {
	case 0: v = of; break;
	case 1: v = cf; break;
	case 2: v = zf; break;
	case 3: v = cf || zf; break;
	case 4: v = sf; break;
	case 5: v = pf; break;
	case 6: v = sf != of; break;
	default: v = zf || sf != of; break;
	}
	return (cc & 1) ? !v : v;
}

enum cond_kind { COND_JCC, COND_CMOV, COND_SET };

/* The condition code of jcc/cmovcc/setcc and which of them, -1 for other
 * mnemonics. */
static inline int cond_of(ZydisMnemonic m, enum cond_kind *kind)
{
	static const ZydisMnemonic jcc[16] = {
		ZYDIS_MNEMONIC_JO, ZYDIS_MNEMONIC_JNO, ZYDIS_MNEMONIC_JB, ZYDIS_MNEMONIC_JNB,
		ZYDIS_MNEMONIC_JZ, ZYDIS_MNEMONIC_JNZ, ZYDIS_MNEMONIC_JBE, ZYDIS_MNEMONIC_JNBE,
		ZYDIS_MNEMONIC_JS, ZYDIS_MNEMONIC_JNS, ZYDIS_MNEMONIC_JP, ZYDIS_MNEMONIC_JNP,
		ZYDIS_MNEMONIC_JL, ZYDIS_MNEMONIC_JNL, ZYDIS_MNEMONIC_JLE, ZYDIS_MNEMONIC_JNLE,
	};
	static const ZydisMnemonic cmov[16] = {
		ZYDIS_MNEMONIC_CMOVO, ZYDIS_MNEMONIC_CMOVNO, ZYDIS_MNEMONIC_CMOVB,
		ZYDIS_MNEMONIC_CMOVNB, ZYDIS_MNEMONIC_CMOVZ, ZYDIS_MNEMONIC_CMOVNZ,
		ZYDIS_MNEMONIC_CMOVBE, ZYDIS_MNEMONIC_CMOVNBE, ZYDIS_MNEMONIC_CMOVS,
		ZYDIS_MNEMONIC_CMOVNS, ZYDIS_MNEMONIC_CMOVP, ZYDIS_MNEMONIC_CMOVNP,
		ZYDIS_MNEMONIC_CMOVL, ZYDIS_MNEMONIC_CMOVNL, ZYDIS_MNEMONIC_CMOVLE,
		ZYDIS_MNEMONIC_CMOVNLE,
	};
	static const ZydisMnemonic setcc[16] = {
		ZYDIS_MNEMONIC_SETO, ZYDIS_MNEMONIC_SETNO, ZYDIS_MNEMONIC_SETB,
		ZYDIS_MNEMONIC_SETNB, ZYDIS_MNEMONIC_SETZ, ZYDIS_MNEMONIC_SETNZ,
		ZYDIS_MNEMONIC_SETBE, ZYDIS_MNEMONIC_SETNBE, ZYDIS_MNEMONIC_SETS,
		ZYDIS_MNEMONIC_SETNS, ZYDIS_MNEMONIC_SETP, ZYDIS_MNEMONIC_SETNP,
		ZYDIS_MNEMONIC_SETL, ZYDIS_MNEMONIC_SETNL, ZYDIS_MNEMONIC_SETLE,
		ZYDIS_MNEMONIC_SETNLE,
	};
	for (int i = 0; i < 16; i++) {
		*kind = m == jcc[i] ? COND_JCC : m == cmov[i] ? COND_CMOV : COND_SET;
		if (m == jcc[i] || m == cmov[i] || m == setcc[i])
			return i;
	}
	return -1;
}

#endif
