/* costmodel: cycles of straight-line code from its instructions (see costmodel.h). */
#include "witch/costmodel.h"
#include "witch/median.h"
#include "witch/lockguard.h"
#include "witch/lbss.h"
#include "witch/log.h"
#include "witch/memlat.h"

#include <cpuid.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* A Zen-class core (the EPYC VMs this runs on; Intel's big cores are alike):
 * 3 loads, 2 stores and 32 stored bytes a cycle.  How many instructions
 * it dispatches a cycle is measured (measure_issue_width: 6 on an idle
 * Zen 4 and Golden Cove, 4 on Skylake; 3-6 on these VMs as the sibling
 * thread's load moves, so handlers re-measure it: costmodel_remeasure);
 * a compare or test and the conditional branch after it dispatch as one
 * (macro-fusion, both vendors). */
#define DEFAULT_ISSUE_WIDTH 4.0f
/* Integer ALU operations a cycle (4 ALUs on Zen 2-4 and Skylake, 5 on
 * Golden Cove): measured (measure_alu_rate), this until it is. */
#define DEFAULT_ALU_RATE 4.0f
#define LOADS_PER_CYCLE 3.0f
#define STORES_PER_CYCLE 2.0f
#define DEFAULT_STORE_BYTES_PER_CYCLE 32.0f /* one 32-byte store a cycle, until measured */
#define LOAD_LATENCY 4.0f        /* L1 hit, general register */
#define VLOAD_LATENCY 7.0f       /* L1 hit, vector register */
/* A rep string instruction with a debug register armed, without the
 * fast-string microcode: measured on this EPYC (a write breakpoint on an
 * unrelated word; rep stosb and stosq of 64 B to 64 KiB): ~70 cycles to
 * start, 0.84-0.86 a element. */
#define REP_ARMED_START_CYCLES 70.0f
#define REP_CYCLES_PER_ELEM 0.85f
/* A mispredicted branch: the front end starts again this many cycles after
 * the branch resolves.  Measured on this EPYC: a loop branching on random
 * bytes ran 21.6 cycles a miss more than on constant ones; less the byte's
 * load and compare the branch waited for. */
#define MISPREDICT_CYCLES 16.0f

/* Accesses a power-of-two stride of 1 KiB or more apart (a column of a
 * row-major array whose rows are 1, 2, 4 KiB...) fall in a few of L1's 64
 * sets and of L2's, and evict each other before they are used again: each
 * one a miss that no prefetcher hides, and a store's commits wait on them
 * in order.  Measured on this EPYC, 1020 accesses at a 4 KiB stride over
 * what was just written: a store 13 TSC ticks (6.3 ns), a load ~10 (4.8
 * ns); at 4160 B, a page apart but in other sets, 1.4-1.8, as at 64 B. */
#define CONFLICT_STRIDE_MIN 1024u
#define CONFLICT_STORE_NS 6.0f
#define CONFLICT_LOAD_NS 4.5f

/* Per mnemonic: result latency, cycles the unit is busy (not pipelined),
 * and what costmodel_add asks of the mnemonic alone, looked up once with
 * them rather than by a switch per instruction (MNEM_*). */
struct mnem_cost {
	uint8_t latency;
	uint8_t busy;
	uint8_t flags; /* MNEM_* */
	uint8_t known; /* classified (mnem_cost_of) */
};
#define MNEM_ALU 1u        /* an integer ALU operation, in registers */
#define MNEM_ALU_REG 2u    /* one only without a memory operand (movzx: else the load's) */
#define MNEM_FUSABLE 4u    /* fuses with a conditional branch after it */
/* Classified at first sight, in whatever thread or handler meets the
 * mnemonic (classify is string compares, async-signal-safe; two threads
 * write the same value): classifying all ~1900 at start cost every process
 * ~170 us. */
static struct mnem_cost mnem_cost[ZYDIS_MNEMONIC_MAX_VALUE + 1] WITCH_LBSS;
static double cycles_per_ns = 3.0;
static float issue_width = DEFAULT_ISSUE_WIDTH;
static float alu_rate = DEFAULT_ALU_RATE;
/* A rep string instruction with no debug register armed, as measured
 * (measure_rep_fast); these when the probe cannot run. */
static double rep_fast_bytes_per_cycle = 16.0;
static float store_bytes_per_cycle = DEFAULT_STORE_BYTES_PER_CYCLE;
static double rep_fast_start_cycles = 30.0;
/* An atomic read-modify-write (lock prefix, xchg with memory) drains the
 * store buffer and does not overlap with its neighbours: measured
 * (measure_locked; 19-20 cycles on this EPYC, sqlite3's mutexes around each
 * allocation), this when the probe cannot run. */
static float locked_cycles = 16.0f;
/* A load that needs bytes a store wrote only in part (a byte stored, a word
 * or a vector loaded over it): the store's data to the load's, the forward
 * failed (measure_forward_fail; ~14 cycles on this EPYC), this when the
 * probe cannot run. */
static float forward_fail_cycles = 14.0f;
#define FORWARD_REACH_INSNS 64u /* a store further back has reached the cache */

static int has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static int has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int fp_arith(const char *s)
{
	static const char *ops[] = {"add", "sub", "mul", "min", "max", "cvt"};
	static const char *types[] = {"ss", "sd", "ps", "pd"};
	for (unsigned i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (!has_prefix(s, ops[i]))
			continue;
		for (unsigned j = 0; j < sizeof(types) / sizeof(types[0]); j++)
			if (has_suffix(s, types[j]))
				return 1;
	}
	return has_prefix(s, "fmadd") || has_prefix(s, "fmsub") || has_prefix(s, "fnmadd") ||
	       has_prefix(s, "fnmsub") || has_prefix(s, "cvt");
}

/* Latencies of Zen 3/4 (Agner Fog's tables, uops.info), by class (the
 * flags are mnem_cost_of's). */
static struct mnem_cost classify(const char *name)
{
	const char *s = name[0] == 'v' ? name + 1 : name; /* VEX/EVEX forms alike */
	if (!strcmp(name, "div") || !strcmp(name, "idiv"))
		return (struct mnem_cost){18, 10, 0, 0};
	if (has_prefix(s, "div") || has_prefix(s, "sqrt"))
		return (struct mnem_cost){13, 4, 0, 0};
	if (!strcmp(name, "imul") || !strcmp(name, "mul") || !strcmp(name, "mulx") ||
	    has_prefix(s, "pmul") || has_prefix(s, "pmadd") || !strcmp(name, "crc32") ||
	    !strcmp(name, "pdep") || !strcmp(name, "pext"))
		return (struct mnem_cost){3, 0, 0, 0};
	if (fp_arith(s))
		return (struct mnem_cost){3, 0, 0, 0};
	if (has_prefix(s, "perm") || has_prefix(s, "pshufb") || has_prefix(s, "broadcast") ||
	    has_prefix(s, "insert") || has_prefix(s, "extract") || has_prefix(s, "pmovmsk") ||
	    has_prefix(s, "movmsk") || has_prefix(s, "ptest"))
		return (struct mnem_cost){2, 0, 0, 0};
	return (struct mnem_cost){1, 0, 0, 0};
}

/* Nanoseconds from *a to now, on the clock the probes below time with. */
static double ns_since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e9 + (double)(b.tv_nsec - a->tv_nsec);
}

