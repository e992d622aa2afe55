/* watchpoint: perf_event hardware breakpoints of one thread (see watchpoint.h). */
#include "witch/watchpoint.h"
#include "witch/watch_word.h"
#include "witch/perf_fd.h"
#include "witch/fdguard.h"
#include "witch/cost.h"
#include "witch/median.h"
#include "witch/rawsys.h"

#include <cpuid.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <stddef.h>
#include <sys/utsname.h>

#ifndef PERF_EVENT_IOC_MODIFY_ATTRIBUTES
#define PERF_EVENT_IOC_MODIFY_ATTRIBUTES _IOW('$', 11, struct perf_event_attr *)
#endif

#define TRAP_PERF_CODE 6 /* si_code of a perf SIGTRAP (uapi asm-generic/siginfo.h) */
#define HIT_GUESS_NS 10000.0 /* a #DB without a signal in a VM, until measured */
/* Hits the startup probe times: each a #DB, ~9 us here, in every process's
 * start-up (16 were a third of the runtime's own start-up on /bin/true).
 * Each is timed alone and the median priced: the scheduler's tick (~50 us
 * of the thread's CPU time here) in a batch of 4 timed together priced
 * every hit and trap of a run up to 2x high (9.2-10.5 us over 30 starts,
 * and 19.7), and dense_memset's fraction moved with it (0.525 at 13.5 us
 * against 0.509-0.514 at ~9.5). */
#define PROBE_HITS 5

static double hit_ns = HIT_GUESS_NS;

/* Traps as synchronous SIGTRAPs (attr.sigtrap, TRAP_PERF) rather than the
 * fd's queued signal: see watchpoint_probe.  The slot rides in sig_data. */
#define SIG_DATA_TAG 0x5749544348000000ull /* "WITCH" */
#define SIG_DATA_SLOT_MASK 0xffull
static int use_sigtrap;
static volatile int any_open; /* watchpoint_any_open */

static void attr_sigtrap(struct perf_event_attr *a, int slot)
{
	a->sigtrap = 1;
	a->remove_on_exec = 1; /* the kernel's condition for sigtrap */
	a->sig_data = SIG_DATA_TAG | (uint64_t)slot;
}

/* Whether set s's traps come as perf SIGTRAPs: the process's choice
 * (watchpoint_probe) unless its thread's were queued since. */
static int set_sigtrap(const struct watchpoint_set *s)
{
	return use_sigtrap && !s->queued;
}

/* slot: the set's slot the event is for, its traps tagged with it as
 * SIGTRAPs; -1: no SIGTRAP (the fd's queued signal, or none) */
static void watchpoint_attr(struct perf_event_attr *a, uint64_t addr, uint32_t len,
			    int type, int disabled, uint32_t pass, int slot)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_BREAKPOINT;
	a->bp_type = type == WATCHPOINT_W ? HW_BREAKPOINT_W : HW_BREAKPOINT_RW;
	a->bp_addr = addr;
	a->bp_len = len;
	/* Period 1: signal on every hit, right after the accessing instruction. */
	a->sample_period = (uint64_t)pass + 1;
	a->wakeup_events = 1;
	a->disabled = disabled;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	if (slot >= 0)
		attr_sigtrap(a, slot);
}

static int watchpoint_open_one(struct watchpoint_set *s, int slot, uint64_t addr, uint32_t len,
			       int type, int disabled, uint32_t pass)
{
	struct perf_event_attr a;
	watchpoint_attr(&a, addr, len, type, disabled, pass, set_sigtrap(s) ? slot : -1);
	int fd = perf_fd_open(&a, s->tid);
	if (fd < 0)
		return fd;
	if (set_sigtrap(s))
		return fd;
	int rc = perf_fd_route(fd, s->sig, s->tid);
	if (rc < 0) {
		fdguard_close(fd);
		return rc;
	}
	return fd;
}

void watchpoint_set_init(struct watchpoint_set *s, int sig, pid_t tid, int slow_rearm,
			 uint64_t parking_addr)
{
	memset(s, 0, sizeof(*s));
	s->sig = sig;
	s->tid = tid;
	s->slow_rearm = slow_rearm;
	s->parking_addr = parking_addr;
}

int watchpoint_set_open(struct watchpoint_set *s, uint32_t want, int sig, pid_t tid,
			int slow_rearm, uint64_t parking_addr)
{
	watchpoint_set_init(s, sig, tid, slow_rearm, parking_addr);
	return watchpoint_set_fill(s, want);
}

