/* profile: process-wide aggregate and the profile writer (see profile.h). */
#include "witch/profile.h"
#include "witch/prefault.h"
#include "witch/drcost.h"
#include "witch/deps.h"
#include "witch/elfdata.h"
#include "witch/cost.h"
#include "witch/heap.h"
#include "witch/objects.h"
#include "witch/outbuf.h"
#include "witch/runspace.h"
#include "witch/runtime.h"
#include "witch/lockguard.h"
#include "witch/log.h"
#include "witch/fdguard.h"
#include "witch/profdir.h"
#include "witch/sigguard.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The runtime's fixed CPU cost in this process: the constructor's, and the
 * exit's from profile_exit_begins on (both run in one thread). */
static double profile_startup_ns, profile_exit_start_ns;

void profile_note_startup(double start_cpu_ns)
{
	double now = cost_thread_cpu_ns();
	profile_startup_ns = now > start_cpu_ns ? now - start_cpu_ns : 0;
}

void profile_exit_begins(void)
{
	profile_exit_start_ns = cost_thread_cpu_ns();
}

static double profile_fixed_cost_ns(void)
{
	double exit_ns = profile_exit_start_ns > 0 ? cost_thread_cpu_ns() - profile_exit_start_ns : 0;
	/* and a tick's load of the decoder, which the handler's count leaves out */
	return profile_startup_ns + (exit_ns > 0 ? exit_ns : 0) + cost_tsc_ns(deps_tick_load_tsc());
}

#define PROFILE_MAX_NODES (1u << 20)
#define PROFILE_MAX_PAIRS (1u << 16)
#define PROFILE_ARENA_SIZE ((size_t)96 << 20)

static struct {
	pthread_mutex_t lock;
	struct arena arena;
	struct cct cct;
	struct pairtab pairs;
	struct witch_stats stats;
	const char *sampler;
	char sampler_why[256];   /* why the PMU sampler did not run, or "" */
	uint64_t period;
	pid_t first_pid; /* the process the preload started in */
	int ready;
	int written; /* anything folded or inserted since the last reset */
} prof = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int profile_reset(void)
{
	memset(&prof.stats, 0, sizeof(prof.stats));
	/* Tables nothing was folded or inserted into (a shell's, make's: their
	 * threads fold at their end and at a write) are as a reset makes them.
	 * Unmapping and mapping the 96 MiB arena again was ~1% of a shell
	 * script's CPU time under the runtime, in fork children that exec at
	 * once. */
	if (prof.ready && !prof.written)
		return 0;
	arena_destroy(&prof.arena);
	prof.written = 0;
	int rc = arena_init(&prof.arena, PROFILE_ARENA_SIZE);
	if (rc < 0)
		return rc;
	rc = cct_init(&prof.cct, &prof.arena, PROFILE_MAX_NODES);
	if (rc < 0)
		return rc;
	return pairtab_init(&prof.pairs, &prof.arena, PROFILE_MAX_PAIRS);
}

/* The executable's path, read before a chroot: after it there is no /proc
 * to read it from at exit (the profile was "unknown-PID.prof"). */
static char profile_exe[PATH_MAX];
static char *profile_exe_path(char *buf, size_t size);

/* Just before the program's chroot: the directory the profile goes to,
 * held (profdir.h), and the executable's path.  Not once sealed: no
 * system call of the runtime's then (sandboxguard.h). */
void profile_before_chroot(void)
{
	char path[CONFIG_PATH_MAX + 64];
	int rc;
	if (!prof.ready || witch_rt.sealed || !witch_rt.cfg)
		return;
	if (!profile_exe[0])
		profile_exe_path(profile_exe, sizeof(profile_exe));
	if (profile_path(NULL, path, sizeof(path)) == 0 && (rc = profdir_hold(path)) < 0)
		log_verbose(1, "cannot open the directory of %s (%s): the profile goes by its path",
			    path, strerror(-rc));
}

