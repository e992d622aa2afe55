/* callstack: calling contexts for the oracle without unwinding at every
 * access.  Each thread keeps a shadow stack of return addresses, pushed at
 * every call and popped by stack pointer at every return (so longjmp and
 * exceptions that skip frames heal at the next call or return).  A context
 * is <node, leaf pc>: node names the chain of return addresses, interned in
 * a calling context tree as in DeadSpy; both get small ids.
 *
 *   void callstack_switch_thread(ThreadId tid);   the thread now running
 *   void callstack_call(Addr ret, Addr sp);       after a call pushed ret at sp
 *   void callstack_ret(Addr sp);                  after a return or an indirect
 *                                                 jump (longjmp), sp its new rsp
 *   UInt callstack_context(Addr pc);              id (>= 1) of the running
 *                                                 thread's stack + leaf pc
 *   UInt context_cut(UInt ctx, UInt depth);       the same context with only
 *                                                 its `depth` innermost frames
 *   UInt callstack_caller_context(void);          the context of the innermost
 *                                                 call: leaf its call instruction
 *                                                 (return address - 1), then its
 *                                                 callers; 0 with no frame (in an
 *                                                 allocator's callback: the
 *                                                 program's call of malloc)
 *   Addr callstack_frame_pc(Addr a, Addr pc);     a code address of the function
 *                                                 whose frame holds stack address
 *                                                 a (pc: the running one's)
 *   Int  context_frames(UInt ctx, Addr *pcs, Int max);
 *                                                 leaf pc, then return
 *                                                 addresses outward; count
 */
#ifndef ORACLE_CALLSTACK_H
#define ORACLE_CALLSTACK_H

#include "pub_tool_basics.h"

void callstack_switch_thread(ThreadId tid);
void callstack_call(Addr ret, Addr sp);
void callstack_ret(Addr sp);
UInt callstack_context(Addr pc);
UInt context_cut(UInt ctx, UInt depth);
UInt callstack_caller_context(void);
Addr callstack_frame_pc(Addr a, Addr pc);
Int context_frames(UInt ctx, Addr *pcs, Int max);

#endif