int watchpoint_set_fill(struct watchpoint_set *s, uint32_t want)
{
	int first_error = 0;
	uint64_t parking_addr = s->parking_addr;
	if (want == 0 || want > WATCHPOINT_MAX)
		want = WATCHPOINT_MAX;
	/* Opening reserves a debug register even while disabled: ENOSPC marks
	 * the end of what the hardware (or a debugger's share) leaves us. */
	for (uint32_t i = 0; i < want; i++) {
		int fd = watchpoint_open_one(s, s->n, parking_addr, 1, WATCHPOINT_W, 1, 0);
		if (fd < 0) {
			first_error = fd;
			break;
		}
		s->wp[s->n].fd = fd;
		s->wp[s->n].armed = 0;
		s->n++;
		any_open = 1;
	}
	return s->n > 0 ? s->n : first_error;
}

void watchpoint_align(uint64_t addr, uint32_t len, uint64_t *waddr, uint32_t *wlen)
{
	watch_word_pick(addr, len, 0, len, waddr, wlen); /* the piece at addr */
}

void watchpoint_pick_word(uint64_t addr, uint32_t len, uint64_t random, uint64_t *waddr,
			  uint32_t *wlen)
{
	watch_word_pick(addr, len, random, WATCHPOINT_VALUE_MAX, waddr, wlen);
}

static int watchpoint_reopen(struct watchpoint_set *s, struct watchpoint *w, uint64_t addr,
			     uint32_t len, int type, uint32_t pass)
{
	if (w->fd >= 0)
		fdguard_close(w->fd);
	w->pass = pass;
	int slot = (int)(w - s->wp);
	w->fd = watchpoint_open_one(s, slot, addr, len, type, 0, pass);
	if (w->fd < 0) {
		int rc = w->fd;
		/* Keep the debug register: park the slot again, disabled. */
		w->pass = 0;
		w->fd = watchpoint_open_one(s, slot, s->parking_addr, 1, WATCHPOINT_W, 1, 0);
		if (w->fd < 0)
			w->fd = -1;
		return rc;
	}
	s->rearm_slow++;
	return 0;
}

int watchpoint_arm(struct watchpoint_set *s, int slot, uint64_t addr, uint32_t len, int type)
{
	return watchpoint_arm_after(s, slot, addr, len, type, 0);
}

/* The event's count of hits; raw, past the runtime's own read(2)
 * interposer (iocount.h), which would count it as the program's. */
static int read_count(int fd, uint64_t *count)
{
	long n = rawsys6(SYS_read, fd, (long)count, sizeof(*count), 0, 0, 0);
	if (n == (long)sizeof(*count))
		return 0;
	return n < 0 ? (int)n : -EIO;
}

/* The period first: PERF_EVENT_IOC_PERIOD zeroes what is left of it, and the
 * disable and enable inside MODIFY_ATTRIBUTES then start a whole new one
 * (hw_breakpoint_add).  Without it they keep what the last arming left (a
 * period of 2 with one hit gone would signal on the next hit).  Period 1
 * never leaves anything. */
static int watchpoint_set_pass(struct watchpoint_set *s, struct watchpoint *w, uint32_t pass)
{
	uint64_t period = (uint64_t)pass + 1;
	/* A period's count runs on across arms (hw_breakpoint_add keeps what
	 * is left) but restarts whole at each signal. */
	if (w->pass == pass && (pass == 0 || w->count_whole))
		return 0;
	if (ioctl(w->fd, PERF_EVENT_IOC_PERIOD, &period) < 0)
		return -errno;
	s->period_sets++;
	w->pass = pass;
	return 0;
}

