/* test_pace: a loop's speed measured between two ticks (pace.h).
 *
 * Each row plays two windows of one loop at head HEAD (the backward branch
 * from HEAD + 0x20), on registers:
 *   rcx  the counter, +1 an iteration
 *   rbx  a store cursor, +8 an iteration (or moving as the row says)
 *   rax  scratch: a loaded value, a different step each iteration
 *   rdi  the array's base, never written by the loop
 *   rsi  an outer loop's counter, never written by the loop (7)
 * Window k starts at the tick in the loop's frame with rcx = 100 and runs
 * ITERS iterations of CPI modelled cycles each; window k+1 starts tick_ns of
 * program time later, where the program has reached rcx = 100 + n, and
 * takes the branch back once.  The stretch window k counted progress over
 * is ITERS iterations (ITERS * CPI cycles), so the program ran R = n / ITERS
 * stretches and the model would have taken n * CPI / CPN ns: the measured
 * factor is tick_ns / (n * CPI / CPN).
 *
 * The loop's frame is 8 words at RSP0 (read through fake_read); word 1
 * holds a register its function saved for its caller.  A row may change it
 * before tick k+1 (another call of the function, its caller's counter on)
 * and say the window stored to it (a spill slot of the loop's own).
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "witch/pace.h"

#define HEAD 0x401000u
#define RSP0 0x7ffe0000u
#define BASE 0x700000000000u
#define CURSOR 0x7f0000001000u
#define ITERS 4
#define CPI 5.0
#define CPN 2.5

enum { CURSOR_FOLLOWS, CURSOR_JUMPS, CURSOR_SCRATCH };
enum { FRAME_SAME, FRAME_MOVED, FRAME_MOVED_STORED };

static uint64_t fake_frame[8];

static int fake_read(uint64_t addr, void *buf, size_t len)
{
	if (addr != RSP0 || len != sizeof fake_frame)
		return -14; /* EFAULT: pace reads the loop's frame only */
	memcpy(buf, fake_frame, len);
	return 0;
}

struct row {
	int line;
	uint64_t n;          /* iterations the program ran between the ticks */
	int cursor;          /* rbx at tick k+1 */
	uint64_t rsp1;       /* rsp at tick k+1's back edge (0: the same) */
	int base_moved;      /* rdi differs at tick k+1 */
	int outer_moved;     /* rsi differs at tick k+1 (8) */
	int forget;          /* a tick without a window in between */
	double tick_ns;
	int measured;        /* expected */
	double factor;       /* expected (1: none known) */
	int frame;           /* FRAME_*: the frame's word 1 at tick k+1 */
	int other_call;      /* expected */
};

