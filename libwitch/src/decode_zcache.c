/* decode_zcache: Zydis's decodings kept from run to run, and the shadow
 * that says when a thread's cache should grow (decode_zcache.h). */
#include <stdint.h>
#include <string.h>

#include "witch/decode.h"
#include "witch/decode_zcache.h"

/* Mappings are multiples of 4 KiB: the bytes of an instruction that ends
 * in pc's page are mapped whenever pc is. */
#define CODE_PAGE 4096u

static uint32_t zcache_grown_threads; /* atomic */

void decode_zcache_init(struct decode_zcache *c, void *mem)
{
	uintptr_t m = (uintptr_t)mem;
	memset(c, 0, sizeof(*c));
	c->set_bits = DECODE_ZCACHE_SET_BITS;
	c->tag = (struct decode_zcache_tag *)mem;
	m += sizeof(struct decode_zcache_tag) * DECODE_ZCACHE_SLOTS_MAX;
	c->slot = (struct decode_zcache_slot *)((m + 63) & ~(uintptr_t)63);
}

void decode_zcache_begin(struct decode_zcache *c)
{
	if (++c->gen == 0) { /* wrapped: no slot may look current */
		unsigned slots = (1u << c->set_bits) * DECODE_ZCACHE_WAYS;
		for (unsigned i = 0; i < slots; i++)
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

static void zcache_grow(struct decode_zcache *c)
{
	if (__atomic_add_fetch(&zcache_grown_threads, 1, __ATOMIC_RELAXED) > DECODE_ZCACHE_GROWN_MAX) {
		__atomic_sub_fetch(&zcache_grown_threads, 1, __ATOMIC_RELAXED);
		return; /* asked again next period: another thread may have ended */
	}
	/* The kept decodings stay where they are; a pc looked up in its
	 * grown set does not find them there and is decoded once more. */
	c->set_bits = DECODE_ZCACHE_GROWN_BITS;
}

/* The same lookup in the shadow of the grown cache's tags, for a pc whose
 * grown set is one the shadow keeps.  Growing pays where the grown cache
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
	unsigned first = (unsigned)(hash >> (64 - c->set_bits)) * DECODE_ZCACHE_WAYS, victim = first;
	int grown = decode_zcache_grown(c);
	for (unsigned i = first; i < first + DECODE_ZCACHE_WAYS; i++) {
		struct decode_zcache_tag *t = &c->tag[i];
		if (t->len && t->pc == pc) {
			int first_in_run = t->gen != c->gen;
			if (!first_in_run ||
			    memcmp((const void *)(uintptr_t)pc, c->slot[i].bytes, t->len) == 0) {
				t->gen = c->gen;
				c->hits++;
				if (!grown)
					zcache_shadow_note(c, hash, pc, 0);
				*z = &c->slot[i].z;
				decode_form_apply(&c->slot[i].z.form, regs, out);
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
	if (!grown)
		zcache_shadow_note(c, hash, pc, 1);
	/* The bytes at pc are in its page, which is mapped: the run decodes
	 * there in place (decode_full); only whole-page entries are kept. */
	struct decode_zcache_tag *t = &c->tag[victim];
	struct decode_zydis *vz = &c->slot[victim].z;
	t->len = 0;
	int rc = decode_at_zydis(pc, regs, out, vz);
	*z = vz; /* kept or not, there until the next call */
	if (rc == 0 && (pc & (CODE_PAGE - 1)) + vz->insn.length <= CODE_PAGE) {
		t->pc = pc;
		t->gen = c->gen;
		t->len = vz->insn.length;
		memcpy(c->slot[victim].bytes, (const void *)(uintptr_t)pc, t->len);
	}
	if (rc == 0)
		zcache_note_end(c, pc, vz->insn.length, out);
	return rc;
}

void decode_zcache_release(struct decode_zcache *c)
{
	if (!decode_zcache_grown(c))
		return;
	c->set_bits = DECODE_ZCACHE_SET_BITS; /* counted once: the thread is ending */
	uint32_t v = __atomic_load_n(&zcache_grown_threads, __ATOMIC_RELAXED);
	while (v && !__atomic_compare_exchange_n(&zcache_grown_threads, &v, v - 1, 0,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void decode_zcache_postfork_child(void)
{
	__atomic_store_n(&zcache_grown_threads, 0, __ATOMIC_RELAXED);
}
