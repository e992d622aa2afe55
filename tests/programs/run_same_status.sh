#!/bin/bash
# run_same_status.sh BUILD_DIR PROGRAM [ARGS...]: the program ends the same
# way under the profiler: same stdout, same exit status (a signal death is
# 128+N from bash), and the profiled run's stderr has no `witch:` line.
# SAME_STATUS_CLIENT picks the client (default dead), SAME_STATUS_RATE the
# rate (default 2000; "budget": none set, the default budget's); the profiled run is killed after SAME_STATUS_TIMEOUT
# seconds (default 60), a hang then fails as status 137.  SAME_STATUS_PROFILE=1:
# the profiled run must also leave exactly one profile that reads back with
# samples in it (a fatal signal or _exit loses nothing; SAME_STATUS_MIN_SAMPLES
# of them, default 1: 0 for a short run at the budget); SAME_STATUS_PROFILE=0:
# it must leave none.  SAME_STATUS_WITCH="line": the profiled run's stderr
# must hold exactly that one `witch:` line instead of none.
# SAME_STATUS_PROFILED=N: the profiled run must end with status N instead of
# the native one's (a program that signals itself only under the runtime:
# term_in_write.c).  With SAME_STATUS_PROFILE=1, no temporary profile
# (*.tmp.*) may be left beside it either.
# TEST_WATCHPOINTS=v (tests/needs_traps.sh --or-window): the profiled run gets
# WITCH_WATCHPOINTS=v.
set -u
BUILD=$1 PROGRAM=$2
shift 2
tmp=$(mktemp -d /tmp/witch-status.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done
# tests/needs_traps.sh --or-window, where watchpoints never trap
[ -z "${TEST_WATCHPOINTS-}" ] || export WITCH_WATCHPOINTS="$TEST_WATCHPOINTS"

( ulimit -c 0; exec "$PROGRAM" "$@" ) >"$tmp/native.out" 2>"$tmp/native.err"
nrc=$?
rate=(WITCH_RATE="${SAME_STATUS_RATE:-2000}")
[ "${SAME_STATUS_RATE-}" = budget ] && rate=()
( ulimit -c 0; exec timeout -s KILL "${SAME_STATUS_TIMEOUT:-60}" \
	env LD_PRELOAD="$BUILD/libwitch.so" WITCH_SAMPLER=soft "${rate[@]}" \
	WITCH_CLIENT="${SAME_STATUS_CLIENT:-dead}" \
	WITCH_OUTPUT="$tmp/p-%p.prof" "$PROGRAM" "$@" ) >"$tmp/prof.out" 2>"$tmp/prof.err"
prc=$?
name="$(basename "$PROGRAM") $* (client ${SAME_STATUS_CLIENT:-dead})"
want=${SAME_STATUS_PROFILED:-$nrc}
[ "$want" = "$prc" ] || { echo "FAIL $name: profiled status $prc, native $nrc, expected $want"; cat "$tmp/prof.err"; exit 1; }
cmp -s "$tmp/native.out" "$tmp/prof.out" || { echo "FAIL $name: stdout differs"; exit 1; }
if [ -n "${SAME_STATUS_WITCH-}" ]; then
	got=$(grep '^witch: ' "$tmp/prof.err")
	[ "$got" = "$SAME_STATUS_WITCH" ] ||
		{ echo "FAIL $name: runtime lines '$got', expected exactly '$SAME_STATUS_WITCH'"; exit 1; }
elif grep -q '^witch: ' "$tmp/prof.err"; then
	echo "FAIL $name: runtime message:"; grep '^witch: ' "$tmp/prof.err"; exit 1
fi
if [ "${SAME_STATUS_PROFILE-}" = 0 ]; then
	set -- "$tmp"/p-*.prof
	[ ! -e "$1" ] || { echo "FAIL $name: expected no profile, found: $*"; exit 1; }
	echo "PASS $name: status $prc both ways, same stdout, the one line, no profile"
	exit 0
fi
if [ "${SAME_STATUS_PROFILE-}" = 1 ]; then
	set -- "$tmp"/p-*.prof
	[ $# = 1 ] && [ -f "$1" ] || { echo "FAIL $name: expected one profile, found: $(ls "$tmp" | grep prof)"; exit 1; }
	left=$(ls "$tmp" | grep '\.tmp\.')
	[ -z "$left" ] || { echo "FAIL $name: temporary profile left: $left"; exit 1; }
	samples=$("$BUILD/witch" report --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])') ||
		{ echo "FAIL $name: the profile does not read back"; exit 1; }
	[ "$samples" -ge "${SAME_STATUS_MIN_SAMPLES:-1}" ] || { echo "FAIL $name: the profile has no samples"; exit 1; }
	echo "PASS $name: status $prc (native $nrc), same stdout, a profile with $samples samples"
	exit 0
fi
echo "PASS $name: status $prc both ways, same stdout"
