#!/bin/bash
# bulk_pieces.sh BUILD_DIR PROGRAM MEMCOUNT_SO armed|unarmed: what a
# profiled thread's large memset and memcpy become on their way to the C
# library (bulk.c), counted by memcount.so preloaded after libwitch.so; the
# answers are derived in bulk_pieces.c.  armed: debug registers armed (a
# machine whose watchpoints trap), the calls go in pieces; unarmed
# (WITCH_WATCHPOINTS=0): whole, as unprofiled.
set -u
BUILD=$1 PROGRAM=$2 COUNT=$3 MODE=$4
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done
want_native="memset_4MiB 1 4194304
memcpy_512KiB 1 524288
memcpy_4MiB 1 4194304
memset_1KiB 1 1024"
# What the pieces cost is priced into the profile (stat cost_pieces_ns,
# bulk_pieces_extra_ps): the 512 KiB copy alone, 524288 bytes x 9 ps =
# 4718 ns (memset's pieces cost nothing over its whole call, and the 4 MiB
# copy goes whole); nothing where nothing went in pieces.
case $MODE in
armed)
	export WITCH_RATE=4000 WITCH_SEED=1
	want_pieces_ns=4718
	pass="memset 4 MiB in 2048 pieces, memcpy 512 KiB in 256 (priced 4718 ns), memcpy 4 MiB whole"
	want_profiled="memset_4MiB 2048 2048
memcpy_512KiB 256 2048
memcpy_4MiB 1 4194304
memset_1KiB 1 1024" ;;
unarmed)
	export WITCH_WATCHPOINTS=0
	want_pieces_ns=0
	pass="every call whole"
	want_profiled=$want_native ;;
*) echo "usage: bulk_pieces.sh BUILD PROGRAM MEMCOUNT armed|unarmed" >&2; exit 2 ;;
esac
got=$(LD_PRELOAD="$COUNT" "$PROGRAM") || { echo "FAIL: native run: exit $?"; exit 1; }
[ "$got" = "$want_native" ] || { printf 'FAIL: native run:\n%s\nwant:\n%s\n' "$got" "$want_native"; exit 1; }
err=$(mktemp) && trap 'rm -f "$err" /tmp/bulk_pieces.$$.prof' EXIT
got=$(LD_PRELOAD="$BUILD/libwitch.so:$COUNT" WITCH_CLIENT=dead WITCH_OUTPUT=/tmp/bulk_pieces.$$.prof \
	"$PROGRAM" 2>"$err") || { echo "FAIL: profiled run: exit $?"; cat "$err"; exit 1; }
[ -s "$err" ] && { echo "FAIL: stderr: $(cat "$err")"; exit 1; }
# Profiled, the runtime's own small copies and sets (a sample's) may add
# calls, never larger ones: at least the pieces, the largest exactly so.
ok=$(paste -d' ' <(echo "$got") <(echo "$want_profiled") |
	awk '$1 != $4 || $2 < $5 || $3 != $6 { bad = 1 } END { print bad ? "no" : "yes" }')
[ "$ok" = yes ] || { printf 'FAIL: profiled run (name, calls, largest):\n%s\nwant at least the calls, the largest exactly:\n%s\n' "$got" "$want_profiled"; exit 1; }
pieces_ns=$(awk '$1 == "stat" && $2 == "cost_pieces_ns" {s += $3} END {print s + 0}' /tmp/bulk_pieces.$$.prof)
[ "$pieces_ns" = "$want_pieces_ns" ] ||
	{ echo "FAIL: stat cost_pieces_ns $pieces_ns, want $want_pieces_ns"; exit 1; }
echo "PASS bulk_pieces $MODE: $pass"
