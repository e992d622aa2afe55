/* peek: the handlers read the program's memory (see peek.h). */
#include "witch/peek.h"
#include "witch/memlat.h"
#include "witch/rawsys.h"
#include "witch/rescue.h"
#include "witch/stats.h"
#include "witch/watchpoint.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>

static __thread const struct watchpoint_set *peek_wps __attribute__((tls_model("initial-exec")));
static __thread struct witch_stats *peek_stats __attribute__((tls_model("initial-exec")));

void peek_thread_begin(const struct watchpoint_set *wps, struct witch_stats *stats)
{
	peek_wps = wps;
	peek_stats = stats;
}

int peek_read_remote(uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len};
	struct iovec remote = {(void *)(uintptr_t)addr, len};
	if (len == 0)
		return 0;
	if (peek_stats)
		peek_stats->peek_remote++;
	/* getpid() every time rather than cached: after fork() a cached pid
	 * would silently read the parent's memory. */
	long pid = rawsys6(SYS_getpid, 0, 0, 0, 0, 0, 0);
	long n = rawsys6(SYS_process_vm_readv, pid, (long)&local, 1, (long)&remote, 1, 0);
	/* A short read means part of the range is unmapped; other failures
	 * (ENOSYS, EPERM under a sandbox) equally mean "cannot read". */
	return n == (long)len ? 0 : -EFAULT;
}

/* Under one of this thread's armed watchpoints (the debug registers are
 * the thread's own; another thread's do not see this one's reads). */
static int peek_watched(uint64_t addr, size_t len)
{
	const struct watchpoint_set *s = peek_wps;
	if (!s)
		return 0;
	for (int i = 0; i < s->n; i++) {
		const struct watchpoint *w = &s->wp[i];
		if (w->armed && w->addr < addr + len && addr < w->addr + w->len)
			return 1;
	}
	return 0;
}

/* Read in place: not wrapping, not the kernel's half, not watched, and a
 * fault there would be rescued. */
static int peek_in_place(uint64_t addr, size_t len)
{
	return addr + len >= addr && addr + len <= 0x800000000000ull && !peek_watched(addr, len) &&
	       rescue_covers_faults();
}

/* The one read both ways: ticks NULL, untimed. */
static int peek_read_at(uint64_t addr, void *buf, size_t len, uint64_t probe, uint32_t *ticks)
{
	if (ticks)
		*ticks = 0;
	if (len == 0)
		return 0;
	if (!peek_in_place(addr, len))
		return peek_read_remote(addr, buf, len);
	if (peek_stats)
		peek_stats->peek_in_place++;
	if (ticks && probe >= addr && probe - addr < len)
		*ticks = memlat_time_probe((const void *)(uintptr_t)probe);
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return 0;
}

int peek_read(uint64_t addr, void *buf, size_t len)
{
	return peek_read_at(addr, buf, len, 0, NULL);
}

int peek_read_timed(uint64_t addr, void *buf, size_t len, uint64_t probe, uint32_t *ticks)
{
	return peek_read_at(addr, buf, len, probe, ticks);
}
