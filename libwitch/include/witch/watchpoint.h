/* watchpoint: one thread's hardware data breakpoints (perf_event breakpoints).
 *
 * Everything but open/close is async-signal-safe (syscalls only).
 */
#ifndef WITCH_WATCHPOINT_H
#define WITCH_WATCHPOINT_H

#include <stdint.h>
#include <signal.h>
#include <sys/types.h>

#define WATCHPOINT_MAX 4
#define WATCHPOINT_W 1
#define WATCHPOINT_RW 2
#define WATCHPOINT_VALUE_MAX 64

/* What the runtime and its client keep with an armed watchpoint: taken
 * whole from the sample that arms it (sample.c). */
struct watch_owner {
	uint32_t ctx;           /* C_watch node in the thread's calling context tree */
	uint32_t obj;           /* the object the sampled bytes were in (objects.h), 0 unknown */
	uint64_t sample_pc;     /* the sampled instruction */
	uint64_t sample_addr;   /* the sampled access, possibly wider than the watched range */
	uint32_t sample_len;
	uint8_t sample_elem;    /* enum decode_elem */
	uint8_t pending_self;   /* the sampled instruction's own trap and earlier runs of
				 * it still to come (0: it has run) */
	uint8_t checking;       /* the first trap should be the own one: count it in
				 * predict_ok or predict_miss (sample.c) */
	uint8_t value_predicted; /* checking, and value holds what the run ahead
				  * said the own access stores or loads: count
				  * it in predict_value_ok or predict_value_miss */
	uint16_t early;         /* other accesses that trapped before the own one */
	uint64_t last_trap_hash; /* the program's registers at the last trap */
	uint64_t armed_tick;    /* the thread's tick count when armed (drcost.h) */
	/* The client's copy of the location: value_len bytes from value_addr
	 * (the sampled access, or just the watched range if the rest cannot
	 * be read).  value: as the sampled access left it (or found it, for a
	 * load); shadow: as it is now, as far as the traps tell (LoadCraft). */
	uint8_t value_len;
	uint64_t value_addr;
	uint8_t value[WATCHPOINT_VALUE_MAX];
	uint8_t shadow[WATCHPOINT_VALUE_MAX];
};

struct watchpoint {
	int fd;
	int armed;
	int type;
	uint32_t pass;          /* hits the kernel lets by before it signals (period - 1) */
	int count_whole;        /* the kernel's count of the period starts whole
				 * (watchpoint_disarm_signalled): no PERIOD ioctl
				 * to re-arm with the same pass */
	uint64_t count_at_arm;  /* the kernel's count of hits as it was armed with a pass */
	uint64_t addr;          /* watched range */
	uint32_t len;
	struct watch_owner own; /* what the runtime and its client keep with it */
};

struct watchpoint_set {
	struct watchpoint wp[WATCHPOINT_MAX];
	int n;
	int sig;
	pid_t tid;
	int slow_rearm;     /* close+reopen instead of MODIFY_ATTRIBUTES */
	int queued;         /* traps as `sig` even where SIGTRAPs are used
			     * (watchpoint_set_queue_traps) */
	uint64_t parking_addr;
	uint64_t rearm_fast, rearm_slow, arm_errors;
	uint64_t period_sets;   /* PERIOD ioctls (each a debug-register write) */
	uint64_t arm_enabled;   /* over fast re-arms: the slots enabled then, this one
				 * included: the kernel takes out and puts back each
				 * (ctx_resched), two or three debug-register writes a slot */
};

/* Open up to `want` (0 = as many as the hardware has) breakpoint events for
 * thread tid, disabled and parked on parking_addr, each raising signal `sig`
 * on that thread when it fires.  Returns how many it got (the debug registers
 * the kernel would give; 4 on x86, fewer when a debugger holds some), or a
 * negative errno when none. */
int watchpoint_set_open(struct watchpoint_set *s, uint32_t want, int sig, pid_t tid,
			int slow_rearm, uint64_t parking_addr);
/* The same in two steps: the set made empty for thread tid (nothing
 * opened), then its events opened, as many as watchpoint_set_open's
 * `want` (the count, or a negative errno when none).  For a set opened at
 * its thread's first arm, from a handler (thread.h). */
void watchpoint_set_init(struct watchpoint_set *s, int sig, pid_t tid, int slow_rearm,
			 uint64_t parking_addr);
