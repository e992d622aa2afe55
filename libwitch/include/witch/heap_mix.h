/* heap_mix: whose an untracked small heap block is (docs/objects.md).
 *
 * Small blocks past their call site's first ones are tracked one in
 * heap_sample_bytes() / size (heap.h); a sample that falls in one of the
 * others finds no block, yet it is in the heap, and its block is of some
 * site.  Weighting the few tracked ones up by their inverse probability
 * (what objects did before) is unbiased, but rests on the handful of
 * samples that land in a tracked small block: sqlite3's heap read 5-8% of
 * its stores for the oracle's 22%, the rest `unknown`.  Instead every such
 * sample counts as heap, and its site is drawn from the live sampled
 * blocks' mix:
 *   - where: the 64 MiB-aligned windows that hold small blocks (glibc's
 *     main arena grows by brk within a few; each thread arena is one
 *     aligned 64 MiB mapping), registered as tracked small blocks appear;
 *   - whose: each live sampled block adds k x heap_sample_bytes() to its
 *     site (k: the sample bytes in it; E = its size), so the mix estimates
 *     the live small bytes by site, from many more blocks (one every
 *     16 KiB allocated) than samples land in.
 * A draw in proportion to live bytes takes the sites' bytes to be accessed
 * alike; where one site's blocks are busier than another's, the busier
 * site is under-named (its total as heap is still right).
 *
 * Memory: HEAP_SITES + 1 counters (32 KiB) and 64 window slots, static.
 * An update is one atomic add (on the allocators' slow path, tracked
 * blocks only); a draw reads the counters of the sites seen so far twice
 * (a few hundred in python3 or sqlite3), lock-free and async-signal-safe,
 * and a racing update can only make one fail.
 */
#ifndef WITCH_HEAP_MIX_H
#define WITCH_HEAP_MIX_H

#include <stdint.h>

#define HEAP_MIX_WINDOW_SHIFT 26 /* glibc's HEAP_MAX_SIZE on 64-bit: 64 MiB */
#define HEAP_MIX_WINDOWS 64
/* How far past a tracked small block its window's note reaches (into the
 * next window, where a brk heap crosses one): 64 times the ~16 KiB between
 * tracked blocks. */
#define HEAP_MIX_REACH (1u << 20)

/* A tracked small block lies at addr: its window, and the one
 * HEAP_MIX_REACH on, hold small blocks. */
void heap_mix_note_window(uint64_t addr);
/* addr lies in a window that holds small blocks. */
int heap_mix_holds(uint64_t addr);
/* A live sampled block of `site` adds (bytes > 0) or leaves (bytes < 0). */
void heap_mix_add(uint32_t site, int64_t bytes);
/* A site drawn in proportion to its live sampled bytes, u uniform in
 * [0, 2^64): 0 and *site, or -ENOENT when the mix is empty (or a racing
 * update made this draw inconsistent). */
int heap_mix_draw(uint64_t u, uint32_t *site);
/* The live sampled bytes the mix holds (tests, stats). */
int64_t heap_mix_total(void);

#endif
