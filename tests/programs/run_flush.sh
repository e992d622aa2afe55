#!/bin/bash
# run_flush.sh BUILD_DIR PROGRAM: periodic flush (issue 6).  PROGRAM
# (dead_two_loops with many repetitions, ~10 s) runs under the profiler
# with WITCH_FLUSH=1 and is killed with SIGKILL after ~3 s: no destructor
# runs, yet p-<pid>.prof must be there, whole (witch report reads it), with
# the samples of the first seconds and dead_two_loops' answer (fraction 0.5,
# top pair <fill, overwrite>; see dead_two_loops.c).  With WITCH_FLUSH=0 the
# same kill leaves no profile, which shows the file came from the flusher.
set -u
BUILD=$1 PROGRAM=$2
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/witch-flush.XXXXXX)
fail() { echo "FAIL flush: $* (files kept in $tmp)"; ls -la "$tmp" | sed 's/^/    /'; exit 1; }
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done

killed_run() { # flush-seconds outdir: start, wait 3 s, SIGKILL; prints the pid
	mkdir -p "$2"
	env LD_PRELOAD="$BUILD/libwitch.so" WITCH_CLIENT=dead WITCH_SAMPLER=soft WITCH_SEED=4242 \
		WITCH_RATE=2000 WITCH_FLUSH="$1" WITCH_OUTPUT="$2/p-%p.prof" \
		"$PROGRAM" 200 >/dev/null 2>"$2/stderr" &
	local pid=$!
	sleep 3
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	echo "$pid"
}

pid=$(killed_run 1 "$tmp/on")
[ -f "$tmp/on/p-$pid.prof" ] || fail "no profile p-$pid.prof after SIGKILL with WITCH_FLUSH=1"
"$BUILD/witch" report --json "$tmp/on/p-$pid.prof" >"$tmp/on/report.json" 2>"$tmp/on/report.err" ||
	fail "the flushed profile does not read: $(cat "$tmp/on/report.err")"
python3 "$HERE/check_report.py" "$tmp/on/report.json" --client dead --fraction 0.5 --tol 0.1 \
	--top-pair fill overwrite --min-samples 200 >"$tmp/on/check" 2>&1 || fail "$(tail -n 1 "$tmp/on/check")"

pid=$(killed_run 0 "$tmp/off")
n=$(ls "$tmp/off" | grep -c '\.prof$')
[ "$n" = 0 ] || fail "WITCH_FLUSH=0 and SIGKILL still left $n profile(s)"
echo "PASS flush: SIGKILL after 3 s left a whole profile ($(tail -n 1 "$tmp/on/check" | sed 's/^check_report: PASS //')); none without the flusher"
rm -rf "$tmp"
