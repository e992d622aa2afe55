/* decode_zydis: the decode module's Zydis layer, for modules that need an
 * instruction's operands and not only its accesses (emulate).
 */
#ifndef WITCH_DECODE_ZYDIS_H
#define WITCH_DECODE_ZYDIS_H

#include <stdint.h>

#include <Zydis/Zydis.h>

#include "witch/decode.h"

/* What describing an instruction (decode_at) takes from its decoding,
 * found once a decoding: everything of decode_insn but the addresses, and
 * for each access how its address follows from the registers.  A cached
 * decoding is described again on each run from this alone (Zydis's
 * operand walk and register lookups were ~9% of a tick's handler). */
struct decode_form_mem {
	int64_t disp;     /* rip-relative: the next instruction's address added */
	int8_t base;      /* gpr index, -1: none */
	int8_t index;     /* gpr index, -1: none */
	uint8_t scale;
	uint8_t seg;      /* 0, or DECODE_FORM_FS / DECODE_FORM_GS: that base added */
	int8_t bt_reg;    /* bt/bts/btr/btc's register bit offset: its gpr, else -1 */
	uint8_t bt_bits;  /* the operand's size, which the offset is taken modulo */
	uint8_t xlat;     /* al is an index Zydis does not list */
	uint8_t unknown;  /* VSIB: no address */
	int16_t stack_adj; /* push-like: -len; pop [rsp+d]: +len */
};
#define DECODE_FORM_FS 1
#define DECODE_FORM_GS 2

/* Registers in a form's dependency masks: general 0-15 (hardware order),
 * vector 16-47 (xmm, ymm and zmm n alike), the flags; rip, segment, mask
 * and x87 registers are not followed. */
#define DECODE_DEP_VEC0 16
#define DECODE_DEP_FLAGS 48
#define DECODE_DEP_NREGS 49

struct decode_form {
	struct decode_insn in; /* access[].addr 0; all accesses, rcx aside */
	uint8_t addr32;        /* 32-bit addressing: addresses wrap at 4 GiB */
	uint8_t dep_vector;    /* a vector register is an operand */
	uint64_t dep_reads;    /* bit r: register r is read (addresses' too) */
	uint64_t dep_writes;   /* bit r: register r is written */
	struct decode_form_mem mem[DECODE_MAX_ACCESS];
};

/* An operand as the emulator reads it: the fields of Zydis's operand it
 * uses, same names, in 24 bytes of its 80.  A cached decoding is then 320
 * bytes where Zydis's instruction and operands made it 1,288: the cache
 * is 82 KiB a thread, not 333 (peak RSS -0.3 to -0.4 MiB on gcc, python3,
 * sqlite3).  The window's time did not measurably move with it. */
struct decode_zop {
	uint8_t type;          /* ZydisOperandType */
	uint16_t size;         /* bits */
	uint16_t element_size; /* bits */
	union {
		struct { uint16_t value; } reg; /* ZydisRegister */
		struct {
			uint16_t base, index, segment; /* ZydisRegister */
			uint8_t scale;
			struct { int64_t value; } disp;
		} mem;
		struct {
			uint8_t is_signed;
			union { uint64_t u; int64_t s; } value;
		} imm;
	};
};
/* Zydis lists at most 5 visible operands; the emulator reads no other. */
#define DECODE_ZOPS ZYDIS_MAX_OPERAND_COUNT_VISIBLE

/* The instruction as the emulator reads it: Zydis's fields it uses, and
 * what it asked of the hidden operands and flags, found once. */
struct decode_zinsn {
	uint64_t attributes;   /* ZYDIS_ATTRIB_* */
	uint32_t vec_written;  /* bit n: zmm n written: the form's dep_writes, hidden operands too */
	uint16_t mnemonic;     /* ZydisMnemonic */
	uint8_t length;
	uint8_t operand_width;
	uint8_t address_width;
	uint8_t operand_count_visible;
	uint8_t k_written;     /* bit n: k n written */
	uint8_t flags_changed; /* some flag modified, set, cleared or undefined */
	struct {
		struct { uint16_t reg; uint8_t mode; } mask;  /* ZydisRegister, ZydisMaskMode */
		struct { uint8_t mode, is_static; } broadcast; /* ZydisBroadcastMode */
	} avx;
};

struct decode_zydis {
	struct decode_form form; /* first: beside a cache slot's tag */
	struct decode_zinsn insn;
	struct decode_zop ops[DECODE_ZOPS];
};

/* decode_at, keeping Zydis's decoding of the instruction in z, so a caller
 * that also runs the instruction (emulate_insn) decodes once. */
int decode_at_zydis(uint64_t pc, const struct decode_regs *regs, struct decode_insn *out,
		    struct decode_zydis *z);
/* What a decoding's form says of the instruction run with regs (decode_at's
 * answer, from a kept decoding: decode_zcache.h). */
void decode_form_apply(const struct decode_form *f, const struct decode_regs *regs,
		       struct decode_insn *out);
/* What each Zydis register is as a general register, found once
 * (decode_init): the emulator asks for every operand it reads or writes,
 * and Zydis's lookups took ~7% of a window's instructions (callgrind). */
struct decode_gpr_slot {
	int8_t index; /* hardware index 0..15 of the 64-bit register holding it, -1: none */
	uint8_t bits; /* its width */
	uint8_t high; /* ah, ch, dh, bh: bits 8-15 */
	int8_t dep;   /* its place in a form's dependency masks (DECODE_DEP_*), -1: none */
	int8_t mask;  /* k0-k7: its number, else -1 */
};
extern struct decode_gpr_slot decode_gpr_slots[ZYDIS_REGISTER_MAX_VALUE + 1];

static inline const struct decode_gpr_slot *decode_gpr_slot_of(ZydisRegister r)
{
	return &decode_gpr_slots[r];
}

/* Hardware index (0..15) of a 16/32/64-bit general register, else -1. */
int decode_gpr_index(ZydisRegister r);

#endif
