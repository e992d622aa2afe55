/* stats: counters kept per thread and summed into the profile.
 *
 * Every skipped sample or ignored trap is counted under its reason, so a
 * profile says what the runtime could not handle.
 */
#ifndef WITCH_STATS_H
#define WITCH_STATS_H

#include <stdint.h>

/* X(name) for every counter, in profile order. */
#define WITCH_STATS_FIELDS(X)                                                   \
	X(ticks)              /* sampler clock ticks */                          \
	X(samples)            /* address samples taken */                        \
	X(watchpoints_armed)  /* samples given a watchpoint */                   \
	X(not_monitored)      /* samples the reservoir left unwatched */         \
	X(watch_overlap)      /* samples on bytes a watchpoint watches already */ \
	X(traps)              /* watchpoint traps on armed watchpoints */        \
	X(traps_self)         /* the sampled instruction's own access */         \
	X(traps_early)        /* another access before the sampled one ran */    \
	X(traps_early_dropped) /* ... so many that the sample went (handler.c) */ \
	X(hits_passed)        /* hits before a sample's own, let by in the kernel */ \
	X(verdicts_traced)    /* samples the run ahead decided: no watchpoint */ \
	X(verdicts_unreached) /* WITCH_WATCHPOINTS=window: samples no verdict was found for */ \
	X(predict_ok)         /* own trap after as many hits as the trace told */ \
	X(predict_miss)       /* ... after more or fewer */                      \
	X(predict_value_ok)   /* own trap: the bytes stored or loaded, as the run ahead said */ \
	X(predict_value_miss) /* ... other bytes */                              \
	X(traps_kept)         /* no verdict yet: kept watching */                \
	X(traps_unresolved)   /* trapping instruction not found: dropped */      \
	X(traps_spurious)     /* signal for a watchpoint no longer armed */      \
	X(traps_coalesced)    /* traps found beside another SIGTRAP (handler.c) */ \
	X(siblings_counted)   /* ... of them, slots whose hits to let by ran out there */ \
	X(siblings_lost)      /* slots found to have signalled unseen before: released */ \
	X(traps_runtime)      /* the runtime's own access (exit, wrappers) */    \
	X(traps_unreadable)   /* watched bytes no longer readable: dropped */    \
	X(traps_async)        /* came late: SIGTRAP blocked when it fired */     \
	X(sigtrap_blocked)    /* threads seen blocking SIGTRAP: their traps queued since (handler.c) */ \
	X(traps_lost)         /* a hit the kernel took for an icebp (DR6 empty): dropped */ \
	X(steps)              /* single steps taken looking for an access */     \
	X(emulated)           /* instructions run ahead on a register copy */    \
	X(emulated_ahead)     /* ... past the window, for its picks' verdicts */ \
	X(loads_late)         /* ... whose loads missed the near caches (memlat.h) */ \
	X(loads_unforwarded)  /* ... whose loads waited for a store to reach the cache (costmodel.h) */ \
	X(skip_no_access)     /* no wanted access in the tick's window: 0 bytes */ \
	X(ticks_in_fault)     /* arrived from a page fault: kernel time, 0 bytes (faultlog.h) */ \
	X(faults_logged)      /* page-fault records the log took (faultlog.h) */ \
	X(cost_faultlog_ns)   /* ... priced FAULTLOG_RECORD_NS each, the faults between FAULTLOG_COUNT_NS: in the estimate and the budget */ \
	X(faultlog_errors)    /* the page-fault log could not open at the first tick, or be thinned (faultlog.h) */ \
	X(faultlog_period_sets) /* ... its period set anew (faultlog_thin) */ \
	X(faultlog_closed)    /* ... closed, as it cost more than half the budget (faultlog_keep_within) */ \
	X(sampler_perf_errors) /* perf's clock could not open when an interval first needed it: the timer ends them (sampler.h) */ \
	X(watchpoint_sets_opened) /* threads whose breakpoint events opened: the first at its start, others at their first arm (thread.h) */ \
	X(watchpoint_open_errors) /* threads whose breakpoints could not open at their first arm: they run unprofiled from then on (thread.h) */ \
	X(ticks_in_syscall)   /* arrived as a system call returned: kernel time, 0 bytes */ \
	X(ticks_in_runtime)   /* in the runtime's own code (its wrappers): its time, 0 bytes */ \
	X(ticks_bulk)         /* byte-counted samples of memset/memcpy calls */   \
	X(skip_bulk)          /* ticks in a counted memset/memcpy: 0 bytes */     \
	X(ticks_stale)        /* raised while a handler ran: dropped (sampler.h) */ \
	X(ticks_timer)        /* ticks the user-time POSIX timer raised (sampler.h) */ \
	X(skip_sparse)        /* ticks whose window is sparse kept no pick */    \
	X(skip_reach_far)     /* a pick more than WITCH_MAX_STEPS steps away */   \
	X(skip_reach_busy)    /* a second pick past an emulator stop: dropped */ \
	X(skip_no_runspace)   /* handler runs with no workspace free (runspace.h): skipped */ \
	X(look_reach)         /* picks past where the emulator stopped: stepped */ \
	X(pace_measured)      /* ticks weighed by their loop's measured progress (pace.h) */ \
	X(pace_other_call)    /* ... not: back in the loop, in another call of its function */ \
	X(skip_steps)         /* a pick not reached within WITCH_MAX_STEPS */    \
	X(skip_no_step)       /* a step where the program blocks SIGTRAP */      \
	X(skip_step_watched)  /* a step over a watched word, where it would hang (watchpoint.h) */ \
	X(skip_decode)        /* undecodable or unreadable instruction */        \
	X(ticks_deps_wait)    /* the decoder and unwinder not loaded yet, nor loadable here (deps.h) */ \
	X(skip_unknown_addr)  /* address not computable (gather/scatter) */      \
	X(skip_runtime_addr)  /* access to the runtime's own memory */           \
	X(skip_unreadable)    /* the client could not read the sampled bytes */  \
	X(skip_unwind)        /* stack walk failed */                            \
	X(skip_cct_full)      /* calling context tree full: context dropped */   \
	X(skip_pairs_full)    /* pair table full: attribution dropped */         \
	X(objects_unknown)    /* samples in no object (objects.h) */             \
	X(objects_dropped)    /* ... of them because the object table is full */ \
	X(arm_errors)         /* perf_event refused to arm */                    \
	X(clock_errors)       /* the sampler's clock refused the next interval */ \
	X(rearm_fast)         /* re-armed with PERF_EVENT_IOC_MODIFY_ATTRIBUTES */ \
	X(rearm_slow)         /* re-armed by close + reopen */                   \
	X(period_sets)        /* PERF_EVENT_IOC_PERIOD before a re-arm */         \
	X(arm_enabled)        /* over fast re-arms, the slots enabled then (watchpoint.h) */ \
	X(stack_pauses)       /* watchpoints paused for libunwind's reads of the stack (context.c) */ \
	X(clock_ns)           /* soft sampler: CPU time its clock counted */     \
	X(cost_handler_ns)    /* the profiler's time in its handlers */           \
	X(cost_kernel_ns)     /* ... in the kernel round trips they cost (est.) */ \
	X(round_trips)        /* signals and traps handled (each a round trip) */ \
	X(cost_part_other_ns) /* handler time outside ticks' looks and picks (cost.h) */ \
	X(cost_part_look_ns)  /* ... in their looks: windows and runs ahead (look.h) */ \
	X(cost_part_picks_ns) /* ... in their picks: contexts, client, watchpoints */ \
	X(cost_decode_ns)     /* of the looks', Zydis's decodings (decode_misses) */ \
	X(cost_unwind_ns)     /* of the picks', their calling contexts' walks */ \
	X(round_trip_ns)      /* a round trip's cost as measured (max of threads) */ \
	X(tick_trip_ns)       /* a perf clock tick's cost as measured (max of threads) */ \
	X(ticks_timed)        /* ... ticks timed for it (cost.h: 0-2 of them, not used) */ \
	X(hit_ns)             /* a watchpoint hit let by in the kernel, as probed */ \
	X(cost_preempted)     /* handler runs that lost the CPU: counted at the mean */ \
	X(dr_bytes_armed)     /* bytes read and written with watchpoints armed (drcost.h) */ \
	X(dr_faults_armed)    /* page faults with watchpoints armed */           \
	X(cost_dr_ns)         /* ... the kernel's slower string work they cost (est.) */ \
	X(cost_inline_ns)     /* ticks in the runtime's code outside handlers: their time (est.) */ \
	X(cost_pieces_ns)     /* copies in pieces while armed, over whole ones (est., bulk.h) */ \
	X(watch_expired)      /* samples let go for that cost (drcost.h) */ \
	X(watch_expired_io)   /* ... between ticks, by the I/O call that spent its share */ \
	X(handler_faults)     /* handler runs a fault ended (rescue.h): abandoned */ \
	X(signals_off_stack)  /* came on the program's sigaltstack: moved to the thread's own */ \
	X(decode_hits)        /* run-ahead decodings found in the thread's cache (decode_zcache.h) */ \
	X(decode_shared_hits) /* ... in the process's shared one */                \
	X(decode_shared_busy) /* decodings not offered to it: another run was inside */ \
	X(decode_misses)      /* ... decoded by Zydis */ \
	X(decode_grown)       /* threads whose shadow turned the shared decode cache on */ \
	X(unwind_ruled)       /* frames a cached rule found the caller of (unwind_rules.h) */ \
	X(unwind_stepped)     /* ... libunwind did */                           \
	X(unwind_rules_dropped) /* rules followed once, then found not to hold */ \
	X(unwind_caller_run)  /* interrupted frames whose caller the run-ahead returned to */ \
	X(unwind_caller_wrong) /* ... a check walk by libunwind alone found elsewhere */ \
	X(peek_in_place)      /* reads of the program's memory in place (peek.h) */ \
	X(peek_remote)        /* ... through process_vm_readv */                 \
	X(threads)            /* threads profiled */                            \
	X(threads_unprofiled) /* threads the memory cap left unprofiled */       \
	X(threads_signal_blocked) /* threads that began with the runtime's signal held in particular */ \
	X(threads_signal_opened) /* ... with every signal blocked: the runtime's opened */ \
	X(memory_cap_mb)      /* WITCH_MEMORY_MB (the profile's, not a sum) */   \
	X(runspaces)          /* handler workspaces the process laid out (the profile's) */ \
	X(prefault_pages)     /* pages its handlers' tables were made present in bulk (prefault.h; the profile's) */ \
	X(pmu_records)        /* PMU sampler: sample records read */            \
	X(pmu_not_exact)      /* ... without an exact IP: not used */            \
	X(pmu_kernel)         /* ... taken in the kernel: not used */            \
	X(pmu_wrong_op)       /* ... IBS op not the client's access kind */      \
	X(pmu_addr_zero)      /* ... without a data address */                   \
	X(pmu_lost)           /* ... the kernel dropped (ring full) */           \
	X(pmu_throttle)       /* ... throttling records (rate too high) */

struct witch_stats {
#define WITCH_STATS_DECLARE(name) uint64_t name;
	WITCH_STATS_FIELDS(WITCH_STATS_DECLARE)
#undef WITCH_STATS_DECLARE
};

static inline void stats_add(struct witch_stats *to, const struct witch_stats *from)
{
#define WITCH_STATS_ADD(name) to->name += from->name;
	WITCH_STATS_FIELDS(WITCH_STATS_ADD)
#undef WITCH_STATS_ADD
}

#endif
