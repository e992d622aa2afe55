/* test_look_trace: look_trace_hits, how many times the program hits a
 * watched range before a pick's own access, and look_trace_next, the
 * access after it that decides a watch of a range (look.h).
 *
 * One trace, written by hand, stands for the exact part of a window; each
 * row asks look_trace_hits(trace, pos, addr, len, kinds) with the trace's
 * `complete` set as the row says, and wants a count of instructions or -1.
 * A data breakpoint hits once per instruction, so two accesses of one
 * instruction (one `insn`) count once; an access counts when its kind
 * shares a bit with kinds (an RMW is a load and a store) and its bytes
 * overlap [addr, addr + len); an unsure access that would count makes the
 * answer -1, one that would not is ignored; entries at or after pos do not
 * count; pos past `complete` (or past n) is -1.
 *
 * look_trace_next rows want the entry that decides, or -1: the first
 * entry of the row's kinds after the instruction at pos (its own entries
 * are skipped) whose bytes overlap, provided no unsure entry comes first, whatever frame it
 * ran in (the caller makes its context from the entry's frame); within
 * `complete` and n.
 *
 * Failures print the row's __LINE__.  Exit status 0 on success.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "witch/look.h"

#define L DECODE_LOAD
#define S DECODE_STORE
#define RW DECODE_RMW /* both bits: an RMW access, or a read/write watch */
#define ALL UINT32_MAX /* complete: the whole trace */

/* The window, in program order.  A = [0x1000, 0x1008), B = [0x2000, 0x2008). */
static const struct look_trace_access entries[] = {
	/*  pc        addr    len    insn kind unsure frame elem value_known value */
	{0x400000, 0x1000, 8, 0, L, 0, 1, 0, 0, 0},        /*  0: load A */
	{0x400004, 0x1000, 8, 1, S, 0, 1, 0, 0, 0},        /*  1: store A */
	{0x400008, 0x1004, 4, 2, RW, 0, 1, 0, 0, 0},       /*  2: RMW of A's upper half */
	{0x40000c, 0x2000, 4, 3, L, 0, 1, 0, 0, 0},        /*  3: one instruction: loads B's low half */
	{0x40000c, 0x2004, 4, 3, S, 0, 1, 0, 0, 0},        /*  4: ... and stores its high half */
	{0x400010, 0x0ffc, 8, 4, L, 0, 1, 0, 0, 0},        /*  5: load over A's start [0xffc, 0x1004) */
	{0x400014, 0x1006, 4, 5, S, 0, 2, 0, 0, 0},        /*  6: store over A's end [0x1006, 0x100a), in a callee */
	{0x400018, 0x0ff8, 8, 6, S, 0, 1, 0, 0, 0},        /*  7: store ending where A starts */
	{0x40001c, 0x1008, 8, 7, L, 0, 1, 0, 0, 0},        /*  8: load starting where A ends */
	{0x400020, 0x3000, 8, 8, S, 1, 1, 0, 0, 0},        /*  9: unsure store [0x3000, 0x3008) */
	{0x400024, 0x2000, 8, 9, L, 0, 1, 0, 0, 0},        /* 10: load B */
	{0x400030, 0x1000, 1, 10, RW, 0, 1, 0, 0, 0},      /* 11: RMW of A's first byte ...  */
	{0x400030, 0x1000, 1, 12, RW, 0, 1, 0, 0, 0},      /* 12: ... and again, a loop later (insn 11 a jmp) */
	{0, 0x0800, 0x1000, UINT16_MAX, RW, 1, 1, 0, 0, 0}, /* 13: unsure [0x800, 0x1800): a call not run */
};
#define N_ENTRIES ((uint32_t)(sizeof(entries) / sizeof(entries[0])))

/* A row of either table: the trace's `complete`, the arguments, the answer
 * (a count for look_trace_hits; an entry index or -1 for look_trace_next). */
struct trace_row {
	int line;
	uint32_t complete;
	uint32_t pos;
	uint64_t addr;
	uint32_t len;
	uint8_t kinds;
	int want;
};

