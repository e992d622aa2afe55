#!/bin/bash
# run_rt_policy.sh BUILD_DIR: a real-time program (SCHED_FIFO) that starts
# a thread runs as natively, and the runtime's own thread (the flusher,
# named witch-flush) is not a real-time one (rt_policy.c).  Skipped where
# SCHED_FIFO is refused (no CAP_SYS_NICE).  Before, the flusher inherited
# SCHED_FIFO from the thread that started it.
set -u
. "$(dirname "$0")/table.sh"
table_begin "$1" rt-policy
prog=$build/tests/programs/rt_policy
"$prog" >"$tmp/native.out" 2>&1
rc=$?
[ "$rc" = 77 ] && { cat "$tmp/native.out"; exit 77; }
echo "status $rc" >>"$tmp/native.out"
RT_REPORT="$tmp/threads" LD_PRELOAD="$build/libwitch.so" WITCH_WATCHPOINTS=0 \
	WITCH_OUTPUT="$tmp/r-%p.prof" "$prog" >"$tmp/out" 2>"$tmp/err"
echo "status $?" >>"$tmp/out"
bad=""
cmp -s "$tmp/native.out" "$tmp/out" ||
	bad="$bad stdout/status: $(tr '\n' ' ' <"$tmp/out")(native: $(tr '\n' ' ' <"$tmp/native.out"))"
[ -s "$tmp/err" ] && bad="$bad stderr: $(head -c 300 "$tmp/err")"
grep -qx 'witch-flush other' "$tmp/threads" ||
	bad="$bad the runtime's thread: $(grep witch-flush "$tmp/threads" || echo none) ($(tr '\n' ',' <"$tmp/threads"))"
row_end flusher "$bad" "as native; the flusher SCHED_OTHER among: $(tr '\n' ',' <"$tmp/threads")"
table_end rt_policy 1
