/* faultlog: whether a tick's time fell in a page fault.
 *
 * A clock tick whose time runs out while the thread is in a page fault
 * (the kernel zeroing a fresh page, and on a VM the host behind it) is not
 * raised there: it arrives as the fault returns, at the instruction that
 * faulted.  The window that runs from there weighs ordinary code's bytes
 * for time the thread spent in the kernel, so code that touches fresh
 * memory weighed several times its bytes (sqlite3: 3.3% of the ticks at
 * one store of _int_malloc's, the top chunk's size written into a new
 * page; its allocation path 3-9x its bytes; bench/results/memlat.md).
 *
 * Each thread keeps a perf software event on its own page faults, one
 * record (the faulting instruction) a fault, in a one-page ring the kernel
 * writes backward and overwrites: the newest record is always at its head,
 * whatever came before, and nothing needs reading between ticks.  A tick
 * at the instruction of the last fault since the previous tick, or at the
 * one after it (the fault's instruction ran again and retired first), is
 * taken to have arrived from it.  Such a tick stands for kernel time, no
 * bytes of the program's (handler.c: stat ticks_in_fault).  A tick that
 * came by chance to an instruction that faulted earlier in its interval is
 * taken so too: the user time of a loop over fresh pages is a small part
 * of its time next to its faults'.
 *
 * A record costs the faulting thread ~0.5 us on a fault of ~1.5 us, so a
 * loop over fresh pages paid a third more a fault: hashtab's log cost it
 * 32 ms in 2.1 s, twice the handler's 14 ms.  So the log thins itself
 * (faultlog_thin): where faults come faster than FAULTLOG_RECORDS_A_TICK
 * an interval, it records one every `period` faults (a power of 2, up to
 * FAULTLOG_PERIOD_MAX), so that about that many records still land
 * between ticks; a fault counted and not recorded costs ~50 ns.  What
 * the log answers is whether the tick's instruction faulted lately, and
 * code that faults that often faults at the same few instructions (a
 * loop's first touch of each page), which a record in 32 still names.
 * 8 KiB of locked memory a thread.  Where the event cannot be opened or mapped
 * (perf_event_paranoid, the locked-memory limit) faultlog_open fails and
 * the thread's ticks are taken as before.
 *
 * The log opens at the thread's first tick of perf's clock (handler.c,
 * tick_in_fault: a tick of the user-time timer never arrives from a
 * fault), not when the thread begins:
 * the first software page-fault event the kernel holds turns a static key
 * on, the last one's close turns it off, ~60 us each on this VM (text
 * patching), and most processes of a shell script or a build end before
 * their first tick (bench/results/startup.md).  That first tick cannot
 * have arrived from a logged fault: it is taken as before.
 */
#ifndef WITCH_FAULTLOG_H
#define WITCH_FAULTLOG_H

#include <stdint.h>
#include <sys/types.h>

struct faultlog {
	int fd;             /* -1: none (yet) */
	pid_t tid;          /* whose log the first tick opens; 0: none to open */
	void *map;          /* the header page, then the ring */
	uint64_t last_head; /* the ring's head at the last look */
	uint64_t counted_head; /* ... at the last faultlog_records_since */
	uint64_t period;       /* a record every this many faults (faultlog_thin) */
	uint32_t low_ticks;    /* ticks in a row that asked for a period 4x lower */
	double cost_ns, allowed_ns; /* its cost and the budget's, decayed a tick (faultlog_keep_within) */
	uint32_t budget_ticks;      /* ticks that fed them */
};

/* What a record costs the faulting thread's fault: 460-610 ns, median 485,
 * on a fault of ~1.5 us here (bench/faultlog_cost.c, 2026-12-07, 7 x 100k
 * fresh pages).  A fault the event counts and does not record: 26-78 ns
 * at one record in 64, 47-60 at one in 1024, in the runs the VM left
 * steady (faultlog_cost 300000 7 PERIOD).  The estimate and the budget
 * count both (stat cost_faultlog_ns: the tick that counts them takes them
 * off its interval and charges them to the thread's spending). */
#define FAULTLOG_RECORD_NS 500.0
#define FAULTLOG_COUNT_NS 50.0
/* What `records` taken for `faults` cost the program's faults. */
static inline double faultlog_cost_ns(uint64_t records, uint64_t faults)
{
	return (double)records * FAULTLOG_RECORD_NS +
	       (double)(faults > records ? faults - records : 0) * FAULTLOG_COUNT_NS;
}
/* Records wanted between two ticks, and the thinnest the log gets. */
#define FAULTLOG_RECORDS_A_TICK 32
#define FAULTLOG_PERIOD_MAX 4096
/* Ticks in a row a period must be 4x too high before it halves. */
#define FAULTLOG_DECAY_TICKS 8
/* Under a budget, a log that costs more than this share of what the
 * budget allows closes for good (faultlog_keep_within): both summed over
 * the thread's ticks, each tick's weighing 7/8 of the one after, from
 * the FAULTLOG_OVER_TICKS-th tick on (faults come in bursts): a thread that does little but fault (fresh
 * pages, ~1.5 us each) pays ~50 ns a fault even thinned, 3% of its
 * time, three times the default budget, and its ticks fell to the
 * budget's floor of 10 a second.  Closed, its ticks in faults are
 * weighed as ordinary code's again (fresh_pages' touch: 0.10 for 0.0005
 * by bytes); WITCH_BUDGET higher or WITCH_RATE keeps it. */
#define FAULTLOG_BUDGET_SHARE 0.5
#define FAULTLOG_OVER_TICKS 8

/* Thread tid's log, to be opened at its first tick: no system call. */
void faultlog_begin(struct faultlog *f, pid_t tid);
/* From the thread's tick: 1 and the instruction of the last page fault
 * since the previous call in *ip, else 0 (none, or no log); at the first
 * tick, 0, or -errno where the log could not be opened (then no log).
 * Async-signal-safe. */
int faultlog_since_tick(struct faultlog *f, uint64_t *ip);
/* The records the log took since the last call (one a fault; 0 while it
 * is not open): what the thread's faults paid for it.  Read off the ring's
 * head, no system call.  Async-signal-safe. */
uint64_t faultlog_records_since(struct faultlog *f);
/* From the tick, after faultlog_records_since gave `records`: the faults
 * they stand for (records x the period they were taken at) into *faults,
 * and the period set anew for the next interval: at once to the one that
 * would give FAULTLOG_RECORDS_A_TICK records where that is 4x higher,
 * halved where it has been 4x lower FAULTLOG_DECAY_TICKS ticks in a row
 * (one ioctl).  0, or -errno (the period is kept).  Async-signal-safe. */
int faultlog_thin(struct faultlog *f, uint64_t records, uint64_t *faults);
/* From the tick under a budget: the log's cost in the interval that
 * ended and what the budget allowed in it (ns).  1 if that closed the log
 * (FAULTLOG_BUDGET_SHARE), else 0.  Async-signal-safe. */
int faultlog_keep_within(struct faultlog *f, double cost_ns, double allowed_ns);
/* Open thread tid's log now.  0 or -errno (then f->fd is -1).
 * Async-signal-safe. */
int faultlog_open(struct faultlog *f, pid_t tid);
/* Close it (fd -1 or open). */
void faultlog_close(struct faultlog *f);
/* A fork child's copy of its parent thread's log: the descriptor only (the
 * ring's mapping was not copied), f untouched. */
void faultlog_close_inherited(const struct faultlog *f);

#endif
