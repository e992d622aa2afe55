/* witch: the runtime's entry points: constructor, destructor, signals, fork.
 *
 * LD_PRELOAD=libwitch.so runs witch_init before main.  A bad setting or a
 * machine that cannot be profiled gives one `witch:` line and the program
 * runs on unprofiled, with its own output and exit status.
 */
#include "witch/config.h"
#include "witch/craft.h"
#include "witch/bulk.h"
#include "witch/context.h"
#include "witch/datasym.h"
#include "witch/ehpages.h"
#include "witch/cost.h"
#include "witch/iocount.h"
#include "witch/costmodel.h"
#include "witch/decode.h"
#include "witch/deps.h"
#include "witch/drcost.h"
#include "witch/decode_zcache.h"
#include "witch/runspace.h"
#include "witch/execguard.h"
#include "witch/faultaround.h"
#include "witch/fatal.h"
#include "witch/fdguard.h"
#include "witch/sanguard.h"
#include "witch/vgguard.h"
#include "witch/lockguard.h"
#include "witch/limitguard.h"
#include "witch/flush.h"
#include "witch/forkguard.h"
#include "witch/handler.h"
#include "witch/heap.h"
#include "witch/heap_sites.h"
#include "witch/heap_table.h"
#include "witch/log.h"
#include "witch/memlat.h"
#include "witch/objects.h"
#include "witch/phdrs.h"
#include "witch/pmu_event.h"
#include "witch/probes.h"
#include "witch/profile.h"
#include "witch/profdir.h"
#include "witch/runtime.h"
#include "witch/sandboxguard.h"
#include "witch/sigguard.h"
#include "witch/startstep.h"
#include "witch/thread.h"
#include "witch/unwind.h"
#include "witch/watchpoint.h"
#include "witch/xsave.h"

#include <errno.h>
#include <x86intrin.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* The address space the runtime reserves but for its threads' maps, with
 * room to spare (limitguard.h). */
#define WITCH_AS_FIXED_MB 192

static struct witch_config witch_cfg;
static struct pmu_event witch_pmu_ev;
static int witch_running;
static pid_t witch_pid;                 /* the process the runtime's state is for */
static const char *witch_exec_suffix = "";
static int witch_exec_wrote; /* the image wrote its profile before the exec */
static int witch_sandbox_wrote; /* the profile was written before a sandbox */
static int witch_sandbox_flusher; /* ... and its flusher ended */

/* The runtime's own code range, so handlers can tell its accesses apart. */
static int witch_text_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	uint64_t *range = data; /* in: an address in our text; out: [lo, hi) */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && range[0] >= lo && range[0] < hi) {
			range[0] = lo;
			range[1] = hi;
			return 1;
		}
	}
	return 0;
}

/* Every 16th tracked block (heap.h): where no flusher thread does it, the
 * new modules' data symbols (datasym.h), and the unwind tables' pages
 * the runtime's unwinds faulted in, given back (ehpages.h). */
static void witch_program_grows(void)
{
	datasym_refresh_due();
	ehpages_release_due();
}

static void witch_find_runtime_text(void)
{
	uint64_t range[2] = {(uint64_t)(uintptr_t)&witch_text_cb, 0};
	if (dl_iterate_phdr(witch_text_cb, range) == 1) {
		context_set_runtime_text(range[0], range[1]);
		heap_set_runtime_text(range[0], range[1]);
	}
}

static void witch_prefork(void)
{
	if (witch_rt.sealed) /* no system call of the runtime's past a sandbox */
		return;
	deps_prefork(); /* first: a load under way may need what the others lock */
	execguard_prefork();
	fdguard_prefork();
	flush_prefork();
	thread_prefork();
	profile_prefork();
	phdrs_prefork();
	datasym_prefork();
	ehpages_prefork();
	heap_prefork();
	heap_sites_prefork();
	heap_table_prefork();
}

