/* deps: Zydis and libunwind, loaded at the first tick that can (deps.h). */
#include "witch/deps.h"
#include "witch/context.h"
#include "witch/deps_backend.h"
#include "witch/fdguard.h"
#include "witch/heap.h"
#include "witch/heap_next.h"
#include "witch/rawsys.h"
#include "witch/runtime.h"
#include "witch/sigguard.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

/* The sonames the -dev packages' links name (libZydis.so -> .4.0, libunwind.so -> .8). */
#define DEPS_ZYDIS  "libZydis.so.4.0"
#define DEPS_UNWIND "libunwind.so.8"
#define DEPS_LZMA   "liblzma.so.5" /* libunwind's */
/* Where the build found them (CMakeLists.txt), tried first: a dlopen by
 * soname maps, reads and unmaps ld.so.cache, and libunwind's of liblzma
 * again (1.8-2.0 ms for the two dlopens here, 1.1-1.4 by path with
 * liblzma opened first, which libunwind's then finds by its soname). */
#ifdef WITCH_DEPS_ZYDIS_DIR
#define DEPS_ZYDIS_PATH WITCH_DEPS_ZYDIS_DIR "/" DEPS_ZYDIS
#else
#define DEPS_ZYDIS_PATH NULL
#endif
#ifdef WITCH_DEPS_UNWIND_DIR
#define DEPS_UNWIND_PATH WITCH_DEPS_UNWIND_DIR "/" DEPS_UNWIND
#else
#define DEPS_UNWIND_PATH NULL
#endif
#ifdef WITCH_DEPS_LZMA_DIR
#define DEPS_LZMA_PATH WITCH_DEPS_LZMA_DIR "/" DEPS_LZMA
#else
#define DEPS_LZMA_PATH NULL
#endif

enum { DEPS_UNLOADED, DEPS_LOADING, DEPS_READY, DEPS_FAILED };
static int deps_state;
static int deps_errno;             /* DEPS_FAILED's */
static char deps_why[256];         /* dlerror's or the missing name, for the exit's line */
static int deps_tick_ok;           /* deps_init found a tick may load (else: at start) */
static pid_t deps_pid;             /* the process deps_init ran in */
static const struct r_debug *deps_rdebug; /* the loader's own */
static uint64_t deps_unw_lo, deps_unw_hi;
/* Where the three loaded (their link maps' l_addr), 0 for one the program
 * had loaded itself: the runtime's own, not the program's data. */
static uint64_t deps_bases[3];
/* Mappings a loading tick must not have interrupted: the C library's, the
 * loader's, the vDSO's. */
static struct {
	uint64_t lo, hi;
} deps_unsafe[3];
/* Threads in a dl_iterate_phdr callback or a dlclose (the loader's lock
 * held around program code): a tick's dlopen would wait for that lock,
 * and the holder might wait for one the interrupted code holds. */
static int deps_in_loader;
static int deps_threaded; /* a second thread started: ticks load no more (deps.h) */
static uint64_t deps_load_tsc; /* ticks' loads, in all */
static int deps_forking;       /* between deps_prefork and postfork: no load begins */

/* The mappings of the module holding addr ([lo, hi) 0 if none): the
 * loader's lock-free lookup, no page of the module read (dladdr would
 * search its symbols for the nearest name, ~50 us in the C library's; its
 * headers' page is often not mapped in yet). */
static void deps_range_of(const void *addr, uint64_t *lo, uint64_t *hi)
{
	struct dl_find_object found;
	*lo = *hi = 0;
	if (addr && _dl_find_object((void *)addr, &found) == 0) {
		*lo = (uint64_t)(uintptr_t)found.dlfo_map_start;
		*hi = (uint64_t)(uintptr_t)found.dlfo_map_end;
	}
}

static int deps_in(uint64_t pc, uint64_t lo, uint64_t hi)
{
	return pc >= lo && pc < hi;
}

/* The loader's r_debug as it keeps it, found as debuggers find it: the
 * executable's DT_DEBUG.  (_r_debug is a copy where the executable names
 * the symbol, made once at its relocation; its r_map stays right.) */
