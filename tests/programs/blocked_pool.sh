#!/bin/bash
# blocked_pool.sh BUILD_DIR PROGRAM: a worker that began with every signal
# blocked is counted (threads_signal_blocked 1 of threads 2), the text
# report says it was not sampled, and the program ends as natively.
# Sampling only (WITCH_WATCHPOINTS=0): the count needs no debug register.
set -u
BUILD=$1 PROGRAM=$2
tmp=$(mktemp -d /tmp/witch-blocked.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done
"$PROGRAM" >"$tmp/native.out" 2>&1 || { echo "FAIL: native run failed"; exit 1; }
LD_PRELOAD="$BUILD/libwitch.so" WITCH_RATE=2000 WITCH_WATCHPOINTS=0 WITCH_OUTPUT="$tmp/p.prof" "$PROGRAM" >"$tmp/prof.out" 2>"$tmp/prof.err" ||
	{ echo "FAIL: profiled run failed"; cat "$tmp/prof.err"; exit 1; }
cmp -s "$tmp/native.out" "$tmp/prof.out" || { echo "FAIL: stdout differs"; exit 1; }
[ -s "$tmp/prof.err" ] && { echo "FAIL: stderr: $(cat "$tmp/prof.err")"; exit 1; }
got=$("$BUILD/witch" report --json "$tmp/p.prof" |
	python3 -c 'import json,sys; s=json.load(sys.stdin)["stats"]; print(int(s.get("threads_signal_blocked",0)), int(s.get("threads",0)))')
[ "$got" = "1 2" ] || { echo "FAIL: threads_signal_blocked, threads = $got, want 1 2"; exit 1; }
"$BUILD/witch" report "$tmp/p.prof" | grep -q "^note: *1 of 2 threads began with the profiler's signal blocked" ||
	{ echo "FAIL: the text report does not say so:"; "$BUILD/witch" report "$tmp/p.prof" | head -8; exit 1; }
echo "PASS blocked_pool: 1 of 2 threads began with the signal blocked, said in the report"
