/* heap: the program's live heap blocks and their allocation sites
 * (docs/objects.md).
 *
 * libwitch interposes malloc, free, calloc, realloc, reallocarray,
 * aligned_alloc, posix_memalign, memalign, valloc, pvalloc and the
 * anonymous mmap/mmap64/mremap/munmap (not MAP_STACK), forwarding to the C
 * library's own (__libc_malloc..., so malloc_usable_size keeps working).
 * After heap_init each block is recorded with its site: the allocation's
 * calling context, leaf first, interned once per process.
 *
 * Mappings: munmap(a, n) takes [a, a + n) off the tracked region holding
 * a and off those that follow it without a gap: a region cut at its head
 * keeps its tail, one cut after its start keeps only its head (the part
 * past a hole punched in its middle is no longer tracked); a region that
 * starts inside [a, a + n) past a gap stays tracked until its address is
 * used again.  mremap moves the region starting at its old address, site
 * and all; a MAP_FIXED mapping first unmaps what it replaces.
 *
 * Cost: small blocks (< the thread's period, HEAP_SAMPLE_BYTES or more
 * under a budget) past the first HEAP_FIRST_BLOCKS of their call site (per
 * thread, while it keeps to its budget) are sampled by bytes: about one
 * in period / size is tracked, and the live ones tell the mix of sites an
 * untracked one is drawn from (heap_mix.h).  The others are decided in the interposer before the C
 * library is called (a countdown addition and the call site's count, six
 * instructions) and their free by one byte of a counting filter (six).  A tracked block's site comes from heap_sites (heap_sites.h: an
 * unwind once per thread, call site, callers and stack depth, a
 * per-thread cache for the repeats).  Off (WITCH_OBJECTS=0, or before
 * heap_init) each interposer is one branch and a tail call.  Measured by
 * bench/heap_cost.py (bench/results/heap_cost.md).
 *
 * Memory, preallocated by heap_init (mmap, MAP_NORESERVE): heap_table's
 * block table (256 KiB, ~10,000 live tracked blocks; past that, or when a
 * hash window is full, new blocks are untracked and counted) and filter
 * (64 KiB), heap_sites' tables (576 KiB of sites, 2.1 MiB of thread
 * caches reserved).  Blocks from new sites past the site table are
 * untracked, counted in sites_dropped.
 *
 * Races: a handler may look up a block another thread is freeing; it gets
 * the block as it was a moment ago (benign: the sample was taken then).
 * Entries are published with release stores and read twice around their
 * contents, so a reader never sees one block's start with another's size
 * or site.
 */
#ifndef WITCH_HEAP_H
#define WITCH_HEAP_H

#include <stdint.h>

/* Of each call site in each thread, the first this many blocks are
 * tracked, whatever their size (see heap_sample_bytes). */
#define HEAP_FIRST_BLOCKS 4
/* Blocks smaller than this are sampled (see heap_sample_bytes).  16 KiB,
 * not 4: gcc's cc1 (malloc-heavy, deep and varied stacks) tracked 125,000
 * blocks at 4 KiB, 76,000 of them unwound for their site (~3.5 us each):
 * objects cost it ~12% of its time; at 16 KiB 42,000 and 23,000, ~3%. */
#define HEAP_SAMPLE_BYTES 16384u
/* Under a budget (heap_set_budget) each thread has a credit of tracking
 * time: its share of the thread's CPU time flows in, up to
 * HEAP_BUDGET_CREDIT_NS, and tracking spends it.  It starts with
 * HEAP_BUDGET_START_NS: a full bucket at the start let every short
 * process (a shell's sed or grep, gcc's driver, as, ld) spend 1.2-3 ms
 * recording the first blocks of its ~70-240 call sites, a third of its
 * time.  Checked every HEAP_BUDGET_BLOCKS tracked blocks (each of the
 * first HEAP_BUDGET_BLOCKS_EARLY, then every HEAP_BUDGET_BLOCKS_EARLY up
 * to HEAP_BUDGET_BLOCKS, each of those timed), a thread in debt doubles its
 * period and records call sites' first blocks no more, and one with half
 * its credit back halves it, from the base (HEAP_SAMPLE_BYTES) up to
 * HEAP_STEP_LIMIT steps (1 MiB; tcmalloc's and Go's heap profilers sample
 * every 512 KiB).  A sampled block keeps the period it was drawn with.
 * gcc's cc1: 41,600 blocks tracked and ~4% of its time at 16 KiB; 1,600
 * at 1 MiB. */