static const struct trace_row rows[] = {
	/* no overlap */
	{__LINE__, ALL, 14, 0x5000, 8, RW, 0},
	{__LINE__, ALL, 14, 0x1800, 0x800, RW, 0}, /* between entry 13's end and B */
	{__LINE__, ALL, 13, 0x0ff0, 8, RW, 0},     /* below entries 5 and 7 */
	{__LINE__, ALL, 13, 0x1010, 8, RW, 0},     /* above entry 8 */
	{__LINE__, ALL, 13, 0x2008, 8, RW, 0},     /* right after B */
	{__LINE__, ALL, 0, 0x1000, 8, RW, 0},      /* pos 0: nothing before */

	/* A, whole, by kinds: RMW hits both a store and a load watch */
	{__LINE__, ALL, 13, 0x1000, 8, RW, 7}, /* 0 1 2 5 6 11 12 */
	{__LINE__, ALL, 13, 0x1000, 8, S, 5},  /* 1 2 6 11 12 */
	{__LINE__, ALL, 13, 0x1000, 8, L, 5},  /* 0 2 5 11 12 */
	{__LINE__, ALL, 1, 0x1000, 8, S, 0},   /* a load does not hit a store watch */
	{__LINE__, ALL, 1, 0x1000, 8, L, 1},
	{__LINE__, ALL, 2, 0x1000, 8, L, 1},   /* a store does not hit a load watch */
	{__LINE__, ALL, 3, 0x1000, 8, L, 2},   /* ... an RMW does */
	{__LINE__, ALL, 3, 0x1000, 8, S, 2},
	{__LINE__, ALL, 13, 0x1000, 8, 0, 0},  /* no kinds: nothing hits */

	/* pos: entries at or after it do not count */
	{__LINE__, ALL, 1, 0x1000, 8, RW, 1},
	{__LINE__, ALL, 2, 0x1000, 8, RW, 2},
	{__LINE__, ALL, 5, 0x1000, 8, RW, 3},
	{__LINE__, ALL, 6, 0x1000, 8, RW, 4},
	{__LINE__, ALL, 7, 0x1000, 8, RW, 5},
	{__LINE__, ALL, 11, 0x1000, 8, RW, 5},
	{__LINE__, ALL, 12, 0x1000, 8, RW, 6},

	/* partial overlap at either end, down to one byte */
	{__LINE__, ALL, 13, 0x1003, 1, RW, 3}, /* 0 1 5: entry 5's last byte */
	{__LINE__, ALL, 13, 0x1003, 1, L, 2},  /* 0 5 */
	{__LINE__, ALL, 13, 0x1007, 2, RW, 5}, /* 0 1 2 6 8: the watch's end is entry 8's start */
	{__LINE__, ALL, 13, 0x1009, 1, S, 1},  /* entry 6's last byte */
	{__LINE__, ALL, 13, 0x1009, 1, RW, 2}, /* 6 8 */
	{__LINE__, ALL, 13, 0x0ff8, 8, S, 1},  /* entry 7 alone: entry 1 starts at the end */
	{__LINE__, ALL, 13, 0x0ff8, 8, L, 1},  /* entry 5 over the watch's end */
	{__LINE__, ALL, 13, 0x0fff, 1, RW, 2}, /* 5 7 */
	{__LINE__, ALL, 13, 0x1008, 8, L, 1},  /* entry 8; 0 and 1 end at the start */
	{__LINE__, ALL, 13, 0x1008, 8, RW, 2}, /* 6 8 */
	{__LINE__, ALL, 13, 0x1004, 2, RW, 3}, /* 0 1 2 */
	{__LINE__, ALL, 13, 0x0f00, 0x200, RW, 9}, /* wide: 0 1 2 5 6 7 8 11 12 */

	/* two accesses of one instruction count once; two runs at one pc twice */
	{__LINE__, ALL, 5, 0x2000, 8, RW, 1},
	{__LINE__, ALL, 4, 0x2000, 8, RW, 1},
	{__LINE__, ALL, 5, 0x2000, 8, L, 1},
	{__LINE__, ALL, 5, 0x2000, 8, S, 1},
	{__LINE__, ALL, 5, 0x2000, 4, S, 0},
	{__LINE__, ALL, 5, 0x2004, 4, L, 0},
	{__LINE__, ALL, 5, 0x2004, 4, S, 1},
	{__LINE__, ALL, 5, 0x2003, 2, RW, 1},  /* one byte of each access */
	{__LINE__, ALL, 11, 0x2000, 8, RW, 2}, /* insn 3 and 10 */
	{__LINE__, ALL, 13, 0x1000, 1, S, 3},  /* 1 11 12: one pc, two instructions */
	{__LINE__, ALL, 12, 0x1000, 1, S, 2},

	/* unsure: overlapping -> -1, else ignored */
	{__LINE__, ALL, 9, 0x3000, 8, S, 0},    /* entry 9 is at pos: not yet */
	{__LINE__, ALL, 10, 0x3000, 8, S, -1},
	{__LINE__, ALL, 10, 0x3000, 8, RW, -1},
	{__LINE__, ALL, 10, 0x3007, 1, RW, -1}, /* its last byte */
	{__LINE__, ALL, 14, 0x3000, 8, S, -1},
	{__LINE__, ALL, 14, 0x3000, 8, L, 0},   /* an unsure store cannot hit a load watch */
	{__LINE__, ALL, 14, 0x3008, 8, RW, 0},  /* right after it */
	{__LINE__, ALL, 14, 0x2ff8, 8, RW, 0},  /* right before it */
	{__LINE__, ALL, 14, 0x2000, 8, RW, 2},  /* B: past both unsure entries */
	{__LINE__, ALL, 14, 0x1000, 8, RW, -1}, /* A: entry 13 covers it, whatever came before */
	{__LINE__, ALL, 14, 0x1000, 8, L, -1},
	{__LINE__, ALL, 14, 0x17ff, 1, S, -1},  /* entry 13's last byte */
	{__LINE__, ALL, 14, 0x0800, 1, S, -1},  /* ... its first */
	{__LINE__, ALL, 14, 0x1800, 1, RW, 0},  /* ... just past it */
	{__LINE__, ALL, 14, 0x07f8, 8, RW, 0},  /* ... just before it */
	{__LINE__, ALL, 13, 0x1000, 8, RW, 7},  /* A before entry 13 */

	/* complete: pos past it cannot be told */
	{__LINE__, 5, 5, 0x1000, 8, RW, 3},
	{__LINE__, 5, 4, 0x1000, 8, RW, 3},
	{__LINE__, 5, 6, 0x1000, 8, RW, -1},
	{__LINE__, 5, 14, 0x1000, 8, RW, -1},
	{__LINE__, 5, 6, 0x5000, 8, RW, -1},     /* even with nothing there */
	{__LINE__, 0, 0, 0x1000, 8, RW, 0},
	{__LINE__, 0, 1, 0x1000, 8, RW, -1},
	{__LINE__, 13, 13, 0x1000, 8, RW, 7},
	{__LINE__, 13, 14, 0x2000, 8, RW, -1},
	{__LINE__, 14, 14, 0x2000, 8, RW, 2},    /* complete == n == pos */
	{__LINE__, 14, 15, 0x2000, 8, RW, -1},
	{__LINE__, ALL, 15, 0x2000, 8, RW, -1},  /* past n */
	{__LINE__, ALL, 100, 0x5000, 8, RW, -1},
};