/* A dependent chain of register adds runs one a cycle on every x86 core:
 * time one.  Not adds of an immediate: Golden Cove and its successors fold
 * those at rename, several a cycle (an Emerald Rapids VM read 6-8
 * "cycles"/ns at 2.9 GHz, and the probe fell back to its 3 GHz guess). */
#define MEASURE_ITERS (1u << 12) /* of 8 adds: 32k cycles, ~10 us a run */

static double time_add_chain(void)
{
	struct timespec a;
	uint64_t x = 0, one = 1, n = MEASURE_ITERS;
	clock_gettime(CLOCK_MONOTONIC, &a);
	__asm__ volatile("1:\n\t"
			 "add %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\t"
			 "add %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\t"
			 "dec %1\n\tjnz 1b"
			 : "+r"(x), "+r"(n)
			 : "r"(one));
	double ns = ns_since(&a);
	return ns > 0 ? (8.0 * MEASURE_ITERS) / ns : 0;
}

/* What each probe accepts as a measure (else a run was preempted or
 * odd); costmodel_probes_set takes a handed-down value by the same rule. */
static int cpn_plausible(double v) { return v > 0.3 && v < 10; }
static int rate_plausible(double v) { return v >= 1.5 && v < 12.5; } /* a cycle's instructions or ALU ops */
static int rep_rate_plausible(double v) { return v > 1 && v < 256; }
static int rep_start_plausible(double v) { return v >= 0 && v < 1000; }
static int locked_plausible(double v) { return v >= 2 && v < 200; }
static int forward_plausible(double v) { return v >= 2 && v < 100; }
static int store_rate_plausible(double v) { return v >= 4 && v <= 128; } /* bytes a cycle */

static double measure_cycles_per_ns(void)
{
	double best = 0;
	for (int run = 0; run < 4; run++) {
		double cpn = time_add_chain();
		if (cpn > best)
			best = cpn;
	}
	return cpn_plausible(best) ? best : 3.0; /* a preempted run: a plain 3 GHz */
}

/* Register-to-register moves are renamed away: they cost the core nothing
 * but their dispatch slot, so a loop of them runs at the dispatch width
 * (nops are no measure: Zen 4 fuses them).  How wide depends on where the
 * loop falls in the 64-byte fetch lines: on this EPYC 6.5 instructions a
 * cycle starting 0-24 or 56-63 bytes into a line, 8.4 at 32-48.  One probe
 * loop put wherever the linker left it read 7.9 in one build of the
 * runtime and 6.2 in the next, and weights.c's store loop read 1.40 and
 * 0.71 of its bytes.  So the loop runs at each of 8 offsets into a line
 * and the width is their harmonic mean: the rate a loop placed anywhere
 * dispatches at on average. */
