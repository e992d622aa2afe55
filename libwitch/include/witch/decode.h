/* decode: x86-64 instruction decoding and effective addresses (Zydis).
 *
 * Everything but decode_init is async-signal-safe: no malloc, no locks, no
 * stdio, and reading code never faults (a read that may cross into an
 * unmapped page goes through peek_read, peek.h).
 */
#ifndef WITCH_DECODE_H
#define WITCH_DECODE_H

#include <stdint.h>
#include <ucontext.h>

enum decode_kind {
	DECODE_NONE = 0,
	DECODE_LOAD = 1,
	DECODE_STORE = 2,
	DECODE_RMW = 3, /* load and store of the same bytes: add [m], r; xchg; lock ops */
};

/* Element type of the data moved, for clients comparing values (SilentCraft). */
enum decode_elem {
	DECODE_ELEM_INT = 0,
	DECODE_ELEM_F32 = 1,
	DECODE_ELEM_F64 = 2,
};

/* Register indices follow the hardware encoding order. */
enum decode_gpr {
	DECODE_RAX, DECODE_RCX, DECODE_RDX, DECODE_RBX,
	DECODE_RSP, DECODE_RBP, DECODE_RSI, DECODE_RDI,
	DECODE_R8, DECODE_R9, DECODE_R10, DECODE_R11,
	DECODE_R12, DECODE_R13, DECODE_R14, DECODE_R15,
	DECODE_NGPR
};

#define DECODE_RFLAGS_DF 0x400ull /* string instructions step down */

struct decode_regs {
	uint64_t gpr[DECODE_NGPR];
	uint64_t rip;
	uint64_t rflags;
	uint64_t fs_base;
	uint64_t gs_base;
	/* Vector registers are not captured: vector index (VSIB gather/scatter)
	 * accesses are reported with DECODE_ACC_UNKNOWN_ADDR. */
};

/* Flags of one access. */
#define DECODE_ACC_MASKED       0x01u /* masked/conditional: may touch fewer bytes */
#define DECODE_ACC_UNKNOWN_ADDR 0x02u /* address could not be computed (VSIB) */
#define DECODE_ACC_IMPLICIT     0x04u /* implicit operand: push/pop/call/ret stack slot, string op */

struct decode_access {
	uint64_t addr;
	uint32_t len;  /* bytes; for rep string ops one element */
	uint8_t kind;  /* enum decode_kind */
	uint8_t elem;  /* enum decode_elem */
	uint8_t flags; /* DECODE_ACC_* */
	uint16_t addr_regs; /* bit i: gpr i takes part in the address */
};

/* Flags of the instruction. */
#define DECODE_F_BRANCH   0x0001u /* any control transfer (jmp, jcc, call, ret, loop) */
#define DECODE_F_CALL     0x0002u
#define DECODE_F_RET      0x0004u
#define DECODE_F_REP      0x0008u /* rep/repe/repne-prefixed string instruction */
#define DECODE_F_NO_STEP  0x0010u /* do not single-step over it: pushf, popf, iret,
				   * int/int3/into, syscall, sysenter, ud, hlt, xbegin */
#define DECODE_F_COND     0x0040u /* conditional branch: jcc, loop*, jrcxz */
#define DECODE_F_STACK    0x0020u /* changes rsp implicitly: push, pop, call, ret, enter, leave */
#define DECODE_F_LOCKED   0x0080u /* an atomic read-modify-write of memory: lock prefix, or
				   * xchg with a memory operand (locked without one) */

#define DECODE_MAX_ACCESS 2

struct decode_insn {
	uint64_t pc;
	uint8_t len;      /* instruction length in bytes */
	uint8_t n_access; /* number of valid entries in access[] */
	uint16_t flags;   /* DECODE_F_* */
	uint16_t mnemonic; /* ZydisMnemonic, for diagnostics and tests */
	uint16_t regs_written; /* bit i: the instruction writes gpr i (any width) */
	uint64_t branch_target; /* direct (relative) branch or call: its destination, else 0 */
	uint8_t branch_reg;     /* `call/jmp *%reg`: 1 + the register's DECODE_R*, else 0 */
	struct decode_access access[DECODE_MAX_ACCESS];
};

/* Direct-mapped cache of decode_find_prev results (and decode_cache_note's):
 * what ends where is the same for every thread, so a process keeps one,
 * shared (thread.c).  A slot is one word, ctx_pc << 4 | the length of the
 * instruction ending there (0: a scan found none), read and written whole,
 * so threads need no lock; user addresses fit 60 bits.  Zeroed: empty. */
#define DECODE_CACHE_SLOTS 4096
#define DECODE_MAX_SCAN (1u << 20)
struct decode_cache {
	uint64_t slot[DECODE_CACHE_SLOTS];
	uint64_t hits, misses; /* counts, lossy where threads race */
};

/* Builds the decoder and its register table now, as the first decode
 * otherwise does (the runtime leaves it to that first decode, in a tick's
 * handler: a process that never ticks never pays).  0, -EAGAIN while
 * another thread builds or before Zydis is loaded (deps.h), or -EINVAL. */
int decode_init(void);
/* Snapshot the general registers of a signal context. */
void decode_regs_from_ucontext(const ucontext_t *uc, uint64_t fs_base,
			       uint64_t gs_base, struct decode_regs *out);
/* Decode the instruction at pc and compute each memory access it makes
 * (address, length, load/store/read-modify-write) as if it executed with the
 * register values in regs.  Returns 0, -EFAULT when the code bytes cannot be
 * read, -EILSEQ when they do not decode (-EAGAIN while another thread
 * builds the decoder, the first decode's work; -EINVAL if Zydis refused).  The
 * page holding pc must be readable (it is for an interrupted pc); only bytes
 * past it are read via peek_read (peek.h).  Accesses are listed in Zydis operand
 * order (explicit operands first); a rep string op with a zero count reports
 * none. */
int decode_at(uint64_t pc, const struct decode_regs *regs, struct decode_insn *out);
/* x86 reports a data breakpoint after the access (Witch 4.5, "precise PC"):
 * find the instruction that ends exactly at ctx_pc by decoding forward from
 * fn_start, a known instruction boundary.  Results are kept in cache (which
 * threads may share: no lock). Returns 0, -ENOENT when linear
 * decoding from fn_start does not land on ctx_pc (cached as well), -E2BIG when
 * ctx_pc is too far (DECODE_MAX_SCAN bytes) from fn_start, -EFAULT when code
 * between them is unreadable (a wrong fn_start; not cached). */
int decode_find_prev(struct decode_cache *cache, uint64_t fn_start,
		     uint64_t ctx_pc, uint64_t *prev_pc);
/* What the cache knows of the instruction ending at ctx_pc, without a scan:
 * 0 and *prev_pc, or -ENOENT (not known, or a scan found none). */
int decode_cache_prev(const struct decode_cache *cache, uint64_t ctx_pc, uint64_t *prev_pc);
/* Keep that the instruction at prev_pc ends at ctx_pc: learned where code
 * was decoded on a boundary anyway (a window's new decodings), so a trap
 * there needs no function start and no scan (~1-10 us each, cold). */
void decode_cache_note(struct decode_cache *cache, uint64_t ctx_pc, uint64_t prev_pc);

#endif