static const struct row rows[] = {
	/* 100000 iterations in 500 us, modelled 100000 * 5 / 2.5 = 200000 ns: x2.5 */
	{ __LINE__, 100000, CURSOR_FOLLOWS, 0, 0, 0, 0, 500000, 1, 2.5, FRAME_SAME, 0 },
	/* counter and cursor agree, the array base moved: two agree, still one
	 * run's progress (a merge's output cursor goes on from run to run) */
	{ __LINE__, 100000, CURSOR_FOLLOWS, 0, 1, 0, 0, 500000, 1, 2.5, FRAME_SAME, 0 },
	/* 4000 iterations in 500 us: 8000 modelled ns, x62.5 (a memory-bound loop) */
	{ __LINE__, 4000, CURSOR_FOLLOWS, 0, 0, 0, 0, 500000, 1, 62.5, FRAME_SAME, 0 },
	/* two iterations in 500 us (first touches of pages): 4 ns, x125000 */
	{ __LINE__, 2, CURSOR_FOLLOWS, 0, 0, 0, 0, 500000, 1, 125000, FRAME_SAME, 0 },
	/* the cursor is back at its start (a run per row, say), the counter alone
	 * with the base unchanged: the counter is the furthest candidate */
	{ __LINE__, 100000, CURSOR_JUMPS, 0, 0, 0, 0, 500000, 1, 2.5, FRAME_SAME, 0 },
	/* the cursor back at its start and the base moved: another run, not
	 * measured */
	{ __LINE__, 100000, CURSOR_JUMPS, 0, 1, 0, 0, 500000, 0, 1, FRAME_SAME, 0 },
	/* the cursor moves by a different step each iteration (no induction
	 * variable): the counter alone, base unchanged */
	{ __LINE__, 100000, CURSOR_SCRATCH, 0, 0, 0, 0, 500000, 1, 2.5, FRAME_SAME, 0 },
	/* the counter alone, and an outer loop's counter moved: another run of
	 * the loop, whose counter started again (bench/weights.c's branchy) */
	{ __LINE__, 100000, CURSOR_SCRATCH, 0, 0, 1, 0, 500000, 0, 1, FRAME_SAME, 0 },
	/* counter and cursor agree while an outer counter moved: still one
	 * progress (a merge's cursors go on from run to run) */
	{ __LINE__, 100000, CURSOR_FOLLOWS, 0, 0, 1, 0, 500000, 1, 2.5, FRAME_SAME, 0 },
	/* another frame (a recursive call's run of the loop): not measured */
	{ __LINE__, 100000, CURSOR_FOLLOWS, RSP0 - 0x100, 0, 0, 0, 500000, 0, 1, FRAME_SAME, 0 },
	/* a tick between that ran no window: the time is not the loop's */
	{ __LINE__, 100000, CURSOR_FOLLOWS, 0, 0, 0, 1, 500000, 0, 1, FRAME_SAME, 0 },
	/* no progress (the program is behind the window's start): not measured */
	{ __LINE__, 0, CURSOR_FOLLOWS, 0, 0, 0, 0, 500000, 0, 1, FRAME_SAME, 0 },
	/* no program time: not measured */
	{ __LINE__, 100000, CURSOR_FOLLOWS, 0, 0, 0, 0, 0, 0, 1, FRAME_SAME, 0 },
	/* counter and cursor agree, but the frame's saved word changed: another
	 * call of the function, its cursors restarted (small_copies' copy
	 * loop): not measured */
	{ __LINE__, 100000, CURSOR_FOLLOWS, 0, 0, 0, 0, 500000, 0, 1, FRAME_MOVED, 1 },
	/* the same word, stored by the loop itself (a spill slot): measured */
	{ __LINE__, 100000, CURSOR_FOLLOWS, 0, 0, 0, 0, 500000, 1, 2.5, FRAME_MOVED_STORED, 0 },
};

static void regs_at(struct decode_regs *r, uint64_t rip, uint64_t rsp, uint64_t i, uint64_t cursor,
		    uint64_t base, uint64_t outer)
{
	memset(r, 0, sizeof *r);
	r->rip = rip;
	r->gpr[DECODE_RSP] = rsp;
	r->gpr[DECODE_RCX] = i;
	r->gpr[DECODE_RBX] = cursor;
	r->gpr[DECODE_RAX] = 0x1234 + i * i * 7; /* no fixed step */
	r->gpr[DECODE_RDI] = base;
	r->gpr[DECODE_RSI] = outer;
}

#define WRITTEN ((1u << DECODE_RCX) | (1u << DECODE_RBX) | (1u << DECODE_RAX))

static uint64_t cursor_at(int how, uint64_t i)
{
	return how == CURSOR_SCRATCH ? CURSOR + i * i * 24 : CURSOR + i * 8;
}

/* Window k: the tick at HEAD + 4 with rcx = 100, then ITERS back edges;
 * stored_word1: the loop stores to its frame's word 1. */
