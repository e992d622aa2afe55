/* emulate_vec: the run-ahead through vector code (emulate.h's vector half).
 *
 * glibc's AVX2 and EVEX string functions (strlen, strncpy, memchr, strcmp,
 * memset...) loop on vector compares into masks, move the masks into general
 * registers (vpmovmskb, kmovd) or flags (kortestd, ptest) and branch on them.
 * Without vector values the emulator stops there and the sampler guesses
 * branches or single-steps.  So the run keeps a copy of the vector and mask
 * registers, read from the signal frame (xsave.h) only when an instruction
 * first needs a value, and runs the instructions those functions use; and
 * scalar double/float code (movsd, addsd..divsd, vfmadd.., cvtsi2sd, cvttsd2si,
 * ucomisd), whose results feed branches and addresses (movq to a register)
 * as often.
 *
 * Every other instruction that writes a vector or mask register leaves that
 * register unknown; a value read from an unknown register (or from bytes an
 * emulated store wrote) is unknown, and stays in vector registers: moving an
 * unknown value into a general register or the flags stops the emulator
 * (-ENOTSUP), as before.  A vector value is never guessed.
 *
 * Async-signal-safe: no malloc, no locks, no stdio.
 */
#ifndef WITCH_EMULATE_VEC_H
#define WITCH_EMULATE_VEC_H

#include <stdint.h>

#include "witch/decode.h"
#include "witch/decode_zydis.h"
#include "witch/xsave.h"

#define EMULATE_CHUNK 512 /* bytes a load reads at once (a power of 2, < 4096) */
#define EMULATE_CHUNKS 4

/* A thread's vector registers as a run leaves them, and the memory its
 * loads read (preallocated per thread: 4 KiB, too big for the pick copies
 * of struct emulate). */
struct emulate_vec {
	uint8_t zmm[XSAVE_NZMM][64];
	uint64_t k[XSAVE_NK];
	uint32_t zmm_unknown;  /* bit i: zmm i holds a value not known */
	uint8_t k_unknown;     /* bit i: k i likewise */
	uint8_t loaded;        /* the frame's header and k read (emulate_vec_ready) */
	uint32_t zmm_loaded;   /* bit i: zmm i read from the frame (or written), on first use */
	uint16_t upper_zeroed; /* bit i: a vzeroupper came before zmm i was read */
	uint32_t mxcsr;        /* the frame's, once loaded (0: not known) */
	const void *fpregs;    /* the signal frame's XSAVE area, or NULL */
	struct xsave_frame frame; /* fpregs' header, once loaded */
	/* The run's loads, by aligned chunk (emulate_read; base 1: none). */
	uint64_t chunk_base[EMULATE_CHUNKS];
	uint32_t chunk_next;
	uint8_t chunk[EMULATE_CHUNKS][EMULATE_CHUNK];
};

struct emulate;
struct emulate_ctx;

/* A run starts at a signal frame whose extended state is fpregs
 * (uc_mcontext.fpregs; NULL: every vector register unknown).  Nothing is
 * read until an instruction needs it. */
void emulate_vec_begin(struct emulate_vec *v, const void *fpregs);
/* Start with these registers, all known (tests). */
void emulate_vec_set(struct emulate_vec *v, const uint8_t zmm[XSAVE_NZMM][64],
		     const uint64_t k[XSAVE_NK]);
/* emulate.c's hook, for an instruction that is not integer code: 0 done
 * (registers and flags advanced), 1 not one of this module's (emulate.c
 * goes on as before), or -ENOTSUP / -EFAULT as emulate_insn. */
int emulate_vec_insn(struct emulate_ctx *c, const struct decode_insn *in);
/* After emulate.c ran an instruction this module does not know: the vector
 * and mask registers it writes become unknown. */
void emulate_vec_clobber(struct emulate_ctx *c);
/* A masked (EVEX k1-k7) memory access of the instruction at the run's
 * current point, a = in->access[i]: when its mask is known, narrow a to the
 * span of the elements the mask enables and return the bytes they are
 * (0: none; the access happens not at all); -ENOTSUP when the mask is not
 * known or the access is not such (a unchanged). */
int emulate_vec_access(const struct emulate *e, const struct decode_zydis *z,
		       struct decode_access *a);

#endif
