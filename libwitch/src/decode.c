/* decode: x86-64 instruction decoding and effective addresses (Zydis).
 *
 * Everything runs in signal handlers: Zydis decodes into
 * caller-provided structs without allocating, code is read either directly
 * from a page known to be mapped or through peek_read (peek.h), and no
 * errno/stdio/locks are touched.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* REG_* indices of mcontext_t gregs */
#endif

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include <Zydis/Zydis.h>

#include "witch/decode.h"
#include "witch/decode_zydis.h"
#include "witch/deps.h"
#include "witch/peek.h"

/* Smallest page size on x86-64; mappings are multiples of it, so bytes up to
 * the next 4 KiB boundary are mapped whenever the byte at pc is. */
#define CODE_PAGE 4096u
#define MAX_INSN  ZYDIS_MAX_INSTRUCTION_LENGTH

static ZydisDecoder g_decoder;
/* The decoder and the register table: built by the first decode, which is
 * in a tick's handler, so a process that never ticks never pays for them
 * (~1,000 Zydis lookups and two of its pages: ~0.1 ms of every start
 * here).  A handler that finds another thread building skips its sample. */
enum { DECODE_UNBUILT, DECODE_BUILDING, DECODE_BUILT };
static int g_state;

struct decode_gpr_slot decode_gpr_slots[ZYDIS_REGISTER_MAX_VALUE + 1];

static int dep_index_of(ZydisRegister r);

static int decode_build(void)
{
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&g_decoder, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)))
		return -EINVAL;
	for (int r = 0; r <= ZYDIS_REGISTER_MAX_VALUE; r++) {
		ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64,
								    (ZydisRegister)r);
		struct decode_gpr_slot *g = &decode_gpr_slots[r];
		g->index = (int8_t)decode_gpr_index(big);
		g->bits = (uint8_t)ZydisRegisterGetWidth(ZYDIS_MACHINE_MODE_LONG_64, (ZydisRegister)r);
		g->high = r == ZYDIS_REGISTER_AH || r == ZYDIS_REGISTER_CH ||
			  r == ZYDIS_REGISTER_DH || r == ZYDIS_REGISTER_BH;
		g->dep = (int8_t)dep_index_of((ZydisRegister)r);
		int k = ZydisRegisterGetId((ZydisRegister)r);
		int is_k = ZydisRegisterGetClass((ZydisRegister)r) == ZYDIS_REGCLASS_MASK;
		g->mask = (int8_t)(is_k && k >= 0 && k < 8 ? k : -1);
	}
	return 0;
}

/* 0 once built (by this call or an earlier one), -EAGAIN while another
 * thread or an interrupted handler of this one builds, -EINVAL if Zydis
 * refused (then the next call tries again).  Async-signal-safe. */