int watchpoint_set_fill(struct watchpoint_set *s, uint32_t want);
/* Watch [addr, addr+len) (len 1, 2, 4 or 8, aligned) for type WATCHPOINT_W or
 * WATCHPOINT_RW.  Re-arms in one ioctl (PERF_EVENT_IOC_MODIFY_ATTRIBUTES,
 * Linux 4.17+), else close+reopen. */
int watchpoint_arm(struct watchpoint_set *s, int slot, uint64_t addr, uint32_t len, int type);
/* The same, but the first `pass` hits go by in the kernel (a #DB each, no
 * signal: about half a signal round trip): the perf event's period is
 * pass + 1 until the first signal, every hit after it
 * (watchpoint_signal_each).  For hits known to come before the access of
 * interest (look.h's trace). */
int watchpoint_arm_after(struct watchpoint_set *s, int slot, uint64_t addr, uint32_t len,
			 int type, uint32_t pass);
/* Of a slot armed with hits to pass: whether its period ran out at the
 * hit just taken, which a SIGTRAP of another slot on the same instruction
 * hides (the kernel keeps one).  1: it did (its hits since the arm are
 * pass + 1); 0: not yet; -EOVERFLOW: at an earlier hit, its signal lost
 * then; or a negative errno from the read.  One read(2). */
int watchpoint_period_ran_out(const struct watchpoint_set *s, int slot);
/* After a signal of a watchpoint armed with hits to pass: signal every hit
 * from now on (the kernel would wait a whole period again). */
int watchpoint_signal_each(struct watchpoint_set *s, int slot);
int watchpoint_disarm(struct watchpoint_set *s, int slot);
/* Disarm a slot whose event has just signalled, before any further hit:
 * the kernel reloaded its count at the signal, so re-arming it with the
 * same pass skips the PERIOD ioctl (a debug-register write, ~3 us when it
 * is a handler run's first: bench/bp_ioctl_cost.c). */
int watchpoint_disarm_signalled(struct watchpoint_set *s, int slot);
/* Disables the watchpoint, keeping its state. */
int watchpoint_pause(struct watchpoint_set *s, int slot);
int watchpoint_resume(struct watchpoint_set *s, int slot);
/* Bit i set when slot i is armed. */
uint32_t watchpoint_set_armed(const struct watchpoint_set *s);
/* 1 when an armed slot's range meets [addr, addr + len). */
int watchpoint_set_overlaps(const struct watchpoint_set *s, uint64_t addr, uint32_t len);
/* 1 on a machine where a single step over an access to a watched word
 * never ends: under QEMU's software emulation (TCG, whose CPUID hypervisor
 * signature is "TCGTCGTCGTCG") the kernel's #DB handler runs round and
 * round (QEMU 7.2 and 10.0: tools/tcg/dr_quirks.c); a real x86 reports
 * the step's trap and the watchpoint's together.  Read from the CPU once
 * (watchpoint_probe asks first, outside any handler), then a load. */
int watchpoint_step_over_hangs(void);
int watchpoint_slot_of_fd(const struct watchpoint_set *s, int fd);
/* The slot a SIGTRAP of ours stands for (TRAP_PERF, its sig_data tagged
 * with the slot), or -1: another SIGTRAP (a single step, the program's). */
int watchpoint_slot_of_trap(const struct watchpoint_set *s, const siginfo_t *si);
/* Whether si is a perf SIGTRAP of one of the runtime's watchpoints, any
 * thread's (its sig_data tag), whether or not a set still holds it. */
int watchpoint_trap_is_ours(const siginfo_t *si);
/* Whether a perf SIGTRAP came late: the thread blocked SIGTRAP when the
 * watchpoint fired (the kernel's TRAP_PERF_FLAG_ASYNC), so the context it
 * interrupts is not the access's. */
int watchpoint_trap_is_async(const siginfo_t *si);
/* 1 once any set has had a slot open in this process: from then on a debug
 * exception here may be the runtime's. */
int watchpoint_any_open(void);
/* 1 when the set's traps come as SIGTRAPs (watchpoint_probe chose them,
 * and watchpoint_set_queue_traps did not undo it), 0 when as its signal. */
int watchpoint_set_uses_sigtrap(const struct watchpoint_set *s);
/* From now on the set's traps come as its signal, queued through the fd,
 * not as perf SIGTRAPs: for a thread that blocks SIGTRAP.  A perf SIGTRAP
 * the thread blocks waits, and its breakpoint stays armed meanwhile, a #DB
 * at every hit with no handler to disarm it (xz -T2's workers start with
 * every signal blocked: 42x native, 2026-12-07).  Closes and reopens the
 * set's events, disabled: nothing stays armed (release the slots' samples
 * first).  Opened events are reopened; an empty set opens queued later.
 * 0, or -errno (the set is then empty). */