int profile_init(const char *sampler, const char *sampler_why, uint64_t period)
{
	prof.sampler = sampler;
	/* One line: the reason must not break the record format. */
	size_t n = 0;
	for (; sampler_why && sampler_why[n] && n + 1 < sizeof(prof.sampler_why); n++)
		prof.sampler_why[n] = sampler_why[n] == '\n' ? ' ' : sampler_why[n];
	prof.sampler_why[n] = '\0';
	prof.period = period;
	prof.first_pid = getpid();
	int rc = profile_reset();
	prof.ready = rc == 0;
	return rc;
}

/* Re-insert a thread-tree node's path into the process tree. */
static int64_t profile_reroot(struct cct *from, uint32_t node)
{
	uint64_t pcs[CONFIG_MAX_DEPTH + 8];
	int n = cct_path(from, node, pcs, (int)(sizeof(pcs) / sizeof(pcs[0])));
	return cct_insert_path(&prof.cct, pcs, n);
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

int profile_fold(struct cct *cct, struct pairtab *pairs, const struct witch_stats *st)
{
	int rc = 0;
	if (!prof.ready)
		return -ENODEV;
	pthread_mutex_lock(&prof.lock);
	prof.written = 1;
	/* Gauges, not counts: the largest thread's. */
	uint64_t trip = max_u64(prof.stats.round_trip_ns, st->round_trip_ns);
	uint64_t tick = max_u64(prof.stats.tick_trip_ns, st->tick_trip_ns);
	uint64_t hit = max_u64(prof.stats.hit_ns, st->hit_ns);
	stats_add(&prof.stats, st);
	prof.stats.round_trip_ns = trip;
	prof.stats.tick_trip_ns = tick;
	prof.stats.hit_ns = hit;
	prof.stats.skip_cct_full += cct->dropped;
	prof.stats.skip_pairs_full += pairs->dropped;
	/* The bytes the samples stand for, by context, since the last fold:
	 * what the sampler saw, whatever the watchpoints made of it. */
	for (uint32_t i = 1; i < cct->n_nodes; i++) {
		struct cct_node *c = &cct->nodes[i];
		if (c->mu <= c->mu_folded)
			continue;
		int64_t p = profile_reroot(cct, i);
		if (p < 0) {
			prof.stats.skip_cct_full++;
			rc = -ENOMEM;
			continue;
		}
		cct_node(&prof.cct, (uint32_t)p)->mu += c->mu - c->mu_folded;
		c->mu_folded = c->mu;
	}
	for (uint32_t i = 1; i < pairs->n_entries; i++) {
		const struct pair_entry *e = &pairs->entries[i];
		int64_t w = profile_reroot(cct, e->watch);
		int64_t t = profile_reroot(cct, e->trap);
		if (w < 0 || t < 0 || pairtab_merge(&prof.pairs, (uint32_t)w, (uint32_t)t, e) < 0) {
			prof.stats.skip_pairs_full++;
			rc = -ENOMEM;
		}
	}
	pthread_mutex_unlock(&prof.lock);
	return rc;
}

int profile_expand_path(const char *pattern, pid_t pid, const char *exe, int add_pid,
			char *out, size_t size)
{
	size_t n = 0;
	int has_pid = 0;
	char num[32];
	if (size == 0)
		return -ENAMETOOLONG;
	for (const char *p = pattern; *p; p++) {
		const char *piece = NULL;
		char c[2] = {*p, 0};
		if (*p == '%' && p[1]) {
			p++;
			if (*p == 'p') {
				log_snprintf(num, sizeof(num), "%d", (int)pid);
				piece = num;
				has_pid = 1;
			} else if (*p == 'e') {
				piece = exe;
			} else if (*p == '%') {
				piece = "%";
			} else {
				c[0] = '%';
				piece = c; /* unknown: keep "%x" as written */
				p--;
			}
		} else {
			piece = c;
		}
		size_t len = strlen(piece);
		if (n + len >= size)
			return -ENAMETOOLONG;
		memcpy(out + n, piece, len);
		n += len;
	}
	if (add_pid && !has_pid) {
		int len = log_snprintf(num, sizeof(num), ".%d", (int)pid);
		if (n + (size_t)len >= size)
			return -ENAMETOOLONG;
		memcpy(out + n, num, (size_t)len);
		n += (size_t)len;
	}
	out[n] = '\0';
	return 0;
}

int profile_anchor_pattern(const char *pattern, const char *dir, char *out, size_t size)
{
	size_t n = 0, len = strlen(pattern);
	if (pattern[0] != '/') {
		for (const char *c = dir; *c; c++) {
			if (n + 2 >= size)
				return -ENAMETOOLONG;
			out[n++] = *c;
			if (*c == '%')
				out[n++] = '%';
		}
		if (n == 0 || out[n - 1] != '/') { /* dir "/" ends in one */
			if (n + 1 >= size)
				return -ENAMETOOLONG;
			out[n++] = '/';
		}
	}
	if (n + len >= size)
		return -ENAMETOOLONG;
	memcpy(out + n, pattern, len + 1);
	return 0;
}

int profile_anchor_output(char *pattern, size_t size)
{
	/* a directory past CONFIG_PATH_MAX could not hold the name anyway */
	char dir[CONFIG_PATH_MAX], out[CONFIG_PATH_MAX];
	if (pattern[0] == '/')
		return 0;
	if (!getcwd(dir, sizeof(dir)))
		return -errno;
	size_t cap = size < sizeof(out) ? size : sizeof(out);
	int rc = profile_anchor_pattern(pattern, dir, out, cap);
	if (rc == 0)
		memcpy(pattern, out, strlen(out) + 1);
	return rc;
}

/* --- module map --------------------------------------------------------- */

static void profile_build_id(const struct dl_phdr_info *info, char *hex, size_t size)
{
	strcpy(hex, "-");
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*nh);
			const unsigned char *desc =
				(const unsigned char *)(name + ((nh->n_namesz + 3) & ~3u));
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz * 2 + 1 <= size) {
				for (unsigned j = 0; j < nh->n_descsz; j++)
					snprintf(hex + 2 * j, 3, "%02x", desc[j]);
				return;
			}
			p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