static const struct r_debug *deps_live_rdebug(void)
{
	const struct link_map *exe = _r_debug.r_map;
	for (const ElfW(Dyn) *d = exe ? exe->l_ld : NULL; d && d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_DEBUG && d->d_un.d_ptr)
			return (const struct r_debug *)(uintptr_t)d->d_un.d_ptr;
	return NULL;
}

int deps_init(void)
{
	deps_pid = getpid();
	deps_range_of((const void *)&getpid, &deps_unsafe[0].lo, &deps_unsafe[0].hi);
	/* (the loader by its base: _dl_find_object itself is the C library's) */
	deps_range_of((const void *)(uintptr_t)getauxval(AT_BASE), &deps_unsafe[1].lo,
		      &deps_unsafe[1].hi);
	deps_range_of((const void *)(uintptr_t)getauxval(AT_SYSINFO_EHDR), &deps_unsafe[2].lo,
		      &deps_unsafe[2].hi);
	deps_rdebug = deps_live_rdebug();
	if (!deps_unsafe[0].hi || !deps_unsafe[1].hi || !deps_rdebug)
		return -ENOENT;
	if (!deps_backend_lazy)
		return 0;
	/* malloc as the loader bound it for this library: the first definition
	 * in the process, the runtime's own interposer (heap.c) or the C
	 * library's where the runtime's is not the first. */
	void *(*volatile bound)(size_t) = malloc;
	uint64_t at = (uint64_t)(uintptr_t)bound, lo, hi;
	context_runtime_text(&lo, &hi);
	/* Where it is the runtime's, the one it hands the call to: a library
	 * after it in the search order may define its own (own_alloc_lib). */
	if (deps_in(at, lo, hi)) {
		const struct heap_next_fns *next = heap_next(); /* (the lookup the first allocation makes) */
		at = next ? (uint64_t)(uintptr_t)next->malloc
			  : (uint64_t)(uintptr_t)dlsym(RTLD_NEXT, "malloc");
	}
	deps_tick_ok = deps_in(at, deps_unsafe[0].lo, deps_unsafe[0].hi);
	return 0;
}

int deps_load_at_start(void)
{
	return deps_backend_lazy && !deps_tick_ok;
}

int deps_ready(void)
{
	return !deps_backend_lazy || __atomic_load_n(&deps_state, __ATOMIC_ACQUIRE) == DEPS_READY;
}

int deps_failed(void)
{
	return __atomic_load_n(&deps_state, __ATOMIC_ACQUIRE) == DEPS_FAILED ? deps_errno : 0;
}

const char *deps_failure(void)
{
	return deps_why;
}

/* Where the module of that file name is loaded (its l_addr; a library
 * at 0 is not one), 0 if it is not: the loader's list, read as a
 * debugger does, with no lock (no dlopen(RTLD_NOLOAD): its handle's
 * dlclose is the runtime's interposer, not for a handler). */
static uint64_t deps_loaded_base(const char *name)
{
	for (const struct link_map *m = deps_rdebug ? deps_rdebug->r_map : NULL; m; m = m->l_next) {
		const char *base = m->l_name ? strrchr(m->l_name, '/') : NULL;
		if (base && strcmp(base + 1, name) == 0)
			return (uint64_t)m->l_addr;
	}
	return 0;
}

/* deps_why = a b, cut to fit (no stdio: a handler's). */
static void deps_note_why(const char *a, const char *b)
{
	size_t n = 0;
	for (const char *p = a; *p && n + 1 < sizeof(deps_why); p++)
		deps_why[n++] = *p;
	for (const char *p = b; *p && n + 1 < sizeof(deps_why); p++)
		deps_why[n++] = *p;
	deps_why[n] = '\0';
}

/* dlopen of path, else (none, or not there) of soname. */
static void *deps_open(const char *path, const char *soname)
{
	void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	if (!h && path)
		(void)dlerror(); /* (the program's pending error is not this) */
	return h ? h : dlopen(soname, RTLD_NOW | RTLD_LOCAL);
}

