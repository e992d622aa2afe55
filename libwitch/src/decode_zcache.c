/* decode_zcache: Zydis's decodings kept from run to run, a thread's own and
 * the process's shared, and the shadow that says when the shared one is
 * worth turning on (decode_zcache.h). */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <x86intrin.h>

#include "witch/decode.h"
#include "witch/lockguard.h"
#include "witch/decode_zcache.h"
#include "witch/prefault.h"

/* Mappings are multiples of 4 KiB: the bytes of an instruction that ends
 * in pc's page are mapped whenever pc is. */
#define CODE_PAGE 4096u

static struct decode_zshared zcache_process;
static int zcache_process_mapped;

void decode_zcache_init(struct decode_zcache *c, void *mem, struct decode_zshared *shared)
{
	uintptr_t m = (uintptr_t)mem;
	memset(c, 0, sizeof(*c));
	c->tag = (struct decode_zcache_tag *)mem;
	m += sizeof(struct decode_zcache_tag) * DECODE_ZCACHE_SLOTS;
	c->slot = (struct decode_zcache_slot *)((m + 63) & ~(uintptr_t)63);
	c->shared = shared;
}

void decode_zshared_init(struct decode_zshared *s, void *mem)
{
	uintptr_t m = (uintptr_t)mem;
	memset(s, 0, sizeof(*s));
	s->tag = (struct decode_zshared_tag *)mem;
	m += sizeof(struct decode_zshared_tag) * DECODE_ZSHARED_SLOTS;
	s->slot = (struct decode_zcache_slot *)((m + 63) & ~(uintptr_t)63);
}

struct decode_zshared *decode_zshared_process(void)
{
	if (!zcache_process_mapped) {
		/* Reserved, not touched: pages fill only once it is on. */
		void *mem = lockguard_map(DECODE_ZSHARED_MEM_SIZE, MAP_NORESERVE);
		if (mem == MAP_FAILED)
			return NULL;
		decode_zshared_init(&zcache_process, mem);
		zcache_process_mapped = 1;
	}
	return &zcache_process;
}

void decode_zcache_begin(struct decode_zcache *c)
{
	if (++c->gen == 0) { /* wrapped: no slot may look current */
		for (unsigned i = 0; i < DECODE_ZCACHE_SLOTS; i++)
			c->tag[i].gen = 0;
		for (unsigned i = 0; i < DECODE_ZSHADOW_SLOTS; i++)
			c->shadow.gen[i] = 0;
		c->gen = 1;
	}
}

/* Tells c->prev that the instruction at pc ends at pc + len, where the run
 * goes on there: a ret or jmp that ends just before a function's start did
 * not bring it there. */
static void zcache_note_end(struct decode_zcache *c, uint64_t pc, unsigned len,
			    const struct decode_insn *out)
{
	if (c->prev && (!(out->flags & DECODE_F_BRANCH) || (out->flags & (DECODE_F_COND | DECODE_F_CALL))))
		decode_cache_note(c->prev, pc + len, pc);
}

/* Turned on, the shared cache's tags (32 KiB, hashed sets) are all read,
 * each page first as the zero page and then written, two faults: they are
 * made present at once (prefault.h).  Its decodings are written before
 * they are read, one fault a page, and only where used: made present
 * whole (688 KiB) they saved ~100 faults a run, ~0.5 ms here, for up to
 * +640 KiB of peak RSS (gzip; bench/results/prefault.md).  Where the tags
 * cannot be, they fault in as before. */
static void zcache_grow(struct decode_zcache *c)
{
	if (c->shared && !__atomic_exchange_n(&c->shared->on, 1, __ATOMIC_RELAXED)) {
		c->turned_on = 1;
		(void)prefault_range(c->shared->tag,
				     sizeof(struct decode_zshared_tag) * DECODE_ZSHARED_SLOTS);
	}
}

/* Whether shared slot i holds pc's decoding, whose len bytes are still
 * the code at pc.  seq is read sequentially consistent: after the run's
 * count in runs (decode_zcache_enter), so a writer that made it odd first
 * is seen (decode_zcache.h). */
static int zshared_current(const struct decode_zshared *s, unsigned i, uint64_t pc, unsigned len)
{
	const struct decode_zshared_tag *t = &s->tag[i];
	uint32_t seq = __atomic_load_n(&t->seq, __ATOMIC_SEQ_CST);
	return !(seq & 1) && len && __atomic_load_n(&t->pc, __ATOMIC_RELAXED) == pc &&
	       __atomic_load_n(&t->len, __ATOMIC_RELAXED) == len &&
	       memcmp((const void *)(uintptr_t)pc, s->slot[i].bytes, len) == 0;
}

/* The shared slot holding pc's decoding, still current: its index, and
 * its length in *len; else -1. */
