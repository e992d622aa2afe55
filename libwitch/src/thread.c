/* thread: per-thread runtime state and its life cycle (see thread.h). */
#include "witch/thread.h"
#include "witch/lockguard.h"
#include "witch/peek.h"
#include "witch/datasym.h"
#include "witch/phdrs.h"
#include "witch/runtime.h"
#include "witch/export.h"
#include "witch/pmu_event.h"
#include "witch/log.h"
#include "witch/profile.h"
#include "witch/runspace.h"
#include "witch/sigguard.h"
#include "witch/fdguard.h"
#include "witch/threadmap.h"
#include "witch/deps.h"

#include <asm/prctl.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define THREAD_ARENA_SIZE ((size_t)8 << 20)
#define THREAD_MAX_NODES (1u << 16)
#define THREAD_MAX_PAIRS (1u << 14) /* between folds: a trap adds up to 4 by object (objpend.h) */
#define THREAD_ALTSTACK_SIZE ((size_t)128 << 10)

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static pthread_create_fn thread_real_create;

__thread struct witch_thread *thread_tls_self
	__attribute__((visibility("hidden"), tls_model("initial-exec")));

static const struct pmu_event *thread_pmu_ev; /* NULL: the software sampler */
/* What every thread's handlers learn of the code, shared: where
 * instructions end (a trap's precise pc), how frames find their callers
 * (unwind_rules.h) and, once on, the second level of decodings
 * (decode_zcache.h).  The code is the process's; a table each cost a busy
 * thread ~40-70 KiB apiece, and a grown decode cache ~600 KiB. */
static struct decode_cache *thread_prev_cache;
static void *thread_rules_mem;
static struct decode_zshared *thread_zshared;
static pthread_key_t thread_key;
static pthread_mutex_t thread_lock = PTHREAD_MUTEX_INITIALIZER;
static struct witch_thread *thread_list;
/* A fork child's thread started in a handler (thread_child_on_signal),
 * which takes no lock: the list takes it in at its next locked use. */
static struct witch_thread *thread_pending;
static int thread_warned_wp, thread_warned_fewer, thread_warned_sampler, thread_warned_yield;

/* fn(sig, si, uc) with the stack pointer at top (16-byte aligned); the
 * frame pointer keeps the way back, and tells unwinders. */
int thread_call_on_stack(int (*fn)(int, siginfo_t *, void *), int sig, siginfo_t *si, void *uc,
			 void *top);
__asm__(".text\n"
	".globl thread_call_on_stack\n"
	".hidden thread_call_on_stack\n"
	".type thread_call_on_stack, @function\n"
	"thread_call_on_stack:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	mov %r8, %rsp\n"
	"	mov %rdi, %rax\n"
	"	mov %esi, %edi\n"
	"	mov %rdx, %rsi\n"
	"	mov %rcx, %rdx\n"
	"	call *%rax\n"
	"	mov %rbp, %rsp\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size thread_call_on_stack, .-thread_call_on_stack\n");

int thread_on_own_stack(int (*fn)(int, siginfo_t *, void *), int sig, siginfo_t *si, void *uc)
{
	struct witch_thread *t = thread_tls_self;
	uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
	uint64_t lo = t ? (uint64_t)(uintptr_t)t->altstack : 0, hi = lo + THREAD_ALTSTACK_SIZE;
	if (!t || !t->altstack_on || (sp >= lo && sp < hi))
		return fn(sig, si, uc);
	t->stats.signals_off_stack++;
	return thread_call_on_stack(fn, sig, si, uc, (void *)(uintptr_t)hi);
}

/* --- the program's last thread --------------------------------------------
 *
 * The C library ends the process where its last thread ends, and counts
 * the runtime's flusher among them: a program whose main thread called
 * pthread_exit never ended once its other threads had (it waited on the
 * flusher for ever).  So the runtime counts the program's threads, each
 * one's end by a key's destructor, which runs at its return and at its
 * pthread_exit alike (exit() runs none: the main thread's counts only
 * where it calls pthread_exit).  At 0 the hook tells the flusher to
 * return, and the C library's count ends the process where it reaches 0.
 * (Not a cleanup handler around the thread's function: the trampoline's
 * call to it must stay a tail call, or the trampoline's frame stands
 * between the program's and start_thread in every sampled context.) */
static int thread_program_live = 1; /* the main thread */
static pthread_key_t thread_program_key;
static void (*thread_last_hook)(void);

void thread_set_last_hook(void (*last_gone)(void))
{
	thread_last_hook = last_gone;
}

static void thread_program_left(void *unused)
{
	(void)unused;
	if (__atomic_sub_fetch(&thread_program_live, 1, __ATOMIC_ACQ_REL) == 0 && thread_last_hook)
		thread_last_hook();
}

/* The calling thread is the program's only one, as its main thread. */
static void thread_program_only(void)
{
	__atomic_store_n(&thread_program_live, 1, __ATOMIC_RELEASE);
	(void)pthread_setspecific(thread_program_key, &thread_program_live);
}

static void thread_key_destructor(void *p)
{
	thread_end(p);
}

