/* callstack: shadow call stacks and interned contexts; see callstack.h. */
#include "callstack.h"

#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"

/* --- interning <UInt, Addr> -> id (1, 2, ...) ------------------------------ */

struct intern {
	UInt *slots;     /* open addressing; 0 = empty, else id */
	UInt nslots;     /* power of two */
	UInt n;          /* ids handed out */
	UInt cap;        /* room in ka/kb (index = id) */
	UInt *ka;
	Addr *kb;
};

static UInt hash_pair(UInt a, Addr b)
{
	ULong h = ((ULong)a * 0x9E3779B97F4A7C15ULL) ^ ((ULong)b * 0xC2B2AE3D27D4EB4FULL);
	return (UInt)(h >> 32) ^ (UInt)h;
}

static void intern_grow_slots(struct intern *t)
{
	UInt nslots = t->nslots ? t->nslots * 2 : 1024;
	UInt *slots = VG_(calloc)("oracle.intern.slots", nslots, sizeof(UInt));
	for (UInt id = 1; id <= t->n; id++) {
		UInt i = hash_pair(t->ka[id], t->kb[id]) & (nslots - 1);
		while (slots[i])
			i = (i + 1) & (nslots - 1);
		slots[i] = id;
	}
	if (t->slots)
		VG_(free)(t->slots);
	t->slots = slots;
	t->nslots = nslots;
}

static UInt intern_get(struct intern *t, UInt a, Addr b)
{
	if ((t->n + 1) * 2 > t->nslots)
		intern_grow_slots(t);
	UInt i = hash_pair(a, b) & (t->nslots - 1);
	for (; t->slots[i]; i = (i + 1) & (t->nslots - 1)) {
		UInt id = t->slots[i];
		if (t->ka[id] == a && t->kb[id] == b)
			return id;
	}
	UInt id = ++t->n;
	if (id >= t->cap) {
		t->cap = t->cap ? t->cap * 2 : 1024;
		t->ka = VG_(realloc)("oracle.intern.ka", t->ka, t->cap * sizeof(UInt));
		t->kb = VG_(realloc)("oracle.intern.kb", t->kb, t->cap * sizeof(Addr));
	}
	t->ka[id] = a;
	t->kb[id] = b;
	t->slots[i] = id;
	return id;
}

/* nodes: <parent node (0 = root), return address>; contexts: <node, leaf pc> */
static struct intern nodes, contexts;

/* --- per-thread shadow stacks ---------------------------------------------- */

struct frame {
	Addr sp;   /* rsp just after the call pushed its return address */
	UInt node;
};

struct thread_stack {
	struct frame *f;
	UInt n, cap;
};

#define MAX_TID 1024
static struct thread_stack stacks[MAX_TID];
static struct thread_stack *cur = &stacks[0];

void callstack_switch_thread(ThreadId tid)
{
	cur = &stacks[tid < MAX_TID ? tid : 0];
}

static UInt top_node(void)
{
	return cur->n ? cur->f[cur->n - 1].node : 0;
}

void callstack_call(Addr ret, Addr sp)
{
	/* A frame at or below the new one was left without a return we saw. */
	while (cur->n && cur->f[cur->n - 1].sp <= sp)
		cur->n--;
	if (cur->n == cur->cap) {
		cur->cap = cur->cap ? cur->cap * 2 : 256;
		cur->f = VG_(realloc)("oracle.stack", cur->f, cur->cap * sizeof(struct frame));
	}
	cur->f[cur->n].sp = sp;
	cur->f[cur->n].node = intern_get(&nodes, top_node(), ret);
	cur->n++;
}

void callstack_ret(Addr sp)
{
	while (cur->n && cur->f[cur->n - 1].sp < sp)
		cur->n--;
}

/* Direct-mapped cache in front of the context table: the same few
 * <node, pc> pairs repeat for millions of accesses. */
#define CACHE 8192
static struct {
	Addr pc;
	UInt node, ctx;
} cache[CACHE];

UInt callstack_context(Addr pc)
{
	UInt node = top_node();
	UInt i = (UInt)(pc ^ (pc >> 13) ^ ((Addr)node * 0x9E3779B1u)) & (CACHE - 1);
	if (cache[i].ctx && cache[i].pc == pc && cache[i].node == node)
		return cache[i].ctx;
	UInt ctx = intern_get(&contexts, node, pc);
	cache[i].pc = pc;
	cache[i].node = node;
	cache[i].ctx = ctx;
	return ctx;
}

UInt callstack_caller_context(void)
{
	if (cur->n == 0)
		return 0;
	UInt node = cur->f[cur->n - 1].node;
	return intern_get(&contexts, nodes.ka[node], nodes.kb[node] - 1);
}

/* Frame k (pushed by call k at f[k].sp) is its callee's from just above
 * the next call's return address up to and including its own: the callee
 * owns its return address, as a CFA-based unwinder counts it. */
Addr callstack_frame_pc(Addr a, Addr pc)
{
	for (Int k = (Int)cur->n - 1; k >= 0; k--)
		if (a < cur->f[k].sp + 8)
			return k == (Int)cur->n - 1 ? pc : nodes.kb[cur->f[k + 1].node] - 1;
	return cur->n ? nodes.kb[cur->f[0].node] - 1 : pc;
}

Int context_frames(UInt ctx, Addr *pcs, Int max)
{
	Int n = 0;
	if (ctx == 0 || ctx > contexts.n || max <= 0)
		return 0;
	pcs[n++] = contexts.kb[ctx];
	for (UInt node = contexts.ka[ctx]; node && n < max; node = nodes.ka[node])
		pcs[n++] = nodes.kb[node];
	return n;
}

UInt context_cut(UInt ctx, UInt depth)
{
	UInt len = 0, node = contexts.ka[ctx];
	for (UInt nd = node; nd; nd = nodes.ka[nd])
		len++;
	if (len + 1 <= depth)
		return ctx;
	/* Rebuild the chain of the depth-1 innermost return addresses from a
	 * new root, outermost first. */
	Addr ras[depth > 1 ? depth - 1 : 1];
	UInt keep = depth - 1, k = 0;
	for (UInt nd = node; nd && k < keep; nd = nodes.ka[nd])
		ras[k++] = nodes.kb[nd];
	UInt cut = 0;
	while (k > 0)
		cut = intern_get(&nodes, cut, ras[--k]);
	return intern_get(&contexts, cut, contexts.kb[ctx]);
}
