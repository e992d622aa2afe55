/* load_tls_repro.c: WITCH_CLIENT=load kills a malloc/free loop with SIGIO
 * (found by bench/real_programs.sh: sqlite3 and gcc's cc1 die the same way).
 *
 *   cc -O2 -o load_tls_repro bench/real/load_tls_repro.c
 *   for s in 1 2 3 4 5; do LD_PRELOAD=build/libwitch.so WITCH_CLIENT=load \
 *       WITCH_SEED=$s ./load_tls_repro 100000000; echo "rc=$?"; done
 *
 * Natively it prints 12750000000 and exits 0 (~0.8 s).  On our VM, 4 of 5
 * seeds end with "I/O possible" (exit 157 = 128 + SIGIO).  glibc's free()
 * loads errno (a TLS word) on every call; so do -fstack-protector functions
 * with the canary at %fs:0x28 (sqlite3: `mov %fs:0x28,%rax`).  When such a
 * word is sampled and watched read-write, the runtime's signal handler
 * touches it too (errno saved/restored, canary checked in libunwind/Zydis),
 * which traps again: the program stops at one pc, every tick samples the
 * same address, the real-time signal queue fills (SigQ 92192/96365 seen),
 * and the kernel falls back from the F_SETSIG signal to plain SIGIO, whose
 * default action ends the process.
 */
#include <stdio.h>
#include <stdlib.h>

static void *(*volatile alloc)(size_t) = malloc;
static void (*volatile release)(void *) = free;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000;
	unsigned long sum = 0;
	for (long i = 0; i < n; i++) {
		char *p = alloc(32);
		p[0] = (char)i;
		sum += (unsigned char)p[0];
		release(p);
	}
	printf("%lu\n", sum);
	return 0;
}
