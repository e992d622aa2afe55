/* dr_grab: a library that takes two debug registers of the main thread in
 * its constructor, before the runtime's runs, and keeps them: what a
 * debugger's breakpoints look like to the runtime (issue 6).  Linked into
 * dr_held.c. */
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile uint64_t dr_grab_held[2];
int dr_grab_fds[2] = {-1, -1};

__attribute__((constructor)) static void dr_grab_take(void)
{
	for (int i = 0; i < 2; i++) {
		struct perf_event_attr a;
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_BREAKPOINT;
		a.bp_type = HW_BREAKPOINT_W;
		a.bp_addr = (uintptr_t)&dr_grab_held[i];
		a.bp_len = HW_BREAKPOINT_LEN_8;
		a.sample_period = 1;
		a.exclude_kernel = 1;
		dr_grab_fds[i] = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	}
}
