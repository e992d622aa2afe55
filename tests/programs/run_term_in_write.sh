#!/bin/bash
# run_term_in_write.sh BUILD_DIR PROGRAM [thread]: term_in_write.c sends
# SIGTERM to itself as the runtime renames its exit profile into place.
# Natively it exits 0; profiled it must die of SIGTERM (143) with the same
# stdout, no `witch:` line, exactly one profile that reads back with
# samples, and no temporary file left beside it.
set -u
BUILD=$1 PROGRAM=$2
shift 2
tmp=$(mktemp -d /tmp/witch-term.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done
[ -z "${TEST_WATCHPOINTS-}" ] || export WITCH_WATCHPOINTS="$TEST_WATCHPOINTS"
name="term_in_write $*"

"$PROGRAM" "$@" >"$tmp/native.out" 2>&1
nrc=$?
[ "$nrc" = 0 ] || { echo "FAIL $name: native status $nrc, expected 0"; exit 1; }
mkdir "$tmp/out"
( ulimit -c 0; exec timeout -s KILL 60 env LD_PRELOAD="$BUILD/libwitch.so" WITCH_RATE=2000 \
	WITCH_OUTPUT="$tmp/out/p-%p.prof" "$PROGRAM" "$@" ) >"$tmp/prof.out" 2>"$tmp/prof.err"
prc=$?
[ "$prc" = 143 ] || { echo "FAIL $name: profiled status $prc, expected 143 (SIGTERM)"; cat "$tmp/prof.err"; exit 1; }
cmp -s "$tmp/native.out" "$tmp/prof.out" || { echo "FAIL $name: stdout differs"; exit 1; }
! grep -q '^witch: ' "$tmp/prof.err" || { echo "FAIL $name: runtime message:"; cat "$tmp/prof.err"; exit 1; }
left=$(ls "$tmp/out" | grep '\.tmp\.')
[ -z "$left" ] || { echo "FAIL $name: temporary file left: $left"; exit 1; }
set -- "$tmp"/out/p-*.prof
[ $# = 1 ] && [ -f "$1" ] || { echo "FAIL $name: expected one profile, found: $(ls "$tmp/out")"; exit 1; }
samples=$("$BUILD/witch" report --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["samples"])') ||
	{ echo "FAIL $name: the profile does not read back"; exit 1; }
[ "$samples" -gt 0 ] || { echo "FAIL $name: the profile has no samples"; exit 1; }
echo "PASS $name: SIGTERM in the profile's rename: status 143, one profile with $samples samples, no temporary file"
