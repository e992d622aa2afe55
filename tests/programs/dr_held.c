/* dr_held: dead_two_loops' work while two of the main thread's four debug
 * registers are held by someone else (dr_grab.c, as a debugger would).
 * The runtime uses the other two and says so once; proportional
 * attribution (Witch 4.4.2) keeps the answer: fraction 0.5, top pair
 * <fill, overwrite> (derivation in dead_two_loops.c).
 */
#include "ka.h"

#define N (8u << 20)

extern int dr_grab_fds[2];

#include "dead_loops.h"

int main(void)
{
	uint32_t *a = ka_alloc((size_t)N * sizeof(*a));
	uint64_t total = 0;
	for (int r = 0; r < 8; r++) {
		fill(a, 2 * (uint64_t)r + 1);
		overwrite(a, 2 * (uint64_t)r + 2);
		total += sum(a);
	}
	printf("dr_held: registers held %s, checksum=%016llx\n",
	       dr_grab_fds[0] >= 0 && dr_grab_fds[1] >= 0 ? "yes" : "no",
	       (unsigned long long)total);
	return 0;
}
