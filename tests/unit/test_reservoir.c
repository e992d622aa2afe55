/* Unit test of reservoir_pick_slot (Witch 4.4.1), statistical, fixed seeds.
 *
 * The test plays the runtime's part: it keeps the armed mask and remembers
 * which sample sits in which slot.  A sample whose pick is slot s replaces
 * whatever s held (and sets bit s); -1 leaves it unmonitored.  A "trap" is
 * simulated by clearing a slot's bit.
 *
 * Expected values (Witch 4.4.1, reservoir sampling after Vitter's
 * algorithm R), with n slots and samples S_1..S_k offered since the last
 * time a slot was free:
 *
 *   - While a slot is free the sample takes it with probability 1 (the
 *     lowest free slot, never evicting an armed one).  So for k <= n every
 *     S_i is monitored with probability 1.
 *   - S_k, k > n, is installed with probability n/k, in a victim slot
 *     chosen uniformly among the n.  By induction, if before S_k each of
 *     S_1..S_{k-1} is monitored with probability n/(k-1), then after it
 *       Pr[S_i monitored] = n/(k-1) * (1 - (n/k) * (1/n))
 *                         = n/(k-1) * (k-1)/k = n/k,   i < k
 *       Pr[S_k monitored] = n/k.
 *     So after K samples every S_i is monitored with probability n/K:
 *     1/K for n = 1 (test a), 4/50 for n = 4, K = 50 (test b).
 *   - Each victim slot is hit with probability 1/n given an install.
 *   - A trap that frees a slot "resets the probability to 1.0": the next
 *     sample is installed, in that slot, with probability 1 (test c); k then
 *     restarts from the slots armed, so the sample after the refill (the
 *     (n+1)-th counted) is installed with probability n/(n+1).
 *
 * Each statistical check draws T independent trials and requires the count
 * to lie within 5 standard deviations sqrt(T p (1 - p)) of T p.  The seeds
 * are fixed, so the outcome is deterministic.  Failures print __LINE__.
 * Exit status 0 on success.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "witch/reservoir.h"
#include "witch/rng.h"

#include "check.h"

/* sqrt without libm (the test links only the runtime's libraries) */
static double my_sqrt(double x)
{
	if (x <= 0.0)
		return 0.0;
	double r = x > 1.0 ? x : 1.0;
	for (int i = 0; i < 200; i++)
		r = 0.5 * (r + x / r);
	return r;
}

/* count out of trials against probability p: within 5 sigma */
static int check_binomial(int line, const char *what, uint64_t count, uint64_t trials, double p)
{
	double mean = (double)trials * p;
	double sd = my_sqrt((double)trials * p * (1.0 - p));
	double dev = (double)count - mean;
	if (sd == 0.0) {
		if ((double)count != mean) {
			FAIL(line, "%s: %llu of %llu, want exactly %.0f", what,
			     (unsigned long long)count, (unsigned long long)trials, mean);
			return 0;
		}
		return 1;
	}
	if (dev > 5.0 * sd || dev < -5.0 * sd) {
		FAIL(line, "%s: %llu of %llu (%.5f), want p = %.5f (mean %.1f, sd %.1f, off by %.1f sd)",
		     what, (unsigned long long)count, (unsigned long long)trials,
		     (double)count / (double)trials, p, mean, sd, dev / sd);
		return 0;
	}
	return 1;
}

/* The simulated debug registers of one thread. */
struct sim {
	struct reservoir r;
	uint32_t mask;
	int n;
	int who[32]; /* sample number in each slot, 0 = none */
};

static void sim_init(struct sim *s, int n)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
}

/* Offer sample number id; returns the slot picked (-1 unmonitored) and
 * checks the pick is legal: a free slot when there is one, else -1 or an
 * armed slot below n. */
static int sim_offer(int line, struct sim *s, int id, struct rng *rng)
{
	uint32_t full = (1u << s->n) - 1;
	uint32_t before = s->mask;
	int slot = reservoir_pick_slot(&s->r, s->mask, s->n, rng);
	if (slot < -1 || slot >= s->n) {
		FAIL(line, "pick returned %d for n = %d", slot, s->n);
		return -1;
	}
	if ((before & full) != full) {
		int lowest = __builtin_ctz(~before & full);
		if (slot != lowest) {
			FAIL(line, "mask 0x%x n %d: pick %d, want the lowest free slot %d", before,
			     s->n, slot, lowest);
			return -1;
		}
	}
	if (slot >= 0) {
		s->who[slot] = id;
		s->mask |= 1u << slot;
	}
	return slot;
}

static void sim_trap(struct sim *s, int slot)
{
	s->mask &= ~(1u << slot);
	s->who[slot] = 0;
}

/* ------------------------------------------------------------------ */
/* (a) n = 1, K = 10: each S_i is the one watched at the end w.p. 1/K  */