/* Under DEPS_LOADING, which this caller set: dlopen both, bind the
 * forwarders, note libunwind's text; the state it ends in. */
static int deps_do_load(void)
{
	static const char *const names[3] = {DEPS_ZYDIS, DEPS_UNWIND, DEPS_LZMA};
	int theirs[3];
	for (int i = 0; i < 3; i++)
		theirs[i] = deps_loaded_base(names[i]) != 0;
	const char *missing = NULL;
	/* The loader's allocations are not the program's blocks, and must not
	 * run the heap's growth hook (a data-index walk would take the half
	 * loaded libraries for the program's). */
	int held = heap_thread_hold();
	/* libunwind's liblzma first, where the build found it: its soname
	 * then names a loaded library (and where it is not there, libunwind's
	 * load searches for it as before). */
	if (DEPS_LZMA_PATH && !theirs[2] && !dlopen(DEPS_LZMA_PATH, RTLD_NOW | RTLD_LOCAL))
		(void)dlerror();
	void *zydis = deps_open(DEPS_ZYDIS_PATH, DEPS_ZYDIS);
	int open_errno = zydis ? 0 : errno;
	void *unwind = zydis ? deps_open(DEPS_UNWIND_PATH, DEPS_UNWIND) : NULL;
	if (zydis && !unwind)
		open_errno = errno;
	heap_thread_release(held);
	int rc = !zydis || !unwind ? -ENOENT : deps_backend_bind(zydis, unwind, &missing);
	if (rc < 0) {
		/* (dlerror's buffer is the loader's malloc: copied now; the call
		 * also clears the thread's pending error, which the program would
		 * otherwise read as its own) */
		const char *err = dlerror();
		const char *why = missing ? missing : err;
		deps_note_why(missing ? "no symbol " : "", why ? why : "dlopen failed");
		/* Out of descriptors or memory (a program that holds every number
		 * its limit gives it, for a while): a later tick tries again. */
		if (!missing && (open_errno == EMFILE || open_errno == ENFILE || open_errno == ENOMEM)) {
			__atomic_store_n(&deps_state, DEPS_UNLOADED, __ATOMIC_RELEASE);
			return DEPS_UNLOADED;
		}
		deps_errno = -rc;
		__atomic_store_n(&deps_state, DEPS_FAILED, __ATOMIC_RELEASE);
		return DEPS_FAILED;
	}
	for (int i = 0; i < 3; i++)
		deps_bases[i] = theirs[i] ? 0 : deps_loaded_base(names[i]);
	/* libunwind's own pipe, closes and masks are the runtime's to the
	 * guards, from its first walk on. */
	deps_range_of(deps_backend_unwinder_fn(), &deps_unw_lo, &deps_unw_hi);
	fdguard_set_unwinder_text(deps_unw_lo, deps_unw_hi);
	sigguard_set_unwinder_text(deps_unw_lo, deps_unw_hi);
	__atomic_store_n(&deps_state, DEPS_READY, __ATOMIC_RELEASE);
	return DEPS_READY;
}