#define HEAP_BUDGET_BLOCKS 64u
#define HEAP_BUDGET_BLOCKS_EARLY 8u
#define HEAP_BUDGET_CREDIT_NS 5e6
#define HEAP_BUDGET_START_NS 5e5
#define HEAP_STEP_LIMIT 6u

struct heap_stats {
	uint64_t blocks_tracked;   /* blocks recorded since heap_init */
	uint64_t blocks_untracked; /* blocks past a cap (table window or sites) */
	uint64_t sites;            /* distinct allocation contexts */
	uint64_t sites_dropped;    /* allocations whose new site found no room */
	uint64_t site_unwinds;     /* sites found by unwinding (cache misses) */
	uint64_t site_walked;      /* ... of which without libgcc (stepcache.h) */
	double site_ns;            /* ... the time they took */
	double track_ns;           /* recording tracked blocks, sites included */
	uint64_t sample_bytes_max; /* the largest period a thread took */
	uint64_t bytes_reserved;   /* the tables' mappings */
};

/* From the runtime constructor, before sampling starts: preallocate (mmap)
 * the tables; 0 or -errno.  Until it has run, allocations pass through
 * untracked. */
int heap_init(void);
/* The live block holding addr: 0 and *site (>= 1), *start, *size; -ENOENT
 * when no tracked block holds it.  Async-signal-safe and lock-free (may run
 * in a signal handler that interrupted malloc/free in the same thread). */
int heap_lookup(uint64_t addr, uint32_t *site, uint64_t *start, uint64_t *size);
void heap_get_stats(struct heap_stats *s);
/* For addr, where no object is: 0 and the site of a block not yet in the
 * table.  Inside a tracked calloc or realloc of this thread (a block of
 * heap_sample_bytes() or more), any addr: what the C library stores
 * meanwhile (the block it fills) is the site's.  Inside a tracked malloc
 * of such a block, an addr in the block a window found it returns
 * (heap_window_return): the program's accesses to it, which the window
 * ran ahead; or in the block heap_window_block names.  -ENOENT otherwise.
 * Async-signal-safe (the thread's own TLS). */
int heap_pending_site(uint64_t addr, uint32_t *site);
/* 1 while this thread records a block (its site found, its table entry
 * written): work whose time cost_heap_ns already counts (timed one block in
 * HEAP_TIME_EVERY), so a tick there is not the runtime's inline time a
 * second time (handler.c).  Async-signal-safe (the thread's own TLS). */
int heap_recording(void);
/* This thread's allocations go untracked, and come from a static arena
 * off the program's heap where it has room, until heap_thread_release(the
 * returned value): the loader's, when a tick's handler loads the decoder
 * (deps.h).  Async-signal-safe (the thread's own TLS). */
int heap_thread_hold(void);
void heap_thread_release(int held_before);
/* For the tick's window (look.h), which runs the program's code ahead on a
 * register copy: pc is the entry of an interposer that passes the call on
 * with the same arguments (malloc, free): *real, the allocator's function
 * the call reaches, as if the interposer were not there (what it does
 * besides is the runtime's time, which ticks landing in it sample), and
 * HEAP_WINDOW_ALLOCATES for malloc, else 0.  -ENOENT elsewhere, for the
 * others (calloc's clearing and realloc's copy are counted by bytes,
 * bulk.h), and before the allocator is resolved.  Async-signal-safe. */