static int decode_ready(void)
{
	int state = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
	if (state == DECODE_BUILT)
		return 0;
	if (!deps_ready())
		return -EAGAIN; /* Zydis not loaded yet (deps.h) */
	if (state == DECODE_BUILDING ||
	    !__atomic_compare_exchange_n(&g_state, &state, DECODE_BUILDING, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return __atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == DECODE_BUILT ? 0 : -EAGAIN;
	int rc = decode_build();
	__atomic_store_n(&g_state, rc == 0 ? DECODE_BUILT : DECODE_UNBUILT, __ATOMIC_RELEASE);
	return rc;
}

int decode_init(void)
{
	return decode_ready();
}

void decode_regs_from_ucontext(const ucontext_t *uc, uint64_t fs_base,
			       uint64_t gs_base, struct decode_regs *out)
{
	const greg_t *g = uc->uc_mcontext.gregs;

	out->gpr[DECODE_RAX] = (uint64_t)g[REG_RAX];
	out->gpr[DECODE_RCX] = (uint64_t)g[REG_RCX];
	out->gpr[DECODE_RDX] = (uint64_t)g[REG_RDX];
	out->gpr[DECODE_RBX] = (uint64_t)g[REG_RBX];
	out->gpr[DECODE_RSP] = (uint64_t)g[REG_RSP];
	out->gpr[DECODE_RBP] = (uint64_t)g[REG_RBP];
	out->gpr[DECODE_RSI] = (uint64_t)g[REG_RSI];
	out->gpr[DECODE_RDI] = (uint64_t)g[REG_RDI];
	out->gpr[DECODE_R8] = (uint64_t)g[REG_R8];
	out->gpr[DECODE_R9] = (uint64_t)g[REG_R9];
	out->gpr[DECODE_R10] = (uint64_t)g[REG_R10];
	out->gpr[DECODE_R11] = (uint64_t)g[REG_R11];
	out->gpr[DECODE_R12] = (uint64_t)g[REG_R12];
	out->gpr[DECODE_R13] = (uint64_t)g[REG_R13];
	out->gpr[DECODE_R14] = (uint64_t)g[REG_R14];
	out->gpr[DECODE_R15] = (uint64_t)g[REG_R15];
	out->rip = (uint64_t)g[REG_RIP];
	out->rflags = (uint64_t)g[REG_EFL];
	out->fs_base = fs_base;
	out->gs_base = gs_base;
}

/* Hardware index (0..15) of a 16/32/64-bit general register, -1 otherwise.
 * Zydis lays each width out contiguously in hardware order. */
int decode_gpr_index(ZydisRegister r)
{
	if (r >= ZYDIS_REGISTER_RAX && r <= ZYDIS_REGISTER_R15)
		return r - ZYDIS_REGISTER_RAX;
	if (r >= ZYDIS_REGISTER_EAX && r <= ZYDIS_REGISTER_R15D)
		return r - ZYDIS_REGISTER_EAX;
	if (r >= ZYDIS_REGISTER_AX && r <= ZYDIS_REGISTER_R15W)
		return r - ZYDIS_REGISTER_AX;
	return -1;
}

/* Bit of the full 64-bit register holding r (al, ah, eax, ... -> rax), 0 if
 * r is not a general register. */
static uint16_t gpr_bit(ZydisRegister r)
{
	int i = decode_gpr_index(ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r));
	return i < 0 ? 0 : (uint16_t)(1u << i);
}

static int is_stack_reg(ZydisRegister r)
{
	return r == ZYDIS_REGISTER_RSP || r == ZYDIS_REGISTER_ESP ||
	       r == ZYDIS_REGISTER_SP;
}

/* Decode the instruction at pc without faulting.  The page holding pc is
 * readable (we are executing it, or the caller checked), so the bytes up to
 * its end are read in place; only an instruction that may spill into the
 * next page is fetched through peek_read (peek.h). */
static int decode_full(uint64_t pc, ZydisDecodedInstruction *insn,
		       ZydisDecodedOperand *ops)
{
	uint64_t to_page_end = CODE_PAGE - (pc & (CODE_PAGE - 1));
	size_t n = to_page_end < MAX_INSN ? (size_t)to_page_end : MAX_INSN;
	uint8_t tmp[MAX_INSN];
	const void *bytes = (const void *)(uintptr_t)pc;
	ZydisDecoderContext ctx;
	ZyanStatus st;

	int rc = decode_ready();
	if (rc < 0)
		return rc;
	st = ZydisDecoderDecodeInstruction(&g_decoder, &ctx, bytes, n, insn);
	if (st == ZYDIS_STATUS_NO_MORE_DATA && n < MAX_INSN) {
		if (peek_read(pc, tmp, MAX_INSN) < 0)
			return -EFAULT;
		bytes = tmp;
		st = ZydisDecoderDecodeInstruction(&g_decoder, &ctx, bytes, MAX_INSN, insn);
	}
	if (st == ZYDIS_STATUS_NO_MORE_DATA)
		return -EILSEQ; /* longer than 15 bytes: not an instruction */
	if (!ZYAN_SUCCESS(st))
		return -EILSEQ;
	/* Not ZydisDecoderDecodeFull: it clears the operands past the count
	 * (~600 bytes, through the interposed memset), which no caller reads. */
	st = ZydisDecoderDecodeOperands(&g_decoder, &ctx, insn, ops, insn->operand_count);
	return ZYAN_SUCCESS(st) ? 0 : -EILSEQ;
}

static uint16_t insn_flags(const ZydisDecodedInstruction *insn,
			   const ZydisDecodedOperand *ops)
{
	uint16_t f = 0;
	int i;

	switch (insn->mnemonic) {
	case ZYDIS_MNEMONIC_PUSHF: case ZYDIS_MNEMONIC_PUSHFD: case ZYDIS_MNEMONIC_PUSHFQ:
	case ZYDIS_MNEMONIC_POPF: case ZYDIS_MNEMONIC_POPFD: case ZYDIS_MNEMONIC_POPFQ:
		/* pushf would save the trap flag, popf may clear it */
	case ZYDIS_MNEMONIC_INT: case ZYDIS_MNEMONIC_INT3: case ZYDIS_MNEMONIC_INTO:
	case ZYDIS_MNEMONIC_INT1:
	case ZYDIS_MNEMONIC_SYSCALL: case ZYDIS_MNEMONIC_SYSENTER:
	case ZYDIS_MNEMONIC_SYSRET: case ZYDIS_MNEMONIC_SYSEXIT:
	case ZYDIS_MNEMONIC_UD0: case ZYDIS_MNEMONIC_UD1: case ZYDIS_MNEMONIC_UD2:
	case ZYDIS_MNEMONIC_HLT:
		/* a single-step trap inside a transaction aborts it */
	case ZYDIS_MNEMONIC_XBEGIN: case ZYDIS_MNEMONIC_XEND: case ZYDIS_MNEMONIC_XABORT:
		f |= DECODE_F_NO_STEP;
		break;
	case ZYDIS_MNEMONIC_IRET: case ZYDIS_MNEMONIC_IRETD: case ZYDIS_MNEMONIC_IRETQ:
		/* iret reloads rflags (and TF) from the stack and jumps */
		f |= DECODE_F_NO_STEP | DECODE_F_BRANCH;
		break;
	case ZYDIS_MNEMONIC_RET:
		f |= DECODE_F_RET;
		break;
	default:
		break;
	}
	/* branch_type covers jmp/jcc/call/ret/loop/jrcxz; xbegin/xabort only
	 * transfer control on abort and keep BRANCH clear. */
	if (insn->meta.branch_type != ZYDIS_BRANCH_TYPE_NONE)
		f |= DECODE_F_BRANCH;
	if (insn->meta.category == ZYDIS_CATEGORY_CALL)
		f |= DECODE_F_CALL | DECODE_F_BRANCH;
	if (insn->meta.category == ZYDIS_CATEGORY_COND_BR && (f & DECODE_F_BRANCH))
		f |= DECODE_F_COND;
	if ((insn->attributes & (ZYDIS_ATTRIB_HAS_REP | ZYDIS_ATTRIB_HAS_REPE |
				 ZYDIS_ATTRIB_HAS_REPNE)) &&
	    (insn->meta.category == ZYDIS_CATEGORY_STRINGOP ||
	     insn->meta.category == ZYDIS_CATEGORY_IOSTRINGOP))
		f |= DECODE_F_REP;
	if (insn->attributes & ZYDIS_ATTRIB_HAS_LOCK)
		f |= DECODE_F_LOCKED;
	if (insn->mnemonic == ZYDIS_MNEMONIC_XCHG) /* with memory: locked without the prefix */
		for (i = 0; i < insn->operand_count; i++)
			if (ops[i].type == ZYDIS_OPERAND_TYPE_MEMORY)
				f |= DECODE_F_LOCKED;
	/* Zydis lists rsp as a hidden written operand exactly when the
	 * instruction moves the stack pointer by itself. */
	for (i = 0; i < insn->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		if (op->type == ZYDIS_OPERAND_TYPE_REGISTER &&
		    op->visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT &&
		    is_stack_reg(op->reg.value) &&
		    (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			f |= DECODE_F_STACK;
	}
	return f;
}

/* Memory operands that name an address but do not access its data. */
static int no_data_access(const ZydisDecodedInstruction *insn)
{
	switch (insn->meta.category) {
	case ZYDIS_CATEGORY_NOP: case ZYDIS_CATEGORY_WIDENOP:
	case ZYDIS_CATEGORY_PREFETCH: case ZYDIS_CATEGORY_PREFETCHWT1:
	case ZYDIS_CATEGORY_CLFLUSHOPT: case ZYDIS_CATEGORY_CLWB:
	case ZYDIS_CATEGORY_CLDEMOTE:
		return 1;
	default:
		break;
	}
	switch (insn->mnemonic) {
	case ZYDIS_MNEMONIC_CLFLUSH: /* cache maintenance, no data read */
	case ZYDIS_MNEMONIC_UD0: case ZYDIS_MNEMONIC_UD1: /* #UD before any access */
		return 1;
	default:
		return 0;
	}
}

/* Stores whose bytes are selected by a vector mask without an EVEX k. */
static int is_vector_masked(ZydisMnemonic m)
{
	switch (m) {
	case ZYDIS_MNEMONIC_VMASKMOVPS: case ZYDIS_MNEMONIC_VMASKMOVPD:
	case ZYDIS_MNEMONIC_VPMASKMOVD: case ZYDIS_MNEMONIC_VPMASKMOVQ:
	case ZYDIS_MNEMONIC_MASKMOVQ: case ZYDIS_MNEMONIC_MASKMOVDQU:
	case ZYDIS_MNEMONIC_VMASKMOVDQU:
		return 1;
	default:
		return 0;
	}
}

static uint8_t elem_of(const ZydisDecodedOperand *op)
{
	switch (op->element_type) {
	case ZYDIS_ELEMENT_TYPE_FLOAT32:
		return DECODE_ELEM_F32;
	case ZYDIS_ELEMENT_TYPE_FLOAT64:
		return DECODE_ELEM_F64;
	default:
		return DECODE_ELEM_INT;
	}
}

/* bt/bts/btr/btc with a register bit offset: the offset is signed and may
 * select a word far from the base address. */
static int is_bit_test(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops)
{
	switch (insn->mnemonic) {
	case ZYDIS_MNEMONIC_BT: case ZYDIS_MNEMONIC_BTS:
	case ZYDIS_MNEMONIC_BTR: case ZYDIS_MNEMONIC_BTC:
		return insn->operand_count >= 2 && ops[1].type == ZYDIS_OPERAND_TYPE_REGISTER;
	default:
		return 0;
	}
}

/* The bytes such an offset moves the address by, for an operand of size_bits. */
static int64_t bit_test_disp(uint64_t offset, unsigned size_bits)
{
	int64_t off;
	switch (size_bits) {
	case 16: off = (int16_t)offset; return (off >> 4) * 2;
	case 32: off = (int32_t)offset; return (off >> 5) * 4;
	case 64: off = (int64_t)offset; return (off >> 6) * 8;
	default: return 0;
	}
}

/* r's place in a form's dependency masks (DECODE_DEP_*), -1: not followed. */
static int dep_index_of(ZydisRegister r)
{
	/* (Zydis encloses no flags register: ZYDIS_REGISTER_NONE.) */
	if (ZydisRegisterGetClass(r) == ZYDIS_REGCLASS_FLAGS)
		return DECODE_DEP_FLAGS;
	ZydisRegister big = ZydisRegisterGetLargestEnclosing(ZYDIS_MACHINE_MODE_LONG_64, r);
	switch (ZydisRegisterGetClass(big)) {
	case ZYDIS_REGCLASS_GPR64:
		return ZydisRegisterGetId(big) & 15;
	case ZYDIS_REGCLASS_ZMM:
		return DECODE_DEP_VEC0 + (ZydisRegisterGetId(big) & 31);
	default:
		return -1;
	}
}

/* The same, from the table decode_init filled: Zydis's register lookups
 * were ~9% of a decoding's time (perf). */
static inline int dep_index(ZydisRegister r)
{
	return decode_gpr_slots[r].dep;
}

/* The registers the instruction's results wait on and give (costmodel). */
static void form_deps(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops,
		      struct decode_form *f)
{
	for (int i = 0; i < insn->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		if (op->type == ZYDIS_OPERAND_TYPE_REGISTER) {
			int r = dep_index(op->reg.value);
			if (r < 0)
				continue;
			f->dep_vector |= r >= DECODE_DEP_VEC0 && r < DECODE_DEP_FLAGS;
			if (op->actions & ZYDIS_OPERAND_ACTION_MASK_READ)
				f->dep_reads |= 1ull << r;
			if (op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE)
				f->dep_writes |= 1ull << r;
		} else if (op->type == ZYDIS_OPERAND_TYPE_MEMORY) {
			int b = op->mem.base != ZYDIS_REGISTER_NONE ? dep_index(op->mem.base) : -1;
			int x = op->mem.index != ZYDIS_REGISTER_NONE ? dep_index(op->mem.index) : -1;
			if (b >= 0)
				f->dep_reads |= 1ull << b;
			if (x >= 0)
				f->dep_reads |= 1ull << x;
		}
	}
}

/* z's form (decode_zydis.h) from its decoding at pc; then what out says
 * of the instruction run with regs. */
static void decode_form_of(uint64_t pc, const ZydisDecodedInstruction *insn,
			   const ZydisDecodedOperand *ops, struct decode_form *f);

/* The emulator's part of a decoding (decode_zinsn, decode_zop): Zydis's
 * fields it reads, and what it would have looked for in the hidden
 * operands and the flags table, asked here once. */
static void decode_compact(const ZydisDecodedInstruction *insn, const ZydisDecodedOperand *ops,
			   struct decode_zydis *z)
{
	struct decode_zinsn *zi = &z->insn;

	memset(zi, 0, sizeof(*zi));
	memset(z->ops, 0, sizeof(z->ops));
	zi->attributes = insn->attributes;
	zi->mnemonic = (uint16_t)insn->mnemonic;
	zi->length = insn->length;
	zi->operand_width = insn->operand_width;
	zi->address_width = insn->address_width;
	zi->operand_count_visible = insn->operand_count_visible;
	zi->avx.mask.reg = (uint16_t)insn->avx.mask.reg;
	zi->avx.mask.mode = (uint8_t)insn->avx.mask.mode;
	zi->avx.broadcast.mode = (uint8_t)insn->avx.broadcast.mode;
	zi->avx.broadcast.is_static = insn->avx.broadcast.is_static;
	const ZydisAccessedFlags *fl = insn->cpu_flags;
	zi->flags_changed = fl && (fl->modified | fl->set_0 | fl->set_1 | fl->undefined);
	/* The vector registers written are the form's (form_deps, hidden
	 * operands too); mask registers it does not follow. */
	zi->vec_written = (uint32_t)(z->form.dep_writes >> DECODE_DEP_VEC0);
	for (int i = 0; i < insn->operand_count; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		if (op->type != ZYDIS_OPERAND_TYPE_REGISTER ||
		    !(op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE))
			continue;
		int id = decode_gpr_slots[op->reg.value].mask;
		if (id >= 0)
			zi->k_written |= (uint8_t)(1u << id);
	}
	for (int i = 0; i < insn->operand_count && i < DECODE_ZOPS; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		struct decode_zop *o = &z->ops[i];
		o->type = (uint8_t)op->type;
		o->size = op->size;
		o->element_size = op->element_size;
		switch (op->type) {
		case ZYDIS_OPERAND_TYPE_REGISTER:
			o->reg.value = (uint16_t)op->reg.value;
			break;
		case ZYDIS_OPERAND_TYPE_MEMORY:
			o->mem.base = (uint16_t)op->mem.base;
			o->mem.index = (uint16_t)op->mem.index;
			o->mem.segment = (uint16_t)op->mem.segment;
			o->mem.scale = op->mem.scale;
			o->mem.disp.value = op->mem.disp.value;
			break;
		case ZYDIS_OPERAND_TYPE_IMMEDIATE:
			o->imm.is_signed = op->imm.is_signed;
			o->imm.value.u = op->imm.value.u;
			break;
		default:
			break;
		}
	}
}

int decode_at_zydis(uint64_t pc, const struct decode_regs *regs, struct decode_insn *out,
		    struct decode_zydis *z)
{
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	int rc;

	memset(out, 0, sizeof(*out));
	out->pc = pc;
	rc = decode_full(pc, &insn, ops);
	if (rc < 0)
		return rc;
	decode_form_of(pc, &insn, ops, &z->form);
	decode_compact(&insn, ops, z); /* after the form: it reads its masks */
	decode_form_apply(&z->form, regs, out);
	return 0;
}

static void decode_form_of(uint64_t pc, const ZydisDecodedInstruction *insn,
			   const ZydisDecodedOperand *ops, struct decode_form *f)
{
	struct decode_insn *out = &f->in;
	int i;

	memset(f, 0, sizeof(*f));
	out->pc = pc;
	out->len = insn->length;
	out->mnemonic = (uint16_t)insn->mnemonic;
	out->flags = insn_flags(insn, ops);
	form_deps(insn, ops, f);
	/* General registers written (the masks' first 16 bits), so a caller
	 * looking ahead knows whether an address computed from today's
	 * registers still holds later. */
	out->regs_written = (uint16_t)(f->dep_writes & 0xffffu);
	if (out->flags & DECODE_F_BRANCH)
		for (i = 0; i < insn->operand_count; i++) {
			if (ops[i].type == ZYDIS_OPERAND_TYPE_IMMEDIATE && ops[i].imm.is_relative &&
			    ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(insn, &ops[i], pc,
								  &out->branch_target)))
				break;
			/* the destination register (not the implicit rip, rsp) */
			if (ops[i].type == ZYDIS_OPERAND_TYPE_REGISTER &&
			    ops[i].visibility == ZYDIS_OPERAND_VISIBILITY_EXPLICIT &&
			    ops[i].reg.value >= ZYDIS_REGISTER_RAX && ops[i].reg.value <= ZYDIS_REGISTER_R15) {
				out->branch_reg = (uint8_t)(1 + decode_gpr_index(ops[i].reg.value));
				break;
			}
		}

	if (no_data_access(insn))
		return;
	f->addr32 = insn->address_width == 32;
	for (i = 0; i < insn->operand_count && out->n_access < DECODE_MAX_ACCESS; i++) {
		const ZydisDecodedOperand *op = &ops[i];
		int rd, wr, cond_only, implicit;

		if (op->type != ZYDIS_OPERAND_TYPE_MEMORY)
			continue;
		/* AGEN (lea), MIB (bndldx/bndstx): no access we can describe */
		if (op->mem.type != ZYDIS_MEMOP_TYPE_MEM &&
		    op->mem.type != ZYDIS_MEMOP_TYPE_VSIB)
			continue;
		rd = !!(op->actions & ZYDIS_OPERAND_ACTION_MASK_READ);
		wr = !!(op->actions & ZYDIS_OPERAND_ACTION_MASK_WRITE);
		if (!rd && !wr)
			continue;
		/* A size Zydis cannot express in whole bytes is not guessed. */
		if (op->size == 0 || (op->size & 7))
			continue;
		cond_only = !(op->actions & (ZYDIS_OPERAND_ACTION_READ |
					    ZYDIS_OPERAND_ACTION_WRITE));
		implicit = op->visibility != ZYDIS_OPERAND_VISIBILITY_EXPLICIT;

		struct decode_form_mem *m = &f->mem[out->n_access];
		struct decode_access *acc = &out->access[out->n_access++];
		acc->len = op->size / 8;
		acc->kind = rd && wr ? DECODE_RMW : wr ? DECODE_STORE : DECODE_LOAD;
		acc->elem = elem_of(op);
		acc->addr_regs = gpr_bit(op->mem.base) | gpr_bit(op->mem.index);
		if (insn->mnemonic == ZYDIS_MNEMONIC_XLAT)
			acc->addr_regs |= 1u << DECODE_RAX;
		if (implicit)
			acc->flags |= DECODE_ACC_IMPLICIT;
		/* EVEX k1..k7 masks both loads and stores (fault suppression). */
		if ((insn->attributes & ZYDIS_ATTRIB_HAS_EVEX) &&
		    insn->avx.mask.reg != ZYDIS_REGISTER_NONE &&
		    insn->avx.mask.reg != ZYDIS_REGISTER_K0)
			acc->flags |= DECODE_ACC_MASKED;
		if (is_vector_masked(insn->mnemonic))
			acc->flags |= DECODE_ACC_MASKED;
		/* Zydis marks rep string operands conditional; the first element
		 * is certain once rcx != 0, checked when applied. */
		if (cond_only && insn->meta.category != ZYDIS_CATEGORY_STRINGOP &&
		    insn->meta.category != ZYDIS_CATEGORY_IOSTRINGOP)
			acc->flags |= DECODE_ACC_MASKED;

		m->base = m->index = m->bt_reg = -1;
		if (op->mem.type == ZYDIS_MEMOP_TYPE_VSIB) {
			/* per-element addresses live in vector registers */
			acc->flags |= DECODE_ACC_UNKNOWN_ADDR | DECODE_ACC_MASKED;
			m->unknown = 1;
			continue;
		}
		if (op->mem.base == ZYDIS_REGISTER_RIP || op->mem.base == ZYDIS_REGISTER_EIP)
			m->disp = (int64_t)(pc + insn->length);
		else
			m->base = (int8_t)decode_gpr_index(op->mem.base);
		if (op->mem.index != ZYDIS_REGISTER_NONE) {
			m->index = (int8_t)decode_gpr_index(op->mem.index);
			m->scale = op->mem.scale ? op->mem.scale : 1;
		}
		m->disp += op->mem.disp.value;
		m->xlat = insn->mnemonic == ZYDIS_MNEMONIC_XLAT;
		if (!implicit && is_bit_test(insn, ops)) {
			m->bt_reg = (int8_t)decode_gpr_index(ops[1].reg.value);
			m->bt_bits = (uint8_t)op->size;
			acc->addr_regs |= gpr_bit(ops[1].reg.value);
		}
		if (implicit && is_stack_reg(op->mem.base) && wr)
			m->stack_adj = (int16_t)-(int)acc->len; /* push-like: below the current rsp */
		else if (!implicit && insn->mnemonic == ZYDIS_MNEMONIC_POP &&
			 is_stack_reg(op->mem.base))
			m->stack_adj = (int16_t)acc->len; /* pop [rsp+d] addresses with the popped rsp */
		/* Only fs and gs have a base in long mode. */
		if (op->mem.segment == ZYDIS_REGISTER_FS)
			m->seg = DECODE_FORM_FS;
		else if (op->mem.segment == ZYDIS_REGISTER_GS)
			m->seg = DECODE_FORM_GS;
	}
}

void decode_form_apply(const struct decode_form *f, const struct decode_regs *regs,
		       struct decode_insn *out)
{
	uint64_t amask = f->addr32 ? 0xffffffffull : ~0ull;
	*out = f->in;
	/* rep with a zero count performs no iteration, hence no access. */
	if ((out->flags & DECODE_F_REP) && (regs->gpr[DECODE_RCX] & amask) == 0) {
		out->n_access = 0;
		return;
	}
	for (int i = 0; i < out->n_access; i++) {
		const struct decode_form_mem *m = &f->mem[i];
		if (m->unknown)
			continue;
		uint64_t ea = (uint64_t)m->disp;
		if (m->base >= 0)
			ea += regs->gpr[m->base];
		if (m->index >= 0)
			ea += regs->gpr[m->index] * m->scale;
		if (m->xlat)
			ea += regs->gpr[DECODE_RAX] & 0xff; /* Zydis omits the al index */
		if (m->bt_reg >= 0)
			ea += (uint64_t)bit_test_disp(regs->gpr[m->bt_reg], m->bt_bits);
		ea += (uint64_t)(int64_t)m->stack_adj;
		ea &= amask;
		if (m->seg == DECODE_FORM_FS)
			ea += regs->fs_base;
		else if (m->seg == DECODE_FORM_GS)
			ea += regs->gs_base;
		out->access[i].addr = ea;
	}
}

int decode_at(uint64_t pc, const struct decode_regs *regs, struct decode_insn *out)
{
	struct decode_zydis z;
	return decode_at_zydis(pc, regs, out, &z);
}

/* Length-only decode of the instruction at a during a forward scan that must
 * reach ctx_pc.  *checked_page caches the last page proven readable. */
static int scan_one(uint64_t a, uint64_t ctx_pc, uint64_t *checked_page,
		    ZydisDecodedInstruction *insn)
{
	uint64_t page = a & ~(uint64_t)(CODE_PAGE - 1);
	uint64_t to_page_end = page + CODE_PAGE - a;
	size_t n = to_page_end < MAX_INSN ? (size_t)to_page_end : MAX_INSN;
	ZydisDecoderContext zctx;
	uint8_t tmp[MAX_INSN];
	ZyanStatus st;

	/* fn_start comes from symbol tables that may be stale or wrong: prove
	 * each page readable once before reading it in place. */
	if (page != *checked_page) {
		uint8_t probe;
		if (peek_read(a, &probe, 1) < 0)
			return -EFAULT;
		*checked_page = page;
	}
	st = ZydisDecoderDecodeInstruction(&g_decoder, &zctx,
					   (const void *)(uintptr_t)a, n, insn);
	if (st == ZYDIS_STATUS_NO_MORE_DATA && n < MAX_INSN) {
		if (peek_read(a, tmp, MAX_INSN) < 0) {
			/* next page unreadable: fine if ctx_pc is not past it,
			 * the instruction would overshoot anyway */
			return page + CODE_PAGE >= ctx_pc ? -ENOENT : -EFAULT;
		}
		st = ZydisDecoderDecodeInstruction(&g_decoder, &zctx, tmp,
						   MAX_INSN, insn);
	}
	return ZYAN_SUCCESS(st) ? 0 : -ENOENT;
}

static unsigned cache_slot(uint64_t pc)
{
	return (unsigned)((pc * 0x9E3779B97F4A7C15ull) >> 32) % DECODE_CACHE_SLOTS;
}

/* One word a slot (decode.h): another thread's note replaces it whole. */
static uint64_t cache_word(uint64_t ctx_pc, uint64_t prev_pc)
{
	return ctx_pc << 4 | (prev_pc ? ctx_pc - prev_pc : 0);
}

static void cache_count(uint64_t *n)
{
	__atomic_store_n(n, __atomic_load_n(n, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* 1 and *len (0: a scan found none) when the slot holds ctx_pc. */
static int cache_lookup(const struct decode_cache *cache, uint64_t ctx_pc, unsigned *len)
{
	uint64_t w = __atomic_load_n(&cache->slot[cache_slot(ctx_pc)], __ATOMIC_RELAXED);
	if (ctx_pc == 0 || w >> 4 != ctx_pc)
		return 0;
	*len = (unsigned)(w & 15);
	return 1;
}

int decode_cache_prev(const struct decode_cache *cache, uint64_t ctx_pc, uint64_t *prev_pc)
{
	unsigned len;
	if (!cache_lookup(cache, ctx_pc, &len) || len == 0)
		return -ENOENT;
	*prev_pc = ctx_pc - len;
	return 0;
}

void decode_cache_note(struct decode_cache *cache, uint64_t ctx_pc, uint64_t prev_pc)
{
	if (ctx_pc > prev_pc && ctx_pc - prev_pc <= MAX_INSN)
		__atomic_store_n(&cache->slot[cache_slot(ctx_pc)], cache_word(ctx_pc, prev_pc),
				 __ATOMIC_RELAXED);
}

int decode_find_prev(struct decode_cache *cache, uint64_t fn_start,
		     uint64_t ctx_pc, uint64_t *prev_pc)
{
	uint64_t a, last, checked_page = ~0ull;
	unsigned len;
	int rc = -ENOENT;

	if (ctx_pc <= fn_start)
		return -ENOENT;
	if (ctx_pc - fn_start > DECODE_MAX_SCAN)
		return -E2BIG;
	int ready = decode_ready();
	if (ready < 0)
		return ready; /* not built yet: nothing cached */

	/* ctx_pc > fn_start >= 0, so the zeroed slot (ctx_pc 0) never hits;
	 * length 0 records a failed scan so it is not repeated every sample. */
	if (cache_lookup(cache, ctx_pc, &len)) {
		cache_count(&cache->hits);
		if (len == 0)
			return -ENOENT;
		*prev_pc = ctx_pc - len;
		return 0;
	}
	cache_count(&cache->misses);

	a = last = fn_start;
	while (a < ctx_pc) {
		ZydisDecodedInstruction insn;
		int r = scan_one(a, ctx_pc, &checked_page, &insn);
		if (r == -EFAULT)
			return r; /* unreadable code: transient, do not cache */
		if (r < 0)
			break;
		last = a;
		a += insn.length;
	}
	if (a == ctx_pc) {
		*prev_pc = last;
		rc = 0;
	}
	__atomic_store_n(&cache->slot[cache_slot(ctx_pc)], cache_word(ctx_pc, rc == 0 ? last : 0),
			 __ATOMIC_RELAXED);
	return rc;
}
