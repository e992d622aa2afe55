/* dr_grab: a library that takes two debug registers of the main thread in
 * its constructor, before the runtime's runs, and keeps them: what a
 * debugger's breakpoints look like to the runtime (issue 6).  Linked into
 * dr_held.c. */
#include "dr_hold.h"

static volatile uint64_t dr_grab_held[2];
int dr_grab_fds[2] = {-1, -1};

__attribute__((constructor)) static void dr_grab_take(void)
{
	for (int i = 0; i < 2; i++)
		dr_grab_fds[i] = dr_hold(&dr_grab_held[i]);
}
