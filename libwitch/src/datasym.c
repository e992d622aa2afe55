/* datasym: data symbols of the loaded modules (see datasym.h). */
#include "witch/datasym.h"
#include "witch/deps.h"
#include "witch/limitguard.h"
#include "witch/lockguard.h"
#include "witch/due.h"
#include "witch/elfdata.h"
#include "witch/log.h"
#include "witch/fdguard.h"
#include "witch/sigguard.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define DATASYM_ARENA (16u << 20)   /* symbols, names, paths of all files (elfdata.h) */
#define DATASYM_SLOTS 4096          /* module loads indexed at once (dead slots are reused) */
#define DS_RANGES 8                 /* data ranges per module; past it, the rest are not data */
#define ELFDATA_LOADS 16                 /* PT_LOADs a file may have to be indexed */
#define DS_TLS_SURPLUS (64u << 10) /* static TLS past the start modules' (glibc's surplus is ~2 KiB) */
#define DS_PROBE_MAX 64              /* modules with TLS one walk resolves; past it, unnamed */

/* What a lookup reads of a slot, word by word under the slot's sequence
 * count: every field a uint64_t. */
struct ds_body {
	uint64_t live;   /* 0: empty or unloaded */
	uint64_t base;   /* dlpi_addr */
	uint64_t lo, hi; /* bounds of the ranges, a lookup's first filter */
	uint64_t nranges;
	uint64_t range[DS_RANGES][2]; /* run-time [lo, hi) of the module's data */
	uint64_t file;   /* const struct elfdata_file * */
	uint64_t tls_static;
	uint64_t tls_off; /* int64_t: the block's start minus tp */
	uint64_t tls_size;
	uint64_t pending; /* a module loaded at start whose file is not read yet
			     (ds_body_fill, ds_read_pending) */
};

struct ds_slot {
	uint64_t seq; /* odd while the writer changes body */
	struct ds_body b;
	/* The writer's only. */
	const void *phdr;
	uint64_t seen;     /* the last walk that found the module */
	const char *name;  /* a pending module's dlpi_name (the loader's, kept: never
			      unloaded); NULL: the main program */
	uint32_t phnum;
};

static struct ds_slot *ds_slots;
static uint32_t ds_nslots;       /* published with release after a slot is filled */
/* The writers' exclusion (walks, fork) and the lookups' first read of a
 * module's file, which runs in a handler: a flag taken by compare and
 * swap, which a handler only tries (it may have interrupted the holder,
 * its own thread) and a walk waits for, yielding.  Not a mutex:
 * pthread_mutex_trylock is not async-signal-safe. */
static int ds_busy;

