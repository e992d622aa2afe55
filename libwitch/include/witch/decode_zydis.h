/* decode_zydis: the decode module's Zydis layer, for modules that need an
 * instruction's operands and not only its accesses (emulate).
 */
#ifndef WITCH_DECODE_ZYDIS_H
#define WITCH_DECODE_ZYDIS_H

#include <stdint.h>

#include <Zydis/Zydis.h>

#include "witch/decode.h"

struct decode_zydis {
	ZydisDecodedInstruction insn;
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
};

/* decode_at, keeping Zydis's decoding of the instruction in z, so a caller
 * that also runs the instruction (emulate_insn) decodes once. */
int decode_at_zydis(uint64_t pc, const struct decode_regs *regs, struct decode_insn *out,
		    struct decode_zydis *z);
/* Hardware index (0..15) of a 16/32/64-bit general register, else -1. */
int decode_gpr_index(ZydisRegister r);

#endif