int thread_module_init(const struct pmu_event *pmu_ev)
{
	thread_pmu_ev = pmu_ev;
	thread_zshared = decode_zshared_process(); /* NULL: each thread on its own */
	size_t tables_len = UNWIND_RULES_MEM_SIZE + sizeof(*thread_prev_cache);
	char *mem = lockguard_map(tables_len, MAP_NORESERVE);
	if (mem == MAP_FAILED)
		return -errno;
	thread_rules_mem = mem; /* first: page-aligned, as the rules want 16 */
	thread_prev_cache = (struct decode_cache *)(void *)(mem + UNWIND_RULES_MEM_SIZE);
	int rc = runspace_module_init(witch_rt.cfg->depth, thread_zshared, thread_prev_cache, mem,
				      tables_len);
	if (rc < 0)
		return rc;
	/* Resolve now: dlsym inside the wrapper would run while sampling. */
	thread_real_create = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
	rc = pthread_key_create(&thread_key, thread_key_destructor);
	if (rc == 0 && (rc = pthread_key_create(&thread_program_key, thread_program_left)) == 0)
		thread_program_only(); /* (run on the main thread: the constructor's) */
	return rc ? -rc : 0;
}

/* The thread-control block's head (x86-64: tcb, dtv, self, ..., stack
 * canary at %fs:0x28, pointer guard at %fs:0x30) and errno: the C library
 * and every -fstack-protector function the handler runs read them, so a
 * watchpoint there would trap on the handler itself, which would trap on
 * itself again (seen: the real-time queue filled and the kernel sent SIGIO). */
#define THREAD_TCB_HEAD 0x80

int thread_owns_address(const struct witch_thread *t, uint64_t addr)
{
	return (addr >= t->fs_base && addr < t->fs_base + THREAD_TCB_HEAD) ||
	       (addr >= t->errno_addr && addr < t->errno_addr + sizeof(int)) ||
	       arena_contains(&t->arena, addr) ||
	       (addr >= (uint64_t)(uintptr_t)t->altstack &&
		addr < (uint64_t)(uintptr_t)t->altstack + THREAD_ALTSTACK_SIZE) ||
	       (addr >= (uint64_t)(uintptr_t)t && addr < (uint64_t)(uintptr_t)(t + 1)) ||
	       runspace_owns_address(addr);
}

/* The main thread's stack top as glibc's pthread_getattr_np gives it (the
 * page past __libc_stack_end, the loader's record of where the program's
 * frames begin), without its read of /proc/self/maps for the size, which
 * is not used here: ~0.9 ms of every process's start on this project's VM. */
extern void *__libc_stack_end;

static uint64_t thread_main_stack_hi(void)
{
	uint64_t end = (uint64_t)(uintptr_t)__libc_stack_end;
	return end ? (end & ~(uint64_t)4095) + 4096 : 0;
}

#define THREAD_STACK_MOST (1ull << 30) /* a thread stack's size, at most */

static void thread_stack_bounds(struct witch_thread *t)
{
	pthread_attr_t attr;
	void *lo;
	size_t size;
	if (t->tid == getpid() && (t->stack_hi = thread_main_stack_hi()) != 0)
		return;
	/* glibc puts a thread's descriptor (fs_base) at the top of its stack
	 * block, its own or the program's (pthread_attr_setstack), above the
	 * static TLS: what lies above is no stack.  pthread_getattr_np
	 * mallocs, and a thread's first malloc gives it an arena of its own
	 * (64 MiB of address space) that the program's thread may never have
	 * asked for: only where fs_base is not that (a thread of a runtime
	 * that sets its own), ask it. */
	uint64_t sp = (uint64_t)(uintptr_t)__builtin_frame_address(0);
	if (t->fs_base > sp && t->fs_base - sp < THREAD_STACK_MOST) {
		t->stack_hi = t->fs_base;
		return;
	}
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &lo, &size) == 0) {
		t->stack_hi = (uint64_t)(uintptr_t)lo + size;
	}
	pthread_attr_destroy(&attr);
}

/* Everything the thread needs.  in_child: a fork child's thread, set up
 * in the mapping its parent thread had, from a handler running on the
 * signal stack there: that stack and the stack's bounds are inherited,
 * and every step left is a system call or the thread's own memory. */
