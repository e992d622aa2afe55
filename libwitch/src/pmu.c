/* pmu: per-thread PMU address sampler (see pmu.h). */
#include "witch/pmu.h"
#include "witch/perf_fd.h"
#include "witch/fdguard.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

static void pmu_reset(struct pmu *p)
{
	memset(p, 0, sizeof(*p));
	for (int i = 0; i < PMU_EVENT_MAX; i++)
		p->fd[i] = -1;
}

void pmu_close(struct pmu *p)
{
	for (int i = 0; i < p->n && i < PMU_EVENT_MAX; i++) {
		if (p->map[i])
			munmap(p->map[i], p->map_len);
		if (p->fd[i] >= 0)
			fdguard_close(p->fd[i]);
	}
	pmu_reset(p);
}

void pmu_close_inherited(const struct pmu *p)
{
	for (int i = 0; i < p->n && i < PMU_EVENT_MAX; i++)
		if (p->fd[i] >= 0)
			fdguard_close(p->fd[i]);
}

int pmu_open(struct pmu *p, const struct pmu_event *ev, int sig, pid_t tid, uint32_t data_pages)
{
	pmu_reset(p);
	if (data_pages == 0)
		data_pages = PMU_DATA_PAGES;
	if ((data_pages & (data_pages - 1)) || ev->n < 1 || ev->n > PMU_EVENT_MAX || tid <= 0)
		return -EINVAL;
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		return -EINVAL;
	p->map_len = (size_t)(1 + data_pages) * (size_t)page;

	int rc = 0;
	for (int i = 0; i < ev->n; i++) {
		int fd = pmu_event_open(&ev->attr[i], tid, NULL);
		if (fd < 0) {
			rc = fd;
			goto fail;
		}
		p->fd[i] = fd;
		p->n = i + 1;
		/* Writable, so the kernel honours data_tail and never overwrites
		 * samples we have not read. */
		void *map = mmap(NULL, p->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			rc = -errno;
			goto fail;
		}
		p->map[i] = map;
		struct perf_event_mmap_page *hdr = map;
		uint64_t off = hdr->data_offset ? hdr->data_offset : (uint64_t)page;
		uint64_t size = hdr->data_size ? hdr->data_size : (uint64_t)data_pages * page;
		rc = pmu_ring_init(&p->ring[i], hdr, (unsigned char *)map + off, size,
				   ev->attr[i].sample_type, ev->ibs, ev->ibs ? ev->want_op : 0);
		if (rc < 0 || (rc = perf_fd_route(fd, sig, tid)) < 0)
			goto fail;
	}
	return 0;
fail:
	pmu_close(p);
	return rc;
}

int pmu_start(struct pmu *p)
{
	for (int i = 0; i < p->n; i++)
		if (ioctl(p->fd[i], PERF_EVENT_IOC_RESET, 0) < 0 ||
		    ioctl(p->fd[i], PERF_EVENT_IOC_ENABLE, 0) < 0)
			return -errno;
	return p->n ? 0 : -EBADF;
}

int pmu_stop(struct pmu *p)
{
	int rc = 0;
	for (int i = 0; i < p->n; i++)
		if (ioctl(p->fd[i], PERF_EVENT_IOC_DISABLE, 0) < 0)
			rc = -errno;
	return rc;
}

int pmu_is_tick(const struct pmu *p, const siginfo_t *si)
{
	/* Kernel-made notices only: si_fd means nothing in sigqueue's. */
	if (si->si_code < POLL_IN || si->si_code > POLL_HUP)
		return 0;
	for (int i = 0; i < p->n; i++)
		if (si->si_fd == p->fd[i])
			return 1;
	return 0;
}

int pmu_drain(struct pmu *p, pmu_sample_fn fn, void *arg)
{
	int used = 0;
	for (int i = 0; i < p->n; i++)
		used += pmu_ring_read(&p->ring[i], fn, arg);
	return used;
}

void pmu_stats(const struct pmu *p, struct pmu_ring_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (int i = 0; i < p->n; i++) {
		const struct pmu_ring_stats *s = &p->ring[i].stats;
		sum->samples += s->samples;
		sum->usable += s->usable;
		sum->kernel += s->kernel;
		sum->not_exact += s->not_exact;
		sum->wrong_op += s->wrong_op;
		sum->addr_zero += s->addr_zero;
		sum->bad += s->bad;
		sum->lost += s->lost;
		sum->lost_records += s->lost_records;
		sum->throttle += s->throttle;
		sum->unthrottle += s->unthrottle;
		sum->unknown += s->unknown;
		sum->corrupt += s->corrupt;
	}
}
