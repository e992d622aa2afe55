/* objects: which data an access touches (docs/objects.md), decided for
 * every access at the time it is made, as libwitch decides a sample's
 * object at sample time:
 *
 *   stack    the running thread's stack: the function whose frame holds
 *            the address (callstack.h keeps the frames) -> "stack of FN"
 *   heap     a live block from the C library's malloc family (wrapped:
 *            preload_wrap.c tells the tool, requests.h) or an anonymous
 *            mmap the program made; one object per
 *            allocation context, its leaf the program's call of the
 *            allocator -> "heap from FN (FILE:LINE)"
 *   tls      the thread's static TLS block, by range below its fs base
 *            (Valgrind reads no TLS symbols) -> "tls"
 *   static   a data symbol of a loaded module (debug info) -> "SYMBOL" or
 *            "SYMBOL (MODULE)" outside the executable; data without a
 *            symbol -> "[data in MODULE]"
 *   unknown  anything else (id 0)
 *
 * A key is an interned <context, object>: what the shadow remembers of an
 * access, so a decision knows its earlier access's context and object.
 *
 *   void objects_init(void);                  pre_clo_init: the allocator
 *                                             and mmap tracking
 *   void objects_switch_thread(ThreadId tid); the thread now running
 *   UInt objects_classify(Addr a, Addr pc);   the object of byte a, accessed
 *                                             at pc by the running thread
 *   UInt objects_count(void);                 ids are 0 .. count-1
 *   const struct object *objects_get(UInt id);
 *   UInt objects_key(UInt ctx, UInt obj);     >= 1
 *   UInt objects_key_ctx(UInt key), objects_key_obj(UInt key);
 *   object_bytes_add/_get/_clear              a byte count per object
 */
#ifndef ORACLE_OBJECTS_H
#define ORACLE_OBJECTS_H

#include "pub_tool_basics.h"

enum object_kind { OBJ_UNKNOWN, OBJ_HEAP, OBJ_STATIC, OBJ_TLS, OBJ_STACK, OBJ_KINDS };

struct object {
	enum object_kind kind;
	const HChar *name;
	UInt alloc_ctx; /* heap: the allocation context (callstack.h), leaf the call */
	ULong size;     /* heap: the largest block accessed; static: the symbol's */
	Addr key;       /* what makes it this object within its kind */
};

extern const HChar *const object_kind_name[OBJ_KINDS];

void objects_init(void);
void objects_switch_thread(ThreadId tid);
UInt objects_classify(Addr a, Addr pc);
UInt objects_count(void);
const struct object *objects_get(UInt id);
UInt objects_key(UInt ctx, UInt obj);
UInt objects_key_ctx(UInt key);
UInt objects_key_obj(UInt key);

struct object_bytes {
	ULong *v; /* by object id */
	UInt cap;
};

void object_bytes_add(struct object_bytes *b, UInt obj, ULong n);
ULong object_bytes_get(const struct object_bytes *b, UInt obj);
void object_bytes_clear(struct object_bytes *b);

#endif