static int thread_setup(struct witch_thread *t, int in_child, int open_watchpoints)
{
	const struct witch_config *cfg = witch_rt.cfg;
	int rc;

	t->tid = (pid_t)syscall(SYS_gettid);
	syscall(SYS_arch_prctl, ARCH_GET_FS, &t->fs_base);
	syscall(SYS_arch_prctl, ARCH_GET_GS, &t->gs_base);
	t->errno_addr = (uint64_t)(uintptr_t)&errno;
	if (!in_child)
		thread_stack_bounds(t);
	rng_seed(&t->rng, (cfg->seed_set ? cfg->seed : (uint64_t)getpid() << 20 ^
							 (uint64_t)(uintptr_t)t) ^
				  (uint64_t)t->tid * 0x9e3779b97f4a7c15ull);
	bulk_thread_begin(&t->bulk, &t->rng, 1000000000ull / (cfg->rate ? cfg->rate : 1));
	cost_begin(&t->cost);
	drcost_begin(&t->drcost);

	/* Handlers run here, never on the program's stack (Witch 4.5). */
	stack_t ss = {.ss_sp = t->altstack, .ss_size = THREAD_ALTSTACK_SIZE, .ss_flags = 0};
	if (!in_child && sigaltstack(&ss, NULL) < 0)
		return -errno;
	t->altstack_on = 1;

	if ((rc = cct_init(&t->cct, &t->arena, THREAD_MAX_NODES)) < 0 ||
	    (rc = pairtab_init(&t->pairs, &t->arena, THREAD_MAX_PAIRS)) < 0)
		return rc;
	unwind_rules_init(&t->unwind_rules, thread_rules_mem, &t->stats);
	fnrange_init(&t->fnrange);

	/* Verdicts by the run-ahead alone, or none: no debug register is
	 * opened; the set stays empty.  Else all but the process's first
	 * thread open theirs at their first arm (thread_watchpoints_open):
	 * four perf_event_opens, ~75 us a thread where they trap, that a
	 * thread too short to be sampled never pays. */
	watchpoint_set_init(&t->wps, witch_rt.sig, t->tid, cfg->slow_rearm,
			    (uint64_t)(uintptr_t)&t->parking);
	t->wps_waiting = config_arms_watchpoints(cfg) && !open_watchpoints;
	rc = !config_arms_watchpoints(cfg) || t->wps_waiting
		     ? 0
		     : watchpoint_set_fill(&t->wps, cfg->watchpoints);
	if (rc < 0) {
		if (!__atomic_exchange_n(&thread_warned_wp, 1, __ATOMIC_RELAXED)) {
			char why[512];
			if (rc == -EACCES || rc == -EPERM) {
				/* Its own words: what to change, paranoid level or capability. */
				pmu_event_explain(rc, pmu_event_paranoid(), 0, cfg->client, why,
						  sizeof(why));
				log_line("cannot use hardware watchpoints: %s; running without profiling",
					 why);
			} else {
				log_line("no hardware watchpoint available (perf_event_open breakpoint: %s); "
					 "free a debug register (detach debuggers); running without profiling",
					 strerrordesc_np(-rc));
			}
		}
		return rc;
	}
	if (rc > 0)
		t->stats.watchpoint_sets_opened++;
	/* A debugger (or the program) holds some: fewer watchpoints, said once. */
	uint32_t want = cfg->watchpoints ? cfg->watchpoints : WATCHPOINT_MAX;
	if (config_arms_watchpoints(cfg) && !t->wps_waiting && (uint32_t)rc < want &&
	    !__atomic_exchange_n(&thread_warned_fewer, 1, __ATOMIC_RELAXED))
		log_line("using %d of %u debug registers: the others are in use (a debugger?)", rc,
			 want);

	if (thread_pmu_ev) {
		rc = sampler_open_pmu(&t->sampler, thread_pmu_ev, witch_rt.sig, t->tid);
		if (rc < 0) {
			if (!__atomic_exchange_n(&thread_warned_sampler, 1, __ATOMIC_RELAXED))
				log_line("cannot open the PMU sampler for a thread (%s); "
					 "that thread runs without profiling", strerrordesc_np(-rc));
			return rc;
		}
		return 0;
	}
	rc = sampler_open(&t->sampler, cfg->rate, witch_rt.sig, t->tid);
	if (rc < 0) {
		if (!__atomic_exchange_n(&thread_warned_sampler, 1, __ATOMIC_RELAXED))
			log_line("cannot start the sampler (perf_event_open task-clock and timer_create: %s); "
				 "running without profiling", strerrordesc_np(-rc));
		return rc;
	}
	/* Opened at the thread's first tick (faultlog.h); where it cannot
	 * be, the thread's ticks are weighed as before (stat faultlog_errors). */
	faultlog_begin(&t->faults, t->tid);
	return 0;
}

int thread_watchpoints_open(struct witch_thread *t)
{
	if (!t->wps_waiting)
		return 0;
	t->wps_waiting = 0;
	int rc = watchpoint_set_fill(&t->wps, witch_rt.cfg->watchpoints);
	if (rc < 0) {
		/* As a thread whose set could not open at its start: it runs
		 * unprofiled (its ticks end at the next, handler.c). */
		t->stats.watchpoint_open_errors++;
		t->active = 0;
		return rc;
	}
	t->stats.watchpoint_sets_opened++;
	return 0;
}

/* WITCH_MEMORY_MB caps what threads reserve: each takes its arena,
 * sigaltstack and state up front, so a thread that would pass the cap runs
 * unprofiled instead (counted, with one `witch:` line the first time). */
#define THREAD_FOOTPRINT (THREAD_ARENA_SIZE + THREAD_ALTSTACK_SIZE + sizeof(struct witch_thread))
/* All three in one mapping, signal stack first (an overflow runs off its
 * bottom into what lies below, as it did alone), then the state, then the
 * arena: one munmap a thread where there were three, each a TLB
 * shootdown of the process's other CPUs (~190 us here; threads_many,
 * bench/results/thread_churn.md). */
