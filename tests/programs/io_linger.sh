#!/bin/bash
# io_linger.sh BUILD_DIR PROGRAM: samples that wait while the program reads
# a file in pages (io_linger.c, drcost.h).
#  1. WITCH_RATE=2000 (a fixed rate: nothing is let go): phase C's 4 GB of
#     preads run with watchpoints armed; the profile counts them
#     (dr_bytes_armed >= 2e9: at least half of C) and prices them
#     (cost_dr_ns, checked in 2), and watch_expired and watch_expired_io
#     are 0.  Each round's B
#     re-arms the slots its C then waits on: 4.02-4.10e9 over 8 runs of
#     2026-11-27's build (one B and one C read 1.83-4.10e9).
#  2. WITCH_BUDGET=20 (many ticks, the budget's rules): C's preads pass the
#     share of an interval that armed I/O may cost (drcost.h:
#     DRCOST_IO_SHARE 0.5 of the budget's 20%), so the read that passes it
#     lets the waiting samples go (watch_expired_io >= 1), and over the run
#     the armed bytes cost, at the profile's price (dr_byte_ps), at most
#     0.5 x 20% of the sampled CPU time (clock_ns), with 25% for a
#     period that moved within an interval.  Before the I/O limit only
#     ticks let samples go: 0.07-2.9e9 bytes armed (2026-11-27 on), up to
#     0.08 of clock_ns at the EPYC's price, with no watch_expired_io; with
#     it, and debug registers forged to trap at the EPYC's price (no hit
#     ever comes), 22-31e6 bytes, 0.007-0.01 of clock_ns.
# Both runs print what the native run prints.
set -u
BUILD=$1 PROGRAM=$2
tmp=$(mktemp -d /tmp/witch-linger.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done
"$PROGRAM" >"$tmp/native.out" 2>&1 || { echo "FAIL: native run failed"; exit 1; }
stats() {
	"$BUILD/witch" report --json "$1" | python3 -c '
import json, sys
s = json.load(sys.stdin)["stats"]
print(int(s.get("dr_bytes_armed", 0)), int(s.get("cost_dr_ns", 0)),
      int(s.get("watch_expired", 0)) + int(s.get("watch_expired_io", 0)),
      int(s.get("watch_expired_io", 0)), int(s.get("dr_byte_ps", 0)), int(s.get("clock_ns", 0)))'
}
run() { # NAME VAR=VALUE
	env LD_PRELOAD="$BUILD/libwitch.so" "$2" WITCH_OUTPUT="$tmp/$1.prof" "$PROGRAM" \
		>"$tmp/$1.out" 2>"$tmp/$1.err" || { echo "FAIL: $1: profiled run failed"; cat "$tmp/$1.err"; exit 1; }
	cmp -s "$tmp/native.out" "$tmp/$1.out" || { echo "FAIL: $1: stdout differs"; exit 1; }
	[ -s "$tmp/$1.err" ] && { echo "FAIL: $1: stderr: $(cat "$tmp/$1.err")"; exit 1; }
	return 0
}
run fixed WITCH_RATE=2000
read -r bytes cost expired _ _ _ <<<"$(stats "$tmp/fixed.prof")"
[ "$bytes" -ge 2000000000 ] && [ "$expired" -eq 0 ] ||
	{ echo "FAIL: fixed rate: armed bytes $bytes (want >= 2e9), expired $expired (0)"; exit 1; }
# The budget half needs armed copies to cost something.  Intel cores keep
# fast strings with a breakpoint armed (they report it after a group of
# iterations): on an Emerald Rapids VM drcost priced 3e9 armed bytes at
# 0.6 us-3 ms (its probe's noise), under 1% of the run, nothing for the
# budget to let go of, where the EPYC's ~0.1-0.5 ns a byte prices them at
# seconds (and so priced above 0, which the check below implies).  Under
# 0.01 ns a byte: skipped.
if [ $((cost * 100)) -lt "$bytes" ]; then
	echo "SKIP io_linger budget: armed copies cost nothing on this CPU ($cost ns for $bytes bytes; fixed rate passed)"
	exit 77
fi
# Whether one of B's samples is still armed when its C starts is chance
# (one run in ~8 let none go when B and C ran once: a fresh clone's CI read
# none twice in a row); four rounds give four chances.
run budget WITCH_BUDGET=20
read -r bbytes bcost _ bio byte_ps clock <<<"$(stats "$tmp/budget.prof")"
# (in ps and ns: bytes x ps / 1000 <= 1.25 x 0.1 x clock)
[ "$bio" -ge 1 ] && [ "$((bbytes / 1000 * byte_ps))" -le "$((clock / 8))" ] ||
	{ echo "FAIL: budget: let go at I/O $bio (want >= 1), armed bytes $bbytes at $byte_ps ps (want <= 0.125 of $clock ns)"; exit 1; }
echo "PASS io_linger: fixed rate $bytes bytes read armed, priced $cost ns; budget let $bio samples go at I/O, $bbytes bytes armed ($byte_ps ps a byte, $clock ns sampled)"