static int zshared_find(const struct decode_zshared *s, uint64_t hash, uint64_t pc,
			unsigned *len)
{
	unsigned first = (unsigned)(hash >> (64 - DECODE_ZCACHE_GROWN_BITS)) * DECODE_ZCACHE_WAYS;
	for (unsigned i = first; i < first + DECODE_ZCACHE_WAYS; i++) {
		if (__atomic_load_n(&s->tag[i].pc, __ATOMIC_RELAXED) != pc)
			continue;
		unsigned n = __atomic_load_n(&s->tag[i].len, __ATOMIC_RELAXED);
		if (zshared_current(s, i, pc, n)) {
			*len = n;
			return (int)i;
		}
		return -1;
	}
	return -1;
}

/* c's own references to shared slot i, which held pc: dropped, as the
 * slot is about to hold another decoding. */
static void zcache_drop_shared(struct decode_zcache *c, uint64_t pc, unsigned i)
{
	uint64_t hash = pc * 0x9E3779B97F4A7C15ull;
	unsigned first = (unsigned)(hash >> (64 - DECODE_ZCACHE_SET_BITS)) * DECODE_ZCACHE_WAYS;
	for (unsigned w = first; w < first + DECODE_ZCACHE_WAYS; w++)
		if (c->tag[w].pc == pc && c->tag[w].shared == i + 1)
			c->tag[w].len = 0;
}

/* Offers the decoding in *from (len bytes at pc) to the shared cache: an
 * empty way of its set, else the thread's next.  Not kept when another
 * thread is writing that slot, or another run is inside (its lookups may
 * be using the slot in place). */
static void zshared_offer(struct decode_zshared *s, struct decode_zcache *c, uint64_t hash,
			  uint64_t pc, unsigned len, const struct decode_zcache_slot *from)
{
	unsigned first = (unsigned)(hash >> (64 - DECODE_ZCACHE_GROWN_BITS)) * DECODE_ZCACHE_WAYS;
	unsigned i = first + (c->next_way++ % DECODE_ZCACHE_WAYS);
	for (unsigned j = first; j < first + DECODE_ZCACHE_WAYS; j++)
		if (__atomic_load_n(&s->tag[j].len, __ATOMIC_RELAXED) == 0) {
			i = j;
			break;
		}
	struct decode_zshared_tag *t = &s->tag[i];
	uint32_t seq = __atomic_load_n(&t->seq, __ATOMIC_RELAXED);
	if ((seq & 1) || !__atomic_compare_exchange_n(&t->seq, &seq, seq + 1, 0, __ATOMIC_SEQ_CST,
						      __ATOMIC_RELAXED))
		return;
	if (__atomic_load_n(&s->runs, __ATOMIC_SEQ_CST) > c->inside) {
		__atomic_store_n(&t->seq, seq, __ATOMIC_RELEASE); /* untouched: as it was */
		c->shared_busy++;
		return;
	}
	uint64_t old_pc = __atomic_load_n(&t->pc, __ATOMIC_RELAXED);
	if (__atomic_load_n(&t->len, __ATOMIC_RELAXED))
		zcache_drop_shared(c, old_pc, i);
	__atomic_store_n(&t->pc, pc, __ATOMIC_RELAXED);
	__atomic_store_n(&t->len, (uint8_t)len, __ATOMIC_RELAXED);
	memcpy(&s->slot[i], from, sizeof(*from));
	__atomic_store_n(&t->seq, seq + 2, __ATOMIC_RELEASE);
}

void decode_zcache_enter(struct decode_zcache *c)
{
	/* Kept decodings are checked again before their first use in this
	 * run, whatever its first lookups: a shared slot may have changed
	 * since the last run left. */
	decode_zcache_begin(c);
	if (c->shared && !c->inside) {
		__atomic_fetch_add(&c->shared->runs, 1, __ATOMIC_SEQ_CST);
		c->inside = 1;
	}
}

void decode_zcache_leave(struct decode_zcache *c)
{
	if (c->inside) {
		__atomic_fetch_sub(&c->shared->runs, 1, __ATOMIC_RELEASE);
		c->inside = 0;
	}
}

void decode_zcache_postfork_cache(struct decode_zcache *c)
{
	c->inside = 0;
}

/* The same lookup in the shadow of the shared cache's tags, for a pc whose
 * shared set is one the shadow keeps.  Turning it on pays where it
 * would hit at least 5% of the lookups the cache misses (a miss costs
 * ~0.3-0.5 us; a window runs ~170 instructions) and halve its misses:
 * gcc's cc1, 80% -> 74%, has code too large for either. */
