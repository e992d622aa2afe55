/* test_costmodel: the cycles straight-line code takes (costmodel.h), on
 * instruction sequences whose answer follows from the model's rules.
 *
 * Each row is a sequence of instructions added in order; `mispredict`
 * names the one (1-based) the caller finds mispredicted, 0 none; `late_at`
 * the one whose loads came `late` cycles late (costmodel_late: memlat.h
 * measured a miss), -1 every one, and `missed` the cycles with them
 * (costmodel_cycles_missed; 0: as without).  A load's latency is 4 (an L1
 * hit), a mov's own 0 (renamed), test's and jne's 1.  The
 * expected cycles are derived in the row's comment, W being the issue width
 * measured (costmodel_issue_width): N / W for N instructions, the fetch
 * block's bound and the dispatch bound alike (W is an average over where
 * code falls in the fetch lines, so neither is rounded to whole slots),
 * and A the integer ALU operations a cycle (costmodel_alu_rate): K / A
 * for K of them (a fused compare and branch is one; a load or a move
 * none).
 * Locked instructions are checked against their unlocked forms (their
 * cost is measured at start).
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "witch/costmodel.h"
#include "witch/decode.h"
#include "witch/decode_zydis.h"

#define IMUL_RAX "\x48\x0f\xaf\xc0"  /* imul rax, rax: latency 3 */
#define TEST_RAX "\x48\x85\xc0"      /* test rax, rax */
#define CMP_RAX_RBX "\x48\x39\xd8"   /* cmp rax, rbx */
#define JNE_0 "\x75\x00"             /* jne to the next instruction */
#define ADD_RBX "\x48\x83\xc3\x01"   /* add rbx, 1 */
#define ADD_RCX "\x48\x83\xc1\x01"   /* add rcx, 1 */
#define MOV_RBX_RCX "\x48\x89\xcb"   /* mov rbx, rcx */
#define LOAD_RAX "\x48\x8b\x00"       /* mov rax, [rax]: a pointer chase */
#define LOAD_RBX "\x48\x8b\x18"       /* mov rbx, [rax]: loads independent of each other */
#define LOAD_RBX_4 LOAD_RBX LOAD_RBX LOAD_RBX LOAD_RBX
#define ADD_MEM "\x48\x83\x00\x01"          /* add qword [rax], 1 */
#define LOCK_ADD_MEM "\xf0\x48\x83\x00\x01" /* lock add qword [rax], 1 */
#define XCHG_MEM "\x48\x87\x18"              /* xchg [rax], rbx */
#define XCHG_REG "\x48\x87\xcb"              /* xchg rbx, rcx */

struct row {
	int line;
	const char *code;
	int len;
	int mispredict;      /* the instruction (1-based) mispredicted, 0: none */
	double cycles;       /* expected; < 0: -cycles / W */
	int late_at;         /* the instruction (1-based) whose loads came late, -1: all */
	float late;          /* cycles late */
	double missed;       /* costmodel_cycles_missed expected; 0: as cycles */
	double chain;        /* with cycles < 0: the dependency bound, if longer */
	int alu;             /* with cycles < 0: the ALU operations, K / A if longer */
};

#define CODE(s) s, (int)sizeof(s) - 1