static void test_single_register(void)
{
	enum { K = 10, T = 100000 };
	uint64_t count[K + 1] = {0};
	struct rng rng;
	rng_seed(&rng, 0x5eed0001);
	for (int t = 0; t < T; t++) {
		struct sim s;
		sim_init(&s, 1);
		for (int i = 1; i <= K; i++)
			sim_offer(__LINE__, &s, i, &rng);
		CHECK(__LINE__, s.mask == 1 && s.who[0] >= 1 && s.who[0] <= K,
		      "trial %d: slot 0 holds sample %d, mask 0x%x", t, s.who[0], s.mask);
		count[s.who[0]]++;
	}
	for (int i = 1; i <= K; i++) {
		char what[64];
		snprintf(what, sizeof(what), "n=1 K=%d: S_%d watched at the end", K, i);
		check_binomial(__LINE__, what, count[i], T, 1.0 / K);
	}
}

/* ------------------------------------------------------------------ */
/* (b) n = 4, K = 50: after every S_k, each S_i (i <= k) is monitored     */
/* with probability min(1, n/k); victims are uniform over the slots.      */

static void test_four_registers(void)
{
	enum { N = 4, K = 50, T = 100000 };
	static uint64_t alive[K + 1][K + 1]; /* [k][i]: S_i monitored after S_k */
	uint64_t installs[K + 1] = {0};      /* S_k installed */
	uint64_t victim[N] = {0}, evictions = 0;
	struct rng rng;
	rng_seed(&rng, 0x5eed0002);
	memset(alive, 0, sizeof(alive));
	for (int t = 0; t < T; t++) {
		struct sim s;
		sim_init(&s, N);
		for (int k = 1; k <= K; k++) {
			int full = s.mask == (1u << N) - 1;
			int slot = sim_offer(__LINE__, &s, k, &rng);
			if (slot >= 0) {
				installs[k]++;
				if (full) {
					victim[slot]++;
					evictions++;
				}
			}
			for (int j = 0; j < N; j++)
				if (s.who[j])
					alive[k][s.who[j]]++;
		}
		/* the four slots hold four distinct samples */
		CHECK(__LINE__, s.mask == 0xf, "trial %d: mask 0x%x at the end", t, s.mask);
		for (int a = 0; a < N; a++)
			for (int b = a + 1; b < N; b++)
				CHECK(__LINE__, s.who[a] != s.who[b], "trial %d: slots %d and %d both hold S_%d",
				      t, a, b, s.who[a]);
	}
	for (int k = 1; k <= K; k++) {
		double p = k <= N ? 1.0 : (double)N / k;
		char what[96];
		snprintf(what, sizeof(what), "n=4: S_%d installed", k);
		check_binomial(__LINE__, what, installs[k], T, p);
		for (int i = 1; i <= k; i++) {
			snprintf(what, sizeof(what), "n=4: S_%d monitored after S_%d", i, k);
			check_binomial(__LINE__, what, alive[k][i], T, p);
		}
	}
	for (int j = 0; j < N; j++) {
		char what[64];
		snprintf(what, sizeof(what), "n=4: slot %d chosen as victim", j);
		check_binomial(__LINE__, what, victim[j], evictions, 1.0 / N);
	}
}

/* ------------------------------------------------------------------ */
/* (c) a trap frees a slot: the next sample takes it with probability 1; */
/* the one after the refill is installed with probability n/(n+1).       */

struct trap_case {
	int line;
	int n;
	int before;   /* samples offered before the trap */
	uint32_t freed; /* slots the trap(s) free */
};

static const struct trap_case trap_cases[] = {
	{__LINE__, 1, 1, 0x1},
	{__LINE__, 1, 10, 0x1},
	{__LINE__, 1, 1000, 0x1},
	{__LINE__, 4, 4, 0x1},
	{__LINE__, 4, 20, 0x4},
	{__LINE__, 4, 50, 0x8},
	{__LINE__, 4, 5000, 0x2},
	{__LINE__, 4, 50, 0xa},  /* two freed: both refilled, lowest first */
	{__LINE__, 4, 50, 0xf},  /* all freed */
	{__LINE__, 2, 30, 0x2},
	{__LINE__, 3, 30, 0x5},
};