static void zcache_shadow_note(struct decode_zcache *c, uint64_t hash, uint64_t pc, int missed)
{
	struct decode_zshadow *s = &c->shadow;
	uint64_t grown_set = hash >> (64 - DECODE_ZCACHE_GROWN_BITS);
	if (grown_set & ((1u << DECODE_ZSHADOW_SAMPLE_BITS) - 1))
		return;
	unsigned first = (unsigned)(grown_set >> DECODE_ZSHADOW_SAMPLE_BITS) * DECODE_ZCACHE_WAYS;
	unsigned victim = first, i;
	for (i = first; i < first + DECODE_ZCACHE_WAYS; i++) {
		if (s->pc[i] == pc)
			break;
		if (s->pc[victim] && (s->pc[i] == 0 || s->gen[i] < s->gen[victim]))
			victim = i;
	}
	if (i == first + DECODE_ZCACHE_WAYS) {
		s->misses++;
		s->pc[victim] = pc;
		i = victim;
	}
	s->gen[i] = c->gen;
	s->small_misses += (uint32_t)missed;
	if (++s->lookups % DECODE_ZSHADOW_PERIOD || s->lookups < DECODE_ZSHADOW_FIRST)
		return;
	uint32_t saved = s->small_misses > s->misses ? s->small_misses - s->misses : 0;
	if (saved * 20 >= s->lookups && s->misses * 2 <= s->small_misses)
		zcache_grow(c);
	if (s->lookups >= DECODE_ZSHADOW_HALVE) {
		s->lookups /= 2;
		s->misses /= 2;
		s->small_misses /= 2;
	}
}

int decode_at_zydis_cached(struct decode_zcache *c, uint64_t pc, const struct decode_regs *regs,
			   struct decode_insn *out, const struct decode_zydis **z)
{
	uint64_t hash = pc * 0x9E3779B97F4A7C15ull;
	unsigned first = (unsigned)(hash >> (64 - DECODE_ZCACHE_SET_BITS)) * DECODE_ZCACHE_WAYS;
	unsigned victim = first;
	struct decode_zshared *shared =
		c->shared && __atomic_load_n(&c->shared->on, __ATOMIC_RELAXED) ? c->shared : NULL;
	int shadowing = c->shared && !shared;
	for (unsigned i = first; i < first + DECODE_ZCACHE_WAYS; i++) {
		struct decode_zcache_tag *t = &c->tag[i];
		if (t->len && t->pc == pc) {
			int first_in_run = t->gen != c->gen;
			/* A shared slot is used where it is (decode_zcache.h). */
			struct decode_zcache_slot *from =
				t->shared ? &c->shared->slot[t->shared - 1] : &c->slot[i];
			int current = !first_in_run ||
				      (t->shared ? zshared_current(c->shared, t->shared - 1u, pc, t->len)
						 : memcmp((const void *)(uintptr_t)pc, from->bytes,
							  t->len) == 0);
			if (current) {
				t->gen = c->gen;
				c->hits++;
				if (shadowing)
					zcache_shadow_note(c, hash, pc, 0);
				*z = &from->z;
				decode_form_apply(&from->z.form, regs, out);
				/* Once a run: a kept decoding outlives its note in
				 * the smaller, direct-mapped prev cache. */
				if (first_in_run)
					zcache_note_end(c, pc, t->len, out);
				return 0;
			}
			victim = i; /* the code changed: this way goes */
			break;
		}
		/* An empty way first, else the one found current longest ago. */
		if (c->tag[victim].len && (t->len == 0 || t->gen < c->tag[victim].gen))
			victim = i;
	}
	c->misses++;
	if (shadowing)
		zcache_shadow_note(c, hash, pc, 1);
	struct decode_zcache_tag *t = &c->tag[victim];
	struct decode_zcache_slot *v = &c->slot[victim];
	t->len = 0;
	unsigned len = 0;
	int at = shared ? zshared_find(shared, hash, pc, &len) : -1;
	if (at >= 0) {
		c->shared_hits++;
		t->pc = pc;
		t->gen = c->gen;
		t->shared = (uint16_t)(at + 1);
		t->len = (uint8_t)len;
		*z = &shared->slot[at].z;
		decode_form_apply(&shared->slot[at].z.form, regs, out);
		zcache_note_end(c, pc, len, out);
		return 0;
	}
	/* The bytes at pc are in its page, which is mapped: the run decodes
	 * there in place (decode_full); only whole-page entries are kept. */
	*z = &v->z; /* kept or not, there until the next call */
	uint64_t decode_from = __rdtsc();
	int rc = decode_at_zydis(pc, regs, out, &v->z);
	c->decode_tsc += __rdtsc() - decode_from;
	if (rc == 0 && (pc & (CODE_PAGE - 1)) + v->z.insn.length <= CODE_PAGE) {
		len = v->z.insn.length;
		memcpy(v->bytes, (const void *)(uintptr_t)pc, len);
		t->pc = pc;
		t->gen = c->gen;
		t->shared = 0;
		t->len = (uint8_t)len;
		if (shared)
			zshared_offer(shared, c, hash, pc, len, v);
	}
	if (rc == 0)
		zcache_note_end(c, pc, v->z.insn.length, out);
	return rc;
}

void decode_zcache_postfork_child(void)
{
	if (!zcache_process_mapped || !zcache_process.on)
		return; /* untouched: left so */
	zcache_process.runs = 0;
	for (unsigned i = 0; i < DECODE_ZSHARED_SLOTS; i++) {
		struct decode_zshared_tag *t = &zcache_process.tag[i];
		if (t->seq & 1) { /* its writer is not in the child */
			t->len = 0;
			t->seq++;
		}
	}
}
