/* dr_full_thread: a thread that takes all four of its debug registers for
 * itself (its own breakpoints, as a debugger's or a program's own
 * watchpoints would), then spends 200 ms of CPU time in stores.
 *
 * Its breakpoint events open at its first sample to arm (thread.h), and
 * none is left: that open fails (stat watchpoint_open_errors 1), and the
 * thread runs unprofiled from then on, as a thread whose events could not
 * open at its start did.  At WITCH_RATE=1000 it would otherwise take ~200
 * ticks, each a sample no watchpoint can take; stopped, it takes the tick
 * that failed and perhaps one more (main spends well under a millisecond:
 * 0-1).  run_lazy_watchpoints.sh checks `stat ticks` <= 5.
 *
 * Prints "dr_full_thread: held N" (N of the 4 it asked for; the check
 * needs 4).
 */
#include "ka.h"
#include "dr_hold.h"

#include <pthread.h>

static volatile uint64_t held_words[4];
static uint64_t buf[1024];

static void *worker(void *arg)
{
	int fds[4], held = 0;
	for (int i = 0; i < 4; i++) {
		fds[i] = dr_hold(&held_words[i]);
		held += fds[i] >= 0;
	}
	ka_spend_ms(200, buf);
	for (int i = 0; i < 4; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	*(int *)arg = held;
	return NULL;
}

int main(void)
{
	pthread_t t;
	int held = -1;
	if (pthread_create(&t, NULL, worker, &held) != 0)
		return 2;
	pthread_join(t, NULL);
	printf("dr_full_thread: held %d\n", held);
	return 0;
}
