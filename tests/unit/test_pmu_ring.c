/* Unit test of the pmu_ring module (and, live, of pmu.c's plumbing).
 *
 * Part 1, table-driven on constructed bytes: each row builds a fake
 * perf_event_mmap_page and a 1 KiB data area in ordinary memory, writes
 * the row's records at data_tail the way the kernel lays them out
 * (include/uapi/linux/perf_event.h: PERF_RECORD_SAMPLE fields in
 * sample_type order; LOST = {id, lost}; LOST_SAMPLES = {lost};
 * THROTTLE = {time, id, stream_id}), sets data_head, and checks what
 * pmu_ring_read hands over, every counter, and that data_tail ends at
 * data_head.  Rows cover plain samples, records wrapping around the end of
 * the data area (with free-running positions far beyond its size), LOST
 * and LOST_SAMPLES, THROTTLE/UNTHROTTLE, no EXACT_IP, addr 0, kernel mode,
 * an unknown record type, a truncated sample, corrupt headers, every
 * sample field the parser steps over, and AMD IBS raw op registers.
 *
 * Part 2, live: a hardware watchpoint perf event (PERF_TYPE_BREAKPOINT,
 * period 1, PERF_SAMPLE_IP|TID|ADDR) opened with pmu_open on this thread,
 * one data page, its overflow signal drained by pmu_drain inside the
 * handler.  Breakpoint samples are real kernel records with a known data
 * address (the watched variable), but not exact-IP, so the ring is told
 * keep_inexact.  500 stores wrap the 4 KiB ring several times.  Without
 * breakpoint events this part prints SKIP.
 *
 * Failures print the row's line.  Exit status 0 on success.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "witch/pmu.h"
#include "witch/pmu_ring.h"

#include "check.h"

#define DATA_SIZE 1024

/* ------------------------------------------------------------------ */
/* Records as the kernel writes them                                    */

#define U 0x0002 /* PERF_RECORD_MISC_USER */
#define K 0x0001 /* PERF_RECORD_MISC_KERNEL */
#define X 0x4000 /* PERF_RECORD_MISC_EXACT_IP */

#define ST_BASIC (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR)
#define ST_IBS (ST_BASIC | PERF_SAMPLE_RAW)
#define ST_ALL                                                                        \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |  \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW)

/* IBS OpData3 bits (AMD PPR: IbsLdOp 0, IbsStOp 1, IbsDcLinAddrValid 17). */
#define LD (1ull << 0)
#define ST (1ull << 1)
#define LV (1ull << 17)

struct rec {
	uint32_t type; /* 0 ends the list */
	uint16_t misc;
	uint64_t ip, addr;
	uint32_t pid, tid;
	uint64_t lost;       /* LOST, LOST_SAMPLES */
	uint64_t data3, lin; /* IBS raw OpData3 and DcLinAd */
	int size_adj;        /* added to the header size: < 0 truncates */
	uint32_t pad;        /* body bytes of an unknown record */
};

#define SAMPLE(m, i, a) {PERF_RECORD_SAMPLE, (m), (i), (a), 100, 101, 0, 0, 0, 0, 0}
#define IBS(m, i, a, d3, l) {PERF_RECORD_SAMPLE, (m), (i), (a), 100, 101, 0, (d3), (l), 0, 0}
#define LOST(n) {PERF_RECORD_LOST, 0, 0, 0, 0, 0, (n), 0, 0, 0, 0}
#define LOST_SAMPLES(n) {PERF_RECORD_LOST_SAMPLES, 0, 0, 0, 0, 0, (n), 0, 0, 0, 0}
#define THROTTLE {PERF_RECORD_THROTTLE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
#define UNTHROTTLE {PERF_RECORD_UNTHROTTLE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
#define OTHER(t, n) {(t), 0, 0, 0, 0, 0, 0, 0, 0, 0, (n)}
#define TRUNCATED(m, i, a, adj) {PERF_RECORD_SAMPLE, (m), (i), (a), 100, 101, 0, 0, 0, (adj), 0}
#define ZERO_SIZE {PERF_RECORD_SAMPLE, U | X, 1, 1, 0, 0, 0, 0, 0, -1000, 0}

