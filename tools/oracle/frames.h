/* frames: the source frames of one code address, named as `witch report`
 * names libwitch's, so that the two sides' contexts and objects meet:
 *
 * - inlined calls are frames of their own, innermost first, from DWARF
 *   inline info (the wrapper passes --read-inline-info=yes); the last
 *   frame is the physical function (its symbol);
 * - a caller's pc is its return address: it is named at the call
 *   instruction (return address - 1), its line the call's;
 * - a library frame is code of a language runtime (libc, libstdc++, the
 *   loader, libm, ... and Valgrind's own preloads) or from a system
 *   header: a heap block is named by the first frame that is not one, as
 *   tools/witch/object_view.c does.
 *
 *   Int  frames_of_pc(DiEpoch ep, Addr pc, Bool leaf, struct src_frame *out, Int max);
 *                      out[0..n) innermost first (n >= 1 when max >= 1)
 *   Addr frames_site(Addr pc, Bool leaf);   the address a frame is shown
 *                      at: pc for the leaf, the call (pc - 1) for a caller
 *   Bool frames_library(const struct src_frame *f);
void frames_function(DiEpoch ep, Addr at, HChar *fn, SizeT size);
void frames_drop_version(HChar *fn);
 *   void frames_function(DiEpoch ep, Addr at, HChar *fn, SizeT size);
 *                      the physical function at code address at: its symbol
 *                      without version, the global one of aliases (elfsyms.h);
 *                      fn left alone when none
 *   void frames_drop_version(HChar *fn);   a symbol without its version
 *                      (__libc_start_main@@GLIBC_2.34), as witch report shows it
 */
#ifndef ORACLE_FRAMES_H
#define ORACLE_FRAMES_H

#include "pub_tool_basics.h"
#include "pub_tool_debuginfo.h"

struct src_frame {
	HChar fn[256];    /* "??" when unknown */
	HChar file[512];  /* "" when unknown */
	UInt line;
	HChar obj[256];   /* the module's path, "" when unknown */
	Bool inlined;
};

#define FRAMES_PER_PC 16

Int frames_of_pc(DiEpoch ep, Addr pc, Bool leaf, struct src_frame *out, Int max);
Addr frames_site(Addr pc, Bool leaf);
Bool frames_library(const struct src_frame *f);
void frames_function(DiEpoch ep, Addr at, HChar *fn, SizeT size);
void frames_drop_version(HChar *fn);

#endif