static int ds_try(void)
{
	int free_ = 0;
	return __atomic_compare_exchange_n(&ds_busy, &free_, 1, 0, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

static void ds_hold(void)
{
	while (!ds_try())
		sched_yield();
}

static void ds_drop(void)
{
	__atomic_store_n(&ds_busy, 0, __ATOMIC_RELEASE);
}
static uint64_t ds_gen;
static uint64_t ds_adds, ds_subs; /* the loader's counts at the last full walk */
static int ds_walked;
/* New modules with TLS a walk that could not start the probe thread left
 * (datasym_refresh_due): the next datasym_refresh probes them. */
static struct ds_slot *ds_unprobed[DS_PROBE_MAX];
static uint32_t ds_nunprobed;
static uint64_t ds_due_ns; /* when datasym_refresh_due last walked */
static struct datasym_stats ds_st;
static uint64_t ds_tls_bound; /* a static TLS block starts at most this far below tp */

static uint64_t ds_thread_pointer(void)
{
	uint64_t tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return tp;
}

static void ds_count(uint64_t *c, uint64_t n)
{
	__atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

/* ---- the module slots ---- */

static void ds_slot_write(struct ds_slot *s, const struct ds_body *in)
{
	uint64_t seq = s->seq;
	__atomic_store_n(&s->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	const uint64_t *src = (const uint64_t *)in;
	uint64_t *dst = (uint64_t *)&s->b;
	for (size_t i = 0; i < sizeof(*in) / sizeof(uint64_t); i++)
		__atomic_store_n(&dst[i], src[i], __ATOMIC_RELAXED);
	__atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
}

/* A consistent copy of a live slot: 0, or -EAGAIN while it changes (the
 * caller skips it: no spinning in a handler), -ENOENT when not live. */
static int ds_slot_read(const struct ds_slot *s, struct ds_body *out)
{
	uint64_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	if (seq & 1)
		return -EAGAIN;
	const uint64_t *src = (const uint64_t *)&s->b;
	uint64_t *dst = (uint64_t *)out;
	for (size_t i = 0; i < sizeof(*out) / sizeof(uint64_t); i++)
		dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) != seq)
		return -EAGAIN;
	return out->live ? 0 : -ENOENT;
}

/* The bounds, a lookup's first filter, grown to hold [lo, hi). */
static void ds_widen(struct ds_body *b, uint64_t lo, uint64_t hi)
{
	if (!b->lo || lo < b->lo)
		b->lo = lo;
	if (hi > b->hi)
		b->hi = hi;
}

static void ds_add_range(struct ds_body *b, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return;
	/* Sections of one code segment that touch (or nearly: alignment) join. */
	if (b->nranges && lo >= b->range[b->nranges - 1][1] && lo - b->range[b->nranges - 1][1] < 64) {
		b->range[b->nranges - 1][1] = hi;
	} else {
		if (b->nranges >= DS_RANGES)
			return;
		b->range[b->nranges][0] = lo;
		b->range[b->nranges][1] = hi;
		b->nranges++;
	}
	ds_widen(b, lo, hi);
}

/* The loaded image is the file's: the same PT_LOADs. */
static int ds_image_matches(const struct dl_phdr_info *info, const struct elfdata_file *f)
{
	uint32_t k = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		if (k >= f->nloads || f->loads[k].vaddr != ph->p_vaddr ||
		    f->loads[k].memsz != ph->p_memsz || f->loads[k].flags != ph->p_flags)
			return 0;
		k++;
	}
	return k == f->nloads;
}

/* The module's static TLS block in the calling thread, if it has one:
 * within the static area below tp (not a malloc'd block). */
static int ds_tls_at(const struct dl_phdr_info *info, struct ds_body *b)
{
	uint64_t tp = ds_thread_pointer(), data = (uint64_t)(uintptr_t)info->dlpi_tls_data;
	if (!data || data >= tp || tp - data > ds_tls_bound)
		return -ENOENT;
	b->tls_static = 1;
	b->tls_off = data - tp;
	return 0;
}

/* The body of a module's slot: its data ranges and its static TLS block.
 * f NULL: a module loaded at start whose file is not read yet (pending,
 * ds_read_pending): its PT_LOADs' bounds only, no ranges. */
static void ds_body_fill(const struct dl_phdr_info *info, const struct elfdata_file *f, int initial,
			 struct ds_body *b)
{
	memset(b, 0, sizeof(*b));
	b->live = 1;
	b->pending = f == NULL;
	b->base = info->dlpi_addr;
	b->file = (uint64_t)(uintptr_t)f;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_TLS)
			b->tls_size = ph->p_memsz;
		if (ph->p_type != PT_LOAD)
			continue;
		if (!f) {
			ds_widen(b, lo, hi);
			continue;
		}
		if (!(ph->p_flags & PF_X)) {
			ds_add_range(b, lo, hi);
			continue;
		}
		/* A code segment's non-code sections (.rodata without -z separate-code). */
		for (uint32_t k = 0; k < f->nsecs; k++) {
			uint64_t slo = info->dlpi_addr + f->secs[k].addr, shi = slo + f->secs[k].size;
			if (slo >= lo && shi <= hi)
				ds_add_range(b, slo, shi);
		}
	}
	/* A later module's block: ds_probe_tls, in a new thread. */
	if (b->tls_size && initial)
		ds_tls_at(info, b);
}

