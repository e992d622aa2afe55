/* rescue: a fault inside one of the runtime's handler runs ends that run,
 * not the program.
 *
 * The handlers read the program's memory: code decoded in place after a
 * page was found mapped, unwind tables libunwind reads, a stack.  Another
 * thread can unmap any of it between the check and the read (dlclose,
 * munmap, a thread's exit), and a SIGSEGV there would kill a program that
 * did nothing wrong.  As hpcrun does around its unwinder, a handler run
 * sets a return point first (RESCUE_SET, a sigsetjmp without the mask: no
 * system call); a synchronous SIGSEGV or SIGBUS raised while it is set
 * goes back there (rescue_fault, called by the fault handlers before
 * anything else), with the signal mask the handler had.  The run is then
 * abandoned: the caller undoes what a run may leave half done (phdrs'
 * reader count, the run-ahead) and counts it (stat handler_faults).
 *
 * Only faults the runtime's SIGSEGV/SIGBUS handler sees are rescued, and it is
 * fatal.c's, whatever action the program set through sigaction or signal
 * (a handler of its own gets its faults passed on); not one it set by raw
 * system call.
 */
#ifndef WITCH_RESCUE_H
#define WITCH_RESCUE_H

#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>

struct rescue_point {
	sigjmp_buf env;
	int covered; /* rescue_covers_faults' answer for this run; -1: not asked */
	const ucontext_t *uc; /* the interrupted context, or NULL (rescue_arm) */
};

/* Sets p as this thread's return point; 0 the first time, 1 when a fault
 * came back to it (then p is no longer set).  A macro: sigsetjmp must run
 * in the frame that stays live.  uc: see rescue_arm. */
#define RESCUE_SET(p, uc) (sigsetjmp((p)->env, 0) ? 1 : (rescue_arm(p, uc), 0))

/* uc: in a handler whose own mask leaves SIGSEGV and SIGBUS open
 * (sigguard_handler_mask), the context it interrupted, whose mask then
 * says whether they are blocked; NULL elsewhere (the kernel is asked). */
void rescue_arm(struct rescue_point *p, const ucontext_t *uc);
/* The run ended normally: p is no longer a return point. */
void rescue_disarm(void);
/* From a SIGSEGV/SIGBUS handler, first: a fault the kernel raised (si_code
 * > 0) while a return point is set goes back to it and does not return.
 * 0: not ours, the handler goes on. */
int rescue_fault(int sig, siginfo_t *si, void *uc);

/* The SIGSEGV/SIGBUS handler that calls rescue_fault first (fatal.c's). */
void rescue_set_fault_handler(void (*fn)(int, siginfo_t *, void *));
/* 1 when a fault now would come back to this thread's return point: one is
 * set, the kernel's handler for SIGSEGV and SIGBUS is the registered one,
 * and neither signal is blocked (a blocked fault kills).  The mask is read
 * from the run's interrupted context (or asked of the kernel once a run).
 * The handlers are the process's: asked of the kernel (two system calls,
 * ~5 us a handler run when cold) at most once every RESCUE_RECHECK_NS by
 * whichever thread comes first, and at once after the program sets
 * either through sigaction or signal (rescue_actions_changed).  A program
 * can also set one past those, by raw system call, as Go's runtime does:
 * such a handler is seen within the interval. */
#define RESCUE_RECHECK_NS 100000000ull
int rescue_covers_faults(void);
/* The program set SIGSEGV's or SIGBUS's action (the interposers, fatal.c):
 * the next rescue_covers_faults asks the kernel. */
void rescue_actions_changed(void);

#endif