#define THREAD_STATE_SIZE ((sizeof(struct witch_thread) + 4095) & ~(size_t)4095)
#define THREAD_MAP_SIZE (THREAD_ALTSTACK_SIZE + THREAD_STATE_SIZE + THREAD_ARENA_SIZE)
static uint64_t thread_reserved;   /* bytes, atomic */
static uint64_t thread_unprofiled; /* threads the cap turned away since the last fold, atomic */
static int thread_warned_cap;

static int thread_reserve(void)
{
	uint64_t cap = (uint64_t)witch_rt.cfg->memory_mb << 20;
	if (__atomic_add_fetch(&thread_reserved, THREAD_FOOTPRINT, __ATOMIC_RELAXED) <= cap)
		return 0;
	__atomic_sub_fetch(&thread_reserved, THREAD_FOOTPRINT, __ATOMIC_RELAXED);
	__atomic_add_fetch(&thread_unprofiled, 1, __ATOMIC_RELAXED);
	if (!__atomic_exchange_n(&thread_warned_cap, 1, __ATOMIC_RELAXED))
		log_line("memory cap reached (WITCH_MEMORY_MB=%u, %lu MiB per profiled thread): "
			 "new threads run unprofiled; raise WITCH_MEMORY_MB to profile them",
			 witch_rt.cfg->memory_mb, (unsigned long)(THREAD_FOOTPRINT >> 20));
	return -ENOMEM;
}

static void thread_release(struct witch_thread *t)
{
	if (t->reserved)
		__atomic_sub_fetch(&thread_reserved, THREAD_FOOTPRINT, __ATOMIC_RELAXED);
	sampler_close(&t->sampler);
	faultlog_close(&t->faults);
	watchpoint_set_close(&t->wps);
	if (t->altstack_on && thread_tls_self == t) {
		stack_t ss = {.ss_flags = SS_DISABLE};
		sigaltstack(&ss, NULL);
	}
	/* The signal stack need not be zeroed for the next thread; past the
	 * arena's bump pointer nothing was handed out. */
	size_t touched = THREAD_ALTSTACK_SIZE + THREAD_STATE_SIZE + t->arena.used;
	arena_destroy(&t->arena); /* (the mapping's: given back with it) */
	threadmap_give(t->altstack, THREAD_MAP_SIZE, THREAD_ALTSTACK_SIZE, touched);
}

/* The state in map (zeroed), before its setup: nothing open yet. */
static struct witch_thread *thread_lay_out(char *map)
{
	struct witch_thread *t = (struct witch_thread *)(void *)(map + THREAD_ALTSTACK_SIZE);
	t->altstack = map;
	arena_init_at(&t->arena, map + THREAD_ALTSTACK_SIZE + THREAD_STATE_SIZE, THREAD_ARENA_SIZE);
	t->reserved = 1;
	t->sampler.fd = -1;
	t->faults.fd = -1;
	return t;
}

/* The last step of a start, once the list has t: sampling on (ran_ns:
 * CPU time the thread ran unsampled before, which its first tick stands
 * for too). */
static void thread_go(struct witch_thread *t, uint64_t ran_ns)
{
	thread_tls_self = t;
	peek_thread_begin(&t->wps, &t->stats);
	t->active = 1;
	if (sampler_start(&t->sampler, rng_next(&t->rng), ran_ns) < 0)
		t->active = 0;
}

/* Under thread_lock, before any use of the list. */
static void thread_link_pending(void)
{
	struct witch_thread *t = __atomic_exchange_n(&thread_pending, NULL, __ATOMIC_ACQ_REL);
	if (t) {
		t->next = thread_list;
		thread_list = t;
	}
}

struct witch_thread *thread_begin_first(int open_watchpoints)
{
	/* Outside any handler: a library loaded since is unwound through, and
	 * its data named. */
	phdrs_refresh_if_stale();
	datasym_refresh();
	if (thread_reserve() < 0)
		return NULL;
	char *map = threadmap_take(THREAD_MAP_SIZE);
	if (map == MAP_FAILED) {
		int e = errno;
		__atomic_sub_fetch(&thread_reserved, THREAD_FOOTPRINT, __ATOMIC_RELAXED);
		__atomic_add_fetch(&thread_unprofiled, 1, __ATOMIC_RELAXED);
		/* (ENOMEM: no room under the program's RLIMIT_AS, limitguard.h) */
		if (!__atomic_exchange_n(&thread_warned_cap, 1, __ATOMIC_RELAXED))
			log_line("no room for a profiled thread's %lu MiB (%s): new threads run "
				 "unprofiled",
				 (unsigned long)(THREAD_MAP_SIZE >> 20),
				 e == ENOMEM ? "address space: raise RLIMIT_AS's hard limit (ulimit -H -v)"
					     : "mmap failed");
		return NULL;
	}
	struct witch_thread *t = thread_lay_out(map);
	if (thread_setup(t, 0, open_watchpoints) < 0) {
		thread_release(t);
		return NULL;
	}
	t->stats.threads = 1;
	/* A worker pool's thread begins with every signal blocked (xz -T):
	 * the runtime's own is opened (sigguard.h), counted.  One held in
	 * particular leaves the thread without ticks: said in the report. */
	int open = sigguard_thread_open();
	t->stats.threads_signal_opened = open > 0;
	t->stats.threads_signal_blocked = open < 0;
	/* The key's destructor folds the thread when it ends: without it what
	 * the thread measures would be lost, so it is not profiled. */
	if (pthread_setspecific(thread_key, t) != 0) {
		thread_release(t);
		return NULL;
	}
	pthread_mutex_lock(&thread_lock);
	thread_link_pending();
	t->next = thread_list;
	thread_list = t;
	pthread_mutex_unlock(&thread_lock);
	thread_go(t, 0);
	return t;
}

