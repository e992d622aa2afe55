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

static inline int reg_read(const struct decode_regs *regs, ZydisRegister r, uint64_t *v)
{
	const struct decode_gpr_slot *g = decode_gpr_slot_of(r);
	if (g->index < 0)
		return -ENOTSUP;
	*v = g->high ? (regs->gpr[g->index] >> 8) & 0xff : regs->gpr[g->index] & mask_of(g->bits);
	return 0;
}

/* x86-64: a 32-bit write clears the upper half; 8- and 16-bit writes merge. */
static inline int reg_write(struct decode_regs *regs, ZydisRegister r, uint64_t v)
{
	const struct decode_gpr_slot *g = decode_gpr_slot_of(r);
	int i = g->index;
	if (i < 0)
		return -ENOTSUP;
	if (g->high)
		regs->gpr[i] = (regs->gpr[i] & ~0xff00ull) | ((v & 0xff) << 8);
	else if (g->bits == 32)
		regs->gpr[i] = v & 0xffffffffull;
	else
		regs->gpr[i] = (regs->gpr[i] & ~mask_of(g->bits)) | (v & mask_of(g->bits));
	return 0;
}

/* --- operands -------------------------------------------------------------- */

struct emulate_ctx {
	struct emulate *e;
	struct decode_regs *regs; /* the copy being advanced */
	const struct decode_zinsn *insn;
	const struct decode_zop *ops;
	uint64_t next_rip;
};

