/* fnrange: the function that holds a pc, as the unwind tables say, kept
 * per thread.
 *
 * A stack sample's object is the function whose frame holds the address
 * (objects.h).  Asking libunwind (an .eh_frame_hdr search and an FDE read)
 * took 7-13 thousand cycles a sample at the default budget, where every
 * table is cold, and a third to a half of the samples of python3, cc1 and
 * hashtab fall on the stack.  A thread keeps the ranges [start, end) it
 * was told: 64 sets of 4, a set chosen by the pc's 256-byte block, so a
 * function has an entry for each block of it where samples fall (4 KiB
 * a thread).  All are dropped when a module is unloaded
 * (phdrs_generation), as the unwinder's rules are.  Handlers only; not
 * reentrant (a thread's handler runs do not nest).
 */
#ifndef WITCH_FNRANGE_H
#define WITCH_FNRANGE_H

#include <stdint.h>

#define FNRANGE_SET_BITS 6
#define FNRANGE_WAYS 4
#define FNRANGE_BLOCK_SHIFT 8

struct fnrange_entry {
	uint64_t start, end; /* [start, end); 0, 0: empty */
};

struct fnrange {
	uint64_t generation; /* phdrs_generation of the entries */
	uint32_t next;       /* the way the next miss replaces, round robin */
	uint64_t hits, misses;
	struct fnrange_entry set[1u << FNRANGE_SET_BITS][FNRANGE_WAYS];
};

/* Empty (c zeroed or not). */
void fnrange_init(struct fnrange *c);
/* The start of the function holding pc: 0 and *start, or -ENOENT where no
 * unwind table covers pc (a JIT's code, a stripped module's). */
int fnrange_start(struct fnrange *c, uint64_t pc, uint64_t *start);

#endif
