/* dr_hold.h: a write breakpoint of the calling thread on one word, held as
 * a debugger's or the program's own would be (dr_grab.c, dr_full_thread.c):
 * its perf_event descriptor, or -1. */
#ifndef DR_HOLD_H
#define DR_HOLD_H

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline int dr_hold(volatile uint64_t *word)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.bp_type = HW_BREAKPOINT_W;
	a.bp_addr = (uintptr_t)word;
	a.bp_len = HW_BREAKPOINT_LEN_8;
	a.sample_period = 1;
	a.exclude_kernel = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

#endif
