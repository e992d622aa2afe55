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
/* The process's pid in a handler run once asked (-1: not yet), 0 outside one. */
static __thread long peek_run_pid __attribute__((tls_model("initial-exec")));

/* Lines read through the kernel in this handler run, kept for the rest of
 * it: the program does not run meanwhile, and a window's loads, a walk's
 * stack words and a tick's own checks come back to the same lines.  Lines
 * lie within a page, so a line read fails only where the bytes asked for
 * would. */
#define PEEK_LINE 64ull
#define PEEK_LINES 8
struct peek_lines {
	uint64_t tag[PEEK_LINES]; /* line address + 1; 0: empty */
	unsigned next;            /* the slot a new line takes */
	uint8_t data[PEEK_LINES][PEEK_LINE];
};
static __thread struct peek_lines peek_lines __attribute__((tls_model("initial-exec")));

void peek_thread_begin(const struct watchpoint_set *wps, struct witch_stats *stats)
{
	peek_wps = wps;
	peek_stats = stats;
}

void peek_run_begin(void)
{
	peek_run_pid = -1;
	for (int i = 0; i < PEEK_LINES; i++)
		peek_lines.tag[i] = 0;
}

void peek_run_end(void)
{
	peek_run_pid = 0;
}

/* getpid() once a handler run, never kept past it: after fork() a kept pid
 * would silently read the parent's memory, and no fork happens within a
 * run. */
static long peek_pid(void)
{
	long pid = peek_run_pid;
	if (pid > 0)
		return pid;
	int in_run = pid < 0;
	pid = rawsys6(SYS_getpid, 0, 0, 0, 0, 0, 0);
	if (in_run)
		peek_run_pid = pid;
	return pid;
}

static int peek_readv(uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len};
	struct iovec remote = {(void *)(uintptr_t)addr, len};
	if (peek_stats)
		peek_stats->peek_remote++;
	long n = rawsys6(SYS_process_vm_readv, peek_pid(), (long)&local, 1, (long)&remote, 1, 0);
	/* A short read means part of the range is unmapped; other failures
	 * (ENOSYS, EPERM under a sandbox) equally mean "cannot read". */
	return n == (long)len ? 0 : -EFAULT;
}

static const uint8_t *peek_line(uint64_t line)
{
	struct peek_lines *pl = &peek_lines;
	for (int i = 0; i < PEEK_LINES; i++)
		if (pl->tag[i] == line + 1)
			return pl->data[i];
	unsigned slot = pl->next++ % PEEK_LINES;
	pl->tag[slot] = 0;
	if (peek_readv(line, pl->data[slot], PEEK_LINE) < 0)
		return NULL;
	pl->tag[slot] = line + 1;
	return pl->data[slot];
}

int peek_read_remote(uint64_t addr, void *buf, size_t len)
{
	if (len == 0)
		return 0;
	/* Outside a run, or a read of more than a few lines: as asked. */
	if (peek_run_pid == 0 || len > 2 * PEEK_LINE || addr + len < addr)
		return peek_readv(addr, buf, len);
	uint8_t *out = buf;
	for (uint64_t a = addr; a < addr + len;) {
		uint64_t line = a & ~(PEEK_LINE - 1);
		const uint8_t *d = peek_line(line);
		if (!d)
			return -EFAULT;
		uint64_t end = line + PEEK_LINE < addr + len ? line + PEEK_LINE : addr + len;
		memcpy(out + (a - addr), d + (a - line), end - a);
		a = end;
	}
	return 0;
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

int peek_can_time(uint64_t addr, size_t len)
{
	return peek_in_place(addr, len);
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
