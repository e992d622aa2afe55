/* tls_words: a loop over malloc/free, whose glibc code reads errno and the
 * stack canary (%fs:0x28) on every call: words in the thread's TLS that
 * the runtime's own handler reads too (errno saved and restored, the canary
 * checked by every -fstack-protector function in libc, libunwind, Zydis).
 * Under WITCH_CLIENT=load such a sample used to make every handler run trap
 * on itself; the real-time signal queue filled (SigQ 92192/96365 seen) and
 * the kernel fell back to plain SIGIO, which killed the program (found by
 * bench/real_programs.sh on sqlite3 and cc1).  run_same_status.sh checks
 * that it now ends as natively.
 *
 * Usage: tls_words [ITERATIONS]      default 30000000 (~0.3 s)
 */
#include <stdio.h>
#include <stdlib.h>

static void *(*volatile alloc_fn)(size_t) = malloc;
static void (*volatile free_fn)(void *) = free;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 30000000;
	unsigned long sum = 0;
	for (long i = 0; i < n; i++) {
		char *p = alloc_fn(32);
		p[0] = (char)i;
		sum += (unsigned char)p[0];
		free_fn(p);
	}
	printf("tls_words n=%ld sum=%lu\n", n, sum);
	return 0;
}