int watchpoint_arm_after(struct watchpoint_set *s, int slot, uint64_t addr, uint32_t len,
			 int type, uint32_t pass)
{
	struct watchpoint *w = &s->wp[slot];
	int rc;
	if (!s->slow_rearm && w->fd >= 0) {
		struct perf_event_attr a;
		watchpoint_attr(&a, addr, len, type, 0, pass, set_sigtrap(s) ? slot : -1);
		if ((rc = watchpoint_set_pass(s, w, pass)) < 0) {
			s->arm_errors++;
			w->armed = 0;
			return rc;
		}
		if (ioctl(w->fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a) == 0) {
			s->rearm_fast++;
			s->arm_enabled += 1 + (uint64_t)__builtin_popcount(watchpoint_set_armed(s) &
									    ~(1u << slot));
			goto armed;
		}
		/* Kernels before 4.17 lack the ioctl (ENOTTY): use the slow path
		 * from now on.  EINVAL only refuses this address. */
		if (errno == ENOTTY)
			s->slow_rearm = 1;
		else {
			s->arm_errors++;
			w->armed = 0;
			return -errno;
		}
	}
	rc = watchpoint_reopen(s, w, addr, len, type, pass);
	if (rc < 0) {
		s->arm_errors++;
		w->armed = 0;
		return rc;
	}
armed:
	/* The count a sibling's trap reads against (watchpoint_period_ran_out);
	 * a slot that signals every hit is found without it. */
	if (pass > 0 && (rc = read_count(w->fd, &w->count_at_arm)) < 0) {
		s->arm_errors++;
		watchpoint_disarm(s, slot);
		return rc;
	}
	w->count_whole = 0; /* from now on hits count */
	w->armed = 1;
	w->addr = addr;
	w->len = len;
	w->type = type;
	return 0;
}

int watchpoint_period_ran_out(const struct watchpoint_set *s, int slot)
{
	const struct watchpoint *w = &s->wp[slot];
	uint64_t now;
	int rc = read_count(w->fd, &now);
	if (rc < 0)
		return rc;
	uint64_t hits = now - w->count_at_arm;
	if (hits > (uint64_t)w->pass + 1)
		return -EOVERFLOW;
	return hits == (uint64_t)w->pass + 1;
}

int watchpoint_signal_each(struct watchpoint_set *s, int slot)
{
	struct watchpoint *w = &s->wp[slot];
	if (w->pass == 0)
		return 0;
	return watchpoint_arm_after(s, slot, w->addr, w->len, w->type, 0);
}

int watchpoint_disarm(struct watchpoint_set *s, int slot)
{
	struct watchpoint *w = &s->wp[slot];
	w->armed = 0;
	if (w->fd >= 0 && ioctl(w->fd, PERF_EVENT_IOC_DISABLE, 0) < 0)
		return -errno;
	return 0;
}

int watchpoint_disarm_signalled(struct watchpoint_set *s, int slot)
{
	int rc = watchpoint_disarm(s, slot);
	if (rc == 0)
		s->wp[slot].count_whole = 1;
	return rc;
}

int watchpoint_pause(struct watchpoint_set *s, int slot)
{
	if (s->wp[slot].fd >= 0 && ioctl(s->wp[slot].fd, PERF_EVENT_IOC_DISABLE, 0) < 0)
		return -errno;
	return 0;
}

int watchpoint_resume(struct watchpoint_set *s, int slot)
{
	if (s->wp[slot].fd >= 0 && ioctl(s->wp[slot].fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
		return -errno;
	return 0;
}

uint32_t watchpoint_set_armed(const struct watchpoint_set *s)
{
	uint32_t m = 0;
	for (int i = 0; i < s->n; i++)
		if (s->wp[i].armed)
			m |= 1u << i;
	return m;
}

int watchpoint_set_overlaps(const struct watchpoint_set *s, uint64_t addr, uint32_t len)
{
	for (int i = 0; i < s->n; i++) {
		const struct watchpoint *w = &s->wp[i];
		if (w->armed && addr < w->addr + w->len && w->addr < addr + len)
			return 1;
	}
	return 0;
}

/* -1 until read; then 0 or 1 (a race reads the CPU twice, to one answer). */
static int step_over_hangs = -1;

static int cpu_is_tcg(void)
{
	unsigned a, b, c, d;
	char sig[12];
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 31)))
		return 0; /* no hypervisor */
	__cpuid(0x40000000, a, b, c, d);
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
	return memcmp(sig, "TCGTCGTCGTCG", 12) == 0;
}

int watchpoint_step_over_hangs(void)
{
	int v = __atomic_load_n(&step_over_hangs, __ATOMIC_RELAXED);
	if (v < 0) {
		v = cpu_is_tcg();
		__atomic_store_n(&step_over_hangs, v, __ATOMIC_RELAXED);
	}
	return v;
}

