/* pmu_ring: perf mmap ring buffer parsing (see pmu_ring.h). */
#include "witch/pmu_ring.h"

#include <errno.h>
#include <string.h>

/* The sample fields this parser can step over, in the kernel's order. */
#define PMU_RING_KNOWN                                                               \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |  \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW)

/* AMD IBS raw data: a u32 of IBS capabilities, then the op MSRs as u64s in
 * the order IbsOpCtl, IbsOpRip, IbsOpData, IbsOpData2, IbsOpData3,
 * IbsDcLinAd, ... (the kernel's perf_ibs_data; perf's amd-sample-raw.c
 * reads it the same way). */
#define IBS_RAW_REG(i) (4u + 8u * (i))
#define IBS_REG_OP_DATA3 4
#define IBS_REG_DC_LIN_AD 5
#define IBS_DATA3_LD_OP (1ull << 0)
#define IBS_DATA3_ST_OP (1ull << 1)
#define IBS_DATA3_LIN_ADDR_VALID (1ull << 17)

int pmu_ring_init(struct pmu_ring *r, struct perf_event_mmap_page *page, void *data,
		  uint64_t size, uint64_t sample_type, int ibs_raw, uint32_t want_op)
{
	memset(r, 0, sizeof(*r));
	if (!page || !data || size < 8 || (size & (size - 1)))
		return -EINVAL;
	if ((sample_type & ~(uint64_t)PMU_RING_KNOWN) ||
	    (sample_type & (PERF_SAMPLE_IP | PERF_SAMPLE_ADDR)) !=
		    (PERF_SAMPLE_IP | PERF_SAMPLE_ADDR))
		return -EINVAL;
	if (ibs_raw && !(sample_type & PERF_SAMPLE_RAW))
		return -EINVAL;
	if (want_op & ~(PMU_OP_LOAD | PMU_OP_STORE))
		return -EINVAL;
	r->page = page;
	r->data = data;
	r->size = size;
	r->sample_type = sample_type;
	r->ibs_raw = ibs_raw;
	r->want_op = want_op;
	return 0;
}

/* Copy len bytes at ring position pos (a free-running counter).  Records
 * wrap around the end of the data area; the kernel keeps them and their
 * fields 8-byte aligned, so a field lands in one piece, but a second piece
 * is copied if one ever straddles the end. */
static void ring_copy(const struct pmu_ring *r, uint64_t pos, void *dst, uint64_t len)
{
	uint64_t off = pos & (r->size - 1);
	uint64_t first = r->size - off < len ? r->size - off : len;
	memcpy(dst, r->data + off, first);
	if (len > first)
		memcpy((unsigned char *)dst + first, r->data, len - first);
}

/* One field of a record: fails when the record is too short for it. */
struct cursor {
	const struct pmu_ring *r;
	uint64_t rec;  /* ring position of the record */
	uint32_t size; /* the record's size from its header */
	uint32_t off;
};

static int take(struct cursor *c, void *dst, uint32_t len)
{
	if (len > c->size || c->off > c->size - len)
		return -1;
	ring_copy(c->r, c->rec + c->off, dst, len);
	c->off += len;
	return 0;
}

static int skip(struct cursor *c, uint64_t len)
{
	if (len > c->size || c->off > c->size - len)
		return -1;
	c->off += (uint32_t)len;
	return 0;
}

static int take_u64(struct cursor *c, uint64_t *v) { return take(c, v, 8); }

/* IBS raw registers: the access kind, and the address when ADDR is 0. */
static int parse_ibs_raw(struct cursor *c, struct pmu_sample *s)
{
	uint32_t raw_size;
	uint64_t data3, lin;
	if (take(c, &raw_size, 4) < 0 || raw_size < IBS_RAW_REG(IBS_REG_DC_LIN_AD) + 8)
		return -1;
	struct cursor reg3 = *c, reg5 = *c;
	if (skip(&reg3, IBS_RAW_REG(IBS_REG_OP_DATA3)) < 0 || take_u64(&reg3, &data3) < 0 ||
	    skip(&reg5, IBS_RAW_REG(IBS_REG_DC_LIN_AD)) < 0 || take_u64(&reg5, &lin) < 0)
		return -1;
	s->op = ((data3 & IBS_DATA3_LD_OP) ? PMU_OP_LOAD : 0) |
		((data3 & IBS_DATA3_ST_OP) ? PMU_OP_STORE : 0);
	if (!s->addr && (data3 & IBS_DATA3_LIN_ADDR_VALID))
		s->addr = lin; /* kernels before 6.1 fill only the raw registers */
	return skip(c, raw_size);
}