/* The reverse of witch_prefork's lock order. */
static void witch_postfork_parent(void)
{
	if (witch_rt.sealed) /* no system call of the runtime's past a sandbox */
		return;
	heap_table_postfork_parent();
	heap_sites_postfork_parent();
	heap_postfork_parent();
	ehpages_postfork_parent();
	datasym_postfork_parent();
	phdrs_postfork_parent();
	profile_postfork_parent();
	thread_postfork_parent();
	flush_postfork_parent();
	fdguard_postfork_parent();
	deps_postfork_parent();
}

/* Just before the program's chroot: after it neither the profile's
 * directory nor the decoder's and unwinder's files are where they were. */
static void witch_before_chroot(void)
{
	int rc;
	if (witch_rt.sealed)
		return;
	if ((rc = deps_load()) < 0)
		log_verbose(1, "cannot load the decoder and unwinder before the chroot (%s)",
			    deps_failure());
	profile_before_chroot();
}

/* Resets only: the child starts profiling lazily, armed in
 * witch_child_start as fork returns to it (thread.h). */
static void witch_postfork_child(void)
{
	if (witch_rt.sealed) /* no system call of the runtime's past a sandbox */
		return;
	witch_pid = getpid();
	heap_table_postfork_child();
	heap_sites_postfork_child();
	heap_postfork_child();
	ehpages_postfork_child();
	datasym_postfork_child();
	phdrs_postfork_child();
	profile_postfork_child();
	objects_postfork_child();
	drcost_postfork_child();
	thread_postfork_child();
	flush_postfork_child();
	fdguard_postfork_child();
	lockguard_postfork_child();
	decode_zcache_postfork_child();
	runspace_postfork_child();
	deps_postfork_child();
}

/* thread.h's hook, before each thread the program starts: the periodic
 * writer waited for the program to have threads (flush.h). */
