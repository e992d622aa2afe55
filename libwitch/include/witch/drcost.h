/* drcost: what armed debug registers cost the program's own kernel work.
 *
 * While a data breakpoint is enabled in DR7 the CPU runs `rep movs/stos`
 * without its fast-string microcode, in the kernel too: copy_to_user and
 * copy_from_user (read, pread, write: 3.2x for 4 KiB, 8.4x for 64 KiB
 * here) and clear_page (the first touch of an anonymous page: 1.7x), with
 * the breakpoint on an unrelated word (bench/dr_fast_string.c).  Witch
 * keeps samples watched until their next access, so a program that reads
 * files in pages (sqlite3: 830,000 preads of 4 KiB) pays on every call
 * while a sample waits.  No handler sees it: it is the program's own
 * system time, slower.
 *
 * It is counted, not timed: between two handler runs the watchpoints stay
 * as the first left them, armed or all free, and what the program asked
 * of the kernel while they were armed is counted: bytes its read and
 * write calls moved (iocount.h) and page faults (getrusage, RUSAGE_THREAD:
 * minor faults; a raw call, and only where a stretch needs it: at the
 * entry that ends an armed one, at the exit that starts one; none after a
 * run that expects the program right back).  drcost_price measures once
 * what an armed breakpoint adds to a byte copied; a page's first touch,
 * the kernel's clear of 4 KiB, is priced as 4096 of them.  (The
 * thread's user and system times are no use here: the kernel charges
 * them by the 4 ms timer tick.)
 *
 * What the runtime does about it (handler.c):
 *  - the cost is part of what a tick costs, so WITCH_BUDGET's rate follows
 *    it (budget.h);
 *  - a sample that stayed watched through a whole tick interval and met no
 *    access is likely to stay so (a buffer the program is done with).
 *    While the recent cost (decayed by tick) is above the budget's share
 *    of the program's time, each tick lets such samples go, as the
 *    reservoir lets a replaced one go (their weight waits in mu, Witch
 *    4.4.2): stat watch_expired.  Samples armed at this tick keep their
 *    interval;
 *  - between ticks, the I/O that armed registers slow may cost at most
 *    DRCOST_IO_SHARE of what the budget allows an interval, counted from
 *    its tick: the read or write call that passes it lets every waiting
 *    sample go then (iocount's limit, drcost_io_limit; stat
 *    watch_expired_io).  At the tick alone that came too late: sqlite3's
 *    preads, 200 MB read armed in a run, cost it 5-15% under a 1% budget
 *    (bench/results/acceptance13_stop91.md).
 * Neither with a fixed WITCH_RATE (reproducible runs).
 */
#ifndef WITCH_DRCOST_H
#define WITCH_DRCOST_H

#include <stdint.h>

struct drcost {
	uint64_t bytes, faults;  /* the thread's counts when the stretch began */
	int state;               /* of the stretch: 0 free, 1 armed, -1 mixed or unknown */
	int skip_read;           /* the last run expects the program right back */
	int base_known;          /* bytes and faults are the stretch's start */
	double cost_since_tick;  /* ns, for the budget */
	double recent_cost, recent_ns; /* decayed at every tick: cost, program time */
	uint64_t ticks;          /* ticks so far: a sample armed at tick t < ticks is older */
};

/* What drcost_account adds to the profile's counters. */
struct drcost_sums {
	uint64_t bytes_armed;  /* bytes read and written with watchpoints armed */
	uint64_t faults_armed; /* page faults with watchpoints armed */
	uint64_t cost_ns;      /* what they cost, priced by drcost_init */
};

/* Where a process's prices came from (the profile's stats dr_priced_start,
 * dr_priced_tick, dr_priced_handed). */
enum drcost_source {
	DRCOST_DEFAULT = 0, /* never priced: this machine's guesses */
	DRCOST_AT_START,    /* measured in the constructor of the process that
			     * measures the machine (probes.h), then handed down */
	DRCOST_AT_TICK,     /* measured at the process's first tick that could */
	DRCOST_HANDED,      /* from the parent process's line (probes.h) */
};

/* Once a process tree: times 128 KiB of pipe copies with arm(ctx, 1) and
 * arm(ctx, 0), a watchpoint on a word nothing touches, ~0.2 ms.  The
 * process that measures the machine prices in its constructor (where:
 * DRCOST_AT_START), and its descendants take the
 * prices from it (drcost_price_set); one handed none prices at the first
 * tick of a thread with no watchpoint armed (DRCOST_AT_TICK: a process
 * that never ticks never pays).  0 or -errno (the prices then stay at
 * this machine's: 1.0 us a fault, 0.28 ns a byte).  Async-signal-safe. */
int drcost_price(int (*arm)(void *ctx, int on), void *ctx, enum drcost_source where);
/* A parent's prices instead (probes.h): 0, or -EINVAL out of range (a
 * fault 0-1 ms, a byte 0-1 us: nothing set). */
int drcost_price_set(double fault_ns, double byte_ns);
/* The prices measured here or handed down, for the processes this one
 * starts: 0, or -ENOENT where none was (or is still being) measured. */
int drcost_price_get(double *fault_ns, double *byte_ns);
enum drcost_source drcost_price_source(void);
/* Whether a thread has priced (or is pricing), or the prices were handed down. */
int drcost_priced(void);
/* In a fork child: prices the parent had are handed ones; a pricing a
 * parent's thread had begun is not going on here. */
void drcost_postfork_child(void);
/* The prices in use (ns). */
double drcost_fault_ns(void);
double drcost_byte_ns(void);
/* Whether the price found rep movs/stos as fast with a breakpoint armed as
 * without: Intel cores keep fast-string operation and report a breakpoint
 * after a group of iterations (1.0-1.35x, bench/results/
 * dr_fast_string_intel.md), AMD's give it up (16-27x). */
int drcost_armed_strings_fast(void);
/* A thread starts: no stretch yet. */
void drcost_begin(struct drcost *d);
/* At every handler entry: the stretch since the last exit goes to s
 * (counts read only when it was armed). */
void drcost_enter(struct drcost *d, struct drcost_sums *s);
/* At every handler exit: whether any watchpoint is armed now; soon: the
 * program is expected right back (no read at the next entry).  Counts
 * read when an armed stretch starts without them. */
void drcost_leave(struct drcost *d, int armed, int soon);
/* Where the counts come from: the thread's bytes moved and minor faults
 * (iocount.h, getrusage); a test's own instead.  0 or -errno. */
typedef int (*drcost_reader)(uint64_t *bytes, uint64_t *faults);
void drcost_set_reader(drcost_reader fn);
/* At a tick that stands for program_ns of the program's time: returns the
 * cost since the last tick (ns, for the budget). */
double drcost_tick(struct drcost *d, double program_ns);
/* Whether the recent cost is above budget (a share of the program's time):
 * samples armed before this tick are to go. */
int drcost_over(const struct drcost *d, double budget);

/* Of what the budget allows one interval, the share armed I/O may cost
 * before the waiting samples go: half, so a tick's handler and its
 * samples' I/O together stay within 1.5 budgets where the I/O is heavy,
 * and the controller's balance (budget.h) pays that back. */
#define DRCOST_IO_SHARE 0.5
/* The thread's I/O count (iocount_bytes) at which the armed stretch, with
 * what the stretches since the last tick cost, comes to allowance_ns; the
 * stretch's start when that is spent already.  UINT64_MAX: the stretch is
 * not an armed one that is counted, or bytes are free (no price). */
uint64_t drcost_io_limit(const struct drcost *d, double allowance_ns);

#endif