static const struct trace_row next_rows[] = {
	{__LINE__, ALL, 0, 0x1000, 8, RW, 1},      /* load A, then store A */
	{__LINE__, ALL, 1, 0x1000, 8, RW, 2},      /* a partial overlap decides */
	{__LINE__, ALL, 1, 0x1000, 4, RW, 5},      /* the low half: entry 2 misses it, 5 (over A's start) */
	{__LINE__, ALL, 3, 0x2000, 8, RW, -1},     /* own entries skipped; the unsure 9 before 10 */
	{__LINE__, ALL, 10, 0x1000, 8, RW, 11},
	{__LINE__, ALL, 11, 0x1000, 1, RW, 12},    /* the same pc a loop later is another instruction */
	{__LINE__, ALL, 2, 0x1006, 2, RW, 6},      /* a callee's access decides too (frame 2) */
	{__LINE__, ALL, 7, 0x1008, 8, RW, 8},      /* adjacent below does not touch; 8 does */
	{__LINE__, ALL, 7, 0x0ff8, 8, RW, -1},     /* nothing before the unsure 9 */
	{__LINE__, ALL, 12, 0x1000, 1, RW, -1},    /* the unsure call (13) */
	{__LINE__, 1, 0, 0x1000, 8, RW, -1},       /* complete ends after the own access */
	{__LINE__, 5, 1, 0x1000, 4, RW, -1},       /* ... before entry 5 */
	{__LINE__, ALL, 14, 0x1000, 8, RW, -1},    /* pos at n */
	{__LINE__, ALL, 99, 0x1000, 8, RW, -1},
	/* a write watchpoint's kinds: loads go by unseen */
	{__LINE__, ALL, 0, 0x1000, 8, S, 1},
	{__LINE__, ALL, 2, 0x1000, 8, S, 6},   /* past the load over A's start */
	{__LINE__, ALL, 1, 0x1000, 4, S, -1},  /* no store on the low half before the unsure store 9 */
	{__LINE__, ALL, 7, 0x0ff8, 8, L, -1},  /* the unsure store 9 goes by, the unsure call 13 not */
};

