/* xsave: the interrupted thread's vector registers, read from its signal
 * frame.
 *
 * The kernel saves the thread's extended state in the frame with XSAVE
 * (uc_mcontext.fpregs): the legacy FXSAVE area (XMM0-15), then the XSAVE
 * header (XSTATE_BV) and the components at the offsets CPUID leaf 0xD gives
 * (standard, not compacted, format): YMM_Hi128 (2), opmask (5), ZMM_Hi256
 * (6), Hi16_ZMM (7).  A component whose XSTATE_BV bit is clear is in its
 * init state: zero.  The emulator (emulate_vec.h) runs vector code ahead on
 * a copy of these.
 *
 * Everything but xsave_init is async-signal-safe: no malloc, no locks, no
 * stdio.
 */
#ifndef WITCH_XSAVE_H
#define WITCH_XSAVE_H

#include <stdint.h>

#define XSAVE_NZMM 32
#define XSAVE_NK 8

/* Once per process, before any frame is read (not async-signal-safe): the
 * components the OS enables (XCR0) and their offsets (CPUID 0xD).  Returns 0
 * (also on a CPU without XSAVE: then only XMM0-15 exist). */
int xsave_init(void);
/* A frame's extended state, its header read (xsave_frame_of) and each
 * register read when asked for: a window meets a few vector registers,
 * and copying all 32 (2 KiB) was ~30 cold lines written a tick on
 * stencil at 50/s (bench/results/cold_ticks.md). */
struct xsave_frame {
	const uint8_t *fx;        /* the FXSAVE area; NULL: nothing known */
	const uint8_t *ymm, *zmm_hi256, *hi16_zmm, *opmask; /* NULL: init state (zero) */
	uint8_t sse;              /* XMM0-15 are in the legacy area (else zero) */
};
/* Read the frame's header (uc->uc_mcontext.fpregs).  Returns 0, or -EINVAL
 * when fpregs is NULL or its XSAVE area is not one xsave_init's layout
 * describes: then no register is known (*f says so). */
int xsave_frame_of(const void *fpregs, struct xsave_frame *f);
/* ZMM i (bytes 0..63; XMM and YMM are its low 16 and 32), zero where its
 * components are in their init state or absent on this CPU.  0, or
 * -EINVAL when f knows nothing. */
int xsave_frame_zmm(const struct xsave_frame *f, int i, uint8_t out[64]);
/* The opmask registers k0-k7 (zero in the init state or without AVX-512).
 * 0, or -EINVAL when f knows nothing. */
int xsave_frame_k(const struct xsave_frame *f, uint64_t k[XSAVE_NK]);

#endif