struct ds_walk {
	int initial;     /* datasym_init's walk: the modules loaded at start */
	int index;
	int unchanged;   /* no module came or went since the last walk */
	uint64_t adds, subs;
	uint32_t npending; /* new modules with TLS, for ds_probe_tls */
	struct ds_slot *pending[DS_PROBE_MAX];
};

/* A slot for a new module: a dead one, else the next; NULL when full. */
static struct ds_slot *ds_slot_new(int *append)
{
	for (uint32_t i = 0; i < ds_nslots; i++)
		if (!ds_slots[i].b.live) {
			*append = 0;
			return &ds_slots[i];
		}
	*append = 1;
	return ds_nslots < DATASYM_SLOTS ? &ds_slots[ds_nslots] : NULL;
}

static void ds_module(struct dl_phdr_info *info, int is_main, struct ds_walk *w)
{
	for (uint32_t i = 0; i < ds_nslots; i++) {
		struct ds_slot *s = &ds_slots[i];
		const struct elfdata_file *f = (const struct elfdata_file *)(uintptr_t)s->b.file;
		/* The same place and file: a library loaded where a closed one was is new. */
		if (s->b.live && s->phdr == info->dlpi_phdr && s->b.base == info->dlpi_addr &&
		    (is_main || !f || !info->dlpi_name || strcmp(f->path, info->dlpi_name) == 0)) {
			s->seen = ds_gen;
			return;
		}
	}
	const char *name = info->dlpi_name;
	char exe[4096];
	const char *open_path = name;
	if (is_main) {
		ssize_t len = readlink("/proc/thread-self/exe", exe, sizeof(exe) - 1);
		if (len <= 0)
			return;
		exe[len] = 0;
		name = exe;
		open_path = "/proc/thread-self/exe"; /* even if the file was moved or deleted */
	} else if (!name || !strchr(name, '/')) {
		return; /* the vDSO: no file */
	}

	int append;
	struct ds_slot *s = ds_slot_new(&append);
	if (!s) {
		ds_count(&ds_st.unindexed, 1);
		return;
	}
	struct ds_body b;
	memset(&b, 0, sizeof(b));
	s->phdr = info->dlpi_phdr;
	s->phnum = info->dlpi_phnum;
	s->seen = ds_gen;
	if (w->initial) {
		/* Read at the first lookup in it (ds_read_pending): most
		 * processes never sample most modules' data, and reading each
		 * file's headers and sections was ~0.9 ms of every start here. */
		ds_body_fill(info, NULL, 1, &b);
		s->name = is_main ? NULL : info->dlpi_name;
		ds_slot_write(s, &b);
		if (append)
			__atomic_store_n(&ds_nslots, ds_nslots + 1, __ATOMIC_RELEASE);
		return;
	}
	int fd = open(open_path, O_RDONLY | O_CLOEXEC);
	struct elfdata_image img = {info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, w->initial};
	const struct elfdata_file *f = fd >= 0 ? elfdata_file_get(fd, name, is_main ? open_path : NULL, &img) : NULL;
	if (fd >= 0)
		fdguard_close(fd);
	if (f && ds_image_matches(info, f)) {
		ds_body_fill(info, f, w->initial, &b);
		ds_count(&ds_st.modules, 1);
	} else {
		/* A slot with no ranges: counted once, not retried at every walk. */
		b.live = 1;
		ds_count(&ds_st.unindexed, 1);
	}
	ds_slot_write(s, &b);
	if (!w->initial && b.tls_size && w->npending < DS_PROBE_MAX)
		w->pending[w->npending++] = s;
	if (append)
		__atomic_store_n(&ds_nslots, ds_nslots + 1, __ATOMIC_RELEASE);
}