#define WIDTH_MOVES 24
#define WIDTH_OFFSETS 8
#define STR_(x) #x
#define STR(x) STR_(x)
#define WIDTH_PROBE(OFF)                                                             \
	static void width_probe_##OFF(uint64_t n)                                    \
	{                                                                            \
		__asm__ volatile("jmp 2f\n\t.p2align 6\n\t.fill " #OFF ", 1, 0x90\n"     \
				 "2:\n1:\n\t.rept " STR(WIDTH_MOVES) "\n\tmov %%r8, %%r9\n\t" \
				 ".endr\n\tdec %0\n\tjnz 1b"                          \
				 : "+r"(n)                                           \
				 :                                                   \
				 : "r8", "r9");                                      \
	}
WIDTH_PROBE(0)
WIDTH_PROBE(8)
WIDTH_PROBE(16)
WIDTH_PROBE(24)
WIDTH_PROBE(32)
WIDTH_PROBE(40)
WIDTH_PROBE(48)
WIDTH_PROBE(56)
static void (*const width_probes[WIDTH_OFFSETS])(uint64_t) = {
	width_probe_0,  width_probe_8,  width_probe_16, width_probe_24,
	width_probe_32, width_probe_40, width_probe_48, width_probe_56,
};
/* each offset's, as issue_width is followed (the default until measured) */
static float widths[WIDTH_OFFSETS] = {
	DEFAULT_ISSUE_WIDTH, DEFAULT_ISSUE_WIDTH, DEFAULT_ISSUE_WIDTH, DEFAULT_ISSUE_WIDTH,
	DEFAULT_ISSUE_WIDTH, DEFAULT_ISSUE_WIDTH, DEFAULT_ISSUE_WIDTH, DEFAULT_ISSUE_WIDTH,
};
static unsigned width_next;         /* the offset costmodel_remeasure runs next */

static double time_moves(double cpn, int offset)
{
	struct timespec a;
	uint64_t n = 1u << 12;
	clock_gettime(CLOCK_MONOTONIC, &a);
	width_probes[offset](n);
	double ns = ns_since(&a);
	return ns > 0 ? (WIDTH_MOVES + 1.0) * (1u << 12) / (ns * cpn) : 0;
}

static float harmonic_width(void)
{
	float inv = 0;
	for (int k = 0; k < WIDTH_OFFSETS; k++) {
		float w;
		__atomic_load(&widths[k], &w, __ATOMIC_RELAXED);
		inv += 1.0f / w;
	}
	return (float)WIDTH_OFFSETS / inv;
}

/* Not rounded to whole slots: a core shared with its sibling thread
 * dispatches fewer a cycle on average, as measured. */
static float measure_issue_width(void)
{
	for (int k = 0; k < WIDTH_OFFSETS; k++) {
		double best = 0;
		for (int run = 0; run < 3; run++) {
			double width = time_moves(cycles_per_ns, k);
			if (width > best)
				best = width;
		}
		/* a preempted or odd run keeps the default */
		widths[k] = rate_plausible(best) ? (float)best : DEFAULT_ISSUE_WIDTH;
	}
	return harmonic_width();
}

/* Independent adds on four registers run at the ALUs' rate, below the
 * dispatch width (here 3.85 a cycle against 6.6): a loop of scalar
 * arithmetic is bound by its ALU operations, not its instruction count
 * (weights.c's store loop: 5 ALU operations in 7 slots, 1.4 cycles a
 * pass measured, 1.06 as 7 / W).  The loop's dec/jnz is one more.  Adds
 * of a register, as time_add_chain's, so that rename-time folding of
 * immediates on newer Intel cores does not read as ALUs. */
#define ALU_ADDS 24
static double time_alu(double cpn)
{
	struct timespec a;
	uint64_t n = 1u << 10;
	clock_gettime(CLOCK_MONOTONIC, &a);
	__asm__ volatile(".p2align 6\n1:\n\t.rept " STR(ALU_ADDS) " / 4\n\t"
			 "add %1, %%r8\n\tadd %1, %%r9\n\tadd %1, %%r10\n\tadd %1, %%r11\n\t"
			 ".endr\n\tdec %0\n\tjnz 1b"
			 : "+r"(n)
			 : "r"((uint64_t)1)
			 : "r8", "r9", "r10", "r11", "cc");
	double ns = ns_since(&a);
	return ns > 0 ? (ALU_ADDS + 1.0) * (1u << 10) / (ns * cpn) : 0;
}

static float measure_alu_rate(void)
{
	double best = 0;
	for (int run = 0; run < 3; run++) {
		double r = time_alu(cycles_per_ns);
		if (r > best)
			best = r;
	}
	return rate_plausible(best) ? (float)best : DEFAULT_ALU_RATE;
}

/* An operation for the integer ALUs: general-purpose arithmetic, logic,
 * compares and branches (theirs are on ALU ports, both vendors); not a
 * move (renamed away, or only a load's or a store's), push or pop, a nop.
 * Vector work (the FP pipes) and rep string or locked instructions (priced
 * as units of their own) are told apart per instruction (costmodel_add). */