static const struct row rows[] = {
	/* three dependent imuls (9 cycles), test (10), jne reading the flags
	 * (11): a mispredicted jne restarts the front end 16 cycles after it
	 * resolves (27); the add after it is done at 28 */
	{ __LINE__, CODE(IMUL_RAX IMUL_RAX IMUL_RAX TEST_RAX JNE_0 ADD_RBX), 5, 28, 0, 0, 0, 0, 0 },
	/* the same, predicted: the chain alone, 11 */
	{ __LINE__, CODE(IMUL_RAX IMUL_RAX IMUL_RAX TEST_RAX JNE_0 ADD_RBX), 0, 11, 0, 0, 0, 0, 0 },
	/* a mispredict on a branch whose flags are ready at once (add rcx: 1):
	 * jne at 2, restart at 18, the add after it done at 19 */
	{ __LINE__, CODE(ADD_RCX JNE_0 ADD_RBX), 2, 19, 0, 0, 0, 0, 0 },
	/* 8 compares, each fused with its jne: 8 instructions to dispatch,
	 * not 16: 8 / W cycles, 8 ALU operations (8 / A), and no fewer than
	 * each jne's wait for its compare's flags (1 + 1: a core measured 8
	 * wide reads 2) */
	{ __LINE__, CODE(CMP_RAX_RBX JNE_0 CMP_RAX_RBX JNE_0 CMP_RAX_RBX JNE_0 CMP_RAX_RBX JNE_0
			 CMP_RAX_RBX JNE_0 CMP_RAX_RBX JNE_0 CMP_RAX_RBX JNE_0 CMP_RAX_RBX JNE_0),
	  0, -8, 0, 0, 0, 2, 8 },
	/* 12 adds to 12 registers, independent: 12 / W, or 12 / A where the
	 * ALUs are fewer (4 against 6.6 here) */
	{ __LINE__, CODE(ADD_RBX ADD_RCX "\x48\x83\xc2\x01\x48\x83\xc6\x01\x48\x83\xc7\x01"
			 "\x48\x83\xc5\x01\x49\x83\xc0\x01\x49\x83\xc1\x01\x49\x83\xc2\x01"
			 "\x49\x83\xc3\x01\x49\x83\xc4\x01\x49\x83\xc5\x01"),
	  0, -12, 0, 0, 0, 0, 12 },
	/* 12 register moves: renamed away, no ALU operation: 12 / W alone */
	{ __LINE__, CODE(MOV_RBX_RCX MOV_RBX_RCX MOV_RBX_RCX MOV_RBX_RCX MOV_RBX_RCX MOV_RBX_RCX
			 MOV_RBX_RCX MOV_RBX_RCX MOV_RBX_RCX MOV_RBX_RCX MOV_RBX_RCX MOV_RBX_RCX),
	  0, -12, 0, 0, 0, 0, 0 },
	/* 6 adds to rbx: a chain of 6 */
	{ __LINE__, CODE(ADD_RBX ADD_RBX ADD_RBX ADD_RBX ADD_RBX ADD_RBX), 0, 6, 0, 0, 0, 0, 0 },
	/* a chase of 3 loads: 12 as hits; the second 100 late: the third
	 * starts at 4 + 104 (a miss whose value no load waits for overlaps
	 * with what follows: the window counts to the last load's start) */
	{ __LINE__, CODE(LOAD_RAX LOAD_RAX LOAD_RAX), 0, 12, 2, 100, 108, 0, 0 },
	/* 3 independent loads, each 160 late: 16 in flight at a time, 3 x 160 /
	 * 16 = 30 */
	{ __LINE__, CODE(LOAD_RBX LOAD_RBX LOAD_RBX), 0, 4, -1, 160, 30, 0, 0 },
	/* 20 independent loads, each 100 late: 16 at a time, 20 x 100 / 16 =
	 * 125; as hits, 20 loads at 3 a cycle */
	{ __LINE__, CODE(LOAD_RBX_4 LOAD_RBX_4 LOAD_RBX_4 LOAD_RBX_4 LOAD_RBX_4), 0, 20.0 / 3, -1,
	  100, 125, 0, 0 },
	/* a mispredicted branch on a late load: load 4 (104 late), test 5
	 * (105), jne 6 (106), restart 16 after it, the add done at 23 (123:
	 * the front end restarts 100 later, all after it with it) */
	{ __LINE__, CODE(LOAD_RAX TEST_RAX JNE_0 ADD_RBX), 3, 23, 1, 100, 123, 0, 0 },
	/* a load 5 late off the chain that decides: the imul chain of 9,
	 * test, jne (11) ends later than 5 / 16 */
	{ __LINE__, CODE(LOAD_RBX IMUL_RAX IMUL_RAX IMUL_RAX TEST_RAX JNE_0), 0, 11, 1, 5, 11, 0, 0 },
};