/* Modules: every one the process had loaded when a profile was written or
 * a library was closed (profile_note_modules), so pcs in a library that was
 * dlclose'd still symbolize.  Under prof.lock. */
struct profile_module {
	uint64_t base, start, end;
	uint64_t seen;         /* the last walk that found it loaded */
	char build_id[129];
	char *path;
	char *name;            /* dlpi_name as the walk gave it (path: its file) */
};

static struct {
	struct profile_module *v;
	size_t n, cap;
	uint64_t walk;
} pmods;

struct module_walk {
	const char *exe;
	int first;
};

/* The file a path names, symbolic links resolved: its descriptor's
 * /proc/self/fd link, three system calls (realpath makes one or two a
 * path component: ~12 for a library in /usr/lib/x86_64-linux-gnu, some
 * 0.5 ms of every profile's write for a C program's eight modules).
 * 0 or -errno; realpath where /proc is not mounted. */
static int profile_real_path(const char *path, char *out, size_t size)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd >= 0) {
		int rc = elfdata_fd_path(fd, out, size);
		fdguard_close(fd);
		if (rc == 0)
			return 0;
	}
	return realpath(path, out) ? 0 : -errno;
}

static int profile_module_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct module_walk *mw = data;
	uint64_t start = UINT64_MAX, end = 0;
	const char *path = info->dlpi_name;
	int first = mw->first;

	mw->first = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uint64_t s = info->dlpi_addr + ph->p_vaddr;
		if (s < start)
			start = s;
		if (s + ph->p_memsz > end)
			end = s + ph->p_memsz;
	}
	if (end == 0)
		return 0;
	if (!path || !*path)
		path = first ? mw->exe : "[unknown]";
	/* Known from an earlier walk: by the name it was loaded as, before the
	 * file's path is resolved again (system calls). */
	for (size_t i = 0; i < pmods.n; i++) {
		struct profile_module *m = &pmods.v[i];
		if (m->base == info->dlpi_addr && m->start == start && m->end == end &&
		    !strcmp(m->name, path)) {
			m->seen = pmods.walk;
			return 0;
		}
	}
	const char *name = path;
	/* The file, not the link it was loaded through (libbz2.so.1.0 ->
	 * libbz2.so.1.0.4), as /proc/self/maps, perf and the oracle name it. */
	char real[PATH_MAX];
	if (path[0] == '/' && profile_real_path(path, real, sizeof(real)) == 0)
		path = real;
	if (pmods.n == pmods.cap) {
		size_t cap = pmods.cap ? 2 * pmods.cap : 64;
		struct profile_module *v = realloc(pmods.v, cap * sizeof(*v));
		if (!v)
			return 1; /* out of memory: stop the walk; modules stay as they were */
		pmods.v = v;
		pmods.cap = cap;
	}
	struct profile_module *m = &pmods.v[pmods.n];
	m->path = strdup(path);
	m->name = strdup(name);
	if (!m->path || !m->name) {
		free(m->path);
		free(m->name);
		return 1;
	}
	m->base = info->dlpi_addr;
	m->start = start;
	m->end = end;
	m->seen = pmods.walk;
	profile_build_id(info, m->build_id, sizeof(m->build_id));
	pmods.n++;
	return 0;
}

