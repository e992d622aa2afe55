#!/bin/bash
# run_fd_sweep.sh: a program that closes every descriptor it did not open
# runs on as without the profiler, and its profile goes on past the sweep.
#
# usage: run_fd_sweep.sh BUILD_DIR
#
# fd_sweep.c does the same work twice, phase_one and phase_two, sweeps its
# descriptors between them, takes every free number below 1024 and lets a
# second thread end.  Before fdguard.h a sweep closed the runtime's
# descriptors: phase_two had none of the sampled bytes (0.00-0.05 in each
# row), and the second thread's end closed the program's own files at the
# numbers it had taken ("descriptor N, the program's, was closed").  Each
# row: the way it sweeps, the shares of the profile's sampled bytes
# (WITCH_WATCHPOINTS=0: no traps needed), and the stat that counts what
# the sweep met.  A sweep leaves the runtime's open: the same work each
# phase, half the bytes each.  take dup2s onto them instead, which is the
# program's to do: the main thread's clock is gone (phase_two: none), and
# what tells is that the second thread's end closed none of the program's
# (fd_sweep.c checks; exit 1 otherwise).  none sweeps nothing: every close
# of the runtime's (the second thread's end, the exit's) is its own, so
# fd_closes_kept stays 0 (a close in the runtime that went through the
# program's close would be kept open and counted there).  Every row: stdout and status as
# native, nothing on stderr.  daemon's profiles are the parent's (no
# samples) and the child's, read together.
set -u
. "$(dirname "$0")/table.sh"
table_begin "$1" fd-sweep
prog=$build/tests/programs/fd_sweep

rows=(
	"closefrom|phase_one=0.5,phase_two=0.5|--min-stat fd_closes_kept=2"
	"close_range|phase_one=0.5,phase_two=0.5|--min-stat fd_closes_kept=2"
	"syscall|phase_one=0.5,phase_two=0.5|--min-stat fd_closes_kept=2"
	"close_loop|phase_one=0.5,phase_two=0.5|--min-stat fd_closes_kept=2"
	"proc_fd|phase_one=0.5,phase_two=0.5|--min-stat fd_closes_kept=2"
	"daemon|phase_one=0.5,phase_two=0.5|--min-stat fd_closes_kept=2"
	"take|phase_one=1.0,phase_two=0.0|--min-stat fd_numbers_taken=2"
	"none|phase_one=0.5,phase_two=0.5|--max-stat fd_closes_kept=0"
)
row_env=(WITCH_WATCHPOINTS=0)
for row in "${rows[@]}"; do
	IFS='|' read -r way shares checks <<<"$row"
	read -ra extra <<<"$checks"
	row_checks=(--sampled-shares "$shares" --tol 0.15 --min-samples 200 "${extra[@]}")
	row_profiled "$prog" "$way"
	# The report says when the program took the runtime's numbers.
	note=$("$build/witch" report "$tmp"/p/*.prof 2>&1 | grep -c 'the program replaced [0-9]* of the profiler')
	case $checks in
	*fd_numbers_taken*) [ "$note" = 1 ] || row_bad="$row_bad report: no note of the taken descriptors" ;;
	*) [ "$note" = 0 ] || row_bad="$row_bad report: a note of taken descriptors" ;;
	esac
	row_end "$way" "$row_bad" "$shares within 0.15, $checks"
done
table_end fd_sweep ${#rows[@]}
