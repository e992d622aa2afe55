/* pmu_ring: reading a perf_event mmap ring buffer of PMU address samples.
 *
 * A sample is usable when it was taken in user mode, carries
 * PERF_RECORD_MISC_EXACT_IP (else the ip may be an instruction after the
 * access), is of a wanted kind, and has a nonzero data address.  Every
 * PERF_RECORD_SAMPLE lands in exactly one counter of r->stats: usable,
 * kernel, not_exact, wrong_op, addr_zero or bad.  LOST and LOST_SAMPLES
 * add to lost, THROTTLE/UNTHROTTLE are counted, other types are skipped by
 * their size.  A header that cannot be right (size below 8 or beyond
 * data_head) drops the rest of the buffer and counts corrupt.
 *
 * pmu_ring_read is async-signal-safe (no malloc, stdio or locks: loads,
 * stores and memcpy) and meant for the overflow signal handler.  It is not
 * reentrant: read a ring from one context only.
 * keep_inexact = 1 (tests, diagnostics) hands over samples without the
 * exact-IP flag too, with exact = 0; they still count as not_exact.
 */
#ifndef WITCH_PMU_RING_H
#define WITCH_PMU_RING_H

#include <linux/perf_event.h>
#include <stdint.h>

#define PMU_OP_LOAD 1u
#define PMU_OP_STORE 2u

struct pmu_sample {
	uint64_t ip;      /* the sampled instruction (exact when exact = 1) */
	uint64_t addr;    /* its data address */
	uint32_t pid, tid;
	int exact;        /* PERF_RECORD_MISC_EXACT_IP was set */
	uint32_t op;      /* PMU_OP_* when the record tells (IBS), else 0 */
};

struct pmu_ring_stats {
	uint64_t samples;      /* PERF_RECORD_SAMPLE records seen */
	uint64_t usable;       /* handed to the callback */
	uint64_t kernel;       /* taken in the kernel or a hypervisor */
	uint64_t not_exact;    /* no exact-IP flag */
	uint64_t wrong_op;     /* IBS: not the access kind wanted (or no access) */
	uint64_t addr_zero;    /* no data address */
	uint64_t bad;          /* shorter than its sample_type needs */
	uint64_t lost;         /* samples the kernel dropped */
	uint64_t lost_records; /* PERF_RECORD_LOST and LOST_SAMPLES records */
	uint64_t throttle, unthrottle;
	uint64_t unknown;      /* records of other types, skipped */
	uint64_t corrupt;      /* impossible headers: rest of the buffer dropped */
};

struct pmu_ring {
	struct perf_event_mmap_page *page;
	const unsigned char *data;
	uint64_t size;
	uint64_t sample_type;
	int ibs_raw;
	uint32_t want_op;
	int keep_inexact;
	struct pmu_ring_stats stats;
};

typedef void (*pmu_sample_fn)(const struct pmu_sample *s, void *arg);

/* Describe a ring: the header page the kernel maps first, the data area (size
 * bytes, a power of two), and the sample_type the event was opened with (IP
 * and ADDR required; TID, IDENTIFIER, TIME, ID, STREAM_ID, CPU, PERIOD,
 * CALLCHAIN and RAW understood).  ibs_raw: the RAW field holds AMD IBS op
 * registers; they give the access kind (a load, a store, both for read-modify-
 * write, or none) and the address where the kernel leaves PERF_SAMPLE_ADDR at
 * 0.  want_op: PMU_OP_* bits a sample of known kind must have to be used, 0 =
 * any. Returns 0 or -EINVAL.  Touches neither page nor data. */
int pmu_ring_init(struct pmu_ring *r, struct perf_event_mmap_page *page, void *data,
		  uint64_t size, uint64_t sample_type, int ibs_raw, uint32_t want_op);
/* Consume every record from data_tail to data_head (head read with acquire,
 * tail written with release once at the end), calling fn for each usable
 * sample, and return how many that was.  A record that wraps around the end of
 * the data area is read in pieces. */
int pmu_ring_read(struct pmu_ring *r, pmu_sample_fn fn, void *arg);

#endif
