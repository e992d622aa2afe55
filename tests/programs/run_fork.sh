#!/bin/bash
# run_fork.sh BUILD_DIR PROGRAM [ARGS...]: a forking program under the profiler.
# Checks: stdout and exit status equal the native run's; exactly two
# profiles, one per process (parent and child pids), each valid and each
# with the dead_two_loops answer (fraction 0.5 +- 0.1, top pair
# fill -> overwrite): the child profiles itself from fork on.  At least 50
# samples each: 24 profiles of 12 quiet runs read 109-181, but a parent
# under ctest -j2 on 2 CPUs read 58 (57 of its 135 ticks found the window
# too sparse to keep a pick, skip_sparse), its answer still right.
set -u
BUILD=$1 PROGRAM=$2
shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/witch-fork.XXXXXX)
fail() { echo "FAIL dead_fork: $* (files kept in $tmp)"; exit 1; }

"$PROGRAM" "$@" >"$tmp/native.out"; native_rc=$?
mkdir "$tmp/prof"
env -u WITCH_RATE LD_PRELOAD="$BUILD/libwitch.so" WITCH_CLIENT=dead WITCH_SAMPLER=soft WITCH_SEED=4242 \
    WITCH_RATE=2000 WITCH_OUTPUT="$tmp/prof/p-%p.prof" "$PROGRAM" "$@" >"$tmp/prof.out" 2>"$tmp/prof.err"
prof_rc=$?
[ "$native_rc" = "$prof_rc" ] || fail "exit status $prof_rc, native $native_rc"
cmp -s "$tmp/native.out" "$tmp/prof.out" || fail "stdout differs from the native run"
[ ! -s "$tmp/prof.err" ] || fail "stderr not empty: $(head -3 "$tmp/prof.err")"
n=$(ls "$tmp/prof" | wc -l)
[ "$n" = 2 ] || fail "expected 2 profiles (parent, child), found $n: $(ls "$tmp/prof")"
pids=""
for f in "$tmp"/prof/p-*.prof; do
	"$BUILD/witch" report --json "$f" >"$f.json" || fail "witch report failed on $f"
	python3 "$HERE/check_report.py" "$f.json" --fraction 0.5 --tol 0.1 \
		--top-pair fill overwrite --min-samples 50 --min-traps 20 >"$f.check" ||
		fail "$(basename "$f"): $(tail -1 "$f.check")"
	pids="$pids $(grep '^pid ' "$f" | cut -d' ' -f2)"
done
set -- $pids
[ "$1" != "$2" ] || fail "both profiles claim pid $1"
echo "PASS dead_fork: 2 profiles (pids$pids), same stdout and exit status $prof_rc"
rm -rf "$tmp"
