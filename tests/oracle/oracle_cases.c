/* oracle_cases: one exact case per path of the oracle's instrumentation
 * (tools/oracle), each in its own noinline function on its own data, N
 * times.  check_cases.py holds the expected byte counts; derived here:
 *
 * vec_dead     two 16-byte SSE stores to v16, no load between, N times:
 *              every store but the very last is killed by the next
 *              (pre/post path for V128):     dead <vec_dead, vec_dead>
 *              waste = (2N - 1) * 16, use 0.
 * cas_fail     compare-and-swap on cw (= 5) expecting 7: never stores.
 *              load: N loads of 5, the first has no previous load:
 *              <cas_fail, cas_fail> waste = (N - 1) * 8, use 0;
 *              silent: no pair traps in cas_fail (the CAS guard).
 * fp_nudge     fd[i] *= 1.0001 for 8 doubles (movsd/mulpd: F64), N times:
 *              each store within 0.01% of the last: silent
 *              <fp_nudge, fp_nudge> waste = approx = (N - 1) * 64, use 0
 *              (the first store of each element follows no store).
 * counter_inc  ++cnt on a 64-bit volatile counter, N times: silent sees a
 *              changed 8-byte value each time, never 7 silent bytes:
 *              <counter_inc, counter_inc> waste 0, use = (N - 1) * 8.
 * after_jump   after a longjmp out of a recursion 50 deep, two stores to
 *              aj per call (the first dead), called N times from main:
 *              dead <after_jump, after_jump> waste = (2N - 1) * 8, and
 *              the trap context's caller is main (the shadow stack healed
 *              at longjmp's indirect jump).
 */
#include <emmintrin.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>

#define N 1000

__m128i v16; /* global and printed: the stores must stay */
static uint64_t cw = 5;
static double fd[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static volatile uint64_t cnt;
static volatile uint64_t aj;
static jmp_buf jb;

__attribute__((noinline)) static void vec_dead(int i)
{
	_mm_storeu_si128(&v16, _mm_set1_epi32(i));
	__asm__ volatile("" ::: "memory"); /* keep the first store */
	_mm_storeu_si128(&v16, _mm_set1_epi32(i + 1));
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static int cas_fail(void)
{
	uint64_t expected = 7;
	return __atomic_compare_exchange_n(&cw, &expected, 5, 0, __ATOMIC_SEQ_CST,
					   __ATOMIC_SEQ_CST);
}

/* Scalar on purpose: a vectorized loop stores the doubles with movaps,
 * which Zydis (and so both libwitch and the oracle) types as floats. */
__attribute__((noinline, optimize("no-tree-vectorize"))) static void fp_nudge(void)
{
	for (int i = 0; i < 8; i++)
		fd[i] *= 1.0001;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void counter_inc(void)
{
	++cnt;
}

/* It recurses until depth 0 and longjmps out, which gcc cannot see. */
#pragma GCC diagnostic ignored "-Winfinite-recursion"
__attribute__((noinline)) static void thrower(int depth)
{
	if (depth == 0)
		longjmp(jb, 1);
	thrower(depth - 1);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) static void after_jump(uint64_t v)
{
	aj = v;
	aj = v + 1;
}

int main(void)
{
	static volatile int swapped; /* live across setjmp */
	for (int i = 0; i < N; i++) {
		vec_dead(i);
		swapped += cas_fail();
		fp_nudge();
		counter_inc();
		if (setjmp(jb) == 0)
			thrower(50);
		after_jump((uint64_t)i);
	}
	printf("oracle_cases: swapped=%d cnt=%llu fd0=%.4f v16=%d\n", swapped,
	       (unsigned long long)cnt, fd[0], _mm_cvtsi128_si32(v16));
	return 0;
}