static uint8_t mnem_alu_flags(unsigned mnemonic)
{
	switch (mnemonic) {
	case ZYDIS_MNEMONIC_MOV: case ZYDIS_MNEMONIC_PUSH: case ZYDIS_MNEMONIC_POP:
	case ZYDIS_MNEMONIC_NOP: case ZYDIS_MNEMONIC_ENDBR64: case ZYDIS_MNEMONIC_ENDBR32:
	case ZYDIS_MNEMONIC_PREFETCHT0: case ZYDIS_MNEMONIC_PREFETCHT1:
	case ZYDIS_MNEMONIC_PREFETCHT2: case ZYDIS_MNEMONIC_PREFETCHNTA:
	case ZYDIS_MNEMONIC_PREFETCHW: case ZYDIS_MNEMONIC_LEAVE:
		return 0;
	case ZYDIS_MNEMONIC_MOVZX: case ZYDIS_MNEMONIC_MOVSX: case ZYDIS_MNEMONIC_MOVSXD:
		return MNEM_ALU_REG; /* from memory: the load's own */
	default:
		return MNEM_ALU;
	}
}

static int mnem_fusable(unsigned mnemonic)
{
	switch (mnemonic) {
	case ZYDIS_MNEMONIC_CMP: case ZYDIS_MNEMONIC_TEST: case ZYDIS_MNEMONIC_ADD:
	case ZYDIS_MNEMONIC_SUB: case ZYDIS_MNEMONIC_AND: case ZYDIS_MNEMONIC_INC:
	case ZYDIS_MNEMONIC_DEC:
		return 1;
	default:
		return 0;
	}
}

static struct mnem_cost mnem_cost_of(unsigned m)
{
	if (m > ZYDIS_MNEMONIC_MAX_VALUE)
		m = 0;
	struct mnem_cost c = mnem_cost[m];
	if (__atomic_load_n(&mnem_cost[m].known, __ATOMIC_ACQUIRE))
		return c;
	const char *name = ZydisMnemonicGetString((ZydisMnemonic)m);
	c = name ? classify(name) : (struct mnem_cost){1, 0, 0, 0};
	if (m == ZYDIS_MNEMONIC_MOV)
		c.latency = 0; /* register moves are renamed away */
	c.flags = mnem_alu_flags(m) | (mnem_fusable(m) ? MNEM_FUSABLE : 0);
	mnem_cost[m].latency = c.latency;
	mnem_cost[m].busy = c.busy;
	mnem_cost[m].flags = c.flags;
	__atomic_store_n(&mnem_cost[m].known, 1, __ATOMIC_RELEASE);
	return c;
}

/* rep stos with no debug register armed (costmodel_init runs before any
 * is): bytes per cycle over REP_PROBE_BYTES with the fast-string microcode,
 * and the cycles a short one takes to start (128 bytes, as a 16-qword
 * memset: ~30 cycles here, where its bytes alone would be ~3).  The best
 * of four runs each (the first touches the pages). */
#define REP_PROBE_BYTES (64u << 10)
#define REP_SHORT_BYTES 128u
#define REP_SHORT_RUNS 256

static double time_rep_stos(void *buf, size_t bytes, int times)
{
	double best_ns = 0;
	for (int run = 0; run < 4; run++) {
		struct timespec a;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (int i = 0; i < times; i++) {
			void *d = buf;
			size_t n = bytes / 8;
			__asm__ volatile("rep stosq" : "+D"(d), "+c"(n) : "a"(0) : "memory");
		}
		double ns = ns_since(&a) / times;
		if (ns > 0 && (best_ns == 0 || ns < best_ns))
			best_ns = ns;
	}
	return best_ns;
}

/* A loop of 32-byte stores over VEC_PROBE_BYTES, past L1 and within L2:
 * the bytes a cycle a dense vector store loop gets (the bound of
 * costmodel_cycles).  One such store a cycle on the EPYC the model began
 * on; an Emerald Rapids VM stores ~16 bytes a cycle into L2 (~20 into L1),
 * and a constant 32 weighed an AVX2 fill loop 2x its bytes.  The median of
 * VEC_PROBE_RUNS, not the best: the best of four over 64 KiB read 15.9-20.2
 * from run to run there, and dense_vector's AVX2 loop (512 KiB) took
 * 0.50-0.58 of its bytes for 0.5 with it, in step with the reading; the
 * program's loop meets the machine's interference as a median run does
 * (the first run, which faults in the pages the rep probe did not touch,
 * is the slowest). */
#define VEC_PROBE_BYTES (128u << 10)
#define VEC_PROBE_RUNS 7

