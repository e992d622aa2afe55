/* call_ret: a loop whose only stores are the return addresses its calls push.
 *
 *   main: for i < ITERS: s += leaf(i)          (call pushes 8 bytes)
 *   leaf(i): return table[i & 63] + 1          (a load, then ret reads the slot)
 *
 * DeadSpy's definition: each pushed return address is next accessed by
 * leaf's ret, a load -> used.  The next call's push to the same slot comes
 * after that read.  So no store is dead: fraction 0 (startup's few dead
 * stores aside), and every decided pair is <main, main> use (the runtime
 * attributes ret's read to the return site).
 *
 * The regression this guards: a sampled call traps on the callee's first
 * instruction; when that trap was not recognised as the call's own, the
 * ret's read was taken for it and the next call's push counted as a kill,
 * making every call a dead store (fraction 1.0).
 *
 * Usage: call_ret [MILLIONS]     default 300 (~0.5 s)
 */
#include "ka.h"

static volatile int table[64];

KA_FN static int leaf(long i)
{
	return table[i & 63] + 1;
}

int main(int argc, char **argv)
{
	long millions = argc > 1 ? atol(argv[1]) : 300;
	if (millions <= 0) {
		fprintf(stderr, "usage: call_ret [MILLIONS]\n");
		return 2;
	}
	long s = 0;
	for (long i = 0; i < millions * 1000000; i++)
		s += leaf(i);
	printf("call_ret iters=%ldM sum=%ld\n", millions, s);
	return 0;
}