struct witch_thread *thread_begin(void)
{
	return thread_begin_first(0);
}

/* Stop everything that can raise a signal for t; callable from any thread. */
static void thread_quiesce(struct witch_thread *t)
{
	t->active = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	sampler_stop(&t->sampler);
	for (int i = 0; i < t->wps.n; i++)
		watchpoint_disarm(&t->wps, i);
	if (t->sampler.clock == SAMPLER_PMU) {
		struct pmu_ring_stats r;
		pmu_stats(&t->sampler.pmu, &r);
		t->stats.pmu_records = r.samples;
		t->stats.pmu_not_exact = r.not_exact;
		t->stats.pmu_kernel = r.kernel;
		t->stats.pmu_wrong_op = r.wrong_op;
		t->stats.pmu_addr_zero = r.addr_zero;
		t->stats.pmu_lost = r.lost;
		t->stats.pmu_throttle = r.throttle;
	}
}

static void thread_unlink(struct witch_thread *t)
{
	pthread_mutex_lock(&thread_lock);
	thread_link_pending();
	for (struct witch_thread **p = &thread_list; *p; p = &(*p)->next) {
		if (*p == t) {
			*p = t->next;
			break;
		}
	}
	pthread_mutex_unlock(&thread_lock);
}

/* The page-fault log's records since t's last tick, counted as a tick
 * counts them (handler.c): only where no handler of t's can be running. */
static void thread_count_faults(struct witch_thread *t)
{
	uint64_t records = faultlog_records_since(&t->faults);
	t->stats.faults_logged += records;
	t->stats.cost_faultlog_ns += (uint64_t)faultlog_cost_ns(records, records * t->faults.period);
}

/* Fold what t measured so far into the profile and start its tables
 * afresh (its calling context tree stays: mu and eta carry on). */
static void thread_fold(struct witch_thread *t)
{
	t->stats.rearm_fast += t->wps.rearm_fast;
	t->stats.rearm_slow += t->wps.rearm_slow;
	t->stats.arm_errors += t->wps.arm_errors;
	t->stats.period_sets += t->wps.period_sets;
	t->stats.arm_enabled += t->wps.arm_enabled;
	t->wps.rearm_fast = t->wps.rearm_slow = t->wps.arm_errors = t->wps.period_sets = 0;
	t->wps.arm_enabled = 0;
	t->stats.sampler_perf_errors += t->sampler.perf_errors;
	t->sampler.perf_errors = 0;
	cost_fold(&t->cost, &t->stats.cost_handler_ns, &t->stats.cost_kernel_ns,
		  &t->stats.round_trips, &t->stats.cost_preempted);
	uint64_t parts[COST_PARTS] = {0};
	cost_fold_parts(&t->cost, parts);
	t->stats.cost_part_other_ns += parts[COST_PART_OTHER];
	t->stats.cost_part_look_ns += parts[COST_PART_LOOK];
	t->stats.cost_part_picks_ns += parts[COST_PART_PICKS];
	t->stats.round_trip_ns = (uint64_t)cost_round_trip_ns(&t->cost);
	t->stats.tick_trip_ns = t->cost.tick_trip.n >= COST_TIMED_MIN ? (uint64_t)cost_tick_ns(&t->cost) : 0;
	t->stats.ticks_timed += t->cost.tick_trip.n - t->cost.tick_trip_folded;
	t->cost.tick_trip_folded = t->cost.tick_trip.n;
	t->stats.hit_ns = (uint64_t)watchpoint_hit_ns();
	t->stats.threads_unprofiled += __atomic_exchange_n(&thread_unprofiled, 0, __ATOMIC_RELAXED);
	/* (copies in pieces since the thread's last tick: no tick takes them now) */
	t->stats.cost_pieces_ns += (uint64_t)bulk_take_pieces_ns(&t->bulk);
	profile_fold(&t->cct, &t->pairs, &t->stats);
	memset(&t->stats, 0, sizeof(t->stats));
	pairtab_clear(&t->pairs);
	t->cct.dropped = 0;
}