/* The executable's path into buf ("" if unreadable); buf. */
static char *profile_exe_path(char *buf, size_t size)
{
	if (profile_exe[0] && strlen(profile_exe) < size) {
		strcpy(buf, profile_exe);
		return buf;
	}
	/* (The thread's own: where the main thread ended by pthread_exit,
	 * /proc/self, the process's leader, has no executable left.) */
	ssize_t n = readlink("/proc/thread-self/exe", buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Record the modules loaded now, exe the main program's path; prof.lock
 * held. */
static void profile_walk_modules(const char *exe)
{
	struct module_walk mw = {.exe = exe, .first = 1};
	pmods.walk++;
	dl_iterate_phdr(profile_module_cb, &mw);
}

void profile_note_modules(void)
{
	char exe[PATH_MAX];
	if (!prof.ready)
		return;
	profile_exe_path(exe, sizeof(exe));
	pthread_mutex_lock(&prof.lock);
	profile_walk_modules(exe);
	pthread_mutex_unlock(&prof.lock);
}

static int module_overlaps(const struct profile_module *m, size_t upto, int loaded_only)
{
	for (size_t i = 0; i < upto; i++) {
		const struct profile_module *o = &pmods.v[i];
		if (loaded_only && o->seen != pmods.walk)
			continue;
		if (o->start < m->end && m->start < o->end)
			return 1;
	}
	return 0;
}

/* Loaded modules first, then closed ones whose range nothing since took
 * (the reader needs one module per pc). */
static void profile_emit_modules(struct outbuf *f, const char *exe)
{
	int id = 0;
	profile_walk_modules(exe);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < pmods.n; i++) {
			const struct profile_module *m = &pmods.v[i];
			int loaded = m->seen == pmods.walk;
			if (pass == 0 ? !loaded : loaded)
				continue;
			if (pass == 1 && (module_overlaps(m, pmods.n, 1) || module_overlaps(m, i, 0)))
				continue;
			outbuf_printf(f, "module %d 0x%llx 0x%llx 0x%llx %s ", id++,
				      (unsigned long long)m->base, (unsigned long long)m->start,
				      (unsigned long long)m->end, m->build_id);
			outbuf_puts(f, m->path);
			outbuf_puts(f, "\n");
		}
	}
}

/* --- writer ------------------------------------------------------------- */

/* Heap objects' allocation contexts are paths of the process tree. */
static int64_t profile_node_of(const uint64_t *pcs, int n, void *arg)
{
	(void)arg;
	prof.written = 1;
	return cct_insert_path(&prof.cct, pcs, n);
}

/* Whether entry a sorts after entry b: by <watch, trap, object>. */
static int pair_after(const struct pair_entry *a, const struct pair_entry *b)
{
	if (a->watch != b->watch)
		return a->watch > b->watch;
	if (a->trap != b->trap)
		return a->trap > b->trap;
	return a->object > b->object;
}

