/* runspace: a handler run's workspace, from the process's pool (see runspace.h). */
#include "witch/runspace.h"
#include "witch/lockguard.h"
#include "witch/lbss.h"
#include "witch/prefault.h"

#include <errno.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

/* Room for this many at once: a handler run takes ~1% of a thread's time
 * at the default budget, so runs at once are about the CPUs busy in them,
 * and the threads preempted inside one.  Virtual until used (~140 KiB
 * each).  A QEMU guest's 24 threads on one slow vCPU held 16 at once, and
 * its kernel then spun in its #DB handler (threads_many; with room for 64
 * or 256 it ran through): the room is for far more runs than CPUs. */
#define RUNSPACE_MIN 64
#define RUNSPACE_MAX 1024
#define RUNSPACE_PER_CPU 8

static char *rs_base;          /* rs_cap runspaces, rs_stride bytes apart */
static size_t rs_stride;
static uint32_t rs_cap;
static uint32_t rs_depth;
static struct decode_zshared *rs_shared;
static struct decode_cache *rs_prev;
static void *rs_tables;        /* made present at the first layout */
static size_t rs_tables_len;
static uint32_t rs_laid;       /* laid out so far (atomic) */
/* The free stack: the top's index + 1 in the low half (0: empty), a count
 * of changes in the high half, so a head popped and pushed back between a
 * thread's read and its compare-and-swap is not taken for unchanged. */
static uint64_t rs_head;
static uint32_t rs_next[RUNSPACE_MAX] WITCH_LBSS; /* below each free one: index + 1, 0: none */

static size_t align_up(size_t n, size_t to)
{
	return (n + to - 1) & ~(to - 1);
}

/* Offsets in a runspace: the struct, the decodings' memory, the arrays. */
#define RS_ZMEM_AT align_up(sizeof(struct runspace), 64)
#define RS_ARRAYS_AT align_up(RS_ZMEM_AT + DECODE_ZCACHE_MEM_SIZE, 64)

int runspace_module_init(uint32_t depth, struct decode_zshared *shared, struct decode_cache *prev,
			 void *tables, size_t tables_len)
{
	long cpus = sysconf(_SC_NPROCESSORS_CONF);
	uint64_t cap = cpus > 0 ? (uint64_t)cpus * RUNSPACE_PER_CPU : RUNSPACE_MIN;
	cap = cap < RUNSPACE_MIN ? RUNSPACE_MIN : cap > RUNSPACE_MAX ? RUNSPACE_MAX : cap;
	size_t stride = align_up(RS_ARRAYS_AT + sample_scratch_mem_size(depth), 4096);
	void *m = lockguard_map(stride * cap, MAP_NORESERVE);
	if (m == MAP_FAILED)
		return -errno;
	rs_base = m;
	rs_stride = stride;
	rs_cap = (uint32_t)cap;
	rs_depth = depth;
	rs_shared = shared;
	rs_prev = prev;
	rs_tables = tables;
	rs_tables_len = tables_len;
	return 0;
}

static struct runspace *runspace_at(uint32_t i)
{
	return (struct runspace *)(void *)(rs_base + (size_t)i * rs_stride);
}

/* Its first use: the memory is as mmap left it, zero.  A run fills most
 * of a runspace (the decodings' sets, the trace) and, from the process's
 * first, the shared tables: present at once, ~1.1 us a page here, where
 * each first touch was a fault of 12-15 us (prefault.h).  Where they
 * cannot be, they fault in as before. */
static struct runspace *runspace_lay_out(uint32_t i)
{
	struct runspace *r = runspace_at(i);
	char *mem = (char *)r;
	if (i == 0)
		(void)prefault_range(rs_tables, rs_tables_len);
	(void)prefault_range(r, rs_stride);
	decode_zcache_init(&r->zcache, mem + RS_ZMEM_AT, rs_shared);
	r->zcache.prev = rs_prev; /* the windows' decodings find traps' pcs */
	sample_scratch_init(&r->scratch, mem + RS_ARRAYS_AT, rs_depth);
	return r;
}

struct runspace *runspace_take(void)
{
	if (!rs_base)
		return NULL;
	uint64_t old = __atomic_load_n(&rs_head, __ATOMIC_ACQUIRE);
	while ((uint32_t)old) {
		uint32_t top = (uint32_t)old - 1;
		uint64_t next = ((old >> 32) + 1) << 32 | __atomic_load_n(&rs_next[top], __ATOMIC_RELAXED);
		if (__atomic_compare_exchange_n(&rs_head, &old, next, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			struct runspace *r = runspace_at(top);
			decode_zcache_enter(&r->zcache);
			return r;
		}
	}
	/* None free: a new one, while there is room. */
	uint32_t i = __atomic_fetch_add(&rs_laid, 1, __ATOMIC_RELAXED);
	if (i >= rs_cap) {
		__atomic_fetch_sub(&rs_laid, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	struct runspace *r = runspace_lay_out(i);
	decode_zcache_enter(&r->zcache);
	return r;
}

static void runspace_push(uint32_t i)
{
	uint64_t old = __atomic_load_n(&rs_head, __ATOMIC_RELAXED);
	uint64_t next;
	do {
		__atomic_store_n(&rs_next[i], (uint32_t)old, __ATOMIC_RELAXED);
		next = ((old >> 32) + 1) << 32 | (i + 1);
	} while (!__atomic_compare_exchange_n(&rs_head, &old, next, 0, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
}

void runspace_give(struct runspace *r)
{
	if (r) {
		decode_zcache_leave(&r->zcache);
		runspace_push((uint32_t)(((char *)r - rs_base) / rs_stride));
	}
}

uint32_t runspace_count(void)
{
	uint32_t n = __atomic_load_n(&rs_laid, __ATOMIC_RELAXED);
	return n < rs_cap ? n : rs_cap;
}

int runspace_owns_address(uint64_t addr)
{
	uint64_t base = (uint64_t)(uintptr_t)rs_base;
	return rs_base && addr >= base && addr - base < (uint64_t)rs_stride * rs_cap;
}

void runspace_postfork_child(void)
{
	rs_head = 0;
	uint32_t n = runspace_count();
	rs_laid = n;
	for (uint32_t i = 0; i < n; i++) {
		decode_zcache_postfork_cache(&runspace_at(i)->zcache);
		runspace_push(i);
	}
}