static inline int mem_address(const struct emulate_ctx *c, const struct decode_zop *op,
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
	if (rc == 0)
		return 0;
	*v = 0;
	if (rc < 0) /* covered in part, or by several stores: their bytes over memory's */
		return emulate_read_stored(c->e, addr, (uint8_t *)v, len);
	return emulate_read(c->e, addr, v, len) < 0 ? -EFAULT : 0;
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
	const struct decode_zop *op = &c->ops[i];
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
	const struct decode_zop *op = &c->ops[i];
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

/* The condition code of jcc/cmovcc/setcc and which of them by mnemonic,
 * 1 + kind * 16 + code, 0 for other mnemonics: one load where a search of
 * the three lists took 15% of a window's instructions (callgrind). */
#define COND_CODE(kind, cc) (uint8_t)(1 + (kind) * 16 + (cc))
static const uint8_t cond_codes[ZYDIS_MNEMONIC_MAX_VALUE + 1] = {
	[ZYDIS_MNEMONIC_JO] = COND_CODE(COND_JCC, 0),
	[ZYDIS_MNEMONIC_JNO] = COND_CODE(COND_JCC, 1),
	[ZYDIS_MNEMONIC_JB] = COND_CODE(COND_JCC, 2),
	[ZYDIS_MNEMONIC_JNB] = COND_CODE(COND_JCC, 3),
	[ZYDIS_MNEMONIC_JZ] = COND_CODE(COND_JCC, 4),
	[ZYDIS_MNEMONIC_JNZ] = COND_CODE(COND_JCC, 5),
	[ZYDIS_MNEMONIC_JBE] = COND_CODE(COND_JCC, 6),
	[ZYDIS_MNEMONIC_JNBE] = COND_CODE(COND_JCC, 7),
	[ZYDIS_MNEMONIC_JS] = COND_CODE(COND_JCC, 8),
	[ZYDIS_MNEMONIC_JNS] = COND_CODE(COND_JCC, 9),
	[ZYDIS_MNEMONIC_JP] = COND_CODE(COND_JCC, 10),
	[ZYDIS_MNEMONIC_JNP] = COND_CODE(COND_JCC, 11),
	[ZYDIS_MNEMONIC_JL] = COND_CODE(COND_JCC, 12),
	[ZYDIS_MNEMONIC_JNL] = COND_CODE(COND_JCC, 13),
	[ZYDIS_MNEMONIC_JLE] = COND_CODE(COND_JCC, 14),
	[ZYDIS_MNEMONIC_JNLE] = COND_CODE(COND_JCC, 15),
	[ZYDIS_MNEMONIC_CMOVO] = COND_CODE(COND_CMOV, 0),
	[ZYDIS_MNEMONIC_CMOVNO] = COND_CODE(COND_CMOV, 1),
	[ZYDIS_MNEMONIC_CMOVB] = COND_CODE(COND_CMOV, 2),
	[ZYDIS_MNEMONIC_CMOVNB] = COND_CODE(COND_CMOV, 3),
	[ZYDIS_MNEMONIC_CMOVZ] = COND_CODE(COND_CMOV, 4),
	[ZYDIS_MNEMONIC_CMOVNZ] = COND_CODE(COND_CMOV, 5),
	[ZYDIS_MNEMONIC_CMOVBE] = COND_CODE(COND_CMOV, 6),
	[ZYDIS_MNEMONIC_CMOVNBE] = COND_CODE(COND_CMOV, 7),
	[ZYDIS_MNEMONIC_CMOVS] = COND_CODE(COND_CMOV, 8),
	[ZYDIS_MNEMONIC_CMOVNS] = COND_CODE(COND_CMOV, 9),
	[ZYDIS_MNEMONIC_CMOVP] = COND_CODE(COND_CMOV, 10),
	[ZYDIS_MNEMONIC_CMOVNP] = COND_CODE(COND_CMOV, 11),
	[ZYDIS_MNEMONIC_CMOVL] = COND_CODE(COND_CMOV, 12),
	[ZYDIS_MNEMONIC_CMOVNL] = COND_CODE(COND_CMOV, 13),
	[ZYDIS_MNEMONIC_CMOVLE] = COND_CODE(COND_CMOV, 14),
	[ZYDIS_MNEMONIC_CMOVNLE] = COND_CODE(COND_CMOV, 15),
	[ZYDIS_MNEMONIC_SETO] = COND_CODE(COND_SET, 0),
	[ZYDIS_MNEMONIC_SETNO] = COND_CODE(COND_SET, 1),
	[ZYDIS_MNEMONIC_SETB] = COND_CODE(COND_SET, 2),
	[ZYDIS_MNEMONIC_SETNB] = COND_CODE(COND_SET, 3),
	[ZYDIS_MNEMONIC_SETZ] = COND_CODE(COND_SET, 4),
	[ZYDIS_MNEMONIC_SETNZ] = COND_CODE(COND_SET, 5),
	[ZYDIS_MNEMONIC_SETBE] = COND_CODE(COND_SET, 6),
	[ZYDIS_MNEMONIC_SETNBE] = COND_CODE(COND_SET, 7),
	[ZYDIS_MNEMONIC_SETS] = COND_CODE(COND_SET, 8),
	[ZYDIS_MNEMONIC_SETNS] = COND_CODE(COND_SET, 9),
	[ZYDIS_MNEMONIC_SETP] = COND_CODE(COND_SET, 10),
	[ZYDIS_MNEMONIC_SETNP] = COND_CODE(COND_SET, 11),
	[ZYDIS_MNEMONIC_SETL] = COND_CODE(COND_SET, 12),
	[ZYDIS_MNEMONIC_SETNL] = COND_CODE(COND_SET, 13),
	[ZYDIS_MNEMONIC_SETLE] = COND_CODE(COND_SET, 14),
	[ZYDIS_MNEMONIC_SETNLE] = COND_CODE(COND_SET, 15),
};
#undef COND_CODE

/* The condition code (0..15, encoding order) of m and its kind, -1 for
 * other mnemonics. */
static inline int cond_of(ZydisMnemonic m, enum cond_kind *kind)
{
	int v = cond_codes[m] - 1;
	if (v < 0)
		return -1;
	*kind = (enum cond_kind)(v / 16);
	return v % 16;
}

#endif
