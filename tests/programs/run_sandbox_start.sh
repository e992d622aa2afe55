#!/bin/bash
# run_sandbox_start.sh: a program started under a seccomp filter already in
# place (systemd's SystemCallFilter=, a container runtime's profile).
#
# usage: run_sandbox_start.sh BUILD_DIR
#
# sandboxed_exec installs a filter that kills the process at one system
# call, then execs exit7 with the runtime preloaded.  Before
# sandboxguard_probe the runtime's first perf_event_open or timer_settime
# killed the program at start (SIGSYS, status 159).  sched_setscheduler
# is the flusher's start (at a program's first thread, which exit7 never
# has: asked at the start all the same).  Each row: the call
# the filter kills, and the runtime's one line on stderr (empty: none, and
# the program is profiled: one profile).  Every row: stdout and status as
# native under the same filter.  No traps needed (WITCH_WATCHPOINTS=0).
set -u
build=$(cd "$1" && pwd) || exit 1
launch=$build/tests/programs/sandboxed_exec
exit7=$build/tests/programs/exit7
tmp=$(mktemp -d /tmp/witch-sandbox-start.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/table.sh"
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done

"$launch" acct "" "$exit7" >/dev/null 2>&1
[ $? = 7 ] || { echo "SKIP sandbox_start: seccomp filters unavailable here"; exit 77; }

says="the seccomp filter in place kills the process at"
rows=(
	"perf_event_open|witch: $says perf_event_open, which the profiler calls; running without profiling"
	"timer_settime|witch: $says timer_settime, which the profiler calls; running without profiling"
	"sched_setscheduler|witch: $says sched_setscheduler, which the profiler calls; running without profiling"
	"acct|"
)
for row in "${rows[@]}"; do
	IFS='|' read -r kill want <<<"$row"
	rm -rf "$tmp/p" && mkdir "$tmp/p"
	"$launch" "$kill" "" "$exit7" >"$tmp/native.out" 2>&1
	echo "status $?" >>"$tmp/native.out"
	env WITCH_WATCHPOINTS=0 WITCH_OUTPUT="$tmp/p/e-%p.prof" \
		"$launch" "$kill" "$build/libwitch.so" "$exit7" >"$tmp/out" 2>"$tmp/err"
	echo "status $?" >>"$tmp/out"
	bad=""
	cmp -s "$tmp/native.out" "$tmp/out" || bad="$bad stdout/status: $(tr '\n' ' ' <"$tmp/out")"
	[ "$(cat "$tmp/err")" = "$want" ] || bad="$bad stderr: '$(head -c 300 "$tmp/err")'"
	n=$(ls "$tmp/p" | wc -l)
	[ "$n" = "$([ -z "$want" ] && echo 1 || echo 0)" ] || bad="$bad profiles: $n"
	row_end "$kill" "$bad" "${want:-profiled}"
done
table_end sandbox_start ${#rows[@]}
