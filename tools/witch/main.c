/*
 * main: the `witch` command - dispatch to its subcommands.
 *
 * API (command line)
 *   witch run [options] [--] PROG [ARGS...]   run.h
 *   witch report [--format F] [--json] [--top N] [--width N] [--source] [-o FILE] FILE...
 *                                              report.h
 *   witch diff [--json] [--top N] BASE NEW     diff.h
 *   witch check [--max-fraction F] [--max-object-share S] [--baseline BASE --max-increase D] PROFILE...
 *                                              check.h
 *   witch help | --help | -h                  this help on stdout, exit 0
 *   witch --version                           version on stdout, exit 0
 * An unknown subcommand or option prints one "witch: ..." line and a
 * usage hint on stderr and exits 2.
 */
#include "check.h"
#include "diff.h"
#include "report.h"
#include "run.h"

#include <stdio.h>
#include <string.h>

#define WITCH_TOOL_VERSION "0.1.0"

static const char help_text[] =
	"Usage: witch <command> [options]\n"
	"\n"
	"A sampling profiler of wasted memory operations (the Witch design):\n"
	"libwitch.so samples memory accesses, arms hardware watchpoints on them and\n"
	"attributes dead stores, silent stores or redundant loads to pairs of\n"
	"calling contexts <watch, trap>.\n"
	"\n"
	"Commands:\n"
	"  run [-c dead|silent|load] [-o FILE] [--json] [--top N] [--] PROG [ARGS...]\n"
	"      Run PROG with libwitch.so preloaded; when it exits, print the report\n"
	"      of the profiles it (and its descendants) wrote to stdout, and exit\n"
	"      with PROG's status (128+N if killed by signal N).\n"
	"      -c CLIENT   what to look for (default: $WITCH_CLIENT, else dead)\n"
	"      -o FILE     profile path pattern (default: $WITCH_OUTPUT, else\n"
	"                  witch-<PROG basename>-%p.prof in the current directory)\n"
	"      --json, --top N   as for report\n"
	"      libwitch.so is $WITCH_LIB, else the one next to the witch\n"
	"      executable, else ../lib/libwitch.so relative to it.\n"
	"  report [--format text|json|folded|pprof|html] [--json] [--top N] [--width N]\n"
	"         [--source] [-o FILE] FILE...\n"
	"      Summarize profiles (several files are merged by code address, so\n"
	"      processes with different load addresses add up) and list the\n"
	"      pairs with the most waste: N of them (default 10 for text, all\n"
	"      for the other formats; 0 means all). Exit status 2 on an\n"
	"      unreadable or malformed profile.\n"
	"      --json        same as --format json\n"
	"      --format folded   folded stacks for flamegraph.pl and speedscope:\n"
	"                    watch frames;KILLED_BY;trap frames WASTE-BYTES\n"
	"      --format pprof    gzipped profile.proto for go tool pprof (-o FILE,\n"
	"                    or stdout when it is not a terminal)\n"
	"      --format html     one self-contained page: the top pairs with their\n"
	"                    source lines, a flame graph, all pairs, the counters\n"
	"      --source      text: the source lines of both accesses of each pair,\n"
	"                    the line marked '>'\n"
	"      --width N     text: cut frame lines to N columns (default: the\n"
	"                    terminal's width on a terminal, else no limit; 0 = none)\n"
	"      -o FILE       write to FILE instead of stdout\n"
	"  diff [--json] [--top N] BASE NEW\n"
	"      Compare two profiles pair by pair (matched by function, file and\n"
	"      line of both contexts): pairs that grew, shrank, appeared or\n"
	"      vanished, and both fractions; objects by kind and name too.\n"
	"  check [--max-fraction F] [--max-object-share S] [--baseline BASE --max-increase D] PROFILE...\n"
	"      CI gate: print one verdict line; exit 0 (PASS) if the fraction of\n"
	"      the merged PROFILEs is at most F and at most D above BASE's, and\n"
	"      no object holds more than S of the waste; 1 (FAIL) otherwise, 2\n"
	"      on bad input.\n"
	"  help        This text.\n"
	"\n"
	"Environment of the profiled program (read by libwitch.so; README.md,\n"
	"\"Settings\", says more):\n"
	"  WITCH_CLIENT       dead | silent | load (default dead)\n"
	"  WITCH_SAMPLER      auto | soft | pmu (default auto)\n"
	"  WITCH_BUDGET       soft sampler: percent of CPU time the profiler may\n"
	"                     spend, 0.1-50; the rate follows it (default 1)\n"
	"  WITCH_RATE         soft sampler: a fixed rate instead, ticks per\n"
	"                     CPU-second per thread, 1-10000 (not with WITCH_BUDGET)\n"
	"  WITCH_PERIOD       pmu sampler: events per sample (default: a prime near\n"
	"                     5M stores, 10M loads)\n"
	"  WITCH_EVENT        pmu sampler: libpfm4 event, e.g.\n"
	"                     MEM_INST_RETIRED:ALL_STORES (default per client and CPU)\n"
	"  WITCH_WATCHPOINTS  number of debug registers to use (default all\n"
	"                     available, 1-4 on x86; 0 = sample and weigh only,\n"
	"                     no pairs, the sampled bytes by context; window =\n"
	"                     arm none, decide by the run-ahead alone)\n"
	"  WITCH_OUTPUT       profile path pattern: %p pid, %e executable basename,\n"
	"                     %% a percent sign (default witch-%e-%p.prof); relative\n"
	"                     to where the first process of the tree started\n"
	"  WITCH_SEED         random seed, decimal, for reproducible runs\n"
	"  WITCH_VERBOSE      0-2 (diagnostics on stderr)\n"
	"  WITCH_MAX_STEPS    single-step bound of the software sampler (default 32)\n"
	"  WITCH_DEPTH        maximum calling-context depth (default 128)\n"
	"  WITCH_SLOW_REARM   1: re-arm watchpoints by close+reopen instead of\n"
	"                     PERF_EVENT_IOC_MODIFY_ATTRIBUTES\n"
	"  WITCH_SIGTRAP      0: watchpoint traps as the fd's real-time signal\n"
	"                     instead of a perf SIGTRAP (default 1)\n"
	"  WITCH_FP_TOLERANCE silent, load: relative tolerance under which floating-\n"
	"                     point values count as the same (default 0.01)\n"
	"  WITCH_FLUSH        seconds between profile writes while running, 0 = at\n"
	"                     exit only (default 60, from the program's first thread)\n"
	"  WITCH_MEMORY_MB    cap on what profiled threads reserve (default 1024)\n"
	"  WITCH_OBJECTS      0: no heap block tracking, no data-centric attribution\n"
	"                     (default 1)\n"
	"  WITCH_STARTUP_TIMES 1: at exit, one line with what each step of the\n"
	"                     runtime's start and exit took (bench/startup_steps.py)\n"
	"Read by witch run:\n"
	"  WITCH_LIB          path of libwitch.so to preload\n"
	"\n"
	"Metrics: waste and use are estimated bytes; fraction = waste / (waste +\n"
	"use); a pair's share = its waste / total waste. The profile format is\n"
	"docs/profile-format.md, the output formats docs/report-formats.md.\n";

static int usage_hint(void)
{
	fputs("Usage: witch run|report|diff|check|help ... (see 'witch --help')\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2) {
		fputs("witch: no command given\n", stderr);
		return usage_hint();
	}
	cmd = argv[1];
	if (!strcmp(cmd, "run"))
		return witch_run_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "report"))
		return witch_report_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "diff"))
		return witch_diff_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "check"))
		return witch_check_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") ||
	    !strcmp(cmd, "-h")) {
		fputs(help_text, stdout);
		return fflush(stdout) || ferror(stdout) ? 1 : 0;
	}
	if (!strcmp(cmd, "--version")) {
		puts("witch " WITCH_TOOL_VERSION);
		return fflush(stdout) || ferror(stdout) ? 1 : 0;
	}
	if (cmd[0] == '-')
		fprintf(stderr, "witch: unknown option '%s'\n", cmd);
	else
		fprintf(stderr, "witch: unknown command '%s'\n", cmd);
	return usage_hint();
}