/* The slot a perf SIGTRAP of ours carries, or -1 (not a perf trap, or not
 * tagged by the runtime).  glibc 2.36's siginfo_t lacks the kernel's _perf
 * fields: si_perf_data is the word after si_addr (uapi asm-generic/siginfo.h). */
static int tagged_slot(const siginfo_t *si)
{
	uint64_t data;
	if (si->si_code != TRAP_PERF_CODE)
		return -1;
	memcpy(&data, (const char *)si + offsetof(siginfo_t, si_addr) + sizeof(void *), sizeof(data));
	if ((data & ~SIG_DATA_SLOT_MASK) != SIG_DATA_TAG)
		return -1;
	return (int)(data & SIG_DATA_SLOT_MASK);
}

int watchpoint_slot_of_trap(const struct watchpoint_set *s, const siginfo_t *si)
{
	int slot = tagged_slot(si);
	return slot < s->n ? slot : -1;
}

int watchpoint_trap_is_ours(const siginfo_t *si)
{
	return tagged_slot(si) >= 0;
}

/* TRAP_PERF_FLAG_ASYNC (uapi asm-generic/siginfo.h), in si_perf_flags: the
 * u32 after si_perf_data and si_perf_type. */
#define PERF_FLAGS_ASYNC 1u

int watchpoint_trap_is_async(const siginfo_t *si)
{
	uint32_t flags;
	if (si->si_code != TRAP_PERF_CODE)
		return 0;
	memcpy(&flags, (const char *)si + offsetof(siginfo_t, si_addr) + sizeof(void *) + 8 + 4,
	       sizeof(flags));
	return (flags & PERF_FLAGS_ASYNC) != 0;
}

int watchpoint_any_open(void)
{
	return any_open;
}

int watchpoint_set_uses_sigtrap(const struct watchpoint_set *s)
{
	return set_sigtrap(s);
}

int watchpoint_set_queue_traps(struct watchpoint_set *s)
{
	if (!set_sigtrap(s))
		return 0;
	uint32_t want = (uint32_t)s->n;
	watchpoint_set_close(s);
	s->queued = 1;
	if (want == 0)
		return 0; /* (not opened yet: watchpoint_set_fill opens them queued) */
	int rc = watchpoint_set_fill(s, want);
	return rc < 0 ? rc : 0;
}

int watchpoint_slot_of_fd(const struct watchpoint_set *s, int fd)
{
	for (int i = 0; i < s->n; i++)
		if (s->wp[i].fd == fd)
			return i;
	return -1;
}

int watchpoint_set_shrink(struct watchpoint_set *s)
{
	if (s->n == 0)
		return -ENOSPC;
	struct watchpoint *w = &s->wp[s->n - 1];
	if (w->fd >= 0)
		fdguard_close(w->fd);
	w->fd = -1;
	w->armed = 0;
	s->n--;
	return 0;
}

void watchpoint_set_close(struct watchpoint_set *s)
{
	for (int i = 0; i < s->n; i++) {
		if (s->wp[i].fd >= 0)
			fdguard_close(s->wp[i].fd);
		s->wp[i].fd = -1;
		s->wp[i].armed = 0;
	}
	s->n = 0;
}

void watchpoint_set_close_inherited(const struct watchpoint_set *s)
{
	for (int i = 0; i < s->n; i++)
		if (s->wp[i].fd >= 0)
			fdguard_close(s->wp[i].fd);
}

/* Linux 5.18 on: a perf SIGTRAP the thread blocks waits, flagged
 * asynchronous (before, the kernel forced it and a blocked one killed). */
static int kernel_has_safe_sigtrap(void)
{
	struct utsname u;
	unsigned v[2] = {0, 0};
	if (uname(&u) < 0)
		return 0;
	const char *c = u.release;
	for (int i = 0; i < 2; i++, c++) {
		if (*c < '0' || *c > '9')
			return 0;
		while (*c >= '0' && *c <= '9')
			v[i] = v[i] * 10 + (unsigned)(*c++ - '0');
		if (i == 0 && *c != '.')
			return 0;
	}
	return v[0] > 5 || (v[0] == 5 && v[1] >= 18);
}

static int sigtrap_opens(void)
{
	static volatile uint64_t word;
	struct perf_event_attr a;
	watchpoint_attr(&a, (uint64_t)(uintptr_t)&word, sizeof(word), WATCHPOINT_W, 1, 0, -1);
	attr_sigtrap(&a, 0);
	int fd = perf_fd_open(&a, 0);
	if (fd < 0)
		return 0;
	fdguard_close(fd);
	return 1;
}