static int ds_walk_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ds_walk *w = arg;
	if (w->index == 0 && size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		w->adds = info->dlpi_adds;
		w->subs = info->dlpi_subs;
		if (ds_walked && w->adds == ds_adds && w->subs == ds_subs) {
			w->unchanged = 1;
			return 1;
		}
	}
	int is_main = w->index++ == 0 && info->dlpi_name && !info->dlpi_name[0];
	if (deps_owns_module(info->dlpi_addr))
		return 0; /* the runtime's decoder and unwinder (deps.h) */
	ds_module(info, is_main, w);
	return 0;
}

/* The static TLS area's size bound: the TLS segments of the modules
 * loaded now, aligned, and the surplus later modules' static TLS takes. */
static int ds_tls_size_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint64_t *sum = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_TLS)
			*sum += ph->p_memsz + (ph->p_align > 1 ? ph->p_align : 1);
	}
	return 0;
}

/* ---- static TLS of modules loaded after start ----
 *
 * The indexing thread's block of a module dlopen'd since it started is
 * not there yet (dlpi_tls_data NULL until the thread's dtv catches up)
 * or was malloc'd (dynamic TLS).  A new thread's dtv is current, and the
 * C library fills in only the static blocks at its creation: a module
 * with a block there has static TLS, at that offset in every thread. */

struct ds_probe {
	uint32_t n;
	struct {
		const void *phdr;
		uint64_t base;
		struct ds_body b; /* tls_static, tls_off found */
	} m[DS_PROBE_MAX];
};

typedef int (*ds_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static ds_create_fn ds_real_create; /* not the runtime's wrapper: this thread is not the program's */

static int ds_probe_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ds_probe *p = arg;
	for (uint32_t i = 0; i < p->n; i++)
		if (p->m[i].phdr == info->dlpi_phdr && p->m[i].base == info->dlpi_addr)
			ds_tls_at(info, &p->m[i].b);
	return 0;
}

static void *ds_probe_main(void *arg)
{
	dl_iterate_phdr(ds_probe_cb, arg);
	return NULL;
}

#define DS_PROBE_STACK_GUESS (8u << 20) /* RLIMIT_STACK's usual 8 MiB */

static void ds_probe_tls(struct ds_walk *w)
{
	struct ds_probe p;
	pthread_t th;
	sigset_t all, old;

	if (!ds_real_create)
		return;
	p.n = w->npending;
	for (uint32_t i = 0; i < p.n; i++) {
		p.m[i].phdr = w->pending[i]->phdr;
		p.m[i].base = w->pending[i]->b.base;
		memset(&p.m[i].b, 0, sizeof(p.m[i].b));
	}
	/* Its stack and guard page count against the program's address-space
	 * limit while it runs (limitguard.h). */
	pthread_attr_t attr;
	size_t stack = 0;
	if (pthread_getattr_default_np(&attr) == 0) {
		if (pthread_attr_getstacksize(&attr, &stack) != 0)
			stack = 0;
		pthread_attr_destroy(&attr);
	}
	stack = (stack ? stack : DS_PROBE_STACK_GUESS) + 4096;
	if (limitguard_reserve(stack) < 0)
		return;
	/* The probe takes no signal of the program's (it inherits this mask). */
	sigfillset(&all);
	sigguard_mask(SIG_SETMASK, &all, &old);
	int rc = ds_real_create(&th, NULL, ds_probe_main, &p);
	sigguard_mask(SIG_SETMASK, &old, NULL);
	if (rc == 0)
		pthread_join(th, NULL);
	limitguard_release(stack);
	if (rc != 0)
		return;
	for (uint32_t i = 0; i < p.n; i++) {
		struct ds_slot *s = w->pending[i];
		if (!p.m[i].b.tls_static || !s->b.live || s->phdr != p.m[i].phdr)
			continue;
		struct ds_body b = s->b; /* the writer's own copy: no tearing */
		b.tls_static = 1;
		b.tls_off = p.m[i].b.tls_off;
		ds_slot_write(s, &b);
	}
}