#define HEAP_WINDOW_ALLOCATES 1
int heap_window_call(uint64_t pc, uint64_t *real);
/* The window passes such a malloc of n bytes, called to return to ret
 * with its stack pointer then cfa: the site its block will have where
 * every block of n bytes is tracked and this thread's site cache knows
 * the call (heap_sites_peek, through ov: the return addresses of the calls
 * the window emulated); else 0.  Async-signal-safe. */
struct heap_stack_overlay;
uint32_t heap_window_site(uint64_t n, uint64_t ret, uint64_t cfa,
			  const struct heap_stack_overlay *ov);
/* ... and the block that call returned as the window ran it: until the
 * next call (start 0 at each window's start), heap_pending_site answers
 * site for addresses in it, which are in no block yet (the interposer
 * records it as the program runs the call).  Async-signal-safe. */
void heap_window_block(uint64_t start, uint64_t size, uint32_t site);
/* What a caller keeps across a call (rbx, rbp, r12-r15, in that order),
 * where it returns (ip) and its stack pointer then (sp). */
struct heap_frame_regs {
	uint64_t kept[6];
	uint64_t ip, sp;
};
/* For the same window, started by a tick inside the allocator's malloc
 * that a tracked malloc's interposer called: the run returned into the
 * interposer, at sp (past its ret), with the allocator's result.  0 and
 * the program's registers as the
 * interposer will return to it, past its own work (which reads the block's
 * size and writes the runtime's table: the runtime's).  Its result is the
 * allocator's, in rax already; the registers a caller may not read after a
 * call are left as they are.  -ENOENT when this thread has no such call
 * open there.  Async-signal-safe (the thread's own TLS). */
int heap_window_return(uint64_t sp, uint64_t result, struct heap_frame_regs *out);
/* Blocks of at least this many bytes are all tracked, and so are the
 * first HEAP_FIRST_BLOCKS of each call site in each thread; a smaller one
 * past those is tracked when sample bytes, one every heap_sample_bytes()
 * on average (gaps uniform in [1, 2 heap_sample_bytes())), fall in it:
 * with probability ~ size / that.  0: every block. */
uint64_t heap_sample_bytes(void);
/* For tests and settings, before heap_init or while no thread allocates
 * (at most 2^24 - 1: larger is taken as that). */
void heap_set_sample_bytes(uint64_t bytes);
/* The calling thread's period now (heap_sample_bytes() << its step). */
uint64_t heap_thread_sample_bytes(void);
/* Hold each thread's tracking time to `share` of its CPU time, with a
 * credit of at most credit_ns (HEAP_BUDGET_CREDIT_NS) that starts at
 * start_ns (HEAP_BUDGET_START_NS; at most credit_ns), by moving its
 * period; share 0 (the default): the period is fixed.  Before heap_init,
 * or while no other thread allocates (tests). */
void heap_set_budget(double share, double start_ns, double credit_ns);
/* Blocks allocated from [lo, hi) (the runtime's own code) are not the
 * program's: left untracked.  Before or after heap_init. */
void heap_set_runtime_text(uint64_t lo, uint64_t hi);
/* paused: no new block is recorded (frees still are): the runtime's own
 * work at exit and before an exec, whose allocations (the profile's
 * FILE, its module list) come through the C library, not from the
 * runtime's text, and cost a site's unwind and fresh table pages each
 * (~0.3 ms of every process's exit here). */
void heap_pause(int paused);
/* Called at every 16th tracked block of a thread, outside the C library's
 * allocator: a program that allocates is growing, and its new modules'
 * data symbols may be due (witch.c sets datasym_refresh_due, which reads
 * the clock: not on each block).  Set before heap_init. */
void heap_set_growth_hook(void (*every_16_blocks)(void));
/* Fork: nothing of heap.c's own (the table's and the sites' hooks see to
 * what the parent's other threads held). */
void heap_prefork(void);
void heap_postfork_parent(void);
void heap_postfork_child(void);

#endif
