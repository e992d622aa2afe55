#!/bin/bash
# run_fork_lazy.sh: a fork child starts sampling at its first millisecond
# of CPU time (thread.h), and is then profiled as an eager start had it,
# whichever way it got there.
#
# usage: run_fork_lazy.sh BUILD_DIR
#
# Each row runs `fork_lazy MODE MS` (fork_lazy.c says what each child
# does and checks itself, its exit status saying which check failed) at
# its rate with nothing armed (WITCH_WATCHPOINTS=0: samples on any
# machine).  A child starts at 5 ms of its CPU time or one sampling
# interval if shorter: 1 ms at 1000 a second; `lazy` runs at 200 a
# second, so that its first look (~2 ms of CPU here, this VM's faults
# being slow) comes before its start.  Then every profile but the
# parent's must hold:
#   samples > 0: the child started;
#   `stat threads` the threads that spent (thread: 2, else 1): a thread
#   the child started in a handler joins the list and is folded;
#   clock_ns, the CPU time its ticks stand for, 0.3-2x the MS its threads
#   spent (fork_counts reads 0.7x at 1000 a second here): the first tick
#   stands for the time before the start too.
# refork writes two such profiles (the child's and the grandchild's, each
# MS), the others one.  The old build, which started every child at
# fork, fails `lazy` (status 3: the child's sampler, with its POSIX timer,
# is open before it ran at all).
set -u
build=$1
tmp=$(mktemp -d /tmp/witch-fork-lazy.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/table.sh"
# The soft descriptor limit at the hard one, as on the machines the rows
# were written on: below it, the runtime places its descriptors above the
# program's limit (fdguard.h), where `fds`'s child cannot dup2 (EBADF, exit
# 2; the TCG guest's 1024 of 4096).
ulimit -Sn "$(ulimit -Hn)"

rows=(
	# mode|ms|rate|child profiles|threads each
	"lazy|150|200|1|1"
	"thread|150|1000|1|2"
	"refork|150|1000|2|1"
	"fds|100|1000|1|1"
	"thread_fork|150|1000|1|1"
)
for row in "${rows[@]}"; do
	IFS='|' read -r mode ms rate want_profiles want_threads <<<"$row"
	rm -f "$tmp"/p-*.prof
	env -u WITCH_BUDGET LD_PRELOAD="$build/libwitch.so" WITCH_SAMPLER=soft WITCH_RATE="$rate" \
		WITCH_WATCHPOINTS=0 WITCH_OUTPUT="$tmp/p-%p.prof" \
		"$build/tests/programs/fork_lazy" "$mode" "$ms" >"$tmp/out" 2>"$tmp/err" &
	parent=$!
	wait $parent
	status=$?
	bad=""
	[ "$status" = 0 ] || bad="$bad status:$status"
	[ -s "$tmp/err" ] && bad="$bad stderr:$(head -n 1 "$tmp/err")"
	[ -f "$tmp/p-$parent.prof" ] || bad="$bad no-parent-profile"
	n=0 detail=""
	for prof in "$tmp"/p-*.prof; do
		[ "$prof" = "$tmp/p-$parent.prof" ] && continue
		[ -f "$prof" ] || continue
		n=$((n + 1))
		read -r samples threads clock_ms <<<"$(awk '$1 == "stat" && $2 == "samples" { s = $3 }
			$1 == "stat" && $2 == "threads" { t = $3 }
			$1 == "stat" && $2 == "clock_ns" { c = $3 }
			END { printf "%d %d %d\n", s, t, c / 1e6 }' "$prof")"
		spent=$((ms * want_threads))
		[ "$samples" -gt 0 ] || bad="$bad no-samples"
		[ "$threads" = "$want_threads" ] || bad="$bad threads:$threads"
		if [ "$clock_ms" -lt $((spent * 3 / 10)) ] || [ "$clock_ms" -gt $((spent * 2)) ]; then
			bad="$bad clock:${clock_ms}ms-of-${spent}"
		fi
		detail="$detail [samples $samples, threads $threads, clock ${clock_ms} ms of $spent]"
	done
	[ "$n" = "$want_profiles" ] || bad="$bad child-profiles:$n"
	row_end "$mode $ms at $rate/s" "$bad" "status $status,$detail"
done
table_end fork_lazy ${#rows[@]}
