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
 * xsave_read is async-signal-safe: no malloc, no locks, no stdio.
 */
#ifndef WITCH_XSAVE_H
#define WITCH_XSAVE_H

#include <stdint.h>

#define XSAVE_NZMM 32
#define XSAVE_NK 8

/* Once per process, before any xsave_read (not async-signal-safe): the
 * components the OS enables (XCR0) and their offsets (CPUID 0xD).  Returns 0
 * (also on a CPU without XSAVE: then only XMM0-15 exist). */
int xsave_init(void);
/* Copy the registers of the frame's extended state fpregs
 * (uc->uc_mcontext.fpregs) into zmm (bytes 0..63 of each ZMM) and k.
 * *zmm_known / *k_known: bit i set when register i was read (or is zero by
 * its init state, or does not exist on this CPU); a register not known must
 * not be used.  Returns 0, or -EINVAL when fpregs is NULL or its XSAVE area
 * is not one xsave_init's layout describes (nothing known then). */
int xsave_read(const void *fpregs, uint8_t zmm[XSAVE_NZMM][64], uint64_t k[XSAVE_NK],
	       uint32_t *zmm_known, uint8_t *k_known);

#endif