struct buf {
	unsigned char b[512];
	uint32_t n;
};

static void put(struct buf *b, const void *p, uint32_t len)
{
	memcpy(b->b + b->n, p, len);
	b->n += len;
}

static void put64(struct buf *b, uint64_t v) { put(b, &v, 8); }

static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }

/* The body of one record after its 8-byte header, per the uapi layout. */
static void body(struct buf *b, const struct rec *r, uint64_t st, int ibs)
{
	switch (r->type) {
	case PERF_RECORD_SAMPLE:
		if (st & PERF_SAMPLE_IDENTIFIER)
			put64(b, 0x1d1d);
		if (st & PERF_SAMPLE_IP)
			put64(b, r->ip);
		if (st & PERF_SAMPLE_TID) {
			put32(b, r->pid);
			put32(b, r->tid);
		}
		if (st & PERF_SAMPLE_TIME)
			put64(b, 0x7777);
		if (st & PERF_SAMPLE_ADDR)
			put64(b, r->addr);
		if (st & PERF_SAMPLE_ID)
			put64(b, 0x1d1d);
		if (st & PERF_SAMPLE_STREAM_ID)
			put64(b, 0x5151);
		if (st & PERF_SAMPLE_CPU) {
			put32(b, 3);
			put32(b, 0);
		}
		if (st & PERF_SAMPLE_PERIOD)
			put64(b, 5000011);
		if (st & PERF_SAMPLE_CALLCHAIN) {
			put64(b, 2);
			put64(b, 0xaaaa);
			put64(b, 0xbbbb);
		}
		if (st & PERF_SAMPLE_RAW) {
			if (ibs) { /* u32 size, u32 caps, IbsOpCtl..IbsDcPhysAd, BrTarget */
				put32(b, 4 + 8 * 8);
				put32(b, 0x3ff);
				uint64_t regs[8] = {1ull << 18, r->ip, 0, 0, r->data3, r->lin, 0, 0};
				put(b, regs, sizeof(regs));
			} else { /* 12 bytes of payload, then padding to 8 */
				put32(b, 12);
				put(b, "rawrawrawraw", 12);
			}
		}
		break;
	case PERF_RECORD_LOST:
		put64(b, 0x1d1d);
		put64(b, r->lost);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		put64(b, r->lost);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		put64(b, 0x7777);
		put64(b, 0x1d1d);
		put64(b, 0x5151);
		break;
	default:
		for (uint32_t i = 0; i < r->pad; i++)
			put(b, "\xee", 1);
	}
	while (b->n % 8)
		put(b, "", 1);
}

struct fake {
	struct perf_event_mmap_page page;
	unsigned char data[DATA_SIZE];
};

/* Write one record at position pos (wrapping); returns its header size,
 * and in *len the bytes written. */
static uint32_t emit(struct fake *f, uint64_t pos, const struct rec *r, uint64_t st, int ibs,
		     uint32_t *len)
{
	struct buf b = {.n = 8};
	body(&b, r, st, ibs);
	int size = (int)b.n + r->size_adj;
	if (size < 0)
		size = 0;
	struct perf_event_header h = {.type = r->type, .misc = r->misc, .size = (uint16_t)size};
	memcpy(b.b, &h, sizeof(h));
	for (uint32_t i = 0; i < b.n; i++)
		f->data[(pos + i) % DATA_SIZE] = b.b[i];
	*len = b.n;
	return (uint32_t)size;
}

/* ------------------------------------------------------------------ */
/* Part 1: the table                                                    */

struct want_sample {
	uint64_t ip, addr;
	uint32_t op;
	int exact;
};

