#!/bin/bash
# runtime_fds.sh BUILD_DIR PROGRAM: the runtime's descriptors stay out of
# the program's way (runtime_fds.c says what it checks).  WITCH_RATE=2000
# over 300 ms of CPU: the profile must show at least 100 ticks (the page-
# fault log opens at the first), else the run proved nothing.
set -u
BUILD=$1 PROGRAM=$2
tmp=$(mktemp -d /tmp/witch-runtime-fds.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
env -u WITCH_BUDGET LD_PRELOAD="$BUILD/libwitch.so" WITCH_SAMPLER=soft WITCH_RATE=2000 \
	WITCH_WATCHPOINTS=0 WITCH_OUTPUT="$tmp/p-%p.prof" "$PROGRAM" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ "$rc" != 0 ] || [ -s "$tmp/err" ]; then
	echo "FAIL: exit $rc"
	cat "$tmp/out"
	head -3 "$tmp/err"
	exit 1
fi
parent=$(ls "$tmp"/p-*.prof | head -1)
ticks=$("$BUILD/witch" report --json "$parent" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["stats"]["ticks"])')
if [ "${ticks:-0}" -lt 100 ]; then
	echo "FAIL: $ticks ticks in $parent: the run proved nothing"
	exit 1
fi
echo "ok: $ticks ticks, no runtime descriptor below the floor, the fork child kept the program's"