void thread_end(struct witch_thread *t)
{
	/* Sealed: stopped already (thread_end_all), and its descriptors and
	 * memory stay, since closing and unmapping are system calls. */
	if (!t || witch_rt.sealed)
		return;
	thread_quiesce(t);
	/* Out of the list first, under its lock: a periodic flush folding the
	 * live threads can no longer fold this one at the same time. */
	thread_unlink(t);
	thread_count_faults(t);
	thread_fold(t);
	if (thread_tls_self == t) {
		thread_tls_self = NULL;
		peek_thread_begin(NULL, NULL);
	}
	thread_release(t);
}

void thread_end_all(void)
{
	pthread_mutex_lock(&thread_lock);
	thread_link_pending();
	for (struct witch_thread *t = thread_list; t; t = t->next)
		thread_quiesce(t);
	/* Other threads may still be inside a handler that started before
	 * quiesce; their memory stays mapped, only this fold reads it (and
	 * their fault logs stay as their last tick left them). */
	for (struct witch_thread *t = thread_list; t; t = t->next) {
		if (t == thread_tls_self)
			thread_count_faults(t);
		thread_fold(t);
	}
	pthread_mutex_unlock(&thread_lock);
}

void thread_wait_handlers(void)
{
	pthread_mutex_lock(&thread_lock);
	thread_link_pending();
	for (struct witch_thread *t = thread_list; t; t = t->next)
		while (t != thread_tls_self && __atomic_load_n(&t->in_handler, __ATOMIC_SEQ_CST))
			sched_yield();
	pthread_mutex_unlock(&thread_lock);
}

