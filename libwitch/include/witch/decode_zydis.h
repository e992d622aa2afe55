/* decode_zydis: the decode module's Zydis layer, for modules that need an
 * instruction's operands and not only its accesses (emulate).
 *
 * API
 *   int decode_zydis(uint64_t pc, ZydisDecodedInstruction *insn,
 *                    ZydisDecodedOperand *ops);
 *       Decode the instruction at pc without faulting (as decode_at reads
 *       code).  0, -EFAULT, -EILSEQ, or -EINVAL before decode_init.
 *       ops has room for ZYDIS_MAX_OPERAND_COUNT operands.
 *   int decode_gpr_index(ZydisRegister r);
 *       Hardware index (0..15) of a 16/32/64-bit general register, else -1.
 */
#ifndef WITCH_DECODE_ZYDIS_H
#define WITCH_DECODE_ZYDIS_H

#include <stdint.h>

#include <Zydis/Zydis.h>

int decode_zydis(uint64_t pc, ZydisDecodedInstruction *insn, ZydisDecodedOperand *ops);
int decode_gpr_index(ZydisRegister r);

#endif