int watchpoint_set_queue_traps(struct watchpoint_set *s);
/* Close the highest slot, giving its debug register back to the kernel (for
 * the program).  0, or -ENOSPC when none is left. */
int watchpoint_set_shrink(struct watchpoint_set *s);
void watchpoint_set_close(struct watchpoint_set *s);
/* A fork child's copy of its parent thread's set: its descriptors closed
 * (the events watch the parent's thread), s untouched. */
void watchpoint_set_close_inherited(const struct watchpoint_set *s);
/* Whether this machine delivers debug-register traps: a counting write
 * breakpoint on a word of the calling thread sees one store to it.  0 if it
 * does; -EOPNOTSUPP if the breakpoint opens but counts nothing (some
 * hypervisors, Firecracker's among them, drop guests' debug-register
 * traps: gdb's hardware watchpoints stay silent there too); another
 * -errno if it cannot be opened.  One #DB round trip, at startup.
 * want_sigtrap: from then on the sets' traps come as perf SIGTRAPs
 * (attr.sigtrap, si_code TRAP_PERF, the slot in sig_data) where the kernel
 * opens them and is 5.18 or later (a SIGTRAP the thread blocks then waits;
 * before, the kernel forced it and a blocked one killed the process).  The
 * kernel raises those on the way back to the program, not from an
 * interrupt to itself: half the round trip here (bench/trap_trip.c).  They
 * do not queue: see handler.c's trap_siblings. */
int watchpoint_probe(int want_sigtrap);
/* What one hit the kernel lets by costs the thread (ns of CPU time), as
 * watchpoint_probe measured it (a guess before). */
double watchpoint_hit_ns(void);
/* What watchpoint_probe found, for the processes this one starts
 * (probes.h): 0 and *traps (1: they trap, 0: never), *sigtrap (1: SIGTRAP
 * breakpoints open, 0: not, -1: not asked), *hit_ns; -ENOENT where it did
 * not run or could not open a breakpoint. */
int watchpoint_probe_get(int *traps, int *sigtrap, double *hit_ns);
/* A parent's answers on this machine instead: watchpoint_probe then opens
 * nothing and takes no trap (two perf_event_opens and five #DB round trips,
 * ~0.15 ms of every process's start on a VM whose debug registers trap),
 * and asks about SIGTRAP itself only where the parent did not.  0, or
 * -EINVAL (out of range: nothing set). */
int watchpoint_probe_set(int traps, int sigtrap, double hit_ns);
/* 1 when watchpoint_probe_set said breakpoints open and trap here: a
 * parent process on this machine opened them. */
int watchpoint_probe_handed_traps(void);
/* 1 when watchpoint_probe_set said they never trap here: a process of
 * this tree found so, and said so (probes_hand_down_no_traps). */
int watchpoint_probe_handed_no_traps(void);
/* A breakpoint of the calling thread's on a word nothing touches, counting
 * only (no signal), opened disabled: what drcost_price arms in the
 * constructor, before any thread's set is open.  0 and *fd, or -errno. */
int watchpoint_quiet_open(int *fd);
/* drcost_price's arm for it: ctx points at the fd; on 1 enables it (DR7
 * set, nothing ever hits), 0 disables it.  0 or -errno. */
int watchpoint_quiet_arm(void *ctx, int on);
void watchpoint_quiet_close(int fd);
/* The x86-legal range to watch for an access [addr, addr+len): the largest
 * aligned 8/4/2/1-byte part that starts at addr. */
void watchpoint_align(uint64_t addr, uint32_t len, uint64_t *waddr, uint32_t *wlen);
/* The range to watch for a sample of the access [addr, addr+len): the
 * largest aligned 8/4/2/1-byte piece inside the access around its byte
 * addr + random % len (of its first WATCHPOINT_VALUE_MAX bytes, the ones a
 * client remembers).  Each byte equally likely: a wide store (16-64 bytes
 * of a vector register) is judged by a word drawn uniformly, not always
 * by its first, whose fate may differ from the others'. */
void watchpoint_pick_word(uint64_t addr, uint32_t len, uint64_t random, uint64_t *waddr,
			  uint32_t *wlen);

#endif
