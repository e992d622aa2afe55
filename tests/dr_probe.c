/* dr_probe: exit 0 if this machine delivers hardware watchpoint traps, 77
 * (ctest's skip) if a breakpoint opens but never traps, 1 if none opens.
 * The runtime asks the same question at startup (watchpoint_probe) and
 * runs unprofiled where the answer is no; tests that need traps ask first
 * (needs_traps.sh) and report skipped there, not failed or passed, and the
 * test of that fallback runs only there (needs_traps.sh --without). */
#include "witch/watchpoint.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	int rc = watchpoint_probe(0);
	if (rc == 0)
		return 0;
	if (rc == -EOPNOTSUPP) {
		printf("hardware watchpoints do not trigger on this machine "
		       "(a breakpoint opens and counts no store)\n");
		return 77;
	}
	printf("cannot open a hardware breakpoint: %s\n", strerror(-rc));
	return 1;
}