static void window_k(struct pace *p, int how, int stored_word1)
{
	struct decode_regs r;
	regs_at(&r, HEAD + 4, RSP0, 100, cursor_at(how, 100), BASE, 7);
	pace_window_begin(p, &r, 400000, CPN, fake_read);
	for (uint64_t it = 1; it <= ITERS; it++) {
		regs_at(&r, HEAD, RSP0, 100 + it, cursor_at(how, 100 + it), BASE, 7);
		pace_back_edge(p, HEAD + 0x20, &r, (double)it * CPI, WRITTEN);
	}
	uint64_t at[2] = {CURSOR, RSP0 + 8};
	uint32_t len[2] = {8, 4}; /* a 4-byte spill marks its word */
	pace_window_stored(p, at, len, stored_word1 ? 2 : 1, 0, 0);
	(void)pace_window_end(p);
}

static void run_row(const struct row *w)
{
	struct pace p;
	struct decode_regs r;
	memset(&p, 0, sizeof p);
	for (int k = 0; k < 8; k++)
		fake_frame[k] = 0x1000 + (uint64_t)k;
	window_k(&p, w->cursor, w->frame == FRAME_MOVED_STORED);
	if (w->frame != FRAME_SAME)
		fake_frame[1]++;
	if (w->forget)
		pace_forget(&p);
	uint64_t i = 100 + w->n;
	uint64_t cursor = w->cursor == CURSOR_JUMPS ? CURSOR + 8 : cursor_at(w->cursor, i);
	uint64_t rsp = w->rsp1 ? w->rsp1 : RSP0;
	uint64_t base = w->base_moved ? BASE + 0x10000 : BASE;
	regs_at(&r, HEAD + 8, rsp, i, cursor, base, w->outer_moved ? 8 : 7);
	pace_window_begin(&p, &r, w->tick_ns, CPN, fake_read);
	r.rip = HEAD;
	pace_back_edge(&p, HEAD + 0x20, &r, 3, WRITTEN);
	struct pace_result res = pace_window_end(&p);
	CHECK(w->line, res.measured == w->measured, "measured %d, want %d", res.measured, w->measured);
	CHECK(w->line, res.other_call == w->other_call, "other_call %d, want %d", res.other_call,
	      w->other_call);
	double rel = res.factor / w->factor;
	CHECK(w->line, rel > 0.999 && rel < 1.001, "factor %g, want %g", res.factor, w->factor);
}

/* A later window of a measured loop that cannot measure it (its previous
 * tick was elsewhere) keeps the model's answer: the measurement was the
 * other tick's time. */
static void test_only_its_tick(void)
{
	struct pace p;
	struct decode_regs r;
	memset(&p, 0, sizeof p);
	window_k(&p, CURSOR_FOLLOWS, 0);
	regs_at(&r, HEAD, RSP0, 100 + 4000, CURSOR + (100 + 4000) * 8, BASE, 7);
	pace_window_begin(&p, &r, 500000, CPN, fake_read);
	pace_back_edge(&p, HEAD + 0x20, &r, 3, WRITTEN);
	struct pace_result res = pace_window_end(&p);
	CHECK(__LINE__, res.measured && res.factor > 62.4 && res.factor < 62.6, "first: %g", res.factor);

	pace_forget(&p);
	regs_at(&r, HEAD + 4, RSP0, 900000, CURSOR + 900000 * 8, BASE, 7);
	pace_window_begin(&p, &r, 500000, CPN, fake_read);
	regs_at(&r, HEAD, RSP0, 900001, CURSOR + 900001 * 8, BASE, 7);
	pace_back_edge(&p, HEAD + 0x20, &r, 5, WRITTEN);
	res = pace_window_end(&p);
	CHECK(__LINE__, !res.measured && res.factor == 1, "next: measured %d factor %g",
	      res.measured, res.factor);
}

int main(void)
{
	for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++)
		run_row(&rows[k]);
	test_only_its_tick();
	printf("test_pace: %zu rows\n", sizeof rows / sizeof rows[0]);
	return check_failures != 0;
}