static void witch_program_thread(void)
{
	static int warned;
	int rc = flush_program_thread();
	if (rc < 0 && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		log_line("cannot start the periodic profile writer (%s); the profile is written at exit only",
			 strerror(-rc));
}

/* forkguard's hook: after every atfork child handler, the program's too. */
static void witch_child_start(void)
{
	int rc;

	if (!witch_running || getpid() != witch_pid)
		return;
	if ((rc = thread_child_arm()) < 0)
		log_verbose(1, "child %d: its thread runs unprofiled (%s)", (int)witch_pid,
			    strerror(-rc));
	if ((rc = flush_start_in_child()) < 0)
		log_verbose(1, "child %d: no periodic profile writer (%s)", (int)witch_pid,
			    strerror(-rc));
}

/* exec runs no destructors: write what this image measured first.  Not in
 * a vfork child (it shares the parent's memory and runtime state, which
 * are the parent's to write), nor when not profiling, nor when the image
 * took no tick (a shell's fork that execs at once: its write was ~1.8 ms
 * of each command a script ran here, in copy-on-write faults mostly).
 * The new image writes its own profile; when its name would be this
 * one's (the pattern has no %e, or the program execs itself) this one
 * gets ".exec" added. */
static void witch_end(void);

/* Every thread stops sampling, its measurements folded: an exec or a
 * sandbox comes next.  witch_go_on undoes it where that fails. */
static void witch_pause_all(void)
{
	witch_rt.off = 1;
	witch_running = 0;
	heap_pause(1);
	thread_end_all();
}

/* The exec or sandbox failed: the program goes on, and so does profiling.
 * Its final profile, written at exit, holds everything, so the one written
 * before (the path with suffix; NULL: none) goes. */
static void witch_go_on(const char *wrote_suffix)
{
	char path[CONFIG_PATH_MAX + 64];

	if (wrote_suffix && profile_path(NULL, path, sizeof(path)) == 0 &&
	    strlen(path) + strlen(wrote_suffix) < sizeof(path)) {
		strcat(path, wrote_suffix);
		unlink(path);
	}
	heap_pause(0);
	thread_resume_all();
	witch_rt.off = 0;
	witch_running = 1;
}

static int witch_before_exec(const char *file)
{
	char mine[CONFIG_PATH_MAX + 64], next[CONFIG_PATH_MAX + 64];

	/* The runtime's mappings go with this image: the new one starts under
	 * the program's own address-space limit (a vfork child's too). */
	limitguard_before_exec();
	if (!witch_running || getpid() != witch_pid)
		return 0;
	/* A fork child that execs before its start measured nothing: nothing
	 * to stop or write (its trigger closes with the exec), and no page
	 * of the runtime's copied for it. */
	if (thread_child_pending())
		return 0;
	flush_stop();
	witch_pause_all();
	witch_exec_wrote = 0;
	if (!profile_has_ticks())
		return 1;
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	int clash = profile_path(NULL, mine, sizeof(mine)) == 0 &&
		    profile_path_after_exec(base, next, sizeof(next)) == 0 && strcmp(mine, next) == 0;
	witch_exec_suffix = clash ? ".exec" : "";
	struct fatal_hold hold;
	fatal_hold_begin(&hold);
	witch_exec_wrote = profile_write_suffixed(witch_exec_suffix) == 0;
	fatal_hold_end(&hold);
	return 1;
}

static void witch_exec_failed(int stopped)
{
	limitguard_exec_failed();
	if (!stopped)
		return;
	witch_go_on(witch_exec_wrote ? witch_exec_suffix : NULL);
	flush_resume();
}

/* sandboxguard's: a seccomp filter goes in next, and past it any system
 * call of the runtime's may kill the program.  Stop as for an exec, and
 * seal: nothing starts again (threads, fork children, a crash's stand-in,
 * the flusher; the exit writes nothing more); the profile is written
 * last. */
static int witch_before_sandbox(void)
{
	if (!witch_running || getpid() != witch_pid)
		return 0;
	witch_sandbox_flusher = flush_end();
	int pending = thread_child_pending(); /* a fork child that measured nothing */
	witch_pause_all();
	if (pending)
		thread_child_disarm();
	witch_rt.live = 0;
	thread_wait_handlers();
	witch_rt.sealed = 1;
	int rc = fatal_release();
	if (rc < 0)
		log_verbose(1, "sandbox: the fatal signals' actions not all given back (%s)",
			    strerror(-rc));
	struct fatal_hold hold;
	fatal_hold_begin(&hold);
	witch_sandbox_wrote = !pending && profile_write() == 0;
	fatal_hold_end(&hold);
	return 1;
}

static void witch_sandbox_failed(void)
{
	int rc;

	witch_rt.sealed = 0;
	if ((rc = fatal_reinstall()) < 0)
		log_verbose(1, "cannot stand in for fatal signals again (%s): a crash loses the profile",
			    strerror(-rc));
	witch_go_on(witch_sandbox_wrote ? "" : NULL);
	if (thread_child_pending() && (rc = thread_child_arm()) < 0)
		log_verbose(1, "child %d: its thread runs unprofiled (%s)", (int)witch_pid,
			    strerror(-rc));
	witch_rt.live = 1;
	if (witch_sandbox_flusher && (rc = flush_restart()) < 0)
		log_verbose(1, "cannot start the periodic profile writer again (%s)", strerror(-rc));
}

/* WITCH_SAMPLER: 1 to use the PMU (witch_pmu_ev encoded and probed), 0 for
 * the software sampler, -1 to run unprofiled.  auto says once why it
 * falls back; pmu without a usable PMU is an error. */
static char witch_sampler_why[512]; /* why the PMU sampler did not run */

static int witch_choose_sampler(void)
{
	char *why = witch_sampler_why;
	size_t whylen = sizeof(witch_sampler_why);
	const char *event = witch_cfg.event[0] ? witch_cfg.event : NULL;

	if (witch_cfg.sampler == CONFIG_SAMPLER_SOFT)
		return 0;
	int rc = pmu_event_encode(witch_cfg.client, event, witch_cfg.period, &witch_pmu_ev, why,
				  whylen);
	if (rc == -EINVAL) {
		if (event)
			log_line("WITCH_EVENT=%s: %s; running without profiling", event, why);
		else
			log_line("WITCH_PERIOD=%llu: %s; running without profiling",
				 (unsigned long long)witch_cfg.period, why);
		return -1;
	}
	if (rc == 0)
		rc = pmu_event_probe(&witch_pmu_ev, why, whylen);
	if (rc == 0)
		return 1;
	/* Name the setting that asked for this event, if one did. */
	char what[CONFIG_EVENT_MAX + 16] = "";
	if (event)
		log_snprintf(what, sizeof(what), "WITCH_EVENT=%s: ", event);
	if (witch_cfg.sampler == CONFIG_SAMPLER_PMU) {
		log_line("WITCH_SAMPLER=pmu: %s%s; running without profiling", what, why);
		return -1;
	}
	/* Falling back is how it runs on every VM without a PMU: say nothing
	 * (the profile and `witch report` say why), unless the user named an
	 * event or the kernel refused one, which are for the user to act on. */
	if (event || rc == -EACCES || rc == -EPERM)
		log_line("%s%s; using software sampling", what, why);
	else
		log_verbose(1, "%s%s; using software sampling", what, why);
	return 0;
}

/* drcost_price on a breakpoint of this thread's that nothing hits. */
static int witch_price_armed(void)
{
	int fd;
	int rc = watchpoint_quiet_open(&fd);
	if (rc < 0)
		return rc;
	rc = drcost_price(watchpoint_quiet_arm, &fd, DRCOST_AT_START);
	watchpoint_quiet_close(fd);
	return rc;
}

__attribute__((constructor)) static void witch_init(void)
{
	char err[CONFIG_PATH_MAX + 256];
	int rc;
	uint64_t entry_tsc = __rdtsc();

	/* The C library's memset and memcpy behind the wrappers, whatever
	 * follows (bulk.h; dlsym makes no system call). */
	if ((rc = bulk_resolve()) < 0)
		log_verbose(1, "the C library's memset or memcpy not found: the wrappers run byte loops");
	/* First, before any call a filter in place may kill (sandboxguard.h). */
	if (sandboxguard_probe(err, sizeof(err)) < 0) {
		log_line("%s; running without profiling", err);
		return;
	}
	double start_cpu_ns = cost_thread_cpu_ns();
	log_note_stderr();

	config_defaults(&witch_cfg);
	if (config_from_env(&witch_cfg, err, sizeof(err)) < 0) {
		log_line("%s; running without profiling", err);
		return;
	}
	log_set_verbosity(witch_cfg.verbose);
	/* The machine's measurements, from the process that started this one
	 * (or this one before its exec) if it took them on this machine
	 * (probes.h), else taken below; first, as the sampler's choice asks
	 * whether there is a PMU. */
	int handed = probes_take_inherited(), inherited = handed == 0;
	if (handed == -ENODATA && config_arms_watchpoints(&witch_cfg))
		return; /* never trap here: said once in this tree, where found */
	const char *san = sanguard_intercepting();
	if (san) {
		log_line("this program is built with %s, whose memcpy and malloc the profiler's "
			 "own calls would reach: running without profiling (profile a build "
			 "without -fsanitize=%s)",
			 san, san[0] == 'A' ? "address" : san[0] == 'T' ? "thread" :
			 san[0] == 'M' ? "memory" : "hwaddress");
		return;
	}
	if (config_arms_watchpoints(&witch_cfg) && vgguard_under_valgrind()) {
		log_line("this program runs under Valgrind, which cannot resume its translated code "
			 "from a watchpoint's trap: running without profiling (WITCH_WATCHPOINTS=window "
			 "profiles by the run-ahead alone, no debug registers)");
		return;
	}
	/* Before the runtime maps any of the program's address space
	 * (limitguard.h): room under a hard limit for what the start maps
	 * (~138 MiB: `cat`'s VmSize profiled less native's); the threads'
	 * maps ask as they are made. */
	if (limitguard_init((uint64_t)WITCH_AS_FIXED_MB << 20, err, sizeof(err)) < 0) {
		log_line("%s; running without profiling", err);
		return;
	}
	/* What the runtime may still map once the program locks its future
	 * mappings: the threads' cap and its tables' growth. */
	lockguard_init(((size_t)witch_cfg.memory_mb + 64) << 20);
	startstep_begin(entry_tsc, witch_cfg.startup_times);
	startstep_mark("filter_check+config+probes");
	/* Where the directory cannot be read, each process writes in its own
	 * as before. */
	if ((rc = profile_anchor_output(witch_cfg.output, sizeof(witch_cfg.output))) < 0)
		log_verbose(1, "WITCH_OUTPUT=%s stays relative to each process's directory (%s)",
			    witch_cfg.output, strerror(-rc));
	startstep_mark("output");
	const struct craft *craft = craft_get(witch_cfg.client);
	witch_rt.cfg = &witch_cfg;
	witch_rt.craft = craft;
	int use_pmu = witch_choose_sampler();
	if (use_pmu < 0)
		return;
	startstep_mark("sampler_choice");
	/* A breakpoint that cannot open is said by the first thread's
	 * watchpoint_set_open; one that opens and never traps only here. */
	if (config_arms_watchpoints(&witch_cfg) &&
	    watchpoint_probe(witch_cfg.sigtrap) == -EOPNOTSUPP) {
		/* The run-ahead alone answers for near waste only: 7-8 points
		 * off the oracle in the median, the top pair in a third of the
		 * rows (bench/results/window.md): asked for, not given unasked. */
		log_line("hardware watchpoints do not trigger on this machine (its hypervisor drops "
			 "debug-register traps, gdb's watch is silent too): running without "
			 "profiling (WITCH_WATCHPOINTS=window decides by the run-ahead alone: "
			 "near waste only)");
		if ((rc = probes_hand_down_no_traps()) < 0)
			log_verbose(1, "cannot hand the trap probe's answer down (%s): child "
				    "processes probe again", strerror(-rc));
		return;
	}
	startstep_mark("watchpoint_probe");
	/* The process that measures the machine prices what an armed debug
	 * register costs the program's kernel work (drcost.h) now, for its
	 * descendants too: ~0.2 ms once a tree, not at every process's first
	 * tick.  Where it cannot, ticks price as before. */
	if (!inherited && config_arms_watchpoints(&witch_cfg) && (rc = witch_price_armed()) < 0)
		log_verbose(1, "cannot price armed debug registers at start (%s): the first tick "
			    "does", strerror(-rc));
	startstep_mark("drcost_price");
	/* Once a run is past its first 100 ms, the pages only the runtime
	 * reads fault in one at a time where the kernel allows (faultaround.h,
	 * from ehpages' walk): every module's unwind tables and the decoder's
	 * tables.  Not the runtime's own code, which it runs nearly all of:
	 * one page a fault there only made the start-up's faults more
	 * (bench/results/rss_one_page_20261204.md). */
	ehpages_start();
	if ((rc = phdrs_init()) < 0 || (!inherited && (rc = costmodel_init()) < 0) ||
	    (rc = xsave_init()) < 0) {
		log_line("cannot initialize the decoder or unwinder (%s); running without profiling",
			 strerror(-rc));
		return;
	}
	startstep_mark("unwind+phdrs+costmodel+xsave");
	/* Without an invariant TSC the cost model takes every load for a hit. */
	if (!inherited && (rc = memlat_init()) < 0)
		log_verbose(1, "no invariant TSC (%s): cache misses are not measured", strerror(-rc));
	/* The TSC's rate as memlat measured it or was handed it, else timed
	 * here. */
	if ((rc = cost_init(memlat_tsc_per_ns())) < 0) {
		log_line("cannot time the runtime's own work (%s); running without profiling",
			 strerror(-rc));
		return;
	}
	cost_price_hit(watchpoint_hit_ns());
	if (!inherited && (rc = probes_hand_down()) < 0)
		log_verbose(1, "cannot hand the machine's measurements down (%s): child processes "
			    "measure them again", strerror(-rc));
	/* The read and write interposers (drcost.h counts their bytes) find
	 * the C library's at their first call without it. */
	startstep_mark("memlat+cost+probes_down");
	if ((rc = iocount_init()) < 0)
		log_verbose(1, "the C library's read or write not found (%s)", strerror(-rc));
	iocount_set_hook(handler_io_over);
	/* Names static and TLS data (docs/objects.md); profiling goes on
	 * without it. */
	if (witch_cfg.objects && (rc = datasym_init()) < 0)
		log_verbose(1, "cannot index the modules' data symbols (%s): static data is unnamed",
			    strerror(-rc));
	startstep_mark("iocount+datasym");
	witch_rt.sig = sigguard_pick_signal();
	if (witch_rt.sig < 0) {
		log_line("every real-time signal is in use by the program; running without profiling");
		return;
	}
	uint64_t period = use_pmu ? witch_pmu_ev.period : 1000000000ull / witch_cfg.rate;
	if ((rc = profile_init(use_pmu ? "pmu" : "soft", use_pmu ? NULL : witch_sampler_why, period)) < 0 ||
	    (rc = thread_module_init(use_pmu ? &witch_pmu_ev : NULL)) < 0) {
		log_line("cannot allocate the profile (%s); running without profiling", strerror(-rc));
		return;
	}
	profdir_set_before_chroot(witch_before_chroot);
	startstep_mark("signal+profile+thread_module");
	if ((rc = profile_name_descendants()) < 0)
		log_line("cannot set WITCH_OUTPUT for child processes (%s): a program this one "
			 "execs may replace its profile; put %%p in WITCH_OUTPUT", strerror(-rc));
	/* Data-centric attribution (docs/objects.md); without the table every
	 * sample's object is unknown and the rest runs as before. */
	if (witch_cfg.objects && (rc = objects_init()) < 0)
		log_verbose(1, "no object table (%s): objects are not told apart", strerror(-rc));
	if (!use_pmu && (rc = bulk_init(craft->sample_kind)) < 0)
		log_verbose(1, "memset/memcpy not found (%s): ticks sample them", strerror(-rc));
	startstep_mark("descendants+objects+bulk");
	witch_find_runtime_text();
	/* Where a tick cannot load the decoder and unwinder safely (the
	 * program's own malloc), they load now (deps.h). */
	if ((rc = deps_init()) < 0)
		log_verbose(1, "the C library or the loader not found (%s): the decoder and "
			    "unwinder load at start", strerror(-rc));
	if (deps_load_at_start() && deps_load() < 0) {
		log_line("cannot load the decoder and unwinder (%s): running without profiling",
			 deps_failure());
		return;
	}
	if ((rc = sigguard_install(witch_rt.sig)) < 0) {
		log_line("cannot install signal handlers (%s); running without profiling",
			 strerror(-rc));
		return;
	}
	if (pthread_atfork(witch_prefork, witch_postfork_parent, witch_postfork_child) != 0) {
		log_line("cannot register fork handlers; running without profiling");
		return;
	}
	/* Heap blocks from here on, before the first sample. */
	heap_set_growth_hook(witch_program_grows);
	/* Allocation tracking gets half the budget on top of the sampler's
	 * (heap.h); under a fixed WITCH_RATE its period is fixed too. */
	heap_set_budget(witch_cfg.budget / 2, HEAP_BUDGET_START_NS, HEAP_BUDGET_CREDIT_NS);
	if (witch_cfg.objects && (rc = heap_init()) < 0)
		log_line("cannot track heap blocks (%s); data objects are not attributed",
			 strerror(-rc));
	witch_pid = getpid();
	forkguard_set_child_hook(witch_child_start);
	execguard_set_hooks(witch_before_exec, witch_exec_failed);
	execguard_set_exit_hook(witch_end);
	/* quick_exit ends in the C library's own _exit, which the interposed
	 * one does not see; registered first, this runs after the program's. */
	if (at_quick_exit(witch_end) != 0)
		log_verbose(1, "at_quick_exit refused: a quick_exit loses the profile");
	sandboxguard_set_hooks(witch_before_sandbox, witch_sandbox_failed);
	if (use_pmu)
		log_verbose(1, "client %s, PMU sampler (%s, period %llu), signal %d", craft->name,
			    witch_pmu_ev.name[0], (unsigned long long)witch_pmu_ev.period, witch_rt.sig);
	else
		log_verbose(1, "client %s, software sampler, %s %u ticks/s, signal %d", craft->name,
			    witch_cfg.budget > 0 ? "CPU budget, starting at" : "fixed at",
			    witch_cfg.rate, witch_rt.sig);
	startstep_mark("handlers+atfork+heap");
	/* The root of a process tree opens its watchpoints now, so that a
	 * refusal is said at the start; a process whose parent's probe says
	 * they open and trap here opens them at its first arm: a short one
	 * (a build's, a test suite's) never does (~75 us where they trap). */
	if (!thread_begin_first(!watchpoint_probe_handed_traps()))
		return;
	startstep_mark("thread_begin");
	witch_running = 1;
	witch_rt.live = 1; /* from here new threads are profiled */
	if ((rc = fatal_install(witch_end)) < 0)
		log_verbose(1, "cannot stand in for fatal signals (%s): a crash loses the profile",
			    strerror(-rc));
	thread_set_spawn_hook(witch_program_thread);
	thread_set_last_hook(flush_program_gone);
	if ((rc = flush_start(witch_cfg.flush, witch_cfg.flush_set)) < 0)
		log_line("cannot start the periodic profile writer (%s); the profile is written at exit only",
			 strerror(-rc));
	profile_note_startup(start_cpu_ns);
	startstep_mark("fatal+flush");
}

/* At exit, or at _exit (execguard.h) except in a vfork child, whose
 * runtime state is the parent's. */
static void witch_end(void)
{
	/* (No system call once it is not running: a sandbox's filter may be
	 * in place, sandboxguard.h.) */
	if (!__atomic_load_n(&witch_running, __ATOMIC_SEQ_CST) || getpid() != witch_pid)
		return;
	/* Held from here to the profile's rename: a fatal signal sent in the
	 * meantime waits for it (fatal.h).  Claimed once: that signal's
	 * stand-in calls here too, and may in another thread. */
	struct fatal_hold hold;
	fatal_hold_begin(&hold);
	if (!__atomic_exchange_n(&witch_running, 0, __ATOMIC_SEQ_CST)) {
		fatal_hold_end(&hold);
		return;
	}
	startstep_mark("(program)");
	witch_rt.off = 1;
	heap_pause(1);
	profile_exit_begins();
	flush_stop();
	thread_end_all();
	if (deps_failed()) /* (a tick's dlopen failed: no samples since, deps.h) */
		log_line("cannot load the decoder and unwinder (%s): this process ran unprofiled "
			 "from its first tick", deps_failure());
	startstep_mark("exit_stop");
	profile_write();
	fatal_hold_end(&hold);
	startstep_mark("profile_write");
	startstep_say();
}

__attribute__((destructor)) static void witch_fini(void)
{
	witch_rt.off = 1; /* first, before any call: exit-time stores are not the program's */
	witch_end();
}
