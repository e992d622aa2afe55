#!/bin/bash
# blocked_pool.sh BUILD_DIR PROGRAM: a worker whose creator blocked every
# signal ticks (the runtime opens its own signal: threads_signal_opened 1
# of threads 2); one whose creator held the runtime's signal without all
# the real-time ones does not (threads_signal_blocked 1 of 2, said in the
# text report).  Both run as natively.  Sampling only (WITCH_WATCHPOINTS=0):
# no debug register needed.  Who ticked shows in the sampled contexts: both
# threads run churn, the worker's under the C library's `start_thread`
# (worker's call of churn is a tail call); with the worker ticking,
# its share of the sampled bytes is ~0.5 (both spin for the same 0.3 s of
# wall time), at least 0.2 asked; with it held, none.  (The ticks' clock
# over the CPU time, clock_ns / cpu_ns, printed too, told it until
# 2026-12-05: 0.91-0.94 against 0.46 on a quiet EPYC VM, but 0.653 against
# 0.553 once beside the rest of the suite.)
set -u
BUILD=$1 PROGRAM=$2
tmp=$(mktemp -d /tmp/witch-blocked.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done
fails=0
# mode, want "opened blocked threads"
declare -A worker_of
for row in "all 1 0 2" "named 0 1 2"; do
	set -- $row
	mode=$1 want="$2 $3 $4"
	"$PROGRAM" 0.3 "$mode" >"$tmp/native.out" 2>&1 || { echo "FAIL $mode: native run failed"; exit 1; }
	rm -f "$tmp/p.prof"
	LD_PRELOAD="$BUILD/libwitch.so" WITCH_RATE=2000 WITCH_WATCHPOINTS=0 WITCH_OUTPUT="$tmp/p.prof" \
		"$PROGRAM" 0.3 "$mode" >"$tmp/prof.out" 2>"$tmp/prof.err" ||
		{ echo "FAIL $mode: profiled run failed"; cat "$tmp/prof.err"; fails=$((fails + 1)); continue; }
	cmp -s "$tmp/native.out" "$tmp/prof.out" || { echo "FAIL $mode: stdout differs"; fails=$((fails + 1)); }
	[ -s "$tmp/prof.err" ] && { echo "FAIL $mode: stderr: $(cat "$tmp/prof.err")"; fails=$((fails + 1)); }
	read -r opened blocked threads clock worker < <("$BUILD/witch" report --json "$tmp/p.prof" | python3 -c '
import json, sys
r = json.load(sys.stdin)
s = r["stats"]
total = sum(e["bytes"] for e in r["sampled"])
mine = sum(e["bytes"] for e in r["sampled"] if any(f["function"] == "start_thread" for f in e["context"]))
print(s.get("threads_signal_opened", 0), s.get("threads_signal_blocked", 0), s.get("threads", 0),
      "%.3f" % (s["clock_ns"] / s["cpu_ns"]), "%.3f" % (mine / total if total > 0 else 0.0))')
	got="$opened $blocked $threads"
	[ "$got" = "$want" ] || { echo "FAIL $mode: threads_signal_opened, _blocked, threads = $got, want $want"; fails=$((fails + 1)); }
	worker_of[$mode]=$worker
	note=$("$BUILD/witch" report "$tmp/p.prof" | grep -c "^note: *1 of 2 threads began with the profiler's signal blocked")
	[ "$note" = "$3" ] || { echo "FAIL $mode: the text report's note on blocked threads: $note lines, want $3"; fails=$((fails + 1)); }
	echo "blocked_pool $mode: opened, blocked, threads = $got; clock_ns/cpu_ns $clock; worker's share $worker"
done
if [ -n "${worker_of[all]:-}" ] && [ -n "${worker_of[named]:-}" ]; then
	python3 -c "import sys; sys.exit(0 if ${worker_of[all]} >= 0.2 and ${worker_of[named]} == 0 else 1)" ||
		{ echo "FAIL: the worker's share of the sampled bytes: all ${worker_of[all]}, named ${worker_of[named]}: want all >= 0.2 (its worker ticks), named 0 (its does not)"; fails=$((fails + 1)); }
fi
[ "$fails" = 0 ] || exit 1
echo "PASS blocked_pool"