__attribute__((target("avx"))) static double time_vector_stores(void *buf, size_t bytes)
{
	double ns[VEC_PROBE_RUNS];
	for (int run = 0; run < VEC_PROBE_RUNS; run++) {
		struct timespec a;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (char *p = buf, *end = p + bytes; p < end; p += 128)
			__asm__ volatile("vmovdqa %%ymm0, (%0)\n\tvmovdqa %%ymm0, 32(%0)\n\t"
					 "vmovdqa %%ymm0, 64(%0)\n\tvmovdqa %%ymm0, 96(%0)"
					 :
					 : "r"(p)
					 : "memory");
		__asm__ volatile("vzeroupper");
		ns[run] = ns_since(&a);
	}
	return median_sort(ns, VEC_PROBE_RUNS);
}

/* AVX is there and the OS keeps its state (CPUID 1: ECX bits 27 OSXSAVE
 * and 28 AVX; XCR0 bits 1 and 2).  Not __builtin_cpu_supports: that links
 * libgcc's CPU model in, whose constructor runs a few dozen CPUIDs (~1.2 us
 * each on this VM) in every process, where this runs once a tree. */
static int cpu_has_avx(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27)) || !(c & (1u << 28)))
		return 0;
	uint32_t lo, hi;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (lo & 6u) == 6u;
}

static double measure_vector_stores(void *buf)
{
	if (!cpu_has_avx())
		return 0;
	double ns = time_vector_stores(buf, VEC_PROBE_BYTES);
	return ns > 0 ? VEC_PROBE_BYTES / (ns * cycles_per_ns) : 0;
}

static void measure_rep_fast(void)
{
	void *buf = lockguard_map(VEC_PROBE_BYTES, 0);
	if (buf == MAP_FAILED)
		return;
	double long_ns = time_rep_stos(buf, REP_PROBE_BYTES, 1);
	double short_ns = time_rep_stos(buf, REP_SHORT_BYTES, REP_SHORT_RUNS);
	double vec_rate = measure_vector_stores(buf);
	(void)lockguard_unmap(buf, VEC_PROBE_BYTES);
	if (store_rate_plausible(vec_rate))
		store_bytes_per_cycle = (float)vec_rate;
	double rate = long_ns > 0 ? REP_PROBE_BYTES / (long_ns * cycles_per_ns) : 0;
	if (rep_rate_plausible(rate))
		rep_fast_bytes_per_cycle = rate;
	double start = short_ns * cycles_per_ns - REP_SHORT_BYTES / rep_fast_bytes_per_cycle;
	if (rep_start_plausible(start))
		rep_fast_start_cycles = start;
}

/* The cycles one trip of a probe loop takes: the best of four runs of
 * `iters` trips (the first may touch a page, a run may be preempted). */
static double best_trip_cycles(void (*run)(uint32_t iters), uint32_t iters)
{
	double best_ns = 0;
	for (int k = 0; k < 4; k++) {
		struct timespec a;
		clock_gettime(CLOCK_MONOTONIC, &a);
		run(iters);
		double ns = ns_since(&a);
		if (ns > 0 && (best_ns == 0 || ns < best_ns))
			best_ns = ns;
	}
	return best_ns * cycles_per_ns / iters;
}

/* lock add on a private word, back to back. */
static void run_locked(uint32_t n)
{
	uint64_t word = 0;
	__asm__ volatile("1:\n\tlock addq $1, %0\n\tdec %1\n\tjnz 1b" : "+m"(word), "+r"(n));
}

/* A byte stored and a quadword loaded over it, the load's value the next
 * store's: each trip a failed forward. */
static void run_forward_fail(uint32_t n)
{
	uint64_t word[2] = {0, 0}, x = 0;
	__asm__ volatile("1:\n\tmovb %%al, (%2)\n\tmovq (%2), %%rax\n\tdec %1\n\tjnz 1b"
			 : "+a"(x), "+r"(n)
			 : "r"(word)
			 : "memory");
}

#define PROBE_TRIPS 512u
static void measure_locked(void)
{
	double cycles = best_trip_cycles(run_locked, PROBE_TRIPS);
	if (locked_plausible(cycles))
		locked_cycles = (float)cycles;
}

static void measure_forward_fail(void)
{
	double cycles = best_trip_cycles(run_forward_fail, PROBE_TRIPS);
	if (forward_plausible(cycles))
		forward_fail_cycles = (float)cycles;
}

int costmodel_init(void)
{
	cycles_per_ns = measure_cycles_per_ns();
	issue_width = measure_issue_width();
	alu_rate = measure_alu_rate();
	measure_rep_fast();
	measure_locked();
	measure_forward_fail();
	log_verbose(1, "costmodel: %lu cycles a us, %lu instructions in 10 cycles, %lu ALU operations in 10 cycles, rep %lu bytes in 10 cycles, vector stores %lu bytes in 10 cycles, a locked op %lu cycles, a failed forward %lu",
		    (unsigned long)(cycles_per_ns * 1000), (unsigned long)(issue_width * 10),
		    (unsigned long)(alu_rate * 10),
		    (unsigned long)(rep_fast_bytes_per_cycle * 10),
		    (unsigned long)(store_bytes_per_cycle * 10), (unsigned long)locked_cycles,
		    (unsigned long)forward_fail_cycles);
	return 0;
}

