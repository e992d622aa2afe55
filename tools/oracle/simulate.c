/* simulate: libwitch's algorithm on the exhaustive stream; see simulate.h. */
#include "simulate.h"

#include "access.h"
#include "insn_class.h"
#include "objects.h"
#include "witch/watch_word.h"

#include "pub_tool_libcbase.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_threadstate.h"

#define VALUE_MAX 64 /* bytes of a sampled access remembered (WATCHPOINT_VALUE_MAX) */

/* One calling context's sample weight (mu), what its traps took (eta) and
 * its samples now armed (Witch 4.4.2). */
struct ctx_weight {
	UInt ctx; /* 0 = empty slot */
	UInt armed;
	double mu, eta;
};

struct ctx_table {
	struct ctx_weight *e;
	UInt cap, n;
};

struct sim_wp {
	Bool armed;
	Addr addr;	/* the watched word: aligned, 1 to 8 bytes */
	UInt len;
	UInt ctx;
	UInt key;	/* <ctx, the sampled byte's object then> (objects.h) */
	double weight;	/* ATTR_HT: P x bytes / Pr[armed and still armed] */
	Addr value_addr; /* the remembered bytes: the sampled access's, up to VALUE_MAX */
	UInt value_len;
	UChar value[VALUE_MAX]; /* silent: as the sampled store left them; load: as read */
};

/* One simulated client in one thread: its own sampler, debug registers,
 * reservoir and contexts, as a libwitch thread has. */
struct sim_run {
	ULong countdown;
	ULong reservoir_k;
	struct sim_wp wp[SIMULATE_WATCHPOINTS];
	UInt n_armed;
	struct ctx_table weights;
};

struct sim_thread {
	ULong rng;
	struct sim_run run[SIM_CLIENTS];
};

struct sim_seed {
	struct sim_thread **threads; /* by ThreadId, made at first access */
	struct pairs pairs[SIM_CLIENTS];
	struct simulate_stats stats[SIM_CLIENTS];
	struct object_bytes obj_sampled[SIM_CLIENTS]; /* P x bytes of the samples, by object */
};

static struct sim_seed sim[SIMULATE_MAX_SEEDS];
static UInt sim_nseeds;
static ULong sim_period[SIM_CLIENTS];
static ThreadId sim_tid;
static enum simulate_attribution sim_attribution;

/* --- small parts -------------------------------------------------------------- */