/* Under ds_busy.  probe: new modules' static TLS may be probed now (a
 * thread is started), else they wait in ds_unprobed. */
static void ds_walk(int initial, int probe)
{
	if (initial) {
		uint64_t sum = DS_TLS_SURPLUS;
		dl_iterate_phdr(ds_tls_size_cb, &sum);
		ds_tls_bound = sum;
	}
	struct ds_walk w = {.initial = initial};
	ds_gen++;
	dl_iterate_phdr(ds_walk_cb, &w);
	elfdata_scratch_release();
	if (probe) { /* and those an earlier walk could not probe */
		for (uint32_t i = 0; i < ds_nunprobed && w.npending < DS_PROBE_MAX; i++)
			w.pending[w.npending++] = ds_unprobed[i];
		ds_nunprobed = 0;
	}
	if (!w.unchanged) {
		/* Not found this walk: unloaded (the module's memory may be gone;
		 * a slot holds only copies, so nothing of it was read after). */
		for (uint32_t i = 0; i < ds_nslots; i++) {
			struct ds_slot *s = &ds_slots[i];
			if (s->b.live && s->seen != ds_gen) {
				struct ds_body dead;
				memset(&dead, 0, sizeof(dead));
				ds_slot_write(s, &dead);
			}
		}
		ds_adds = w.adds;
		ds_subs = w.subs;
		ds_walked = 1;
	}
	if (!w.npending)
		return;
	if (probe) {
		ds_probe_tls(&w);
	} else {
		for (uint32_t i = 0; i < w.npending && ds_nunprobed < DS_PROBE_MAX; i++)
			ds_unprobed[ds_nunprobed++] = w.pending[i];
	}
}

int datasym_init(void)
{
	if (ds_slots)
		return 0;
	int rc = elfdata_init(DATASYM_ARENA);
	if (rc < 0)
		return rc;
	void *p = lockguard_map(DATASYM_SLOTS * sizeof(struct ds_slot), MAP_NORESERVE);
	if (p == MAP_FAILED) {
		rc = -errno;
		elfdata_destroy();
		return rc;
	}
	ds_real_create = (ds_create_fn)dlsym(RTLD_NEXT, "pthread_create");
	ds_hold();
	__atomic_store_n(&ds_slots, (struct ds_slot *)p, __ATOMIC_RELEASE);
	ds_walk(1, 1);
	ds_drop();
	return 0;
}

void datasym_refresh(void)
{
	if (!__atomic_load_n(&ds_slots, __ATOMIC_ACQUIRE))
		return;
	ds_hold();
	ds_walk(0, 1);
	ds_drop();
}

void datasym_refresh_due(void)
{
	if (!__atomic_load_n(&ds_slots, __ATOMIC_ACQUIRE) || !due_claim(&ds_due_ns, DATASYM_DUE_NS))
		return;
	/* Never waits: the flag's holder may be this very thread (a walk's
	 * own allocations, or the program's handler that interrupted one). */
	if (!ds_try())
		return;
	ds_walk(0, 0);
	ds_drop();
}

/* ---- lookups (async-signal-safe) ---- */

/* A pending module's file read now and its slot filled in, as a walk
 * would have (its TLS block as the walk found it).  Under ds_busy. */
