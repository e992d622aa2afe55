/* dl_user: sampling while a library comes and goes (issue 6).
 *
 *   dl_user LIBRARY     twice: dlopen LIBRARY (dlwork.c), run its
 *                       dead_two_loops work (4 repetitions), dlclose it.
 *
 * All the stores are in the library, which is unloaded before exit, so
 * the profile's modules must include it for its pcs to map to fill and
 * overwrite: the answer is dead_two_loops' (fraction 0.5, top pair
 * <fill, overwrite>, derivation in dead_two_loops.c).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	uint64_t total = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: %s LIBRARY\n", argv[0]);
		return 2;
	}
	for (int round = 0; round < 2; round++) {
		void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "dl_user: %s\n", dlerror());
			return 2;
		}
		uint64_t (*run)(int) = (uint64_t (*)(int))dlsym(h, "dlwork_run");
		if (!run)
			return 2;
		total += run(4);
		if (dlclose(h) != 0)
			return 3;
	}
	printf("dl_user checksum=%016llx\n", (unsigned long long)total);
	return 0;
}
