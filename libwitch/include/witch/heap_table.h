/* heap_table: the live tracked heap blocks (heap.h), in a lock-free table
 * (docs/objects.md).
 *
 * A block is recorded by its start with one value word: site(24) |
 * mmap(1) | sampled(1) | size(38), where a sampled block's size(38) is
 * points(14) | size(24) (points: the sample bytes that fell in it, >= 1).
 * An interior address finds its block (heap_table_find), lock-free and
 * async-signal-safe: a reader never sees one block's start with another's
 * value.  A counting filter by start (2^18 saturating byte counters)
 * says which frees need not look (heap_table_may_hold).
 *
 * Memory, preallocated by heap_table_init (mmap, MAP_NORESERVE):
 * HEAP_BLOCK_SLOTS entries of 16 B (256 KiB; a block has one or two, the
 * granules it touches, so ~10,000 live blocks fit; past that, or when a
 * hash window of 16 is full, an insert fails) and the filter (64 KiB).
 */
#ifndef WITCH_HEAP_TABLE_H
#define WITCH_HEAP_TABLE_H

#include <stdint.h>

/* 2^14, not 2^16: the most live tracked blocks seen were ~800 (gcc's cc1;
 * python3 ~100, sqlite3 ~340), but churn put blocks at random slots all
 * over the table, so all of 1 MiB became resident (cc1's peak RSS: +7.2 MiB
 * profiled, +6.2 with 256 KiB). */
#define HEAP_BLOCK_SLOTS (1u << 14)
#define HEAP_SIZE_MASK ((1ull << 38) - 1)
#define HEAP_SAMPLED_BIT (1ull << 38) /* tracked by the byte sampling */
#define HEAP_SMALL_MASK ((1ull << 24) - 1) /* a sampled block's size */
#define HEAP_POINTS_SHIFT 24
#define HEAP_POINTS_MAX ((1ull << 10) - 1)
#define HEAP_STEP_SHIFT 34 /* a sampled block's period: heap_sample_bytes() << step */
#define HEAP_STEP_MAX 15
#define HEAP_PERIOD_MAX HEAP_SMALL_MASK
#define HEAP_MMAP_BIT (1ull << 39)
#define HEAP_SITE_SHIFT 40
#define HEAP_FILTER_BITS 16 /* counters: 64 KiB */
#define HEAP_FILTER_GRAIN 10 /* of 1 KiB of address space each */

/* Outside handlers, once: the table and the filter; 0 or -ENOMEM. */
int heap_table_init(void);
/* Record [start, start + size) with its site and bits (HEAP_*_BIT,
 * points) under the level of `span` (>= size: what the removal will
 * pass).  0, -EINVAL or -ENOSPC. */
int heap_table_insert(uint64_t start, uint64_t size, uint64_t span, uint32_t site, uint64_t bits);
/* Take the block at start (recorded under `span`) off: its value, or 0. */
uint64_t heap_table_remove(uint64_t start, uint64_t span);
/* The block holding addr (an mmap region only, when maps_only): 0 and
 * its start and value, or -ENOENT.  Async-signal-safe. */
int heap_table_find(uint64_t addr, int maps_only, uint64_t *start, uint64_t *val);
uint64_t heap_table_reserved(void);
void heap_table_prefork(void);
void heap_table_postfork_parent(void);
/* Nothing: the parent's other threads' half-written slots stay busy. */
void heap_table_postfork_child(void);

/* A tracked block's size (a sampled one's carries its points above). */
static inline uint64_t heap_table_val_size(uint64_t v)
{
	return v & (v & HEAP_SAMPLED_BIT ? HEAP_SMALL_MASK : HEAP_SIZE_MASK);
}

/* Its flags (and points) but size and site. */
static inline uint64_t heap_table_val_bits(uint64_t v)
{
	return (v & ((1ull << HEAP_SITE_SHIFT) - 1)) - heap_table_val_size(v);
}

/* The filter, for heap_table_may_hold; written by the table only. */
extern uint8_t *heap_table_filter __attribute__((visibility("hidden")));

/* The counting filter: tracked blocks by the KiB of their start, so that
 * most frees (of blocks never tracked) look at one byte.  By address, not
 * by a hash: frees of neighbouring blocks then read one line of the
 * filter (64 KiB of heap a line).  Hashed, each free read a random line of
 * 256 KiB: a cache miss that was 1.25% of gcc's cc1 (perf); by cache line
 * of the block (4 KiB of heap a filter line, 256 KiB) still 0.9%.  KiBs
 * 64 MiB apart share a counter, and so do blocks in one KiB (a free there
 * looks in the table for nothing: tracked blocks are few). */
static inline uint8_t *heap_table_filter_of(uint64_t start)
{
	return &heap_table_filter[(start >> HEAP_FILTER_GRAIN) & ((1u << HEAP_FILTER_BITS) - 1)];
}

/* 0: no tracked block starts at p (a free may go straight on); 1: it
 * may.  After heap_table_init. */
static inline int heap_table_may_hold(const void *p)
{
	return __atomic_load_n(heap_table_filter_of((uint64_t)(uintptr_t)p), __ATOMIC_RELAXED) != 0;
}

#endif