static struct look_trace trace;

int main(void)
{
	memset(&trace, 0, sizeof(trace));
	memcpy(trace.a, entries, sizeof(entries));
	trace.n = N_ENTRIES;
	/* past n: accesses that would hit everything, were they read */
	for (uint32_t i = N_ENTRIES; i < N_ENTRIES + 4; i++)
		trace.a[i] = (struct look_trace_access){0x400100 + i, 0, UINT32_MAX, (uint16_t)(100 + i),
							RW, 0, 1, 0, 0, 0};

	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		trace.complete = rows[k].complete;
		int got = look_trace_hits(&trace, rows[k].pos, rows[k].addr, rows[k].len,
					  rows[k].kinds);
		CHECK(rows[k].line, got == rows[k].want,
		      "look_trace_hits(pos %u, 0x%llx, %u, kinds %u) with complete %u = %d, want %d",
		      rows[k].pos, (unsigned long long)rows[k].addr, rows[k].len, rows[k].kinds,
		      rows[k].complete, got, rows[k].want);
		CHECK(rows[k].line, trace.n == N_ENTRIES && trace.complete == rows[k].complete,
		      "the trace changed: n %u complete %u", trace.n, trace.complete);
	}
	for (size_t k = 0; k < sizeof(next_rows) / sizeof(next_rows[0]); k++) {
		trace.complete = next_rows[k].complete;
		const struct look_trace_access *e =
			look_trace_next(&trace, next_rows[k].pos, next_rows[k].addr, next_rows[k].len,
					next_rows[k].kinds);
		int got = e ? (int)(e - trace.a) : -1;
		CHECK(next_rows[k].line, got == next_rows[k].want,
		      "look_trace_next(pos %u, 0x%llx, %u, kinds %u) with complete %u = %d, want %d",
		      next_rows[k].pos, (unsigned long long)next_rows[k].addr, next_rows[k].len,
		      next_rows[k].kinds,
		      next_rows[k].complete, got, next_rows[k].want);
	}
	if (check_failures)
		fprintf(stderr, "test_look_trace: %d failure(s)\n", check_failures);
	else
		printf("test_look_trace: %zu + %zu rows\n", sizeof(rows) / sizeof(rows[0]),
		       sizeof(next_rows) / sizeof(next_rows[0]));
	return check_failures != 0;
}