/* Sift order[at] down the max-heap of order[0..n). */
static void pair_sift(uint32_t *order, uint32_t at, uint32_t n)
{
	const struct pair_entry *e = prof.pairs.entries;
	for (uint32_t child; (child = 2 * at + 1) < n; at = child) {
		if (child + 1 < n && pair_after(&e[order[child + 1]], &e[order[child]]))
			child++;
		if (!pair_after(&e[order[child]], &e[order[at]]))
			return;
		uint32_t t = order[at];
		order[at] = order[child];
		order[child] = t;
	}
}

/* A heap sort of the entries' indices: qsort takes a buffer from malloc
 * for more than a few hundred, and a fatal signal's write (fatal.h) may
 * meet a heap the crash broke. */
static void pair_sort(uint32_t *order, uint32_t n)
{
	for (uint32_t i = n / 2; i-- > 0;)
		pair_sift(order, i, n);
	for (uint32_t end = n; end-- > 1;) {
		uint32_t t = order[0];
		order[0] = order[end];
		order[end] = t;
		pair_sift(order, 0, end);
	}
}

static void pair_emit(struct outbuf *f, const struct pair_entry *e)
{
	outbuf_printf(f, "pair %u %u %.17g %.17g %llu", e->watch, e->trap, e->waste, e->use,
		(unsigned long long)e->traps);
	if (e->waste_approx > 0)
		outbuf_printf(f, " %.17g", e->waste_approx);
	outbuf_puts(f, "\n");
}

/* A pair's parts by object: each known object's part (pairtab.h), the
 * unknown object what they leave of the pair (unknown ids, and objects
 * whose record was not written). */
static void pair_objects_emit(struct outbuf *f, const struct pair_entry *pair, const uint32_t *ids,
			      uint32_t n)
{
	double w = 0, u = 0, a = 0;
	for (uint32_t k = 0; k < n; k++) {
		const struct pair_entry *e = &prof.pairs.entries[ids[k]];
		uint32_t id = objects_written_id(e->object);
		if (!id)
			continue;
		w += e->waste;
		u += e->use;
		a += e->waste_approx;
		outbuf_printf(f, "pair_object %u %u %u %.17g %.17g %.17g\n", e->watch, e->trap, id,
			e->waste, e->use, e->waste_approx);
	}
	double rw = pair->waste - w, ru = pair->use - u, ra = pair->waste_approx - a;
	if (rw > 0 || ru > 0)
		outbuf_printf(f, "pair_object %u %u 0 %.17g %.17g %.17g\n", pair->watch, pair->trap,
			rw > 0 ? rw : 0, ru > 0 ? ru : 0, ra > 0 ? ra : 0);
}

/* The table is keyed by <watch, trap, object>: one `pair` per <watch, trap>
 * summed over its objects, then its `pair_object` parts. */
static void profile_emit_pairs(struct outbuf *f)
{
	uint32_t n = prof.pairs.n_entries - 1;
	if (n == 0)
		return;
	/* (mapped, not malloc'd: see pair_sort) */
	size_t bytes = sizeof(uint32_t) * n;
	uint32_t *order = lockguard_map(bytes, 0);
	if (order == MAP_FAILED) { /* no split then: each entry a pair (readers sum repeats) */
		for (uint32_t i = 1; i <= n; i++)
			pair_emit(f, &prof.pairs.entries[i]);
		return;
	}
	for (uint32_t i = 0; i < n; i++)
		order[i] = i + 1;
	pair_sort(order, n);
	for (uint32_t i = 0; i < n;) {
		const struct pair_entry *first = &prof.pairs.entries[order[i]];
		struct pair_entry sum = *first;
		uint32_t j = i + 1;
		for (; j < n; j++) {
			const struct pair_entry *e = &prof.pairs.entries[order[j]];
			if (e->watch != first->watch || e->trap != first->trap)
				break;
			sum.waste += e->waste;
			sum.use += e->use;
			sum.waste_approx += e->waste_approx;
			sum.traps += e->traps;
		}
		pair_emit(f, &sum);
		if (objects_enabled())
			pair_objects_emit(f, &sum, order + i, j - i);
		i = j;
	}
	(void)lockguard_unmap(order, bytes); /* (a failure leaves a mapping at exit) */
}

