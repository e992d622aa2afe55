#!/bin/bash
# run_daemon.sh BUILD_DIR PROGRAM: a daemonizing program (daemonize.c)
# under the profiler.  Checks: the parent's stdout and status are as
# native; the daemon finishes (its OUTFILE appears, same checksum as
# native); among the profiles written (each readable), one, the daemon's,
# has dead_two_loops' answer.
set -u
BUILD=$1 PROGRAM=$2
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/witch-daemon.XXXXXX)
fail() { echo "FAIL daemonize: $* (files kept in $tmp)"; ls -la "$tmp" "$tmp/prof" 2>/dev/null | sed 's/^/    /'; exit 1; }
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done

wait_for() { # file: up to 30 s
	for _ in $(seq 300); do [ -f "$1" ] && return 0; sleep 0.1; done
	return 1
}
"$PROGRAM" "$tmp/native.sum" >"$tmp/native.out"; nrc=$?
wait_for "$tmp/native.sum" || fail "the native daemon never finished"
mkdir "$tmp/prof"
env LD_PRELOAD="$BUILD/libwitch.so" WITCH_CLIENT=dead WITCH_SAMPLER=soft WITCH_SEED=4242 \
	WITCH_RATE=2000 WITCH_OUTPUT="$tmp/prof/p-%p.prof" "$PROGRAM" "$tmp/prof.sum" >"$tmp/prof.out"
prc=$?
[ "$prc" = "$nrc" ] || fail "parent status $prc, native $nrc"
cmp -s "$tmp/native.out" "$tmp/prof.out" || fail "parent stdout differs"
wait_for "$tmp/prof.sum" || fail "the profiled daemon never finished"
cmp -s "$tmp/native.sum" "$tmp/prof.sum" || fail "the daemon's result differs"
# The daemon renames its result, then exits and writes its profile: wait
# for it (up to 30 s; a loaded machine took longer than a fixed 0.5 s).
# Profiles are written whole (temp file + rename), so one that is there is
# complete; the parent's comes first.
found=""
for _ in $(seq 300); do
	for f in "$tmp/prof"/p-*.prof; do
		[ -f "$f" ] && [ ! -f "$f.check" ] || continue
		"$BUILD/witch" report --json "$f" >"$f.json" 2>"$f.err" || fail "witch report $f: $(cat "$f.err")"
		if python3 "$HERE/check_report.py" "$f.json" --client dead --fraction 0.5 --tol 0.1 \
			--top-pair fill overwrite --min-samples 100 >"$f.check" 2>&1; then
			found="$f"
		fi
	done
	[ -n "$found" ] && break
	sleep 0.1
done
[ -n "$found" ] || fail "no profile with the daemon's answer"
echo "PASS daemonize: daemon profile $(basename "$found"): $(tail -n 1 "$found.check" | sed 's/^check_report: PASS //')"
rm -rf "$tmp"
