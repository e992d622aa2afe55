#!/bin/bash
# run_flush_threads.sh BUILD_DIR PROGRAM: the periodic writer's thread is
# there only when asked for (WITCH_FLUSH set) or when the program has
# threads of its own (issue 13; flush.h).  PROGRAM is thread_count: each
# row is what it must print under one setting (thread_count.c says what
# the lines are).  With WITCH_FLUSH unset a program is single-threaded for
# the C library until it starts a thread; then the writer joins it (after:
# 2 tasks, its own thread joined) and a forked child, one thread again,
# waits for a thread of its own.  WITCH_FLUSH=1 starts the writer at once
# and again in the child; WITCH_FLUSH=0 never.
set -u
BUILD=$1 PROGRAM=$2
tmp=$(mktemp -d /tmp/witch-fthreads.XXXXXX)
fail() { echo "FAIL flush_threads: $* (files kept in $tmp)"; exit 1; }
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done
# tests/needs_traps.sh --or-window, where watchpoints never trap
[ -z "${TEST_WATCHPOINTS-}" ] || export WITCH_WATCHPOINTS="$TEST_WATCHPOINTS"

# line | WITCH_FLUSH ("-" = unset, "native" = no profiler) | expected output
rows=(
	"$LINENO|native|before tasks=1 single=1;after tasks=1 single=0;child tasks=1"
	"$LINENO|-|before tasks=1 single=1;after tasks=2 single=0;child tasks=1"
	"$LINENO|1|before tasks=2 single=0;after tasks=2 single=0;child tasks=2"
	"$LINENO|0|before tasks=1 single=1;after tasks=1 single=0;child tasks=1"
)
for row in "${rows[@]}"; do
	IFS='|' read -r line flush want <<<"$row"
	want=$(tr ';' '\n' <<<"$want")
	if [ "$flush" = native ]; then
		got=$("$PROGRAM" 2>"$tmp/stderr")
	elif [ "$flush" = - ]; then
		got=$(env LD_PRELOAD="$BUILD/libwitch.so" WITCH_SAMPLER=soft WITCH_OUTPUT="$tmp/p-%p.prof" \
			"$PROGRAM" 2>"$tmp/stderr")
	else
		got=$(env LD_PRELOAD="$BUILD/libwitch.so" WITCH_SAMPLER=soft WITCH_FLUSH="$flush" \
			WITCH_OUTPUT="$tmp/p-%p.prof" "$PROGRAM" 2>"$tmp/stderr")
	fi
	rc=$?
	[ "$rc" = 0 ] || fail "row at line $line (WITCH_FLUSH=$flush): exit $rc"
	[ "$got" = "$want" ] || fail "row at line $line (WITCH_FLUSH=$flush): printed
$got
want
$want"
	[ ! -s "$tmp/stderr" ] || fail "row at line $line (WITCH_FLUSH=$flush): stderr $(cat "$tmp/stderr")"
done
[ "$(ls "$tmp" | grep -c '\.prof$')" = 6 ] || fail "expected 6 profiles (parent and child, 3 profiled rows): $(ls "$tmp")"
echo "PASS flush_threads: no writer thread in a single-threaded program unless WITCH_FLUSH is set"
rm -rf "$tmp"