void costmodel_probes_get(double v[COSTMODEL_PROBES])
{
	v[0] = cycles_per_ns;
	v[1] = issue_width;
	for (int k = 0; k < WIDTH_OFFSETS; k++)
		v[2 + k] = widths[k];
	v[10] = alu_rate;
	v[11] = rep_fast_bytes_per_cycle;
	v[12] = rep_fast_start_cycles;
	v[13] = locked_cycles;
	v[14] = forward_fail_cycles;
	v[15] = store_bytes_per_cycle;
}

int costmodel_probes_set(const double v[COSTMODEL_PROBES])
{
	if (!cpn_plausible(v[0]) || !rate_plausible(v[10]) || !rep_rate_plausible(v[11]) ||
	    !rep_start_plausible(v[12]) || !locked_plausible(v[13]) || !forward_plausible(v[14]) ||
	    !store_rate_plausible(v[15]))
		return -EINVAL;
	for (int k = 1; k <= 1 + WIDTH_OFFSETS; k++)
		if (!rate_plausible(v[k]))
			return -EINVAL;
	cycles_per_ns = v[0];
	issue_width = (float)v[1];
	for (int k = 0; k < WIDTH_OFFSETS; k++)
		widths[k] = (float)v[2 + k];
	alu_rate = (float)v[10];
	rep_fast_bytes_per_cycle = v[11];
	rep_fast_start_cycles = v[12];
	locked_cycles = (float)v[13];
	forward_fail_cycles = (float)v[14];
	store_bytes_per_cycle = (float)v[15];
	return 0;
}

double costmodel_cycles_per_ns(void)
{
	double v;
	__atomic_load(&cycles_per_ns, &v, __ATOMIC_RELAXED);
	return v;
}

float costmodel_issue_width(void)
{
	float v;
	__atomic_load(&issue_width, &v, __ATOMIC_RELAXED);
	return v;
}

float costmodel_forward_fail_cycles(void)
{
	return forward_fail_cycles;
}

float costmodel_alu_rate(void)
{
	float v;
	__atomic_load(&alu_rate, &v, __ATOMIC_RELAXED);
	return v;
}

/* A per-cycle rate follows a new measurement by 1/4; 1 if it did (a run
 * under half the rate, preempted, or past any core's is dropped). */
static int rate_fold(float *rate, double measured)
{
	float r;
	__atomic_load(rate, &r, __ATOMIC_RELAXED);
	if (!(measured > 0.5 * r && measured < 12.5))
		return 0;
	r += ((float)measured - r) / 4;
	__atomic_store(rate, &r, __ATOMIC_RELAXED);
	return 1;
}

/* One run of each probe (~15 us), each folded in by 1/4: a run cut short
 * by preemption (under half the current value) is dropped.  The values are
 * the process's, written by any thread's handler: a lost update is one
 * measurement fewer. */
void costmodel_remeasure(void)
{
	double cpn = costmodel_cycles_per_ns();
	double now = time_add_chain();
	if (now > 0.5 * cpn && now < 10) {
		cpn += (now - cpn) / 4;
		__atomic_store(&cycles_per_ns, &cpn, __ATOMIC_RELAXED);
	}
	/* one offset a run, in turn, each followed on its own */
	int k = (int)(__atomic_fetch_add(&width_next, 1, __ATOMIC_RELAXED) % WIDTH_OFFSETS);
	double w = time_moves(cpn, k);
	if (rate_fold(&widths[k], w)) {
		float width = harmonic_width();
		__atomic_store(&issue_width, &width, __ATOMIC_RELAXED);
	}
	double a = time_alu(cpn);
	rate_fold(&alu_rate, a);
	log_verbose(2, "costmodel: measured %lu cycles a us, %lu instructions and %lu ALU operations in 10 cycles",
		    (unsigned long)(now * 1000), (unsigned long)(w * 10), (unsigned long)(a * 10));
}

/* The widths and rates are read once a run, as factors: the bounds are
 * asked for after every instruction (the window's loop test), and their
 * loads and divisions were ~5% of a window's instructions. */
void costmodel_begin(struct costmodel *m, int rep_fast)
{
	memset(m, 0, sizeof(*m));
	m->rep_fast = rep_fast;
	m->cycles_per_ns = (float)costmodel_cycles_per_ns();
	float width = costmodel_issue_width();
	m->inv_width = width > 0 ? 1.0f / width : 1.0f;
	float alu = costmodel_alu_rate();
	m->inv_alu = alu > 0 ? 1.0f / alu : 1.0f;
	m->inv_store_bytes = 1.0f / store_bytes_per_cycle;
	m->conflict_store_cycles = CONFLICT_STORE_NS * m->cycles_per_ns;
	m->conflict_load_cycles = CONFLICT_LOAD_NS * m->cycles_per_ns;
}

static float max2(float a, float b)
{
	return a > b ? a : b;
}

/* Whether access i of in lies a power-of-two stride of CONFLICT_STRIDE_MIN
 * or more from the same operand's last one in this window (the first of a
 * stream is not known to be one).  Implicit stack slots, string ops and
 * gathers are not followed. */