static uint8_t code_buf[256];

/* The row's instructions added to m in order, each with its accesses
 * (costmodel_forward), as look.c adds them; rax points at 0x1000.  1 if a
 * load waited for a store, 0, or -1 (failed). */
static int model_row(const struct row *w, struct costmodel *m)
{
	struct decode_regs regs;
	int waited = 0;
	memset(&regs, 0, sizeof regs);
	memcpy(code_buf, w->code, (size_t)w->len);
	regs.rip = (uint64_t)(uintptr_t)code_buf;
	regs.gpr[DECODE_RAX] = 0x1000;
	costmodel_begin(m, 0);
	for (int k = 1; regs.rip < (uint64_t)(uintptr_t)code_buf + (uint64_t)w->len; k++) {
		struct decode_insn in;
		struct decode_zydis z;
		if (decode_at_zydis(regs.rip, &regs, &in, &z) < 0) {
			FAIL(w->line, "instruction %d does not decode", k);
			return -1;
		}
		costmodel_add(m, &in, &z, 0);
		waited |= costmodel_forward(m, &in);
		if (k == w->late_at || w->late_at < 0)
			costmodel_late(m, w->late);
		if (k == w->mispredict)
			costmodel_mispredict(m);
		regs.rip += in.len;
	}
	return waited;
}

static void run_row(const struct row *w)
{
	struct costmodel m;
	if (model_row(w, &m) < 0)
		return;
	double want = w->cycles;
	if (want < 0) {
		/* the fetch block's and the dispatch bound at the measured
		 * (fractional) width */
		want = -want / costmodel_issue_width();
		if (w->alu / costmodel_alu_rate() > want)
			want = w->alu / costmodel_alu_rate();
		if (w->chain > want)
			want = w->chain;
	}
	double got = costmodel_cycles(&m);
	CHECK(w->line, got > want - 0.01 && got < want + 0.01, "%.2f cycles, want %.2f", got, want);
	double missed = costmodel_cycles_missed(&m), want_missed = w->missed > 0 ? w->missed : want;
	CHECK(w->line, missed > want_missed - 0.01 && missed < want_missed + 0.01,
	      "%.2f cycles with misses, want %.2f", missed, want_missed);
}

/* Strides (costmodel.c, CONFLICT_*): one store or load instruction run 5
 * times, its address moved by `stride` between runs.  A power-of-two
 * stride of 1 KiB or more keeps to a few cache sets: the 4 runs after the
 * first (whose stride is not known yet) each cost CONFLICT_STORE_NS = 6 ns
 * (stores) or CONFLICT_LOAD_NS = 4.5 ns (loads) in a bound of their own;
 * other strides leave 5 independent accesses at the ports' rate, under 5
 * cycles. */
#define STORE_RBX "\x48\x89\x18" /* mov [rax], rbx */
struct stride_row {
	int line;
	const char *code;
	int len;
	long stride;
	double ns; /* the conflict bound's ns; 0: none */
};

static const struct stride_row stride_rows[] = {
	{ __LINE__, CODE(STORE_RBX), 4096, 4 * 6.0 },  /* a column of 4 KiB rows */
	{ __LINE__, CODE(STORE_RBX), -4096, 4 * 6.0 }, /* walked up */
	{ __LINE__, CODE(STORE_RBX), 1024, 4 * 6.0 },
	{ __LINE__, CODE(STORE_RBX), 65536, 4 * 6.0 },
	{ __LINE__, CODE(LOAD_RBX), 4096, 4 * 4.5 },
	{ __LINE__, CODE(STORE_RBX), 4160, 0 },        /* a page apart, other sets */
	{ __LINE__, CODE(STORE_RBX), 512, 0 },
	{ __LINE__, CODE(STORE_RBX), 8, 0 },
	{ __LINE__, CODE(STORE_RBX), 0, 0 },
	{ __LINE__, CODE(LOAD_RBX), 3 * 1024, 0 },     /* not a power of two */
};