int deps_load(void)
{
	int state = DEPS_UNLOADED;
	if (!deps_backend_lazy)
		return 0;
	if (__atomic_compare_exchange_n(&deps_state, &state, DEPS_LOADING, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		state = deps_do_load();
	/* (LOADING: another thread's tick loads; its result is not waited for) */
	return state == DEPS_READY || state == DEPS_LOADING ? 0
	       : state == DEPS_FAILED			    ? -deps_errno
							    : -EAGAIN;
}

int deps_threads_begin(void)
{
	if (__atomic_exchange_n(&deps_threaded, 1, __ATOMIC_ACQ_REL))
		return 0;
	return deps_load();
}

int deps_pc_may_load(uint64_t pc)
{
	for (int i = 0; i < 3; i++)
		if (deps_in(pc, deps_unsafe[i].lo, deps_unsafe[i].hi))
			return 0;
	/* (the runtime's small copies hold nothing: context.h CONTEXT_PROGRAM) */
	return !context_pc_runtime(pc);
}

/* Whether the interrupted code holds nothing dlopen needs (deps.h). */
static int deps_tick_may_load(const ucontext_t *uc)
{
	if (!deps_tick_ok || witch_rt.sealed || __atomic_load_n(&deps_in_loader, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&deps_threaded, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&deps_forking, __ATOMIC_SEQ_CST))
		return 0;
	if (!deps_pc_may_load((uint64_t)uc->uc_mcontext.gregs[REG_RIP]) ||
	    __atomic_load_n(&deps_rdebug->r_state, __ATOMIC_ACQUIRE) != RT_CONSISTENT)
		return 0;
	if (sigguard_program_handler_blocked(&uc->uc_sigmask))
		return 0;
	return (pid_t)rawsys6(SYS_getpid, 0, 0, 0, 0, 0, 0) == deps_pid;
}

int deps_load_at_tick(const ucontext_t *uc, uint64_t *load_tsc)
{
	*load_tsc = 0;
	int state = __atomic_load_n(&deps_state, __ATOMIC_ACQUIRE);
	if (state == DEPS_READY || !deps_backend_lazy)
		return 1;
	if (state == DEPS_FAILED)
		return -deps_errno;
	if (state == DEPS_LOADING || !deps_tick_may_load(uc) ||
	    !__atomic_compare_exchange_n(&deps_state, &state, DEPS_LOADING, 0, __ATOMIC_SEQ_CST,
					 __ATOMIC_SEQ_CST))
		return 0;
	/* A fork that began meanwhile either saw LOADING (and waits) or set
	 * the flag this reads (and the load waits for the next tick). */
	if (__atomic_load_n(&deps_forking, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&deps_state, DEPS_UNLOADED, __ATOMIC_SEQ_CST);
		return 0;
	}
	int saved = errno;
	uint64_t t0 = __rdtsc();
	state = deps_do_load();
	*load_tsc = __rdtsc() - t0;
	__atomic_fetch_add(&deps_load_tsc, *load_tsc, __ATOMIC_RELAXED);
	errno = saved;
	return state == DEPS_READY ? 1 : state == DEPS_UNLOADED ? 0 : -deps_errno;
}

uint64_t deps_tick_load_tsc(void)
{
	return __atomic_load_n(&deps_load_tsc, __ATOMIC_RELAXED);
}

void deps_loader_enter(void)
{
	__atomic_fetch_add(&deps_in_loader, 1, __ATOMIC_ACQ_REL);
}

void deps_loader_leave(void)
{
	__atomic_fetch_sub(&deps_in_loader, 1, __ATOMIC_ACQ_REL);
}

int deps_owns_module(uint64_t base)
{
	if (!base || !deps_ready())
		return 0;
	for (int i = 0; i < 3; i++)
		if (deps_bases[i] == base)
			return 1;
	return 0;
}

void deps_unwinder_text(uint64_t *lo, uint64_t *hi)
{
	*lo = deps_unw_lo;
	*hi = deps_unw_hi;
}

const void *deps_decoder_library(void)
{
	return deps_ready() ? deps_backend_decoder_fn() : NULL;
}

void deps_prefork(void)
{
	__atomic_store_n(&deps_forking, 1, __ATOMIC_SEQ_CST);
	/* (a load takes ~1 ms; a tick that read the flag clear just before may
	 * still begin one: it shows as LOADING here at once) */
	for (int i = 0; i < 2000 && __atomic_load_n(&deps_state, __ATOMIC_SEQ_CST) == DEPS_LOADING; i++) {
		struct timespec nap = {0, 50000};
		nanosleep(&nap, NULL);
	}
}

void deps_postfork_parent(void)
{
	__atomic_store_n(&deps_forking, 0, __ATOMIC_SEQ_CST);
}

void deps_postfork_child(void)
{
	__atomic_store_n(&deps_forking, 0, __ATOMIC_SEQ_CST);
	deps_pid = getpid();
	/* Another thread of the parent's was loading: its load is not the
	 * child's (it has no such thread); the next tick loads again. */
	int loading = DEPS_LOADING;
	__atomic_compare_exchange_n(&deps_state, &loading, DEPS_UNLOADED, 0, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
}