static ULong rng_next(ULong *s) /* splitmix64 */
{
	ULong z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* As libwitch's sampler_next_period: uniform in [P/2, 3P/2). */
static ULong next_countdown(ULong *rng, ULong period)
{
	return period / 2 + rng_next(rng) % period;
}

/* libwitch's watchpoint_pick_word, from the header both include. */
static void watch_word(Addr a, UInt n, ULong random, Addr *wa, UInt *wl)
{
	uint64_t addr;
	uint32_t len;
	watch_word_pick(a, n, random, VALUE_MAX, &addr, &len);
	*wa = (Addr)addr;
	*wl = len;
}

static struct ctx_weight *weight_of(struct ctx_table *t, UInt ctx)
{
	if (t->n * 2 >= t->cap) {
		UInt cap = t->cap ? t->cap * 2 : 64;
		struct ctx_weight *e = VG_(calloc)("oracle.sim.weights", cap, sizeof(*e));
		for (UInt i = 0; i < t->cap; i++) {
			if (!t->e[i].ctx)
				continue;
			UInt j = (t->e[i].ctx * 2654435761u) & (cap - 1);
			while (e[j].ctx)
				j = (j + 1) & (cap - 1);
			e[j] = t->e[i];
		}
		if (t->e)
			VG_(free)(t->e);
		t->e = e;
		t->cap = cap;
	}
	UInt j = (ctx * 2654435761u) & (t->cap - 1);
	while (t->e[j].ctx && t->e[j].ctx != ctx)
		j = (j + 1) & (t->cap - 1);
	if (!t->e[j].ctx) {
		t->e[j].ctx = ctx;
		t->n++;
	}
	return &t->e[j];
}

static struct sim_thread *thread_of(struct sim_seed *s, UInt seed_index)
{
	if (sim_tid >= VG_N_THREADS)
		return NULL;
	struct sim_thread *t = s->threads[sim_tid];
	if (t)
		return t;
	t = VG_(calloc)("oracle.sim.thread", 1, sizeof(*t));
	t->rng = (s->stats[0].seed << 20) ^ ((ULong)sim_tid * 0x9e3779b97f4a7c15ull) ^ seed_index;
	for (UInt c = 0; c < SIM_CLIENTS; c++)
		t->run[c].countdown = next_countdown(&t->rng, sim_period[c]);
	s->threads[sim_tid] = t;
	return t;
}

/* --- values (libwitch's value.c rule) ------------------------------------------- */


enum verdict { V_KEEP, V_USE, V_WASTE, V_WASTE_APPROX };

/* The overlap [lo, hi) of the deciding access (elements of its class from
 * a) against the remembered bytes, both images of [w->value_addr, +len). */
static enum verdict judge(const struct sim_wp *w, const UChar *now, Addr lo, Addr hi, Addr a,
			  UInt cls)
{
	UInt size = (cls & INSN_ELEM_MASK) == INSN_ELEM_F32 ? 4 :
		    (cls & INSN_ELEM_MASK) == INSN_ELEM_F64 ? 8 : 0;
	Addr base = w->value_addr, end = w->value_addr + w->value_len;
	if (size == 0 || a > lo)
		return VG_(memcmp)(w->value + (lo - base), now + (lo - base), hi - lo) == 0 ? V_WASTE
											     : V_USE;
	enum verdict v = V_WASTE;
	for (Addr e = a + (lo - a) / size * size; e < hi; e += size) {
		if (e >= base && e + size <= end) {
			if (VG_(memcmp)(w->value + (e - base), now + (e - base), size) == 0)
				continue;
			if (!access_fp_close(w->value + (e - base), now + (e - base), size))
				return V_USE;
			v = V_WASTE_APPROX;
		} else {
			Addr x = e > lo ? e : lo, y = e + size < hi ? e + size : hi;
			if (VG_(memcmp)(w->value + (x - base), now + (x - base), y - x) != 0)
				return V_USE;
		}
	}
	return v;
}

/* The remembered range as it is after the access [a, a+n) wrote `now`
 * (memory may still hold the old bytes: stores are seen before they land). */
static void image_after(const struct sim_wp *w, Addr a, UInt n, const UChar *now, UChar *out)
{
	VG_(memcpy)(out, (const void *)w->value_addr, w->value_len);
	if (!now)
		return;
	for (UInt i = 0; i < w->value_len; i++) {
		Addr x = w->value_addr + i;
		if (x >= a && x < a + n)
			out[i] = now[x - a];
	}
}

/* --- trap: verdict -> pair (4.4.2) ----------------------------------------------- */

static void release(struct sim_run *r, int slot)
{
	struct sim_wp *w = &r->wp[slot];
	struct ctx_weight *cw = weight_of(&r->weights, w->ctx);
	if (cw->armed)
		cw->armed--;
	w->armed = False;
	r->n_armed--;
}

/* What the access [a, a+n) does to a watched word it overlaps: crafts/dead.c,
 * silent.c and load.c.  A load-and-store instruction reaches here as its
 * load and then its store, so the load decides first, as there. */
static enum verdict verdict_of(enum simulate_client c, struct sim_wp *w, Bool is_store, Addr a,
			       UInt n, UInt cls, const UChar *now)
{
	UChar image[VALUE_MAX];
	Addr lo = a > w->addr ? a : w->addr;
	Addr hi = a + n < w->addr + w->len ? a + n : w->addr + w->len;

	switch (c) {
	case SIM_DEAD:
		return is_store ? V_WASTE : V_USE;
	case SIM_SILENT:
		if (!is_store)
			return V_KEEP; /* a write watchpoint: loads do not trap */
		image_after(w, a, n, now, image);
		return judge(w, image, lo, hi, a, cls);
	case SIM_LOAD:
		/* A store is no verdict (crafts/load.c): the next load is compared
		 * with what the sampled load read, whatever was stored between. */
		if (is_store)
			return V_KEEP;
		image_after(w, a, n, NULL, image);
		return judge(w, image, lo, hi, a, cls);
	default:
		return V_KEEP;
	}
}

static void check_traps(struct sim_seed *s, enum simulate_client c, struct sim_run *r,
			Bool is_store, Addr a, UInt n, UInt cls, UInt ctx, const UChar *now)
{
	for (int i = 0; i < SIMULATE_WATCHPOINTS && r->n_armed; i++) {
		struct sim_wp *w = &r->wp[i];
		if (!w->armed || a >= w->addr + w->len || a + n <= w->addr)
			continue;
		enum verdict v = verdict_of(c, w, is_store, a, n, cls, now);
		if (v == V_KEEP)
			continue;
		struct ctx_weight *cw = weight_of(&r->weights, w->ctx);
		double share;
		if (sim_attribution == ATTR_HT) {
			share = w->weight;
		} else {
			share = cw->mu - cw->eta;
			if (sim_attribution == ATTR_SHARED && cw->armed)
				share /= cw->armed;
		}
		cw->eta += share;
		ULong bytes = (ULong)(share + 0.5);
		UInt watch = w->key;
		release(r, i);
		s->stats[c].traps++;
		pairs_add(&s->pairs[c], watch, ctx, v != V_USE ? bytes : 0, v == V_USE ? bytes : 0,
			  v == V_WASTE_APPROX ? bytes : 0, 1);
	}
}

/* --- sample: count -> context -> reservoir -> watchpoint (4.4.1) ------------------ */

/* libwitch's reservoir_pick_slot: a free register, else the k-th sample
 * since the registers filled replaces a random one with probability n/k. */
static int pick_slot(struct sim_run *r, ULong *rng, double *p_arm)
{
	*p_arm = 1.0;
	for (int i = 0; i < SIMULATE_WATCHPOINTS; i++) {
		if (!r->wp[i].armed) {
			r->reservoir_k = r->n_armed + 1;
			return i;
		}
	}
	r->reservoir_k++;
	/* Each armed sample survives this one with probability 1 - q/n, where q
	 * is the chance of a replacement: its weight grows by the inverse. */
	double q = r->reservoir_k <= SIMULATE_WATCHPOINTS
			   ? 1.0 : (double)SIMULATE_WATCHPOINTS / (double)r->reservoir_k;
	for (int i = 0; i < SIMULATE_WATCHPOINTS; i++)
		r->wp[i].weight /= 1.0 - q / SIMULATE_WATCHPOINTS;
	*p_arm = q;
	if (r->reservoir_k <= SIMULATE_WATCHPOINTS ||
	    rng_next(rng) % r->reservoir_k < SIMULATE_WATCHPOINTS)
		return (int)(rng_next(rng) % SIMULATE_WATCHPOINTS);
	return -1;
}

static void sample(struct sim_seed *s, struct sim_thread *t, enum simulate_client c, Addr a,
		   UInt n, UInt ctx, UInt obj, const UChar *value)
{
	struct sim_run *r = &t->run[c];
	struct simulate_stats *st = &s->stats[c];

	st->samples++;
	weight_of(&r->weights, ctx)->mu += (double)sim_period[c] * n;
	object_bytes_add(&s->obj_sampled[c], obj, sim_period[c] * n);
	double p_arm;
	int slot = pick_slot(r, &t->rng, &p_arm);
	if (slot < 0) {
		st->not_monitored++;
		return;
	}
	if (r->wp[slot].armed)
		release(r, slot); /* the victim's weight waits in its context's mu */
	struct sim_wp *w = &r->wp[slot];
	watch_word(a, n, rng_next(&t->rng), &w->addr, &w->len);
	w->ctx = ctx;
	w->key = objects_key(ctx, obj);
	w->weight = (double)sim_period[c] * n / p_arm;
	w->value_addr = a;
	w->value_len = n < VALUE_MAX ? n : VALUE_MAX;
	if (value)
		VG_(memcpy)(w->value, value, w->value_len);
	else
		VG_(memcpy)(w->value, (const void *)a, w->value_len);
	w->armed = True;
	r->n_armed++;
	weight_of(&r->weights, ctx)->armed++;
	st->armed++;
}

/* One event for client c's sampler: a sample when its count runs out.
 * Implicit stack accesses are counted, as a hardware event counts them,
 * but silent and load do not sample them (libwitch's sample_wanted). */
static void count_event(struct sim_seed *s, struct sim_thread *t, enum simulate_client c,
			Addr a, UInt n, UInt cls, UInt ctx, UInt obj, const UChar *value)
{
	struct sim_run *r = &t->run[c];
	if (--r->countdown > 0)
		return;
	r->countdown = next_countdown(&t->rng, sim_period[c]);
	if (c != SIM_DEAD && (cls & INSN_STACK))
		return;
	sample(s, t, c, a, n, ctx, obj, value);
}

/* --- the API ------------------------------------------------------------------------ */

Int simulate_init(UInt seeds, ULong store_period, ULong load_period)
{
	if (seeds > SIMULATE_MAX_SEEDS || store_period < 1 || load_period < 1)
		return -1;
	sim_nseeds = seeds;
	sim_period[SIM_DEAD] = sim_period[SIM_SILENT] = store_period;
	sim_period[SIM_LOAD] = load_period;
	for (UInt i = 0; i < seeds; i++) {
		sim[i].threads = VG_(calloc)("oracle.sim.threads", VG_N_THREADS, sizeof(void *));
		for (UInt c = 0; c < SIM_CLIENTS; c++) {
			sim[i].stats[c].period = sim_period[c];
			sim[i].stats[c].seed = i + 1;
		}
	}
	return 0;
}

UInt simulate_seeds(void)
{
	return sim_nseeds;
}

void simulate_set_attribution(enum simulate_attribution a)
{
	sim_attribution = a;
}

void simulate_switch_thread(ThreadId tid)
{
	sim_tid = tid;
}

void simulate_load(Addr a, UInt n, UInt cls, UInt ctx, UInt obj)
{
	for (UInt i = 0; i < sim_nseeds; i++) {
		struct sim_thread *t = thread_of(&sim[i], i);
		if (!t)
			continue;
		check_traps(&sim[i], SIM_DEAD, &t->run[SIM_DEAD], False, a, n, cls, ctx, NULL);
		check_traps(&sim[i], SIM_LOAD, &t->run[SIM_LOAD], False, a, n, cls, ctx, NULL);
		count_event(&sim[i], t, SIM_LOAD, a, n, cls, ctx, obj, NULL);
	}
}

void simulate_store(Addr a, UInt n, UInt cls, UInt ctx, UInt obj, const UChar *old,
		    const UChar *now)
{
	(void)old;
	for (UInt i = 0; i < sim_nseeds; i++) {
		struct sim_thread *t = thread_of(&sim[i], i);
		if (!t)
			continue;
		for (UInt c = 0; c < SIM_CLIENTS; c++)
			check_traps(&sim[i], (enum simulate_client)c, &t->run[c], True, a, n, cls,
				    ctx, now);
		count_event(&sim[i], t, SIM_DEAD, a, n, cls, ctx, obj, now);
		count_event(&sim[i], t, SIM_SILENT, a, n, cls, ctx, obj, now);
	}
}

const struct pairs *simulate_pairs(UInt seed, enum simulate_client c)
{
	return &sim[seed].pairs[c];
}

const struct simulate_stats *simulate_stats_of(UInt seed, enum simulate_client c)
{
	return &sim[seed].stats[c];
}

const struct object_bytes *simulate_object_sampled(UInt seed, enum simulate_client c)
{
	return &sim[seed].obj_sampled[c];
}

void simulate_clear(void)
{
	for (UInt i = 0; i < sim_nseeds; i++) {
		for (UInt tid = 0; tid < VG_N_THREADS; tid++) {
			struct sim_thread *t = sim[i].threads[tid];
			if (!t)
				continue;
			for (UInt c = 0; c < SIM_CLIENTS; c++)
				if (t->run[c].weights.e)
					VG_(free)(t->run[c].weights.e);
			VG_(free)(t);
			sim[i].threads[tid] = NULL;
		}
		for (UInt c = 0; c < SIM_CLIENTS; c++) {
			pairs_clear(&sim[i].pairs[c]);
			object_bytes_clear(&sim[i].obj_sampled[c]);
			ULong period = sim[i].stats[c].period, seed = sim[i].stats[c].seed;
			VG_(memset)(&sim[i].stats[c], 0, sizeof(sim[i].stats[c]));
			sim[i].stats[c].period = period;
			sim[i].stats[c].seed = seed;
		}
	}
}