static int parse_sample(struct cursor *c, uint64_t st, int ibs_raw, struct pmu_sample *s)
{
	uint64_t v;
	uint32_t pair[2];
	if ((st & PERF_SAMPLE_IDENTIFIER) && take_u64(c, &v) < 0)
		return -1;
	if ((st & PERF_SAMPLE_IP) && take_u64(c, &s->ip) < 0)
		return -1;
	if (st & PERF_SAMPLE_TID) {
		if (take(c, pair, 8) < 0)
			return -1;
		s->pid = pair[0];
		s->tid = pair[1];
	}
	if ((st & PERF_SAMPLE_TIME) && take_u64(c, &v) < 0)
		return -1;
	if ((st & PERF_SAMPLE_ADDR) && take_u64(c, &s->addr) < 0)
		return -1;
	if ((st & PERF_SAMPLE_ID) && take_u64(c, &v) < 0)
		return -1;
	if ((st & PERF_SAMPLE_STREAM_ID) && take_u64(c, &v) < 0)
		return -1;
	if ((st & PERF_SAMPLE_CPU) && take(c, pair, 8) < 0)
		return -1;
	if ((st & PERF_SAMPLE_PERIOD) && take_u64(c, &v) < 0)
		return -1;
	if (st & PERF_SAMPLE_CALLCHAIN) {
		if (take_u64(c, &v) < 0 || v > c->size / 8 || skip(c, v * 8) < 0)
			return -1;
	}
	if (st & PERF_SAMPLE_RAW) {
		if (ibs_raw)
			return parse_ibs_raw(c, s);
		uint32_t raw_size;
		if (take(c, &raw_size, 4) < 0 || skip(c, raw_size) < 0)
			return -1;
	}
	return 0;
}

static int is_kernel_mode(uint16_t misc)
{
	uint16_t mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
	return mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_HYPERVISOR ||
	       mode == PERF_RECORD_MISC_GUEST_KERNEL;
}

/* Count one sample record in exactly one bucket; 1 when it is usable. */
static int classify(struct pmu_ring *r, struct cursor *c, uint16_t misc, struct pmu_sample *s)
{
	struct pmu_ring_stats *st = &r->stats;
	memset(s, 0, sizeof(*s));
	s->exact = (misc & PERF_RECORD_MISC_EXACT_IP) != 0;
	st->samples++;
	if (parse_sample(c, r->sample_type, r->ibs_raw, s) < 0) {
		st->bad++;
		return 0;
	}
	if (is_kernel_mode(misc)) {
		st->kernel++;
		return 0;
	}
	if (!s->exact) {
		st->not_exact++;
		if (!r->keep_inexact)
			return 0;
	}
	if (r->ibs_raw && r->want_op && !(s->op & r->want_op)) {
		st->wrong_op++;
		return 0;
	}
	if (!s->addr) {
		st->addr_zero++;
		return 0;
	}
	if (s->exact)
		st->usable++;
	return 1;
}

int pmu_ring_read(struct pmu_ring *r, pmu_sample_fn fn, void *arg)
{
	uint64_t head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->page->data_tail; /* only this reader writes it */
	int used = 0;

	if (head - tail > r->size) {
		/* The kernel never runs ahead of an unread tail by more than the
		 * buffer: the page is not what we think it is. */
		r->stats.corrupt++;
		tail = head;
	}
	while (tail != head) {
		struct perf_event_header h;
		uint64_t avail = head - tail;
		if (avail < sizeof(h)) {
			r->stats.corrupt++;
			tail = head;
			break;
		}
		ring_copy(r, tail, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > avail) {
			r->stats.corrupt++;
			tail = head;
			break;
		}
		struct cursor c = {r, tail, h.size, sizeof(h)};
		uint64_t v;
		switch (h.type) {
		case PERF_RECORD_SAMPLE: {
			struct pmu_sample s;
			if (classify(r, &c, h.misc, &s)) {
				if (s.exact)
					used++;
				if (fn)
					fn(&s, arg);
			}
			break;
		}
		case PERF_RECORD_LOST: /* u64 id, u64 lost */
			r->stats.lost_records++;
			if (skip(&c, 8) == 0 && take_u64(&c, &v) == 0)
				r->stats.lost += v;
			break;
		case PERF_RECORD_LOST_SAMPLES: /* u64 lost */
			r->stats.lost_records++;
			if (take_u64(&c, &v) == 0)
				r->stats.lost += v;
			break;
		case PERF_RECORD_THROTTLE:
			r->stats.throttle++;
			break;
		case PERF_RECORD_UNTHROTTLE:
			r->stats.unthrottle++;
			break;
		default:
			r->stats.unknown++;
			break;
		}
		tail += h.size;
	}
	__atomic_store_n(&r->page->data_tail, tail, __ATOMIC_RELEASE);
	return used;
}
