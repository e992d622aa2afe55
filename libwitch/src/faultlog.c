/* faultlog: whether a tick's time fell in a page fault (see faultlog.h). */
#include "witch/faultlog.h"
#include "witch/perf_fd.h"
#include "witch/fdguard.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define FAULTLOG_PAGES 2 /* the header page and a one-page ring */
#define FAULTLOG_PAGE 4096 /* x86-64's (sysconf is not async-signal-safe) */

void faultlog_begin(struct faultlog *f, pid_t tid)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->tid = tid;
}

int faultlog_open(struct faultlog *f, pid_t tid)
{
	struct perf_event_attr a;
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP;
	a.exclude_kernel = 1; /* the program's faults, not the kernel's own */
	a.exclude_hv = 1;
	a.write_backward = 1; /* newest record at the head, overwriting */
	int fd = perf_fd_open(&a, tid);
	if (fd < 0)
		return fd;
	/* Mapped read-only: the kernel overwrites, nothing is consumed. */
	void *map = mmap(NULL, FAULTLOG_PAGE * FAULTLOG_PAGES, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		int rc = -errno;
		fdguard_close(fd);
		return rc;
	}
	f->fd = fd;
	f->map = map;
	f->period = 1;
	f->counted_head = __atomic_load_n(&((const struct perf_event_mmap_page *)map)->data_head,
					  __ATOMIC_ACQUIRE);
	return 0;
}

/* A record: its header and the faulting instruction (PERF_SAMPLE_IP). */
#define FAULTLOG_RECORD_BYTES (sizeof(struct perf_event_header) + sizeof(uint64_t))

uint64_t faultlog_records_since(struct faultlog *f)
{
	if (f->fd < 0)
		return 0;
	const struct perf_event_mmap_page *hdr = f->map;
	uint64_t head = __atomic_load_n(&hdr->data_head, __ATOMIC_ACQUIRE);
	/* Written backward: the head moves down a record at a time. */
	uint64_t bytes = f->counted_head - head;
	f->counted_head = head;
	return bytes / FAULTLOG_RECORD_BYTES;
}

int faultlog_thin(struct faultlog *f, uint64_t records, uint64_t *faults)
{
	*faults = 0;
	if (f->fd < 0)
		return 0;
	*faults = records * f->period;
	uint64_t want = 1;
	while (want < FAULTLOG_PERIOD_MAX && want * 2 * FAULTLOG_RECORDS_A_TICK <= *faults)
		want *= 2;
	/* Up at once, down only past a 4x gap held FAULTLOG_DECAY_TICKS ticks,
	 * and then by half: faults come in bursts (a table grown, a buffer
	 * first filled) between quiet stretches, and a burst in an interval
	 * at period 1 pays for every record before the next tick can thin the
	 * log (hashtab: 9,500 records in 2 s halving every tick).  A period
	 * kept high through a quiet stretch costs nothing: no faults. */
	if (4 * want <= f->period) {
		if (++f->low_ticks < FAULTLOG_DECAY_TICKS)
			return 0;
		want = f->period / 2;
	} else if (want < 4 * f->period) {
		f->low_ticks = 0;
		return 0;
	}
	f->low_ticks = 0;
	if (ioctl(f->fd, PERF_EVENT_IOC_PERIOD, &want) < 0)
		return -errno;
	f->period = want;
	return 0;
}

int faultlog_keep_within(struct faultlog *f, double cost_ns, double allowed_ns)
{
	if (f->fd < 0)
		return 0;
	f->cost_ns = f->cost_ns * 0.875 + cost_ns;
	f->allowed_ns = f->allowed_ns * 0.875 + allowed_ns;
	if (++f->budget_ticks < FAULTLOG_OVER_TICKS ||
	    f->cost_ns <= FAULTLOG_BUDGET_SHARE * f->allowed_ns)
		return 0;
	faultlog_close(f); /* (and never opens again) */
	return 1;
}

int faultlog_since_tick(struct faultlog *f, uint64_t *ip)
{
	if (f->fd < 0) {
		pid_t tid = f->tid;
		if (tid <= 0)
			return 0;
		int rc = faultlog_open(f, tid); /* the first tick: from here on */
		if (rc < 0)
			return rc;
		/* The thread's faults so far stand for its first interval's, a
		 * quarter of them: a program that faults fast from its start
		 * (hashtab: 6,700 records between its first two ticks) starts
		 * thinned, one whose start-up faulted a few hundred times not. */
		struct rusage ru;
		uint64_t faults;
		if (getrusage(RUSAGE_THREAD, &ru) == 0 && ru.ru_minflt > 0)
			(void)faultlog_thin(f, (uint64_t)ru.ru_minflt / 4, &faults);
		return 0;
	}
	const struct perf_event_mmap_page *hdr = f->map;
	uint64_t head = __atomic_load_n(&hdr->data_head, __ATOMIC_ACQUIRE);
	if (head == f->last_head)
		return 0; /* no fault since the last tick */
	f->last_head = head;
	uint64_t size = hdr->data_size, off = hdr->data_offset;
	if (size == 0 || (size & (size - 1)) != 0 || off == 0)
		return 0;
	/* The newest record starts at the head; it may wrap the ring's end. */
	struct {
		struct perf_event_header h;
		uint64_t ip;
	} rec;
	const unsigned char *ring = (const unsigned char *)f->map + off;
	uint64_t at = head & (size - 1), first = size - at < sizeof(rec) ? size - at : sizeof(rec);
	memcpy(&rec, ring + at, first);
	memcpy((unsigned char *)&rec + first, ring, sizeof(rec) - first);
	if (rec.h.type != PERF_RECORD_SAMPLE || rec.h.size != sizeof(rec))
		return 0; /* a throttle or lost record: cannot tell */
	*ip = rec.ip;
	return 1;
}

void faultlog_close_inherited(const struct faultlog *f)
{
	if (f->fd >= 0)
		fdguard_close(f->fd);
}

void faultlog_close(struct faultlog *f)
{
	f->tid = 0; /* (one never opened stays so) */
	if (f->fd < 0)
		return;
	munmap(f->map, FAULTLOG_PAGE * FAULTLOG_PAGES);
	fdguard_close(f->fd);
	f->fd = -1;
}
