/* chase_stream: a memory-bound loop beside a cache-resident one, storing
 * known bytes: the software sampler's cost model cannot know the first's
 * cache misses, its loop pacing (pace.h) has to measure them.
 *
 *   for r in 1..R:
 *     chase(list)   N times: p->mark = i; p = p->next    one 8-byte store per
 *                   node; nodes in a random cycle over 64 MiB (> L3), so each
 *                   step is a dependent DRAM miss: ~100 ns here
 *     ka_stream(buf) 8N times: buf[i & 1023] = lcg          one 8-byte store per
 *                   step into 8 KiB (L1), ~4 cycles each (the LCG chain, ka.h)
 *
 * Bytes stored per repetition: chase 8N, stream 64N.  The list is built
 * once, before the loops, by build_list: 4N bytes to fill the order array,
 * 8N to shuffle it (two 4-byte stores per swap), 16N for the nodes' next
 * and mark: 28N.  main's few stores are nothing beside these.  Over R
 * repetitions the shares of stored bytes are
 *   chase      =  8NR / (72NR + 28N)    (R = 10: 80/748  = 0.107)
 *   stream     = 64NR / (72NR + 28N)    (R = 10: 640/748 = 0.856)
 *   build_list =  28N / (72NR + 28N)    (R = 10: 28/748  = 0.037)
 *
 * CPU time says otherwise: chase takes ~100 ms a repetition (N = 1M misses),
 * stream ~10 ms, so a sampler that weighed ticks by modelled cycles (a
 * chase step modelled at a few cycles) would give chase ~0.85.
 *
 * Usage: chase_stream [REPS]     default REPS = 10 (~1.2 s)
 */
#include "ka.h"

#define N (1u << 20)

struct node {
	struct node *next;
	uint64_t mark;
	uint64_t pad[6]; /* one node per cache line */
};

static struct node *nodes;
static uint64_t buf[KA_STREAM_WORDS];

/* A random cycle through all nodes (Sattolo's shuffle of the order). */
KA_FN static struct node *build_list(void)
{
	uint32_t *order = malloc((size_t)N * sizeof *order);
	uint64_t v = 42;
	if (!order) {
		perror("malloc");
		exit(2);
	}
	for (uint32_t i = 0; i < N; i++)
		order[i] = i;
	for (uint32_t i = N - 1; i > 0; i--) {
		KA_LCG(v);
		uint32_t j = (uint32_t)((v >> 33) % i);
		uint32_t t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (uint32_t i = 0; i < N; i++) {
		nodes[order[i]].next = &nodes[order[(i + 1) % N]];
		nodes[order[i]].mark = 0;
	}
	struct node *head = &nodes[order[0]];
	free(order);
	return head;
}

KA_FN static struct node *chase(struct node *p, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		p->mark = i;
		p = p->next;
	}
	return p;
}

int main(int argc, char **argv)
{
	long reps = ka_reps(argc, argv, 10);
	nodes = ka_alloc((size_t)N * sizeof *nodes);
	struct node *p = build_list();
	uint64_t sum = 0;
	for (long r = 0; r < reps; r++) {
		p = chase(p, N);
		ka_stream(buf, 8 * (uint64_t)N, (uint64_t)r);
		sum += buf[r & (KA_STREAM_WORDS - 1)] + p->mark;
	}
	printf("chase_stream: %llu\n", (unsigned long long)(sum & 0xffff));
	return 0;
}