static void test_trap_frees_slot(void)
{
	enum { T = 100000 };
	struct rng rng;
	rng_seed(&rng, 0x5eed0003);
	for (size_t c = 0; c < sizeof(trap_cases) / sizeof(trap_cases[0]); c++) {
		const struct trap_case *tc = &trap_cases[c];
		uint64_t after = 0, wrong = 0;
		int trials = tc->before > 100 ? T / 20 : T;
		for (int t = 0; t < trials; t++) {
			struct sim s;
			int id = 1;
			sim_init(&s, tc->n);
			for (; id <= tc->before; id++)
				sim_offer(tc->line, &s, id, &rng);
			for (int j = 0; j < tc->n; j++)
				if (tc->freed & (1u << j))
					sim_trap(&s, j);
			/* each freed slot, lowest first, takes the next sample for sure */
			for (int j = 0; j < tc->n; j++) {
				if (!(tc->freed & (1u << j)))
					continue;
				int slot = sim_offer(tc->line, &s, id++, &rng);
				if (slot != j && wrong++ < 3)
					FAIL(tc->line, "n %d, freed 0x%x: next sample went to %d, want %d",
					     tc->n, tc->freed, slot, j);
			}
			/* all armed again: k restarted from n, so the next is S_{n+1} */
			if (sim_offer(tc->line, &s, id++, &rng) >= 0)
				after++;
		}
		char what[96];
		snprintf(what, sizeof(what), "n=%d freed 0x%x: first sample after the refill installed",
			 tc->n, tc->freed);
		check_binomial(tc->line, what, after, (uint64_t)trials, (double)tc->n / (tc->n + 1));
	}

	/* n = 1 over a long run with traps at random times: after each trap the
	 * next sample is watched, and then S_i since the refill is monitored at
	 * the end of an m-sample stretch with probability 1/m. */
	enum { M = 6 };
	uint64_t count[M + 1] = {0};
	struct sim s;
	sim_init(&s, 1);
	for (int t = 0; t < T; t++) {
		if (s.mask)
			sim_trap(&s, 0);
		for (int i = 1; i <= M; i++) {
			int slot = sim_offer(__LINE__, &s, i, &rng);
			if (i == 1)
				CHECK(__LINE__, slot == 0, "trial %d: sample after the trap not watched (%d)",
				      t, slot);
		}
		count[s.who[0]]++;
	}
	for (int i = 1; i <= M; i++) {
		char what[64];
		snprintf(what, sizeof(what), "n=1 after a trap: S_%d of %d watched", i, M);
		check_binomial(__LINE__, what, count[i], T, 1.0 / M);
	}
}

/* ------------------------------------------------------------------ */
/* (d) free slots are filled first, in order, never evicting            */

static void test_fill_order(void)
{
	struct rng rng;
	rng_seed(&rng, 0x5eed0004);

	/* from empty: S_1..S_n go to slots 0..n-1 */
	for (int n = 1; n <= 4; n++) {
		for (int t = 0; t < 1000; t++) {
			struct sim s;
			sim_init(&s, n);
			for (int i = 0; i < n; i++) {
				int slot = reservoir_pick_slot(&s.r, s.mask, n, &rng);
				CHECK(__LINE__, slot == i, "n %d: sample %d went to %d, want %d", n, i + 1,
				      slot, i);
				if (slot < 0 || slot >= n)
					break;
				s.mask |= 1u << slot;
			}
		}
	}

	/* any mask with a free slot: the lowest free one, whatever k is */
	static const uint64_t ks[] = {0, 1, 3, 4, 5, 17, 1000, 1ull << 40};
	for (int n = 1; n <= 4; n++) {
		uint32_t full = (1u << n) - 1;
		for (uint32_t mask = 0; mask < full; mask++) {
			for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
				for (int t = 0; t < 50; t++) {
					struct reservoir r = {.k = ks[ki]};
					int slot = reservoir_pick_slot(&r, mask, n, &rng);
					int want = __builtin_ctz(~mask & full);
					if (slot != want) {
						FAIL(__LINE__, "n %d mask 0x%x k %llu: pick %d, want %d", n, mask,
						     (unsigned long long)ks[ki], slot, want);
						break;
					}
				}
			}
		}
	}

	/* explicit rows */
	static const struct {
		int line;
		int n;
		uint32_t mask;
		int want;
	} rows[] = {
		{__LINE__, 4, 0x0, 0}, {__LINE__, 4, 0x1, 1}, {__LINE__, 4, 0x3, 2},
		{__LINE__, 4, 0x7, 3}, {__LINE__, 4, 0xb, 2}, {__LINE__, 4, 0xe, 0},
		{__LINE__, 4, 0xd, 1}, {__LINE__, 4, 0x5, 1}, {__LINE__, 3, 0x3, 2},
		{__LINE__, 2, 0x2, 0}, {__LINE__, 1, 0x0, 0},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct reservoir r = {.k = 99};
		int slot = reservoir_pick_slot(&r, rows[i].mask, rows[i].n, &rng);
		CHECK(rows[i].line, slot == rows[i].want, "n %d mask 0x%x: pick %d, want %d",
		      rows[i].n, rows[i].mask, slot, rows[i].want);
	}

	/* the same seed gives the same decisions */
	{
		struct rng a, b;
		struct sim sa, sb;
		rng_seed(&a, 12345);
		rng_seed(&b, 12345);
		sim_init(&sa, 4);
		sim_init(&sb, 4);
		int same = 1;
		for (int i = 1; i <= 10000 && same; i++) {
			int x = sim_offer(__LINE__, &sa, i, &a);
			int y = sim_offer(__LINE__, &sb, i, &b);
			same = x == y;
		}
		CHECK(__LINE__, same, "same seed, different picks");
	}
}

int main(void)
{
	test_single_register();
	test_four_registers();
	test_trap_frees_slot();
	test_fill_order();
	if (check_failures) {
		fprintf(stderr, "test_reservoir: %d failure(s)\n", check_failures);
		return 1;
	}
	printf("test_reservoir: all passed\n");
	return 0;
}
