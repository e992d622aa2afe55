/* test_bpred: which conditional branches the model of the CPU's predictor
 * gets wrong (bpred.h), on outcome streams whose answer is known.
 *
 * Each row feeds one branch TRAIN outcomes of its pattern, then counts the
 * mispredictions over the next MEASURE.  Its local part (8 outcomes of
 * history) learns any pattern of period 8 or less: a loop that always runs
 * the same few iterations, an alternation; nothing learns a random stream,
 * where it misses about half of the outcomes, as a CPU does.  Its global
 * part learns a branch that follows the branches before it.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "witch/bpred.h"
#include "witch/rng.h"

#define TRAIN 200
#define MEASURE 1000

enum pattern { ALWAYS, NEVER, ALTERNATE, TRIP3, TRIP8, RANDOM, BIASED90 };

struct row {
	int line;
	enum pattern pattern;
	int backward;          /* the branch jumps back (a loop's) */
	int lo, hi;            /* mispredictions expected over MEASURE */
};

static const struct row rows[] = {
	/* a loop's back edge, always taken; forward error checks never taken */
	{ __LINE__, ALWAYS, 1, 0, 0 },
	{ __LINE__, NEVER, 0, 0, 0 },
	/* TNTN...: the history tells which comes next */
	{ __LINE__, ALTERNATE, 0, 0, 0 },
	/* an inner loop of 3 or 8 iterations: its exit is learnt too */
	{ __LINE__, TRIP3, 1, 0, 0 },
	{ __LINE__, TRIP8, 1, 0, 0 },
	/* a branch on random data: ~half missed (500 +- 5 sigma) */
	{ __LINE__, RANDOM, 0, 420, 580 },
	/* taken 90% at random: ~10-20% missed by 2-bit counters */
	{ __LINE__, BIASED90, 0, 60, 230 },
};

static struct rng rng_state = { 0x9e3779b97f4a7c15ull };

static uint64_t rng(void)
{
	return rng_next(&rng_state);
}

static int outcome(enum pattern p, int i)
{
	switch (p) {
	case ALWAYS: return 1;
	case NEVER: return 0;
	case ALTERNATE: return i & 1;
	case TRIP3: return i % 3 != 2;
	case TRIP8: return i % 8 != 7;
	case RANDOM: return (rng() >> 40) & 1;
	default: return rng() % 10 != 0;
	}
}

static void run_row(const struct row *w)
{
	static struct bpred p;
	memset(&p, 0, sizeof p);
	uint64_t pc = 0x401000, target = w->backward ? pc - 0x40 : pc + 0x40;
	int missed = 0;
	for (int i = 0; i < TRAIN + MEASURE; i++) {
		int wrong = bpred_mispredicted(&p, pc, target, outcome(w->pattern, i));
		if (i >= TRAIN)
			missed += wrong;
	}
	CHECK(w->line, missed >= w->lo && missed <= w->hi, "%d of %d missed, want %d-%d", missed,
	      MEASURE, w->lo, w->hi);
}

/* An untrained branch goes the way a static predictor guesses: backward
 * taken, forward not; and two branches keep apart. */
static void test_untrained_and_apart(void)
{
	static struct bpred p;
	memset(&p, 0, sizeof p);
	CHECK(__LINE__, bpred_mispredicted(&p, 0x1000, 0x0f00, 1) == 0, "backward taken: missed");
	CHECK(__LINE__, bpred_mispredicted(&p, 0x2000, 0x2100, 0) == 0, "forward not taken: missed");
	CHECK(__LINE__, bpred_mispredicted(&p, 0x3000, 0x3100, 1) == 1, "forward taken: not missed");
	int missed = 0;
	for (int i = 0; i < 100; i++) {
		missed += bpred_mispredicted(&p, 0x5000, 0x4f00, 1);
		missed += bpred_mispredicted(&p, 0x6000, 0x6100, 0);
	}
	CHECK(__LINE__, missed == 0, "two steady branches: %d missed", missed);
}

/* A forward branch that is always taken, from its first outcome on: each
 * outcome gives it a history not seen before (0, 1, 11, ... until eight
 * ones), whose counter has not trained, and the static guess (forward:
 * not taken) missed all nine; the branch's own bias, trained at the
 * first, says taken (printf's branches, strings: weighed at 0.5 of their
 * bytes with the static guess). */
static void test_bias_over_new_histories(void)
{
	static struct bpred p;
	memset(&p, 0, sizeof p);
	int missed = 0;
	for (int i = 0; i < 20; i++)
		missed += bpred_mispredicted(&p, 0x8000, 0x8100, 1);
	CHECK(__LINE__, missed == 1, "always-taken forward branch: %d of 20 missed, want 1", missed);
}

/* A branch that goes as the random branch before it did: the path tells
 * (the global part; ~7% missed while its 64 paths' counters saturate,
 * against ~50% with the local part alone); the random one is still missed
 * half the time. */
static void test_follows_path(void)
{
	static struct bpred p;
	memset(&p, 0, sizeof p);
	int missed_a = 0, missed_b = 0;
	for (int i = 0; i < TRAIN + MEASURE; i++) {
		int a = (rng() >> 40) & 1;
		int wa = bpred_mispredicted(&p, 0x7000, 0x7100, a);
		int wb = bpred_mispredicted(&p, 0x7400, 0x7500, a);
		if (i >= TRAIN) {
			missed_a += wa;
			missed_b += wb;
		}
	}
	CHECK(__LINE__, missed_a >= 420 && missed_a <= 580, "random: %d of %d missed", missed_a, MEASURE);
	CHECK(__LINE__, missed_b <= 100, "follower: %d of %d missed", missed_b, MEASURE);
}

/* A real program's branches are sparse: hundreds of them, each run a few
 * times a window, share the model's 256 histories, so the history a
 * window finds for one was mostly left by others, and its counter guesses
 * about as well as a coin.  Each of 600 branches here goes its own way
 * 95% of the time at random; a window runs 4 of them at random.  A CPU
 * misses ~5% (the other way); the branch's bias (1,024 counters) knows
 * its way where its history does not: 3.5% counted, where the stale
 * history alone counted 43%. */
static void test_sparse_branches(void)
{
	static struct bpred p;
	memset(&p, 0, sizeof p);
	int missed = 0, outcomes = 0;
	for (int w = 0; w < 4 * TRAIN + 2 * MEASURE; w++) {
		bpred_window_begin(&p);
		for (int k = 0; k < 4; k++) {
			uint64_t b = rng() % 600, pc = 0x10000 + 0x40 * b;
			int way = (int)(b & 1), taken = rng() % 20 ? way : !way;
			int wrong = bpred_mispredicted(&p, pc, pc + 0x20, taken);
			if (w >= 4 * TRAIN) {
				missed += wrong;
				outcomes++;
			}
		}
	}
	CHECK(__LINE__, missed * 100 <= 12 * outcomes, "sparse branches: %d of %d missed, want <= 12%%",
	      missed, outcomes);
}

int main(void)
{
	for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++)
		run_row(&rows[k]);
	test_untrained_and_apart();
	test_bias_over_new_histories();
	test_follows_path();
	test_sparse_branches();
	printf("test_bpred: %zu rows\n", sizeof rows / sizeof rows[0]);
	return check_failures != 0;
}