static int profile_emit(struct outbuf *f, const char *exe)
{
	outbuf_printf(f, "witch-profile 1\n");
	outbuf_printf(f, "client %s\n", config_client_name(witch_rt.cfg->client));
	outbuf_printf(f, "sampler %s\n", prof.sampler);
	if (prof.sampler_why[0])
		outbuf_printf(f, "sampler_why %s\n", prof.sampler_why);
	outbuf_printf(f, "verdicts %s\n", config_verdicts_name(witch_rt.cfg->verdicts));
	outbuf_printf(f, "period %llu\n", (unsigned long long)prof.period);
	if (witch_rt.cfg->client != CONFIG_CLIENT_DEAD)
		outbuf_printf(f, "tolerance %.17g\n", witch_rt.cfg->fp_tolerance);
	prof.stats.memory_cap_mb = witch_rt.cfg->memory_mb;
	prof.stats.runspaces = runspace_count();
	prof.stats.prefault_pages = prefault_pages();
#define PROFILE_STAT(name) outbuf_printf(f, "stat %s %llu\n", #name, (unsigned long long)prof.stats.name);
	WITCH_STATS_FIELDS(PROFILE_STAT)
#undef PROFILE_STAT
	if (objects_enabled()) {
		/* Allocation tracking's work, process-wide (heap.h). */
		struct heap_stats hs;
		heap_get_stats(&hs);
		outbuf_printf(f, "stat heap_blocks_tracked %llu\n", (unsigned long long)hs.blocks_tracked);
		outbuf_printf(f, "stat heap_blocks_untracked %llu\n", (unsigned long long)hs.blocks_untracked);
		outbuf_printf(f, "stat heap_sites %llu\n", (unsigned long long)hs.sites);
		outbuf_printf(f, "stat heap_site_unwinds %llu\n", (unsigned long long)hs.site_unwinds);
		outbuf_printf(f, "stat heap_site_walked %llu\n", (unsigned long long)hs.site_walked);
		outbuf_printf(f, "stat cost_heap_ns %llu\n", (unsigned long long)hs.track_ns);
		outbuf_printf(f, "stat heap_sample_bytes_max %llu\n",
			(unsigned long long)hs.sample_bytes_max);
	}
	/* The runtime's descriptors the program's sweeps met (fdguard.h). */
	uint64_t fd_kept, fd_taken, fd_in_range;
	fdguard_counts(&fd_kept, &fd_taken, &fd_in_range);
	outbuf_printf(f, "stat fd_closes_kept %llu\n", (unsigned long long)fd_kept);
	outbuf_printf(f, "stat fd_numbers_taken %llu\n", (unsigned long long)fd_taken);
	outbuf_printf(f, "stat fd_in_program_range %llu\n", (unsigned long long)fd_in_range);
	/* Where the prices of armed debug registers came from (drcost.h): one
	 * of the three 1, or none (the defaults); sums over a tree count its
	 * processes each way. */
	enum drcost_source dr = drcost_price_source();
	outbuf_printf(f, "stat dr_priced_start %d\n", dr == DRCOST_AT_START);
	outbuf_printf(f, "stat dr_priced_tick %d\n", dr == DRCOST_AT_TICK);
	outbuf_printf(f, "stat dr_priced_handed %d\n", dr == DRCOST_HANDED);
	outbuf_printf(f, "stat dr_fault_ns %llu\n", (unsigned long long)(drcost_fault_ns() + 0.5));
	outbuf_printf(f, "stat dr_byte_ps %llu\n", (unsigned long long)(drcost_byte_ns() * 1e3 + 0.5));
	outbuf_printf(f, "pid %d\n", (int)getpid());
	outbuf_puts(f, "exe ");
	outbuf_puts(f, exe);
	outbuf_puts(f, "\n");
	objects_prepare(profile_node_of, NULL);
	/* Modules name the code that nodes, pairs and objects hold.  A process
	 * with none of them (most of a script's, which take no tick) skips
	 * resolving each module's path: ~25 system calls, ~0.25 ms of its
	 * exit here (bench/results/startup.md). */
	if (prof.cct.n_nodes > 1 || prof.pairs.n_entries > 1 || objects_count() > 0)
		profile_emit_modules(f, exe);
	for (uint32_t i = 1; i < prof.cct.n_nodes; i++) {
		const struct cct_node *n = &prof.cct.nodes[i];
		outbuf_printf(f, "node %u %u 0x%llx\n", i, n->parent, (unsigned long long)n->pc);
		if (n->mu > 0)
			outbuf_printf(f, "sampled %u %.17g\n", i, n->mu);
	}
	if (objects_emit(f) < 0)
		return -EIO;
	profile_emit_pairs(f);
	/* Last, to count the exit's work so far: the constructor's and the exit's
	 * CPU time (a process's fixed cost, 2-4 ms here, which no tick sees). */
	outbuf_printf(f, "stat cost_startup_ns %llu\n", (unsigned long long)profile_fixed_cost_ns());
	/* The process's CPU time, user and system, its threads' so far: what
	 * the estimate is a share of (a system-bound program's clock_ns, user
	 * time only, is a small part of it). */
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		outbuf_printf(f, "stat cpu_ns %llu\n",
			(unsigned long long)((uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
						     1000000000ull +
					     (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull));
	outbuf_printf(f, "end\n");
	return f->err;
}

/* The executable's file name ("unknown" if unreadable) from its path. */
static const char *profile_exe_base(const char *path)
{
	const char *slash = strrchr(path, '/');
	return !*path ? "unknown" : slash ? slash + 1 : path;
}

/* The profile's temporary file, created (O_EXCL|O_NOFOLLOW: never written
 * through a link planted at its name): fd or -errno. */
static int profile_open_temp(const char *tmp)
{
	return profdir_open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

static long profile_open_temp_cb(const void *tmp)
{
	return profile_open_temp(tmp);
}

int profile_write(void)
{
	return profile_write_suffixed("");
}

int profile_path(const char *exe, char *path, size_t size)
{
	char own[PATH_MAX];
	pid_t pid = getpid();
	if (!exe)
		exe = profile_exe_base(profile_exe_path(own, sizeof(own)));
	return profile_expand_path(witch_rt.cfg->output, pid, exe, pid != prof.first_pid, path, size);
}

int profile_has_ticks(void)
{
	pthread_mutex_lock(&prof.lock);
	int any = prof.stats.ticks > 0 || prof.stats.samples > 0;
	pthread_mutex_unlock(&prof.lock);
	return any;
}

/* Whether the pattern has a %p (not a %%p). */
static int profile_pattern_has_pid(const char *pattern)
{
	for (const char *p = pattern; *p; p++) {
		if (p[0] != '%' || !p[1])
			continue;
		if (p[1] == 'p')
			return 1;
		p++; /* %%, %e or another: its second character is not a conversion */
	}
	return 0;
}

int profile_path_after_exec(const char *exe, char *path, size_t size)
{
	const char *pattern = getenv("WITCH_OUTPUT");
	if (!pattern || !*pattern || strlen(pattern) >= CONFIG_PATH_MAX)
		pattern = CONFIG_DEFAULT_OUTPUT; /* as config.c reads it there */
	return profile_expand_path(pattern, getpid(), exe, 0, path, size);
}

int profile_name_descendants(void)
{
	const char *pattern = witch_rt.cfg->output, *env = getenv("WITCH_OUTPUT");
	const char *suffix = profile_pattern_has_pid(pattern) ? "" : ".%p";
	char apart[CONFIG_PATH_MAX];
	size_t len = strlen(pattern);
	if (!*suffix && env && !strcmp(env, pattern))
		return 0; /* what the processes below read already */
	if (len + strlen(suffix) >= sizeof(apart))
		return -ENAMETOOLONG;
	memcpy(apart, pattern, len);
	memcpy(apart + len, suffix, strlen(suffix) + 1);
	return config_env_hand_down("WITCH_OUTPUT", apart);
}

/* Whether the profile may be renamed over path: 1 where nothing is there
 * or a file (a regular one, or a link, replaced and not followed).  A
 * device node, FIFO, socket or directory there is not replaced: renamed
 * over as root, /dev/null became a regular file holding a profile, and
 * everything reading it after read that (link_deps named it, 2026-12-07).
 * /dev/null itself is taken as asked, the profile discarded: 0.  Others:
 * one line, -EEXIST. */
static int profile_target_ok(const char *path)
{
	struct stat st;
	if (profdir_lstat(path, &st) < 0 || S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
		return 1;
	if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3)) {
		log_verbose(1, "profile discarded: %s is the null device", path);
		return 0;
	}
	log_line("cannot write profile %s: it is not a regular file (a device, FIFO, socket or "
		 "directory is not replaced); set WITCH_OUTPUT to a file's path",
		 path);
	return -EEXIST;
}

int profile_write_suffixed(const char *suffix)
{
	char path[CONFIG_PATH_MAX + 64], tmp[CONFIG_PATH_MAX + 96];
	int rc, fd;
	struct outbuf out;

	if (!prof.ready)
		return -ENODEV;
	pid_t pid = getpid();
	char exe[PATH_MAX];
	profile_exe_path(exe, sizeof(exe)); /* once: each readlink of procfs is ~20 us here */
	rc = profile_path(profile_exe_base(exe), path, sizeof(path));
	if (rc == 0 && strlen(path) + strlen(suffix) >= sizeof(path))
		rc = -ENAMETOOLONG;
	if (rc < 0) {
		log_line("cannot write profile: WITCH_OUTPUT=%s expands to a path that is too long",
			 witch_rt.cfg->output);
		return rc;
	}
	strcat(path, suffix);
	if ((rc = profile_target_ok(path)) <= 0)
		return rc;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)pid);
	fd = profile_open_temp(tmp);
	if (fd == -EMFILE) /* the program used every number of its own: above its limit */
		fd = fdguard_open_brief(profile_open_temp_cb, tmp);
	if (fd < 0) {
		rc = fd;
		log_line("cannot write profile %s: %s; set WITCH_OUTPUT to a writable path",
			 path, strerror(-rc));
		return rc;
	}
	outbuf_init(&out, fd);
	/* A file size limit (ulimit -f) the profile outgrows raised SIGXFSZ,
	 * whose default ended the program (status 153 for 0, a cut temporary
	 * file left): held, the write fails, and the profile is not written. */
	struct sigguard_held xfsz;
	sigguard_hold(SIGXFSZ, &xfsz);
	pthread_mutex_lock(&prof.lock);
	rc = profile_emit(&out, exe);
	pthread_mutex_unlock(&prof.lock);
	int flushed = outbuf_flush(&out), closed = fdguard_close(fd);
	if (rc == 0)
		rc = flushed < 0 ? flushed : closed;
	if (sigguard_release(&xfsz)) {
		profdir_unlink(tmp);
		/* (No path: said once for a tree, whose processes meet it alike.) */
		log_verbose(1, "profile %s not written: larger than RLIMIT_FSIZE", path);
		log_line("a profile is larger than the file size limit (ulimit -f) allows, and "
			 "was not written: raise the limit to keep it");
		return -EFBIG;
	}
	if (rc == 0)
		rc = profdir_rename(tmp, path);
	if (rc < 0) {
		profdir_unlink(tmp);
		log_line("cannot write profile %s: %s; set WITCH_OUTPUT to a writable path", path,
			 strerror(-rc));
		return rc;
	}
	log_verbose(1, "profile written to %s", path);
	return 0;
}

void profile_prefork(void)
{
	pthread_mutex_lock(&prof.lock);
}

void profile_postfork_parent(void)
{
	pthread_mutex_unlock(&prof.lock);
}

void profile_postfork_child(void)
{
	pthread_mutex_init(&prof.lock, NULL);
	profile_startup_ns = profile_exit_start_ns = 0; /* the parent's */
	if (prof.ready)
		prof.ready = profile_reset() == 0;
}