/* What the probe found, or was handed (watchpoint_probe_set): -1 unknown. */
static int probed_traps = -1, probed_sigtrap = -1;
static int probe_handed; /* the answers are watchpoint_probe_set's: a parent's */

int watchpoint_probe_get(int *traps, int *sigtrap, double *ns)
{
	if (probed_traps < 0)
		return -ENOENT;
	*traps = probed_traps;
	*sigtrap = probed_sigtrap;
	*ns = probed_traps ? hit_ns : 0;
	return 0;
}

int watchpoint_probe_set(int traps, int sigtrap, double ns)
{
	if ((traps != 0 && traps != 1) || sigtrap < -1 || sigtrap > 1 ||
	    (traps && !(ns > 0 && ns < 1e6)))
		return -EINVAL;
	probed_traps = traps;
	probed_sigtrap = sigtrap;
	probe_handed = 1;
	if (traps)
		hit_ns = ns;
	return 0;
}

int watchpoint_probe_handed_traps(void)
{
	return probe_handed && probed_traps == 1;
}

int watchpoint_probe_handed_no_traps(void)
{
	return probe_handed && probed_traps == 0;
}

/* The breakpoint counts a store, and what a hit costs: 0, -EOPNOTSUPP
 * (it counts nothing), another -errno (it does not open). */
/* A write breakpoint of the calling thread's on the 8-byte word at addr,
 * counting only (no signal, no ring buffer): the fd or -errno. */
static int counting_open(uint64_t addr, int disabled)
{
	struct perf_event_attr a;
	watchpoint_attr(&a, addr, 8, WATCHPOINT_W, disabled, 0, -1);
	a.sample_period = 0;
	a.wakeup_events = 0;
	return perf_fd_open(&a, 0);
}

static int probe_traps(void)
{
	static volatile uint64_t word;
	uint64_t count = 0;
	int fd = counting_open((uint64_t)(uintptr_t)&word, 0);
	if (fd < 0)
		return fd;
	word++;
	/* What a hit costs when no signal follows (watchpoint_arm_after):
	 * a few more, each on the thread's CPU clock with one clock read
	 * (~0.3 us; taking off a clock read timed alone, itself as noisy,
	 * spread the price 6.9-16.8 us over 30 starts, against 9.8-10.6). */
	double t[PROBE_HITS + 1];
	t[0] = cost_thread_cpu_ns();
	for (int i = 0; i < PROBE_HITS; i++) {
		word++;
		t[i + 1] = cost_thread_cpu_ns();
	}
	int err = read_count(fd, &count);
	fdguard_close(fd);
	if (err < 0)
		return err;
	probed_traps = count > 0;
	if (count == 0)
		return -EOPNOTSUPP;
	double each[PROBE_HITS];
	for (int i = 0; i < PROBE_HITS; i++)
		each[i] = t[i + 1] - t[i];
	double ns = median_sort(each, PROBE_HITS);
	if (count > PROBE_HITS && ns > 0 && ns < 1e6)
		hit_ns = ns;
	return 0;
}

int watchpoint_probe(int want_sigtrap)
{
	want_sigtrap = want_sigtrap && kernel_has_safe_sigtrap();
	(void)watchpoint_step_over_hangs(); /* read here, not in a handler */
	int rc = probed_traps < 0 ? probe_traps() : probed_traps ? 0 : -EOPNOTSUPP;
	if (rc < 0)
		return rc;
	if (want_sigtrap && probed_sigtrap < 0)
		probed_sigtrap = sigtrap_opens();
	use_sigtrap = want_sigtrap && probed_sigtrap == 1;
	return 0;
}

int watchpoint_quiet_open(int *fd)
{
	static uint64_t untouched;
	int rc = counting_open((uint64_t)(uintptr_t)&untouched, 1);
	if (rc < 0)
		return rc;
	*fd = rc;
	return 0;
}

int watchpoint_quiet_arm(void *ctx, int on)
{
	int fd = *(const int *)ctx;
	if (ioctl(fd, on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0) < 0)
		return -errno;
	return 0;
}

void watchpoint_quiet_close(int fd)
{
	fdguard_close(fd);
}

double watchpoint_hit_ns(void)
{
	return hit_ns;
}
