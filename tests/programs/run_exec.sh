#!/bin/bash
# run_exec.sh BUILD_DIR PROGRAM: exec_chain under the profiler (see its
# header for the expected profiles).  Checks: same stdout and status as
# the native run; the pre-exec profile p-<pid>.prof.exec and the exec'd
# image's p-<pid>.prof both hold the dead_two_loops answer; the vfork
# child, the posix_spawn child and system()'s /bin/sh (dash, which ends
# with _exit: no destructors run, the _exit interposer writes it) each
# wrote a valid profile of its own; nothing else was written.
set -u
BUILD=$1 PROGRAM=$2
HERE=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/witch-exec.XXXXXX)
fail() { echo "FAIL exec_chain: $* (files kept in $tmp)"; ls -l "$tmp/prof" 2>/dev/null | sed 's/^/    /'; exit 1; }
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done

"$PROGRAM" >"$tmp/native.out" 2>"$tmp/native.err"; nrc=$?
mkdir "$tmp/prof"
env LD_PRELOAD="$BUILD/libwitch.so" WITCH_CLIENT=dead WITCH_SAMPLER=soft WITCH_SEED=4242 \
    WITCH_RATE=2000 WITCH_OUTPUT="$tmp/prof/p-%p.prof" "$PROGRAM" >"$tmp/prof.out" 2>"$tmp/prof.err" &
pid=$!
wait $pid; prc=$?
[ "$nrc" = 0 ] || fail "native run exited $nrc"
[ "$prc" = "$nrc" ] || fail "profiled run exited $prc, native $nrc"
cmp -s "$tmp/native.out" "$tmp/prof.out" || fail "stdout differs: $(diff "$tmp/native.out" "$tmp/prof.out" | head -5)"
! grep -q '^witch: ' "$tmp/prof.err" || fail "runtime message: $(grep '^witch: ' "$tmp/prof.err" | head -3)"

check() { # file: report it and check the known answer
	"$BUILD/witch" report --json "$1" >"$1.json" 2>"$1.err" || fail "witch report $1: $(cat "$1.err")"
	python3 "$HERE/check_report.py" "$1.json" --client dead --fraction 0.5 --tol 0.1 \
		--top-pair fill overwrite --min-samples 100 >"$1.check" 2>&1 ||
		fail "$(basename "$1"): $(tail -n 1 "$1.check")"
}
[ -f "$tmp/prof/p-$pid.prof.exec" ] || fail "no pre-exec profile p-$pid.prof.exec"
[ -f "$tmp/prof/p-$pid.prof" ] || fail "no profile p-$pid.prof of the exec'd image"
check "$tmp/prof/p-$pid.prof.exec"
check "$tmp/prof/p-$pid.prof"
others=0
for f in "$tmp/prof"/p-*.prof; do
	case $f in *"/p-$pid.prof") continue ;; esac
	"$BUILD/witch" report --json "$f" >/dev/null 2>"$tmp/err" || fail "witch report $f: $(cat "$tmp/err")"
	others=$((others + 1))
done
[ "$others" = 3 ] || fail "expected 3 profiles of child processes (vfork, posix_spawn, system's sh), found $others"
n=$(ls "$tmp/prof" | grep -vc '\.json$\|\.err$\|\.check$')
[ "$n" = 5 ] || fail "expected 5 files in the output directory, found $n"
echo "PASS exec_chain: pre-exec and exec'd profiles both 0.5 ($(grep -o 'fraction=[0-9.]*' "$tmp/prof/p-$pid.prof.exec.check") / $(grep -o 'fraction=[0-9.]*' "$tmp/prof/p-$pid.prof.check")), 3 child profiles"
rm -rf "$tmp"