static void run_stride_row(const struct stride_row *w)
{
	struct costmodel m;
	struct decode_regs regs;
	memset(&regs, 0, sizeof regs);
	memcpy(code_buf, w->code, (size_t)w->len);
	regs.rip = (uint64_t)(uintptr_t)code_buf;
	regs.gpr[DECODE_RAX] = 1ull << 40;
	costmodel_begin(&m, 0);
	for (int k = 0; k < 5; k++) {
		struct decode_insn in;
		struct decode_zydis z;
		if (decode_at_zydis(regs.rip, &regs, &in, &z) < 0) {
			FAIL(w->line, "does not decode");
			return;
		}
		costmodel_add(&m, &in, &z, 0);
		regs.gpr[DECODE_RAX] += (uint64_t)w->stride;
	}
	double got = costmodel_cycles(&m);
	if (w->ns > 0) {
		double want = w->ns * costmodel_cycles_per_ns();
		CHECK(w->line, got > want - 0.01 && got < want + 0.01, "%.2f cycles, want %.2f", got, want);
	} else {
		CHECK(w->line, got < 5, "%.2f cycles, want under 5", got);
	}
}

int main(void)
{
	int rc = decode_init();
	if (rc == 0)
		rc = costmodel_init();
	if (rc < 0) {
		fprintf(stderr, "init: %d\n", rc);
		return 1;
	}
	float width = costmodel_issue_width();
	CHECK(__LINE__, width >= 2 && width <= 12, "issue width %g", width);
	/* Re-measured as handlers do: each run folds in by 1/4, so the values
	 * stay those of this machine (a probe timed without the clock's
	 * cycles would read widths of ~1 or ~20). */
	double cpn = costmodel_cycles_per_ns();
	for (int k = 0; k < 8; k++)
		costmodel_remeasure();
	CHECK(__LINE__, costmodel_issue_width() >= 2 && costmodel_issue_width() <= 12,
	      "issue width %g after re-measuring", costmodel_issue_width());
	CHECK(__LINE__, costmodel_cycles_per_ns() > 0.5 * cpn && costmodel_cycles_per_ns() < 2 * cpn,
	      "%.2f cycles/ns after re-measuring, %.2f at start", costmodel_cycles_per_ns(), cpn);
	width = costmodel_issue_width();
	for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++)
		run_row(&rows[k]);
	for (size_t k = 0; k < sizeof stride_rows / sizeof stride_rows[0]; k++)
		run_stride_row(&stride_rows[k]);
	/* An atomic read-modify-write costs what costmodel_init measured a
	 * locked op to take (at least 2 cycles) on top of the same
	 * instruction unlocked, and xchg with memory is locked without the
	 * prefix; xchg of registers is not. */
	static const struct row plain = { __LINE__, CODE(ADD_MEM ADD_RBX), 0, 0, 0, 0, 0, 0, 0 },
				locked = { __LINE__, CODE(LOCK_ADD_MEM ADD_RBX), 0, 0, 0, 0, 0, 0, 0 },
				xchg_mem = { __LINE__, CODE(XCHG_MEM ADD_RBX), 0, 0, 0, 0, 0, 0, 0 },
				xchg_reg = { __LINE__, CODE(XCHG_REG ADD_RBX), 0, 0, 0, 0, 0, 0, 0 };
	struct costmodel a, b, c, d;
	if (model_row(&plain, &a) >= 0 && model_row(&locked, &b) >= 0 &&
	    model_row(&xchg_mem, &c) >= 0 && model_row(&xchg_reg, &d) >= 0) {
		CHECK(locked.line, costmodel_cycles(&b) >= costmodel_cycles(&a) + 2,
		      "lock add: %.2f cycles, add: %.2f", costmodel_cycles(&b), costmodel_cycles(&a));
		CHECK(xchg_mem.line, costmodel_cycles(&c) >= costmodel_cycles(&a) + 2,
		      "xchg with memory: %.2f cycles, add: %.2f", costmodel_cycles(&c),
		      costmodel_cycles(&a));
		/* xchg 1, the add on its rbx 2 */
		CHECK(xchg_reg.line, costmodel_cycles(&d) < 2.01,
		      "xchg of registers: %.2f cycles, want 2", costmodel_cycles(&d));
	}
	/* A window's span (costmodel_span): where the chain leads the
	 * throughput by more than R / W (R = COSTMODEL_ROB_ENTRIES), the chain
	 * less R / W, else the chain.  30 dependent imuls are a chain of 90
	 * cycles, 30 / W to dispatch (a lead of ~85 > 320 / 6.6): span 90 - R / W,
	 * cycles 90.
	 * 6 dependent adds lead by less: their chain, 6. */
	static const struct row chain30 = { __LINE__, CODE(IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX
		IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX
		IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX
		IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX IMUL_RAX), 0, 90, 0, 0,
		0, 0, 0 },
				chain6 = { __LINE__, CODE(ADD_RBX ADD_RBX ADD_RBX ADD_RBX ADD_RBX ADD_RBX), 0, 6,
					   0, 0, 0, 0, 0 };
	struct costmodel e, f;
	if (model_row(&chain30, &e) >= 0 && model_row(&chain6, &f) >= 0) {
		/* at a narrow measured width (a busy machine: 3.1) the lead is
		 * within reach and the span is the chain's 90 */
		double reach = COSTMODEL_ROB_ENTRIES / width, through = 30.0 / width;
		double want = 90.0 - through > reach ? 90.0 - reach : (through > 90.0 ? through : 90.0);
		CHECK(chain30.line, costmodel_cycles(&e) > 89.99 && costmodel_cycles(&e) < 90.01,
		      "%.2f cycles, want 90", costmodel_cycles(&e));
		CHECK(chain30.line, costmodel_span(&e) > want - 0.01 && costmodel_span(&e) < want + 0.01,
		      "span %.2f, want %.2f", costmodel_span(&e), want);
		want = 6;
		CHECK(chain6.line, costmodel_span(&f) > want - 0.01 && costmodel_span(&f) < want + 0.01,
		      "span %.2f, want %.2f", costmodel_span(&f), want);
	}
	/* A load of bytes a store just wrote in part waits for it
	 * (costmodel_forward): mov [rax], bl; mov rcx, [rax] (a byte under a
	 * quadword) is ready no sooner than the failed forward's measured
	 * cycles (14 here, against an L1 hit's 4); mov [rax], rbx;
	 * mov ecx, [rax] (inside the store) and mov [rax+8], bl;
	 * mov rcx, [rax] (beside it) do not wait. */
#define FWD(bytes, w) {.row = {.line = __LINE__, .code = bytes, .len = sizeof(bytes) - 1}, .waits = w}
	static const struct {
		struct row row;
		int waits; /* the load waits for the store */
	} fwd_rows[] = {
		FWD("\x88\x18\x48\x8b\x08", 1),
		FWD("\x48\x89\x18\x8b\x08", 0),
		FWD("\x88\x58\x08\x48\x8b\x08", 0),
	};
#undef FWD
	for (size_t k = 0; k < sizeof fwd_rows / sizeof fwd_rows[0]; k++) {
		struct costmodel m;
		int waited = model_row(&fwd_rows[k].row, &m), waits = fwd_rows[k].waits;
		int line = fwd_rows[k].row.line;
		CHECK(line, waited == waits, "waited %d, want %d", waited, waits);
		CHECK(line, !waits || costmodel_cycles(&m) >= costmodel_forward_fail_cycles(),
		      "%.2f cycles, a failed forward %.2f", costmodel_cycles(&m),
		      costmodel_forward_fail_cycles());
	}
	printf("test_costmodel: %zu rows, issue width %g\n", sizeof rows / sizeof rows[0], width);
	return check_failures != 0;
}
