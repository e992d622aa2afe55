/* insn_class: what the oracle needs to know of one x86-64 instruction that
 * VEX IR does not say: the element type of its memory operand (so FP values
 * are compared with a tolerance, as libwitch's decoder reports them through
 * Zydis) and whether it moves the stack pointer implicitly (push, pop, call,
 * ret, enter, leave, pushf, popf: libwitch's silent and load clients never
 * sample those).
 *
 *   unsigned insn_class_of(const unsigned char *code);
 *       INSN_ELEM_F32 or INSN_ELEM_F64 in the low bits (0: integer/bytes),
 *       | INSN_STACK.  Reads only the bytes of the instruction's prefixes,
 *       opcode and ModRM.  Covers SSE/AVX scalar and packed FP moves and
 *       arithmetic, FMA, x87 loads and stores; anything else is integer.
 */
#ifndef ORACLE_INSN_CLASS_H
#define ORACLE_INSN_CLASS_H

#define INSN_ELEM_INT 0u
#define INSN_ELEM_F32 1u
#define INSN_ELEM_F64 2u
#define INSN_ELEM_MASK 3u
#define INSN_STACK 4u

unsigned insn_class_of(const unsigned char *code);

#endif