static int conflicting_stride(struct costmodel *m, const struct decode_insn *in, int i)
{
	const struct decode_access *a = &in->access[i];
	if (a->flags & (DECODE_ACC_IMPLICIT | DECODE_ACC_UNKNOWN_ADDR) || (in->flags & DECODE_F_REP))
		return 0;
	uint64_t key = in->pc * 2 + (uint64_t)i;
	for (uint32_t k = 0; k < m->n_streams && k < COSTMODEL_STREAMS; k++) {
		if (m->streams[k].key != key)
			continue;
		uint64_t d = a->addr > m->streams[k].addr ? a->addr - m->streams[k].addr
							  : m->streams[k].addr - a->addr;
		m->streams[k].addr = a->addr;
		return d >= CONFLICT_STRIDE_MIN && (d & (d - 1)) == 0;
	}
	uint32_t k = m->n_streams++ % COSTMODEL_STREAMS; /* past 8: the oldest goes */
	m->streams[k].key = key;
	m->streams[k].addr = a->addr;
	return 0;
}

void costmodel_add(struct costmodel *m, const struct decode_insn *in,
		   const struct decode_zydis *z, uint64_t rep_elems)
{
	const struct decode_form *f = &z->form;
	struct mnem_cost c = mnem_cost_of(in->mnemonic);
	float start = m->restart, latency = c.latency;
	float start_missed = m->restart_missed;
	int vector = f->dep_vector;

	m->added++;

	for (uint64_t r = f->dep_reads; r; r &= r - 1) {
		int i = __builtin_ctzll(r);
		start = max2(start, m->ready[i]);
		start_missed = max2(start_missed, m->ready_missed[i]);
	}
	int loads = 0;
	for (int i = 0; i < in->n_access; i++) {
		int conflict = conflicting_stride(m, in, i);
		if (in->access[i].kind & DECODE_LOAD) {
			latency += vector ? VLOAD_LATENCY : LOAD_LATENCY;
			m->loads += 1;
			m->conflict_loads += (float)conflict;
			loads++;
		}
		if (in->access[i].kind & DECODE_STORE) {
			m->stores += 1;
			m->store_bytes += (float)in->access[i].len;
			m->conflict_stores += (float)conflict;
		}
	}
	float done = start + latency, done_missed = start_missed + latency;
	/* rsp aside: the stack engine keeps push/pop chains short */
	m->last_writes = f->dep_writes & ~(1ull << DECODE_RSP);
	for (uint64_t w = m->last_writes; w; w &= w - 1) {
		m->ready[__builtin_ctzll(w)] = done;
		m->ready_missed[__builtin_ctzll(w)] = done_missed;
	}
	m->chain = max2(m->chain, done);
	m->last_done = done;
	/* A load waits on the out-of-order window only for its address: a miss
	 * whose value feeds arithmetic and stores alone overlaps with the work
	 * after it (the reorder buffer runs on); one whose value a later load's
	 * address needs (a chase) delays that load's start. */
	if (loads)
		m->chain_missed = max2(m->chain_missed, start_missed);
	m->last_done_missed = done_missed;
	m->busy += c.busy;
	if (in->flags & DECODE_F_LOCKED)
		m->busy += locked_cycles;
	if ((in->flags & DECODE_F_REP) && m->rep_fast && in->n_access > 0)
		m->busy += (float)(rep_fast_start_cycles +
				   (double)rep_elems * in->access[0].len / rep_fast_bytes_per_cycle);
	else if (in->flags & DECODE_F_REP)
		m->busy += REP_ARMED_START_CYCLES + (float)rep_elems * REP_CYCLES_PER_ELEM;
	/* A flag-setting compare or arithmetic op and the branch right after it. */
	int fused = (in->flags & DECODE_F_COND) && m->last_fusable;
	m->last_fusable = (c.flags & MNEM_FUSABLE) != 0;
	if (fused)
		return; /* one operation with its compare, counted there */
	int alu = (c.flags & MNEM_ALU) || ((c.flags & MNEM_ALU_REG) && in->n_access == 0);
	if (alu && !vector && !(in->flags & (DECODE_F_REP | DECODE_F_LOCKED)))
		m->alu += 1;
	m->insns++;
	m->block_insns++;
}

/* At the measured width, unrounded: it is an average over where code falls
 * in the fetch lines (measure_issue_width), and whole slots of it put a
 * cliff where none is: a 7-instruction loop took 1 cycle at a width read
 * 6.6 and 2 at 6.4 (weights.c's store loop 1.40 or 0.73 of its bytes from
 * one run to the next). */
static float fetch_cycles(const struct costmodel *m, uint32_t insns)
{
	return (float)insns * m->inv_width;
}

void costmodel_taken(struct costmodel *m, int call_or_ret)
{
	float block = fetch_cycles(m, m->block_insns);
	m->frontend += max2(block, 1.0f) + (call_or_ret ? 1.0f : 0.0f);
	m->block_insns = 0;
}

void costmodel_add_busy(struct costmodel *m, double cycles)
{
	m->busy += (float)cycles;
}

