/* stack_case: watchpoints on a dead stack frame (Witch 4.5, Figure 4.3).
 *
 *   driver(), repeated C times (one "cycle", ~0.75 ms):
 *     deep(v):    volatile uint32_t local[ND];    ND = 4096 (16 KiB of stack)
 *                 PD = 8 passes: for j < ND: 4 LCG steps; local[j] = v
 *                 return                          (~150 us; the frame is dead now)
 *     shallow(g): PS = 8 passes: for j < NS: old = g[j]; 1 LCG step; g[j] = v + old
 *                 NS = 65536, g global (256 KiB)  (~600 us)
 *                 shallow is a leaf that uses no stack below its return
 *                 address: nothing it runs touches deep's old frame.
 *   at the end:   scrub() stores over deep's old frame once (see below).
 *
 * Stack geometry: deep and shallow are called from the same driver frame
 * (rsp = D at the call).  deep's local[] lies in [D - 0x4010, D - 0x10)
 * (objdump: `sub $0x3f90,%rsp`, stores at -0x78(%rsp,j,4)).  While shallow
 * runs, rsp = D - 8 and the red zone protects only [D - 136, D - 8), so a
 * signal frame (~3.5 KiB with AVX-512 state) and below it a signal handler's
 * own frames, if they were put on the program stack while shallow runs,
 * would land on local[] -- and the handler's writes to a watched slot would
 * be spurious traps attributed to the handler (a libwitch.so frame) or, if
 * the trap signal were deferred, to shallow.  The runtime handles its
 * signals on a sigaltstack, so that must never happen.  (The kernel's own
 * writes of a signal frame do not trigger a user-space watchpoint.)
 *
 * Why passes and those lengths: the sampler ticks every 1/WITCH_RATE s of
 * CPU time (500 us at 2000/s), periodically.  A slot written in deep's last
 * pass stays watched until the next cycle's deep (~600 us of shallow later),
 * so the tick after such a sample comes while shallow runs and the slot is
 * armed -- the Figure 4.3(b) moment, together with that tick's single steps
 * and the traps of shallow's own watchpoints.  A shorter shallow phase would
 * let every deep watchpoint trap before the next tick and test nothing.
 * About 1 in PD deep samples is in the last pass: ~25 such moments per run.
 *
 * DeadSpy definitions (a store is dead iff the next access to the same bytes
 * is a store):
 *   - deep's store to local[j] in pass p < PD-1: next access is pass p+1's
 *     store to local[j] -> dead.  In the last pass: next access is the next
 *     cycle's deep store to the same address (deep is always called from the
 *     same frame) -> dead.  All waste, pair <deep, deep>.
 *   - shallow's store to g[j]: next access is the load of g[j] in the next
 *     pass (or the next cycle's first pass) -> used.  Use, <shallow, shallow>.
 *   - the call instructions push a return address that ret reads -> used,
 *     negligible weight.
 *   - at the very end driver calls scrub(), which stores over all of deep's
 *     old frame once: the last cycle's deep stores are killed there (pair
 *     <deep, scrub>, dead, legitimate, weight ~ one sample), so no deep
 *     watchpoint is still armed when printf/exit reuse that stack.
 *   Expected pairs: waste in <deep, deep> (share ~1.0, top pair), at most a
 *   trace in <deep, scrub>; no pair with watch deep and trap anything but
 *   deep or scrub; no trap path through libwitch.so.
 *
 * Expected fraction: the byte answer.  Per cycle: PD*ND = 32768 dead stores,
 * PS*NS = 524288 used stores, all 4 bytes: 32768/557056 = 0.059 (+-0.03).
 * Time is not bytes here, on purpose: deep spends 4 LCG steps (~16 cycles)
 * per store, shallow 1 (~4), so t_deep : t_shallow = 1 : 4 and a sampler
 * that weighed samples by CPU time would report t_deep / (t_deep + t_shallow)
 * = 0.2 (--phase-times measures 0.18 natively: deep 4.4 ns and shallow 1.2 ns
 * per store).  The software sampler weighs each tick by the bytes its window
 * stores per modelled cycle (look.h), which turns time back into counts.  The
 * longest store-free stretch is deep's 4 LCG steps, ~17 instructions: a
 * single-step budget must cover that much.
 *
 * Build: -O2 -g -fno-inline -fno-tree-vectorize -fno-stack-protector
 * -Wl,-z,now (no lazy binding: ld.so would store on the stack too)
 * -fno-stack-clash-protection (no canary store or stack probe in deep's
 * frame; objdump: deep has only `sub $0x3f90,%rsp` and the slot stores,
 * shallow touches no stack, driver calls scrub (not a tail call)).
 *
 * Usage: stack_case [CYCLES] [--phase-times]     default CYCLES = 700 (~0.5 s)
 * (--phase-times calls clock_gettime between phases, whose frames do touch
 * deep's old region: a diagnostic mode, not for profiled runs.)
 */
#include "ka.h"

#define ND 4096u
#define PD 8
#define DEEP_STEPS 4
#define NS 65536u
#define PS 8

static uint32_t g[NS];

KA_FN uint64_t deep(uint64_t v)
{
	volatile uint32_t local[ND];

	(void)local; /* written only: that is the point */
	for (int p = 0; p < PD; p++) {
		for (uint32_t j = 0; j < ND; j++) {
			for (int s = 0; s < DEEP_STEPS; s++)
				KA_LCG_OPAQUE(v);
			local[j] = KA_HI(v);
		}
	}
	return v;
}

KA_FN uint64_t shallow(uint32_t *p, uint64_t v)
{
	for (int pass = 0; pass < PS; pass++) {
		for (uint32_t j = 0; j < NS; j++) {
			uint32_t old = KA_LOAD(p, j);
			KA_LCG_OPAQUE(v);
			p[j] = KA_HI(v) + old;
		}
	}
	return v;
}

/* End of the run: reuse deep's stack region once more, storing every slot,
 * so that the last cycle's deep slots are killed here (pair <deep, scrub>,
 * dead, legitimate) rather than by printf's or exit's stack frames in libc.
 * Its array is 1 KiB larger than deep's so it covers deep's region whatever
 * the exact frame layout. */
KA_FN uint64_t scrub(uint64_t v)
{
	volatile uint32_t local[ND + 256];

	(void)local;
	for (uint32_t j = 0; j < ND + 256; j++)
		local[j] = (uint32_t)v + j;
	return v;
}

static double t_deep, t_shallow;

KA_FN uint64_t driver(long cycles, uint64_t v, int times)
{
	double t0 = 0;

	for (long c = 0; c < cycles; c++) {
		if (times) t0 = ka_now();
		v = deep(v);
		if (times) { t_deep += ka_now() - t0; t0 = ka_now(); }
		v = shallow(g, v);
		if (times) t_shallow += ka_now() - t0;
	}
	v = scrub(v);
	__asm__("" : "+r"(v)); /* no tail call: scrub runs at deep's depth */
	return v;
}

int main(int argc, char **argv)
{
	long cycles = ka_reps(argc, argv, 700);
	int times = ka_want_times(argc, argv);
	uint64_t v = driver(cycles, 1, times);

	printf("stack_case cycles=%ld checksum=%016llx\n", cycles,
	       (unsigned long long)v);
	if (times)
		fprintf(stderr, "cpu s: deep %.3f shallow %.3f -> expected fraction %.3f\n",
			t_deep, t_shallow, t_deep / (t_deep + t_shallow));
	return 0;
}
