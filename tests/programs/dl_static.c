/* dl_static: a single-threaded program's dlopen'd library has its data
 * named (issue 15).
 *
 *   dl_static LIBRARY    dlopen LIBRARY (dlstatic.c); wait 0.3 s; malloc
 *                        and free 64 blocks of 64 KiB; run its
 *                        dead_two_loops work on its static dl_table
 *                        (4 repetitions).
 *
 * A program without threads has no flusher thread (flush.h) to refresh the
 * runtime's index of data symbols after a dlopen: its own tracked
 * allocations do (heap.h's growth hook, every 16th tracked block, at most
 * every 250 ms: datasym_refresh_due).  The wait puts the allocations past
 * that interval from any walk before the dlopen; 64 blocks of 64 KiB
 * (tracked: 16 KiB or more) call the hook 4 times.
 *
 * Answer: dead_two_loops' (fraction 0.5, top pair <fill, overwrite>,
 * derived in dead_two_loops.c), and all of the waste is fill's stores into
 * dl_table: object dl_table, kind static, share 1.0.  Left unnamed (no
 * refresh), its bytes would be "static in libdlstatic.so" or unknown.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
		return 2;
	}
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dl_static: %s\n", dlerror());
		return 2;
	}
	uint64_t (*run)(int) = (uint64_t (*)(int))dlsym(h, "dlstatic_run");
	if (!run)
		return 2;
	struct timespec wait = {0, 300000000};
	nanosleep(&wait, NULL);
	for (int k = 0; k < 64; k++) {
		volatile char *p = malloc(64 << 10);
		if (!p)
			return 3;
		p[0] = (char)k;
		free((void *)p);
	}
	printf("dl_static checksum=%016llx\n", (unsigned long long)run(4));
	return 0;
}