struct row {
	int line;
	uint64_t sample_type;
	int ibs;
	uint32_t want_op;
	int keep_inexact;
	uint64_t start;         /* data_tail (and first record) position */
	struct rec recs[8];
	struct want_sample out[6]; /* ip 0 ends */
	struct pmu_ring_stats st;  /* samples counted by the check, not here */
	uint64_t end_extra;     /* bytes past the records that data_head claims */
};

/* Expected counters: usable, kernel, not_exact, wrong_op, addr_zero, bad,
 * lost, lost_records, throttle, unthrottle, unknown, corrupt. */
#define STATS(u, k, nx, wo, az, bd, l, lr, th, un, uk, co) \
	{0, (u), (k), (nx), (wo), (az), (bd), (l), (lr), (th), (un), (uk), (co)}

static const struct row rows[] = {
	/* three plain user samples, exact, with addresses */
	{__LINE__, ST_BASIC, 0, 0, 0, 0,
	 {SAMPLE(U | X, 0x401000, 0x7f0010), SAMPLE(U | X, 0x401008, 0x7f0020),
	  SAMPLE(U | X, 0x401010, 0x7f0030)},
	 {{0x401000, 0x7f0010, 0, 1}, {0x401008, 0x7f0020, 0, 1}, {0x401010, 0x7f0030, 0, 1}},
	 STATS(3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 0},
	/* first record starts 16 bytes before the end: its ip and addr wrap */
	{__LINE__, ST_BASIC, 0, 0, 0, DATA_SIZE - 16,
	 {SAMPLE(U | X, 0x402000, 0x7f1000), SAMPLE(U | X, 0x402004, 0x7f1008)},
	 {{0x402000, 0x7f1000, 0, 1}, {0x402004, 0x7f1008, 0, 1}},
	 STATS(2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 0},
	/* free-running positions many buffers in; header alone at the very end */
	{__LINE__, ST_BASIC, 0, 0, 0, 1000 * DATA_SIZE - 8,
	 {SAMPLE(U | X, 0x403000, 0x7f2000), SAMPLE(U | X, 0x403008, 0x7f2008)},
	 {{0x403000, 0x7f2000, 0, 1}, {0x403008, 0x7f2008, 0, 1}},
	 STATS(2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 0},
	/* lost records between samples, one of them wrapping */
	{__LINE__, ST_BASIC, 0, 0, 0, DATA_SIZE - 40,
	 {SAMPLE(U | X, 0x404000, 0x7f3000), LOST(7), LOST_SAMPLES(5),
	  SAMPLE(U | X, 0x404008, 0x7f3008)},
	 {{0x404000, 0x7f3000, 0, 1}, {0x404008, 0x7f3008, 0, 1}},
	 STATS(2, 0, 0, 0, 0, 0, 12, 2, 0, 0, 0, 0), 0},
	/* throttling */
	{__LINE__, ST_BASIC, 0, 0, 0, 64,
	 {THROTTLE, UNTHROTTLE, SAMPLE(U | X, 0x405000, 0x7f4000), THROTTLE},
	 {{0x405000, 0x7f4000, 0, 1}},
	 STATS(1, 0, 0, 0, 0, 0, 0, 0, 2, 1, 0, 0), 0},
	/* no EXACT_IP: counted, not used */
	{__LINE__, ST_BASIC, 0, 0, 0, 0,
	 {SAMPLE(U, 0x406000, 0x7f5000), SAMPLE(U | X, 0x406008, 0x7f5008)},
	 {{0x406008, 0x7f5008, 0, 1}},
	 STATS(1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0), 0},
	/* ...unless keep_inexact, which hands it over with exact = 0 */
	{__LINE__, ST_BASIC, 0, 0, 1, 0,
	 {SAMPLE(U, 0x406000, 0x7f5000), SAMPLE(U | X, 0x406008, 0x7f5008)},
	 {{0x406000, 0x7f5000, 0, 0}, {0x406008, 0x7f5008, 0, 1}},
	 STATS(1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0), 0},
	/* addr 0 and kernel mode */
	{__LINE__, ST_BASIC, 0, 0, 0, 0,
	 {SAMPLE(U | X, 0x407000, 0), SAMPLE(K | X, 0xffffffff81000000ull, 0x7f6000),
	  SAMPLE(U | X, 0x407008, 0x7f6008)},
	 {{0x407008, 0x7f6008, 0, 1}},
	 STATS(1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0), 0},
	/* an unknown type (MMAP2-sized junk) is skipped by its size */
	{__LINE__, ST_BASIC, 0, 0, 0, 200,
	 {OTHER(PERF_RECORD_MMAP2, 72), OTHER(99, 0), SAMPLE(U | X, 0x408000, 0x7f7000)},
	 {{0x408000, 0x7f7000, 0, 1}},
	 STATS(1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0), 0},
	/* a sample whose header is 8 bytes short of its sample_type: bad */
	{__LINE__, ST_BASIC, 0, 0, 0, 0,
	 {TRUNCATED(U | X, 0x409000, 0x7f8000, -8), SAMPLE(U | X, 0x409008, 0x7f8008)},
	 {{0x409008, 0x7f8008, 0, 1}},
	 STATS(1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0), 0},
	/* a zero-size header: the rest is dropped, tail still reaches head */
	{__LINE__, ST_BASIC, 0, 0, 0, 0,
	 {SAMPLE(U | X, 0x40a000, 0x7f9000), ZERO_SIZE, SAMPLE(U | X, 0x40a008, 0x7f9008)},
	 {{0x40a000, 0x7f9000, 0, 1}},
	 STATS(1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1), 0},
	/* data_head 4 bytes past the last record: no room for a header */
	{__LINE__, ST_BASIC, 0, 0, 0, 0,
	 {SAMPLE(U | X, 0x40b000, 0x7fa000)},
	 {{0x40b000, 0x7fa000, 0, 1}},
	 STATS(1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1), 4},
	/* every field the parser steps over, wrapping */
	{__LINE__, ST_ALL, 0, 0, 0, DATA_SIZE - 48,
	 {SAMPLE(U | X, 0x40c000, 0x7fb000), SAMPLE(U | X, 0x40c008, 0x7fb008)},
	 {{0x40c000, 0x7fb000, 0, 1}, {0x40c008, 0x7fb008, 0, 1}},
	 STATS(2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 0},
	/* IBS, client wants stores: store; address only in the raw registers
	 * (kernels before 6.1); a load; read-modify-write; no memory op;
	 * a store without a valid address */
	{__LINE__, ST_IBS, 1, PMU_OP_STORE, 0, DATA_SIZE - 24,
	 {IBS(U | X, 0x40d000, 0x7fc000, ST | LV, 0x7fc000),
	  IBS(U | X, 0x40d008, 0, ST | LV, 0x7fc008), IBS(U | X, 0x40d010, 0x7fc010, LD | LV, 0x7fc010),
	  IBS(U | X, 0x40d018, 0x7fc018, LD | ST | LV, 0x7fc018), IBS(U | X, 0x40d020, 0, 0, 0),
	  IBS(U | X, 0x40d028, 0, ST, 0)},
	 {{0x40d000, 0x7fc000, PMU_OP_STORE, 1}, {0x40d008, 0x7fc008, PMU_OP_STORE, 1},
	  {0x40d018, 0x7fc018, PMU_OP_LOAD | PMU_OP_STORE, 1}},
	 STATS(3, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0), 0},
	/* IBS, client wants loads */
	{__LINE__, ST_IBS, 1, PMU_OP_LOAD, 0, 0,
	 {IBS(U | X, 0x40e000, 0x7fd000, ST | LV, 0x7fd000),
	  IBS(U | X, 0x40e008, 0x7fd008, LD | LV, 0x7fd008),
	  IBS(U | X, 0x40e010, 0x7fd010, LD | ST | LV, 0x7fd010),
	  IBS(K | X, 0xffffffff81000000ull, 0xffff888000000000ull, LD | LV, 0)},
	 {{0x40e008, 0x7fd008, PMU_OP_LOAD, 1}, {0x40e010, 0x7fd010, PMU_OP_LOAD | PMU_OP_STORE, 1}},
	 STATS(2, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0), 0},
	/* nothing to read */
	{__LINE__, ST_BASIC, 0, 0, 0, 3 * DATA_SIZE + 40, {{0}}, {{0}},
	 STATS(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 0},
};

struct got {
	int n;
	struct pmu_sample s[16];
};

static void collect(const struct pmu_sample *s, void *arg)
{
	struct got *g = arg;
	if (g->n < 16)
		g->s[g->n] = *s;
	g->n++;
}

#define CMP(line, field, want)                                                        \
	CHECK(line, st->field == (uint64_t)(want), "stats." #field " = %llu, expected %llu", \
	      (unsigned long long)st->field, (unsigned long long)(want))

static void check_row(const struct row *r)
{
	static struct fake f;
	struct pmu_ring ring;
	memset(&f, 0xcc, sizeof(f));
	memset(&f.page, 0, sizeof(f.page));
	uint64_t pos = r->start;
	int nsamples = 0, reachable = 1;
	for (const struct rec *rec = r->recs; rec->type; rec++) {
		uint32_t len;
		uint32_t size = emit(&f, pos, rec, r->sample_type, r->ibs, &len);
		if (size == 0) { /* corrupt: the reader stops here, head goes on */
			reachable = 0;
			size = len;
		}
		pos += size;
		nsamples += reachable && rec->type == PERF_RECORD_SAMPLE;
	}
	/* end_extra: data_head claims bytes too few for even a header. */
	uint64_t head = pos + r->end_extra;
	f.page.data_tail = r->start;
	f.page.data_head = head;

	int rc = pmu_ring_init(&ring, &f.page, f.data, DATA_SIZE, r->sample_type, r->ibs, r->want_op);
	CHECK(r->line, rc == 0, "pmu_ring_init = %d", rc);
	if (rc)
		return;
	ring.keep_inexact = r->keep_inexact;
	struct got g = {0};
	int used = pmu_ring_read(&ring, collect, &g);

	int want_n = 0, want_exact = 0;
	for (; want_n < 6 && r->out[want_n].ip; want_n++)
		want_exact += r->out[want_n].exact;
	CHECK(r->line, g.n == want_n, "%d samples handed over, expected %d", g.n, want_n);
	CHECK(r->line, used == want_exact, "pmu_ring_read = %d, expected %d", used, want_exact);
	for (int i = 0; i < g.n && i < want_n; i++) {
		const struct pmu_sample *s = &g.s[i];
		const struct want_sample *w = &r->out[i];
		CHECK(r->line, s->ip == w->ip && s->addr == w->addr,
		      "sample %d: ip %#llx addr %#llx, expected %#llx %#llx", i,
		      (unsigned long long)s->ip, (unsigned long long)s->addr,
		      (unsigned long long)w->ip, (unsigned long long)w->addr);
		CHECK(r->line, s->pid == 100 && s->tid == 101, "sample %d: pid/tid %u/%u", i, s->pid,
		      s->tid);
		CHECK(r->line, s->op == w->op, "sample %d: op %u, expected %u", i, s->op, w->op);
		CHECK(r->line, s->exact == w->exact, "sample %d: exact %d", i, s->exact);
	}
	const struct pmu_ring_stats *st = &ring.stats;
	CMP(r->line, samples, nsamples);
	CMP(r->line, usable, r->st.usable);
	CMP(r->line, kernel, r->st.kernel);
	CMP(r->line, not_exact, r->st.not_exact);
	CMP(r->line, wrong_op, r->st.wrong_op);
	CMP(r->line, addr_zero, r->st.addr_zero);
	CMP(r->line, bad, r->st.bad);
	CMP(r->line, lost, r->st.lost);
	CMP(r->line, lost_records, r->st.lost_records);
	CMP(r->line, throttle, r->st.throttle);
	CMP(r->line, unthrottle, r->st.unthrottle);
	CMP(r->line, unknown, r->st.unknown);
	CMP(r->line, corrupt, r->st.corrupt);
	if (r->st.corrupt == 0) /* every sample lands in exactly one bucket */
		CHECK(r->line, st->usable + st->kernel + st->not_exact + st->wrong_op + st->addr_zero +
				       st->bad == st->samples,
		      "buckets do not add up to %llu samples", (unsigned long long)st->samples);
	CHECK(r->line, f.page.data_tail == head, "data_tail %llu, expected data_head %llu",
	      (unsigned long long)f.page.data_tail, (unsigned long long)head);

	/* A second read finds nothing new. */
	struct pmu_ring_stats before = ring.stats;
	g.n = 0;
	used = pmu_ring_read(&ring, collect, &g);
	CHECK(r->line, used == 0 && g.n == 0 && memcmp(&before, &ring.stats, sizeof(before)) == 0,
	      "a second read changed something");
}

/* pmu_ring_init refuses what it could not parse. */
static const struct {
	int line;
	uint64_t size, sample_type;
	int ibs;
	uint32_t want_op;
	int rc;
} init_rows[] = {
	{__LINE__, 256, ST_BASIC, 0, 0, 0},
	{__LINE__, 4096, ST_ALL, 0, PMU_OP_STORE, 0},
	{__LINE__, 256, ST_IBS, 1, PMU_OP_LOAD, 0},
	{__LINE__, 100, ST_BASIC, 0, 0, -EINVAL},                      /* not a power of two */
	{__LINE__, 0, ST_BASIC, 0, 0, -EINVAL},
	{__LINE__, 256, ST_BASIC | PERF_SAMPLE_READ, 0, 0, -EINVAL},   /* layout depends on read_format */
	{__LINE__, 256, ST_BASIC | PERF_SAMPLE_DATA_SRC, 0, 0, -EINVAL},
	{__LINE__, 256, PERF_SAMPLE_IP | PERF_SAMPLE_TID, 0, 0, -EINVAL}, /* no address */
	{__LINE__, 256, ST_BASIC, 1, 0, -EINVAL},                      /* IBS without RAW */
	{__LINE__, 256, ST_BASIC, 0, 4, -EINVAL},                      /* unknown op bit */
};

/* ------------------------------------------------------------------ */
/* Part 2: live, on a watchpoint event                                  */

#define LIVE_STORES 500

static struct pmu live_pmu;
static volatile uint64_t live_target;
static volatile int live_ticks, live_other, live_seen, live_wrong;
static pid_t live_pid, live_tid;

static void live_sample(const struct pmu_sample *s, void *arg)
{
	(void)arg;
	live_seen++;
	if (s->addr != (uint64_t)(uintptr_t)&live_target || s->pid != (uint32_t)live_pid ||
	    s->tid != (uint32_t)live_tid || s->exact || s->ip == 0 || s->ip >= (1ull << 47))
		live_wrong++;
}

static void live_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (!pmu_is_tick(&live_pmu, si)) {
		live_other++;
		return;
	}
	live_ticks++;
	pmu_drain(&live_pmu, live_sample, NULL);
}

static int live(void)
{
	int sig = SIGRTMIN + 3;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = live_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, NULL) < 0) {
		FAIL(__LINE__, "sigaction: %s", strerror(errno));
		return 0;
	}
	live_pid = getpid();
	live_tid = (pid_t)syscall(SYS_gettid);

	struct pmu_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.n = 1;
	struct perf_event_attr *a = &ev.attr[0];
	a->size = sizeof(*a);
	a->type = PERF_TYPE_BREAKPOINT;
	a->bp_type = HW_BREAKPOINT_W;
	a->bp_addr = (uint64_t)(uintptr_t)&live_target;
	a->bp_len = HW_BREAKPOINT_LEN_8;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->disabled = 1;
	a->wakeup_events = 1;

	int rc = pmu_open(&live_pmu, &ev, sig, live_tid, 1);
	if (rc == -ENOENT || rc == -ENODEV || rc == -EACCES || rc == -EPERM || rc == -ENOSPC ||
	    rc == -EOPNOTSUPP) {
		printf("test_pmu_ring: SKIP live part: no breakpoint events (%s)\n", strerror(-rc));
		return 77;
	}
	CHECK(__LINE__, rc == 0, "pmu_open: %s", strerror(-rc));
	if (rc)
		return 0;
	CHECK(__LINE__, live_pmu.ring[0].size == (uint64_t)sysconf(_SC_PAGESIZE),
	      "ring of %llu bytes for one page", (unsigned long long)live_pmu.ring[0].size);
	live_pmu.ring[0].keep_inexact = 1; /* watchpoints report the next ip */
	CHECK(__LINE__, (rc = pmu_start(&live_pmu)) == 0, "pmu_start: %s", strerror(-rc));
	for (int i = 0; i < LIVE_STORES; i++)
		live_target = (uint64_t)i;
	CHECK(__LINE__, (rc = pmu_stop(&live_pmu)) == 0, "pmu_stop: %s", strerror(-rc));

	/* Whatever is left, read with the signal held off. */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, sig);
	sigprocmask(SIG_BLOCK, &block, &old);
	pmu_drain(&live_pmu, live_sample, NULL);
	struct pmu_ring_stats st;
	pmu_stats(&live_pmu, &st);
	pmu_close(&live_pmu);
	sigprocmask(SIG_SETMASK, &old, NULL);

	CHECK(__LINE__, live_ticks > 0, "no overflow signal reached the handler");
	CHECK(__LINE__, live_other == 0, "%d signals were not pmu_is_tick", live_other);
	CHECK(__LINE__, live_wrong == 0, "%d of %d samples with a wrong addr/pid/tid/ip", live_wrong,
	      live_seen);
	CHECK(__LINE__, (uint64_t)live_seen + st.lost == LIVE_STORES,
	      "%d samples + %llu lost, expected %d stores", live_seen, (unsigned long long)st.lost,
	      LIVE_STORES);
	CHECK(__LINE__, st.samples == (uint64_t)live_seen && st.not_exact == st.samples &&
				st.usable == 0 && st.bad == 0 && st.corrupt == 0 && st.unknown == 0,
	      "stats: samples %llu not_exact %llu usable %llu bad %llu corrupt %llu unknown %llu",
	      (unsigned long long)st.samples, (unsigned long long)st.not_exact,
	      (unsigned long long)st.usable, (unsigned long long)st.bad,
	      (unsigned long long)st.corrupt, (unsigned long long)st.unknown);
	printf("test_pmu_ring: live: %d stores, %d signals, %d samples, %llu lost\n", LIVE_STORES,
	       live_ticks, live_seen, (unsigned long long)st.lost);
	return 0;
}

/* test_pmu_ring: the recorded-bytes tables; test_pmu_ring --live: the ring
 * and signal code driven by a breakpoint event, which exits 77 (ctest:
 * skipped) where the machine has none. */
int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--live") == 0) {
		if (live() == 77)
			return 77;
		if (check_failures)
			fprintf(stderr, "test_pmu_ring: %d failures\n", check_failures);
		return check_failures != 0;
	}
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check_row(&rows[i]);
	for (size_t i = 0; i < sizeof(init_rows) / sizeof(init_rows[0]); i++) {
		static struct fake f;
		struct pmu_ring r;
		int rc = pmu_ring_init(&r, &f.page, f.data, init_rows[i].size, init_rows[i].sample_type,
				       init_rows[i].ibs, init_rows[i].want_op);
		CHECK(init_rows[i].line, rc == init_rows[i].rc, "pmu_ring_init = %d, expected %d", rc,
		      init_rows[i].rc);
	}
	if (check_failures)
		fprintf(stderr, "test_pmu_ring: %d failures\n", check_failures);
	return check_failures != 0;
}
