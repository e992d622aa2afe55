/* sysret: whether a tick arrived on a system call's way out.
 *
 * The software sampler's perf clock counts user-mode time only
 * (exclude_kernel: a tick that comes due in the kernel is dropped), so a
 * tick should stand for the program's own time.  On some hypervisors (this
 * VM: a PVM guest, 2026-12-02) a timer interrupt that comes due in a system
 * call is taken only once the kernel re-enables interrupts on its way back
 * to user mode: the tick is raised in user mode, a few instructions past
 * the `syscall`, and its interval's end fell in the kernel.  Its window
 * would weigh the code after the call for the kernel's time: on a pread
 * loop, perf's own task-clock:u put 61% of its ticks at pread's return (90%
 * of them at the instruction after `syscall`, the rest up to four
 * instructions on, past its `ret`), and a 16-store function called after
 * each read read 2-3x its bytes.  Such a tick stands for no bytes, as a
 * page fault's does (faultlog.h).
 *
 * The `syscall` instruction (0f 05) leaves its return address in rcx and
 * the kernel hands rcx back, so a tick at most SYSRET_MAX_INSNS
 * instructions past it, on a path that does not write rcx, finds rcx
 * there.  Code that merely keeps such an rcx longer is not taken: the
 * tick's pc must be on that short path from rcx (or at rcx - 2, where the
 * kernel puts a call it restarts).
 */
#ifndef WITCH_SYSRET_H
#define WITCH_SYSRET_H

#include "witch/decode.h"

/* Instructions past the return a tick raised on the way out is looked for
 * (this VM: up to 4). */
#define SYSRET_MAX_INSNS 8

/* 1 when the tick at regs->rip arrived on a system call's way out (rcx: the
 * call's return address), else 0.  Reads code and the 8 bytes below rsp
 * (where a `ret` on the path took its address from) through peek_read.
 * Async-signal-safe. */
int sysret_tick(const struct decode_regs *regs);

#endif
