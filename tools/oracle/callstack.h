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
Int context_frames(UInt ctx, Addr *pcs, Int max);

#endif