/* The throughput bounds of the instructions since the last restart, from it. */
static float since_restart(const struct costmodel *m)
{
	float t = (float)m->insns * m->inv_width;
	t = max2(t, m->frontend + fetch_cycles(m, m->block_insns));
	t = max2(t, m->alu * m->inv_alu);
	t = max2(t, m->loads * (1.0f / LOADS_PER_CYCLE));
	t = max2(t, m->stores * (1.0f / STORES_PER_CYCLE));
	t = max2(t, m->store_bytes * m->inv_store_bytes);
	t = max2(t, m->conflict_stores * m->conflict_store_cycles +
			    m->conflict_loads * m->conflict_load_cycles);
	return m->restart + t;
}

/* The last instruction's results no sooner than t. */
static void wait_until(struct costmodel *m, float t)
{
	for (uint64_t w = m->last_writes; w; w &= w - 1) {
		int r = __builtin_ctzll(w);
		m->ready[r] = max2(m->ready[r], t);
		m->ready_missed[r] = max2(m->ready_missed[r], t);
	}
	m->chain = max2(m->chain, t);
	m->last_done = max2(m->last_done, t);
	m->last_done_missed = max2(m->last_done_missed, t);
}

int costmodel_forward(struct costmodel *m, const struct decode_insn *in)
{
	int failed = 0;
	if (in->n_access == 0 || (in->flags & DECODE_F_REP))
		return 0; /* none, or a rep's: one element's */
	for (int i = 0; i < in->n_access; i++) {
		const struct decode_access *a = &in->access[i];
		if (!(a->kind & DECODE_LOAD) || (a->flags & DECODE_ACC_UNKNOWN_ADDR))
			continue;
		uint32_t n = m->n_stored < COSTMODEL_STORES ? m->n_stored : COSTMODEL_STORES;
		for (uint32_t k = 0; k < n; k++) {
			const uint64_t sa = m->stored[k].addr, sl = m->stored[k].len;
			if (m->added - m->stored[k].added > FORWARD_REACH_INSNS ||
			    a->addr >= sa + sl || sa >= a->addr + a->len ||
			    (a->addr >= sa && a->addr + a->len <= sa + sl))
				continue; /* long gone, elsewhere, or forwarded whole */
			wait_until(m, m->stored[k].done + forward_fail_cycles);
			failed = 1;
		}
	}
	for (int i = 0; i < in->n_access; i++) {
		const struct decode_access *a = &in->access[i];
		if (!(a->kind & DECODE_STORE) || (a->flags & DECODE_ACC_UNKNOWN_ADDR))
			continue;
		uint32_t k = m->n_stored++ % COSTMODEL_STORES;
		m->stored[k].addr = a->addr;
		m->stored[k].len = a->len;
		m->stored[k].added = m->added;
		m->stored[k].done = (float)costmodel_cycles(m);
	}
	return failed;
}

void costmodel_late(struct costmodel *m, float cycles)
{
	float done = m->last_done_missed + cycles;
	for (uint64_t w = m->last_writes; w; w &= w - 1)
		m->ready_missed[__builtin_ctzll(w)] = done;
	m->last_done_missed = done;
	m->missed += cycles;
}

void costmodel_late_store(struct costmodel *m, float cycles)
{
	m->missed += cycles;
}

void costmodel_mispredict(struct costmodel *m)
{
	/* The instructions before it still run; those after wait for it. */
	m->before_restart = max2(m->before_restart, since_restart(m));
	m->restart = max2(m->restart, m->last_done + MISPREDICT_CYCLES);
	m->restart_missed = max2(m->restart_missed, m->last_done_missed + MISPREDICT_CYCLES);
	m->insns = 0;
	m->alu = 0;
	m->loads = m->stores = m->store_bytes = 0;
	m->conflict_loads = m->conflict_stores = 0;
	m->frontend = 0;
	m->block_insns = 0;
	m->mispredicts++;
}

double costmodel_cycles(const struct costmodel *m)
{
	float t = max2(m->chain, m->before_restart);
	t = max2(t, since_restart(m));
	return (double)(t + m->busy);
}

double costmodel_span(const struct costmodel *m)
{
	float through = max2(m->before_restart, since_restart(m));
	float hidden = COSTMODEL_ROB_ENTRIES * m->inv_width;
	/* A chain within the reorder buffer's reach of the throughput is what
	 * the window takes (a loop-carried one: the loop's speed). */
	float t = m->chain - through > hidden ? m->chain - hidden : max2(m->chain, through);
	return (double)(t + m->busy);
}

double costmodel_cycles_missed(const struct costmodel *m)
{
	double t = costmodel_cycles(m);
	if (m->missed <= 0)
		return t;
	/* A mispredicted branch that waited for a miss: all after it later. */
	double shifted = t + (m->restart_missed - m->restart);
	double late = max2(m->chain_missed, m->missed / MEMLAT_PARALLEL) + m->busy;
	if (shifted > t)
		t = shifted;
	return late > t ? late : t;
}