void thread_flush_all(void)
{
	pthread_mutex_lock(&thread_lock);
	thread_link_pending();
	for (struct witch_thread *t = thread_list; t; t = t->next) {
		__atomic_store_n(&t->paused, 1, __ATOMIC_SEQ_CST);
		while (__atomic_load_n(&t->in_handler, __ATOMIC_SEQ_CST))
			sched_yield();
		thread_count_faults(t);
		thread_fold(t);
		__atomic_store_n(&t->paused, 0, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&thread_lock);
}

int thread_create_unprofiled(pthread_t *th, void *(*fn)(void *), void *arg)
{
	if (!thread_real_create)
		return -ENOSYS;
	/* (Lives as long as the process: its stack is never given back.) */
	pthread_attr_t attr;
	if (pthread_attr_init(&attr) != 0)
		return -ENOMEM;
	(void)lockguard_thread_stack(&attr, THREAD_UNPROFILED_STACK);
	/* Not the creating thread's policy: a real-time program's SCHED_FIFO
	 * thread would have made the flusher a real-time thread too, waking
	 * four times a second ahead of the program's own. */
	struct sched_param normal = {.sched_priority = 0};
	if (pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED) != 0 ||
	    pthread_attr_setschedpolicy(&attr, SCHED_OTHER) != 0 ||
	    pthread_attr_setschedparam(&attr, &normal) != 0)
		(void)pthread_attr_setinheritsched(&attr, PTHREAD_INHERIT_SCHED);
	int rc = thread_real_create(th, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	return rc ? -rc : 0;
}

int thread_yield_watchpoint(void)
{
	struct witch_thread *t = thread_tls_self;
	sigset_t ours, old;
	if (!t || t->wps.n == 0)
		return -ENOSPC;
	/* The handlers use the set: keep them out while it shrinks. */
	sigemptyset(&ours);
	sigaddset(&ours, witch_rt.sig);
	sigaddset(&ours, SIGTRAP);
	sigguard_mask(SIG_BLOCK, &ours, &old);
	int rc = watchpoint_set_shrink(&t->wps);
	sigguard_mask(SIG_SETMASK, &old, NULL);
	/* Handled, nothing for the user to do: said only when asked (WITCH_VERBOSE). */
	if (rc == 0 && !__atomic_exchange_n(&thread_warned_yield, 1, __ATOMIC_RELAXED))
		log_verbose(1, "the program opens hardware breakpoints itself: giving it debug registers "
			 "(%d left to the profiler in this thread)", t->wps.n);
	return rc;
}

void thread_resume_all(void)
{
	pthread_mutex_lock(&thread_lock);
	thread_link_pending();
	for (struct witch_thread *t = thread_list; t; t = t->next) {
		t->active = 1;
		if (sampler_start(&t->sampler, rng_next(&t->rng), 0) < 0)
			t->active = 0;
	}
	pthread_mutex_unlock(&thread_lock);
}

/* --- fork -----------------------------------------------------------------
 * A fork child starts sampling lazily.  Most children exec at once (a
 * shell's commands), and before their exec threw it away, the runtime's
 * start took 16% of such a child's time and releasing the parent's
 * threads 10% more (bench/results/startup.md, stop 70).  So at fork the
 * child only closes its parent's descriptors; the forking thread's state
 * waits in thread_child, the parent's other threads in thread_orphans, and
 * a task-clock event on the child's user time, armed as fork returns (after
 * the atfork handlers), starts it: the first signal
 * of its count runs the start in the handler, on the signal stack the
 * child inherited, so it reuses the forking thread's mapping as it is.
 * (A POSIX CPU-time timer was tried first: here one in ~20 children under
 * load never fired, timer_gettime reading 1 ns left 100 ms on.) */

static struct witch_thread *thread_child; /* the forking thread's state, to restart */
static pthread_t thread_child_owner;      /* ... the thread it is for */
static struct witch_thread *thread_orphans; /* the parent's list: their mappings */
static int thread_child_fresh;            /* the forking thread was not profiled */
static int thread_child_fd = -1;          /* the event that starts it */
static uint64_t thread_child_fd_id;       /* ... its id: the descriptor is still it */

/* A fork child's start comes after this much of its CPU time, or one
 * sampling interval if shorter (the default rate's is 5 ms): past what a
 * child that execs at once spends, 0.1-2 ms here (this VM's page faults
 * are slow).  Its first tick stands for the time before the start, so
 * the CPU time the profile covers is the child's whole. */
#define THREAD_CHILD_START_NS 5000000ull

/* The event that starts the forking thread's copy: counting its user
 * time, as the sampler's clock does, one signal at ns.  0 or -errno. */
static int thread_child_open_trigger(pid_t tid)
{
	uint64_t period = 1000000000ull / (witch_rt.cfg->rate ? witch_rt.cfg->rate : 1);
	int fd = sampler_task_clock_open(period < THREAD_CHILD_START_NS ? period : THREAD_CHILD_START_NS,
					 1, witch_rt.sig, tid);
	if (fd < 0)
		return fd;
	if (ioctl(fd, PERF_EVENT_IOC_ID, &thread_child_fd_id) < 0) {
		int rc = -errno;
		fdguard_close(fd);
		return rc;
	}
	thread_child_fd = fd;
	return 0;
}

/* Closed where it is still the event with that id (the program may have
 * put a descriptor of its own on its number: closefrom, dup2). */
static void thread_child_close_trigger(int fd, uint64_t want_id)
{
	uint64_t id = 0;
	if (fd >= 0 && ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0 && id == want_id)
		fdguard_close(fd);
}

/* The parent's threads' mappings but keep's (their descriptors were
 * closed at fork; only the mappings are the child's to free). */
static void thread_release_orphans(const struct witch_thread *keep)
{
	for (struct witch_thread *t = thread_orphans, *next; t; t = next) {
		next = t->next;
		if (t != keep)
			(void)lockguard_unmap(t->altstack, THREAD_MAP_SIZE);
	}
	thread_orphans = NULL;
}

struct thread_start_box {
	void *(*fn)(void *);
	void *arg;
	int busy; /* a slot of thread_boxes taken */
};

/* A new thread's fn and arg, from slots taken by compare and swap: a box
 * malloc'd here and freed by the new thread made glibc give every thread
 * of the program's an arena of its own at its start (64 MiB of address
 * space each, where the program's threads never called malloc: under an
 * RLIMIT_AS its pthread_create then failed).  Past the slots, malloc. */
#define THREAD_BOXES 64
static struct thread_start_box thread_boxes[THREAD_BOXES];

static struct thread_start_box *thread_box_take(void)
{
	for (int i = 0; i < THREAD_BOXES; i++) {
		int free_slot = 0;
		if (__atomic_compare_exchange_n(&thread_boxes[i].busy, &free_slot, 1, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return &thread_boxes[i];
	}
	struct thread_start_box *box = malloc(sizeof(*box));
	if (box)
		box->busy = 0;
	return box;
}

static void thread_box_give(struct thread_start_box *box)
{
	if (box >= thread_boxes && box < thread_boxes + THREAD_BOXES)
		__atomic_store_n(&box->busy, 0, __ATOMIC_RELEASE);
	else
		free(box);
}

void thread_prefork(void)
{
	pthread_mutex_lock(&thread_lock);
	thread_link_pending();
}

void thread_postfork_parent(void)
{
	pthread_mutex_unlock(&thread_lock);
}

void thread_postfork_child(void)
{
	struct witch_thread *self = thread_tls_self;
	thread_program_only(); /* the forking thread, alone in the child */
	if (!self && thread_child && pthread_equal(thread_child_owner, pthread_self()))
		self = thread_child; /* a child forking before its own start */
	pthread_mutex_init(&thread_lock, NULL);
	/* Boxes taken for threads starting in the parent alone. */
	for (int i = 0; i < THREAD_BOXES; i++)
		__atomic_store_n(&thread_boxes[i].busy, 0, __ATOMIC_RELAXED);
	/* A child forking before its start still holds its parent's list:
	 * freed now, but for the forking thread's (rare: a shell's child that
	 * forks again at once). */
	thread_release_orphans(self);
	/* Forked by a child that had not started yet: its trigger, inherited. */
	thread_child_close_trigger(thread_child_fd, thread_child_fd_id);
	thread_child_fd = -1;
	/* The inherited events watch the parent's threads, and the program
	 * may reuse their numbers once it closes them: closed now.  Read
	 * only, so the parent's pages are not copied for it. */
	for (const struct witch_thread *t = thread_list; t; t = t->next) {
		sampler_close_inherited(&t->sampler);
		faultlog_close_inherited(&t->faults);
		watchpoint_set_close_inherited(&t->wps);
	}
	thread_orphans = thread_list;
	thread_list = NULL;
	thread_reserved = self ? THREAD_FOOTPRINT : 0;
	thread_child = self;
	thread_child_fresh = !self;
	thread_child_owner = pthread_self();
	thread_tls_self = NULL;
	peek_thread_begin(NULL, NULL);
	pthread_setspecific(thread_key, NULL); /* its destructor must not fold the parent's */
}

/* The forking thread's state, made the child's: its mapping's state and
 * arena zeroed, then set up as a new thread's.  Async-signal-safe (system
 * calls and this memory only; the list takes t in later, thread_pending);
 * runs on this mapping's signal stack, so on failure the mapping stays. */
static int thread_child_start(struct witch_thread *t)
{
	double start_ns = cost_thread_cpu_ns();
	thread_release_orphans(t);
	char *map = t->altstack;
	uint64_t stack_hi = t->stack_hi;
	if (madvise(map + THREAD_ALTSTACK_SIZE, THREAD_STATE_SIZE + THREAD_ARENA_SIZE,
		    MADV_DONTNEED) < 0)
		return -errno;
	t = thread_lay_out(map);
	t->stack_hi = stack_hi;
	int rc = thread_setup(t, 1, 0);
	/* The key's destructor folds the thread if it ends before the process
	 * (glibc sets a key below 32 in the thread's own block: no lock). */
	if (rc == 0 && pthread_setspecific(thread_key, t) != 0)
		rc = -ENOMEM;
	if (rc < 0) {
		sampler_close(&t->sampler);
		faultlog_close(&t->faults);
		watchpoint_set_close(&t->wps);
		return rc;
	}
	t->stats.threads = 1;
	__atomic_store_n(&thread_pending, t, __ATOMIC_RELEASE);
	thread_go(t, (uint64_t)start_ns); /* (its clock began at fork) */
	profile_note_startup(start_ns); /* what the child's start cost */
	return 0;
}

int thread_child_arm(void)
{
	if (thread_child_fresh) /* forked by a thread the runtime did not profile */
		return thread_begin() ? 0 : -ENOMEM;
	/* Armed here, past the program's atfork handlers, which may close
	 * what they find (the runtime opens nothing in the child before). */
	if (!thread_child || thread_child_open_trigger((pid_t)syscall(SYS_gettid)) == 0)
		return 0;
	/* No event to start it (the descriptors at their limit?): now. */
	struct witch_thread *t = thread_child;
	thread_child = NULL;
	return thread_child_start(t);
}

void thread_child_disarm(void)
{
	if (thread_child_fd < 0)
		return;
	thread_child_close_trigger(thread_child_fd, thread_child_fd_id);
	thread_child_fd = -1;
}

int thread_child_pending(void)
{
	return thread_child != NULL;
}

int thread_child_on_signal(const siginfo_t *si)
{
	if (thread_child_fd < 0 || si->si_code <= 0 || si->si_fd != thread_child_fd)
		return 0;
	struct witch_thread *t = thread_child;
	/* (off: the exit or an exec is under way; a stale one after a start) */
	if (!t || witch_rt.off || !pthread_equal(thread_child_owner, pthread_self()))
		return 1;
	thread_child = NULL;
	thread_child_close_trigger(thread_child_fd, thread_child_fd_id);
	thread_child_fd = -1;
	int rc = thread_child_start(t);
	if (rc < 0)
		log_verbose(1, "fork child %d: its thread runs unprofiled (%s)", (int)getpid(),
			    strerrordesc_np(-rc));
	return 1;
}

/* --- pthread_create interposition ----------------------------------------- */

static void *thread_trampoline(void *p)
{
	struct thread_start_box box = *(struct thread_start_box *)p;
	thread_box_give(p);
	__atomic_add_fetch(&thread_program_live, 1, __ATOMIC_ACQ_REL);
	(void)pthread_setspecific(thread_program_key, &thread_program_live);
	thread_begin();
	return box.fn(box.arg);
}


static void (*thread_spawn_hook)(void);

void thread_set_spawn_hook(void (*before_spawn)(void))
{
	thread_spawn_hook = before_spawn;
}

WITCH_EXPORT int pthread_create(pthread_t *th, const pthread_attr_t *attr,
							  void *(*fn)(void *), void *arg)
{
	pthread_create_fn real = thread_real_create;
	if (!real)
		real = thread_real_create = (pthread_create_fn)dlsym(RTLD_NEXT, "pthread_create");
	if (!real)
		return EAGAIN;
	if (!witch_rt.live)
		return real(th, attr, fn, arg);
	/* Before the second thread: no tick may load them after (deps.h); on
	 * a failure the ticks wait (stat ticks_deps_wait), a lasting one said
	 * at exit (witch.c). */
	(void)deps_threads_begin();
	if (thread_spawn_hook)
		thread_spawn_hook();
	struct thread_start_box *box = thread_box_take();
	if (!box)
		return real(th, attr, fn, arg);
	box->fn = fn;
	box->arg = arg;
	int rc = real(th, attr, thread_trampoline, box);
	if (rc != 0)
		thread_box_give(box);
	return rc;
}