static void ds_fill_pending(struct ds_slot *s, const struct ds_body *was)
{
	struct dl_phdr_info info;
	char exe[4096];
	memset(&info, 0, sizeof(info));
	info.dlpi_addr = was->base;
	info.dlpi_phdr = s->phdr;
	info.dlpi_phnum = (ElfW(Half))s->phnum;
	info.dlpi_name = s->name;
	const char *open_path = s->name;
	if (!s->name) {
		ssize_t len = readlink("/proc/thread-self/exe", exe, sizeof(exe) - 1);
		exe[len > 0 ? len : 0] = 0;
		info.dlpi_name = exe;
		open_path = "/proc/thread-self/exe";
	}
	struct ds_body b;
	memset(&b, 0, sizeof(b));
	int fd = info.dlpi_name[0] ? open(open_path, O_RDONLY | O_CLOEXEC) : -1;
	struct elfdata_image img = {info.dlpi_addr, info.dlpi_phdr, info.dlpi_phnum, 1};
	const struct elfdata_file *f =
		fd >= 0 ? elfdata_file_get(fd, info.dlpi_name, s->name ? NULL : open_path, &img) : NULL;
	if (fd >= 0)
		fdguard_close(fd);
	elfdata_scratch_release();
	if (f && ds_image_matches(&info, f)) {
		ds_body_fill(&info, f, 0, &b);
		b.tls_static = was->tls_static;
		b.tls_off = was->tls_off;
		ds_count(&ds_st.modules, 1);
	} else {
		b.live = 1; /* no ranges: nothing to name, looked at once */
		ds_count(&ds_st.unindexed, 1);
	}
	ds_slot_write(s, &b);
}

/* The slot's module read if it is pending; 0 and *b current, or -EAGAIN
 * (another is writing: the lock is only tried, as below). */
static int ds_read_pending(struct ds_slot *s, struct ds_body *b)
{
	if (!b->pending)
		return 0;
	if (!ds_try())
		return -EAGAIN;
	if (ds_slot_read(s, b) == 0 && b->pending)
		ds_fill_pending(s, b);
	ds_drop();
	return ds_slot_read(s, b) == 0 ? 0 : -EAGAIN;
}

/* f's symbols, read now if they were not: the first lookup in a module
 * pays for them, once, in whatever runs it (a handler, mostly), and a
 * process that never samples a module's data never reads them.  The flag
 * is only tried, never waited for: its holder may be this very thread (a
 * handler that interrupted a walk).  0, or -EAGAIN: another is writing. */
static int ds_symbols_ready(const struct elfdata_file *f)
{
	if (elfdata_file_symbols_done(f))
		return 0;
	if (!ds_try())
		return -EAGAIN;
	int rc = elfdata_file_symbols(f);
	ds_drop();
	if (rc < 0)
		log_verbose(2, "datasym: the symbols of %s are unreadable (%d): its data is unnamed",
			    f->real, rc);
	return 0;
}

/* The last of n entries, stride bytes apart and sorted by the uint64_t
 * each starts with (elfdata_sym's value, elfdata_sec's addr), that is
 * <= key, or -1. */
_Static_assert(offsetof(struct elfdata_sym, value) == 0 && offsetof(struct elfdata_sec, addr) == 0,
	       "ds_floor reads each entry's first word");

