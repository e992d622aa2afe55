#!/bin/bash
# run_lazy_watchpoints.sh BUILD_DIR: a thread opens its breakpoint events
# at its first sample to arm, not at its start (thread.h), so the threads
# too short to be sampled open none.
#
# threads_many (threads_many.c) starts 2,088 threads: 2,064 short ones,
# 0.4 s of CPU in all, ~0.2 ms each; 24 that each spend ~18 ms in store
# loops; 4 still storing at exit.  At WITCH_RATE=500 the short ones take
# ~200 ticks between them, so at most ~200 of them arm and open their
# events; each long one takes ~9 ticks, two thirds of them stores (fill,
# overwrite, sum), so all 24 arm.  Expected `stat watchpoint_sets_opened`:
# main + 24 + 4 + up to ~200 (130-139 here); every profiled thread opened
# them at its start before: ~2,089.  Checked: over 2,000 threads profiled,
# at least 25 sets opened, fewer than half the threads, and none failed
# (`stat watchpoint_open_errors`).
#
# On a machine whose debug registers never trap the runtime would run
# unprofiled: the probes handed down are forged to say they trap (the
# events open and never fire, which is all this test needs).  Where
# breakpoints cannot open at all the run says so and the test skips (77).
set -u
BUILD=$1
PROG=$BUILD/tests/programs/threads_many
tmp=$(mktemp -d /tmp/witch-lazywp.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done

probes=$(LD_PRELOAD="$BUILD/libwitch.so" WITCH_WATCHPOINTS=0 sh -c 'echo "$WITCH_PROBES"')
# Fields 5 and 6: traps, SIGTRAP breakpoints; the last: a hit's cost (0: none measured).
forged=$(echo "$probes" | awk '{ $5 = "1"; $6 = "1"; if ($NF == "0000000000000000") $NF = "40d3880000000000"; print }')
[ -n "$forged" ] || { echo "FAIL: no probes handed down: '$probes'"; exit 1; }

LD_PRELOAD="$BUILD/libwitch.so" WITCH_PROBES="$forged" WITCH_RATE=500 WITCH_OUTPUT="$tmp/p.prof" \
	"$PROG" >"$tmp/out" 2>"$tmp/err"
rc=$?
if grep -q 'running without profiling' "$tmp/err"; then
	echo "SKIP: breakpoints do not open here: $(cat "$tmp/err")"
	exit 77
fi
[ "$rc" = 0 ] || { echo "FAIL: threads_many exited $rc"; cat "$tmp/err"; exit 1; }
[ -s "$tmp/p.prof" ] || { echo "FAIL: no profile"; exit 1; }
stat() { awk -v k="$1" '$1 == "stat" && $2 == k { print $3 }' "$tmp/p.prof"; }
threads=$(stat threads) opened=$(stat watchpoint_sets_opened) errors=$(stat watchpoint_open_errors)
echo "threads $threads, watchpoint_sets_opened $opened, watchpoint_open_errors $errors"
[ "$threads" -gt 2000 ] || { echo "FAIL: $threads threads profiled, expected ~2089"; exit 1; }
[ "$errors" = 0 ] || { echo "FAIL: $errors threads could not open their breakpoints"; exit 1; }
[ "$opened" -ge 25 ] || { echo "FAIL: only $opened sets opened: the long threads arm"; exit 1; }
[ "$opened" -lt $((threads / 2)) ] || { echo "FAIL: $opened of 2089 threads opened their breakpoints: not at their first arm"; exit 1; }
echo "ok: $opened of $threads threads opened their breakpoint events"

# A thread that holds all four of its debug registers itself
# (dr_full_thread.c): its open at the first arm fails, and it runs
# unprofiled from then on: 1 error, at most 5 ticks of the ~200 its 200
# ms would take at 1000/s.
LD_PRELOAD="$BUILD/libwitch.so" WITCH_PROBES="$forged" WITCH_RATE=1000 WITCH_OUTPUT="$tmp/f.prof" \
	"$BUILD/tests/programs/dr_full_thread" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] || { echo "FAIL: dr_full_thread exited $rc"; cat "$tmp/err"; exit 1; }
[ ! -s "$tmp/err" ] || { echo "FAIL: dr_full_thread's stderr: $(cat "$tmp/err")"; exit 1; }
grep -q 'held 4$' "$tmp/out" || { echo "SKIP: the thread could not hold 4 debug registers: $(cat "$tmp/out")"; exit 77; }
f() { awk -v k="$1" '$1 == "stat" && $2 == k { print $3 }' "$tmp/f.prof"; }
errors=$(f watchpoint_open_errors) ticks=$(f ticks)
echo "dr_full_thread: watchpoint_open_errors $errors, ticks $ticks"
[ "$errors" = 1 ] || { echo "FAIL: $errors open errors, expected 1"; exit 1; }
[ "$ticks" -le 5 ] || { echo "FAIL: $ticks ticks: the thread went on sampling with no watchpoint to arm"; exit 1; }
echo "PASS: $opened of $threads threads opened their events; the thread with none free stopped at its first arm"
