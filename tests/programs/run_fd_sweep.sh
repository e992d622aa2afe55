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
build=$(cd "$1" && pwd) || exit 1
prog=$build/tests/programs/fd_sweep
tmp=$(mktemp -d /tmp/witch-fd-sweep.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/table.sh"
here=$(cd "$(dirname "$0")" && pwd)
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done

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
for row in "${rows[@]}"; do
	IFS='|' read -r way shares checks <<<"$row"
	tol=0.15
	rm -rf "$tmp/p" && mkdir "$tmp/p"
	"$prog" "$way" >"$tmp/native.out" 2>&1
	echo "status $?" >>"$tmp/native.out"
	env LD_PRELOAD="$build/libwitch.so" WITCH_WATCHPOINTS=0 WITCH_RATE=2000 WITCH_SEED=7 \
		WITCH_OUTPUT="$tmp/p/s-%p.prof" "$prog" "$way" >"$tmp/out" 2>"$tmp/err"
	echo "status $?" >>"$tmp/out"
	bad=""
	cmp -s "$tmp/native.out" "$tmp/out" || bad="$bad stdout/status: $(tr '\n' ' ' <"$tmp/out")"
	[ -s "$tmp/err" ] && bad="$bad stderr: $(head -c 300 "$tmp/err")"
	if ! "$build/witch" report --json "$tmp"/p/*.prof >"$tmp/r.json" 2>"$tmp/r.err"; then
		bad="$bad witch report: $(head -c 200 "$tmp/r.err")"
	elif ! python3 "$here/check_report.py" "$tmp/r.json" --client dead --sampled-shares "$shares" \
		--tol "$tol" --min-samples 200 $checks >"$tmp/check" 2>&1; then
		bad="$bad $(grep -h FAIL "$tmp/check" | head -n 3 | tr '\n' ' ')"
	fi
	# The report says when the program took the runtime's numbers.
	note=$("$build/witch" report "$tmp"/p/*.prof 2>&1 | grep -c 'the program replaced [0-9]* of the profiler')
	case $checks in
	*fd_numbers_taken*) [ "$note" = 1 ] || bad="$bad report: no note of the taken descriptors" ;;
	*) [ "$note" = 0 ] || bad="$bad report: a note of taken descriptors" ;;
	esac
	row_end "$way" "$bad" "$shares within $tol, $checks"
done
table_end fd_sweep ${#rows[@]}