static long ds_floor(const void *v, size_t stride, uint32_t n, uint64_t key)
{
	long lo = 0, hi = (long)n - 1, best = -1;
	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;
		uint64_t start;
		memcpy(&start, (const char *)v + (size_t)mid * stride, sizeof(start));
		if (start <= key) {
			best = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return best;
}

/* The symbol, else the section holding key (link-time address or TLS
 * offset); 0 and *start, *size, *name, or -ENOENT. */
static int ds_find(const struct elfdata_sym *syms, uint32_t nsyms, const struct elfdata_sec *secs,
		   uint32_t nsecs, uint64_t key, struct datasym_hit *hit)
{
	long i = ds_floor(syms, sizeof(*syms), nsyms, key);
	if (i >= 0 && (key - syms[i].value < syms[i].size ||
		       (syms[i].size == 0 && key == syms[i].value))) {
		hit->start = syms[i].value;
		hit->size = syms[i].size;
		hit->name = syms[i].name;
		return 0;
	}
	hit->name = NULL;
	/* Sections may nest (.tbss inside nothing, .data.rel.ro pieces):
	 * a few back from the floor. */
	i = ds_floor(secs, sizeof(*secs), nsecs, key);
	for (long k = i; k >= 0 && k > i - 4; k--) {
		if (key - secs[k].addr < secs[k].size) {
			hit->start = secs[k].addr;
			hit->size = secs[k].size;
			return 0;
		}
	}
	return -ENOENT;
}

int datasym_static(uint64_t addr, struct datasym_hit *hit)
{
	struct ds_slot *slots = __atomic_load_n(&ds_slots, __ATOMIC_ACQUIRE);
	uint32_t n = __atomic_load_n(&ds_nslots, __ATOMIC_ACQUIRE);
	struct ds_body b;

	for (uint32_t i = 0; slots && i < n; i++) {
		struct ds_slot *s = &slots[i];
		if (addr < __atomic_load_n(&s->b.lo, __ATOMIC_RELAXED) ||
		    addr >= __atomic_load_n(&s->b.hi, __ATOMIC_RELAXED))
			continue;
		if (ds_slot_read(s, &b) < 0)
			continue;
		if (ds_read_pending(s, &b) < 0)
			return -EAGAIN;
		for (uint64_t r = 0; r < b.nranges && r < DS_RANGES; r++) {
			if (addr < b.range[r][0] || addr >= b.range[r][1])
				continue;
			const struct elfdata_file *f = (const struct elfdata_file *)(uintptr_t)b.file;
			if (ds_symbols_ready(f) < 0)
				return -EAGAIN;
			hit->module = f->real;
			if (ds_find(f->syms, f->nsyms, f->secs, f->nsecs, addr - b.base, hit) == 0) {
				hit->start += b.base;
			} else {
				hit->name = NULL;
				hit->start = b.range[r][0];
				hit->size = b.range[r][1] - b.range[r][0];
			}
			return 0;
		}
	}
	return -ENOENT;
}

int datasym_tls(uint64_t addr, uint64_t tp, struct datasym_hit *hit)
{
	struct ds_slot *slots = __atomic_load_n(&ds_slots, __ATOMIC_ACQUIRE);
	uint32_t n = __atomic_load_n(&ds_nslots, __ATOMIC_ACQUIRE);
	struct ds_body b;

	for (uint32_t i = 0; slots && i < n; i++) {
		struct ds_slot *s = &slots[i];
		if (!__atomic_load_n(&s->b.tls_static, __ATOMIC_RELAXED) || ds_slot_read(s, &b) < 0 ||
		    !b.tls_static)
			continue;
		uint64_t block = tp + b.tls_off, off = addr - block;
		if (off >= b.tls_size)
			continue;
		if (ds_read_pending(s, &b) < 0)
			return -EAGAIN;
		if (!b.file)
			return -ENOENT; /* its file unreadable */
		const struct elfdata_file *f = (const struct elfdata_file *)(uintptr_t)b.file;
		if (ds_symbols_ready(f) < 0)
			return -EAGAIN;
		hit->module = f->real;
		if (ds_find(f->tsyms, f->ntsyms, f->tsecs, f->ntsecs, off, hit) < 0) {
			hit->name = NULL;
			hit->start = 0;
			hit->size = b.tls_size;
		}
		return 0;
	}
	return -ENOENT;
}

void datasym_stats(struct datasym_stats *st)
{
	st->modules = __atomic_load_n(&ds_st.modules, __ATOMIC_RELAXED);
	st->unindexed = __atomic_load_n(&ds_st.unindexed, __ATOMIC_RELAXED);
	elfdata_stats(&st->files, &st->symbols, &st->bytes, &st->in_image);
}

void datasym_prefork(void)
{
	ds_hold();
}

void datasym_postfork_parent(void)
{
	ds_drop();
}

void datasym_postfork_child(void)
{
	__atomic_store_n(&ds_busy, 0, __ATOMIC_RELAXED);
}
