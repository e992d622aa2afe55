#!/bin/bash
# run_drcost_price.sh BUILD_DIR forged|tree: where a process's price of an
# armed debug register comes from (drcost.h: what DR7 adds to a page fault
# and to a byte copied), as its profile says (stat dr_priced_start,
# dr_priced_tick, dr_priced_handed: one of them 1; dr_fault_ns, dr_byte_ps).
#
#   forged  A process handed "breakpoints open and trap" with WITCH_PROBES
#           forged from this machine's (fields 5 and 6; the events open and,
#           where they never trap, never fire):
#             - with prices in the line (777 ns a fault, 0.5 ns a byte: the
#               numbers before the last): it takes them and measures none
#               (handed 1, tick 0; 777 and 500 ps);
#             - with none (-1 both, as a root that armed nothing hands down):
#               small_copies ticks ~140 times at 1000/s and its first tick,
#               nothing armed yet, prices (tick 1, handed 0).
#   tree    Where breakpoints trap, a tree's root measures the machine and
#           prices in its constructor (start 1, tick 0), and hands the prices
#           down: dead_fork's forked child (memory) and the small_copies a
#           sh runs (WITCH_PROBES through exec) each say handed 1, with the
#           root's dr_fault_ns and dr_byte_ps to the unit.  Skipped where
#           they never trap (run as WITCH_NEEDS_TRAPS).
set -u
BUILD=$1 MODE=$2
P=$BUILD/tests/programs
tmp=$(mktemp -d /tmp/witch-drprice.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done
stat() { awk -v k="$2" '$1 == "stat" && $2 == k { print $3 }' "$1"; }
# PROFILE START TICK HANDED [FAULT_NS BYTE_PS]: its stats are these.
expect() {
	local got="$(stat "$1" dr_priced_start) $(stat "$1" dr_priced_tick) $(stat "$1" dr_priced_handed)"
	local want="$2 $3 $4"
	[ $# -ge 6 ] && got="$got $(stat "$1" dr_fault_ns) $(stat "$1" dr_byte_ps)" want="$want $5 $6"
	echo "$(basename "$1"): start tick handed [fault_ns byte_ps] $got"
	[ "$got" = "$want" ] || { echo "FAIL: $(basename "$1"): want $want"; exit 1; }
}
# NAME ENV... -- COMMAND...: a profiled run, its stdout the native run's.
run() {
	local name=$1
	shift
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	"$@" >"$tmp/native.out" 2>&1
	local nrc=$?
	env LD_PRELOAD="$BUILD/libwitch.so" "${envs[@]}" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	local rc=$?
	[ "$rc" = "$nrc" ] || { echo "FAIL: $name: exit $rc, natively $nrc"; cat "$tmp/$name.err"; exit 1; }
	cmp -s "$tmp/native.out" "$tmp/$name.out" || { echo "FAIL: $name: stdout differs"; exit 1; }
	if grep -q 'running without profiling' "$tmp/$name.err"; then
		echo "SKIP: breakpoints do not open here: $(cat "$tmp/$name.err")"
		exit 77
	fi
	[ -s "$tmp/$name.err" ] && { echo "FAIL: $name: stderr: $(cat "$tmp/$name.err")"; exit 1; }
	return 0
}

case $MODE in
forged)
	probes=$(LD_PRELOAD="$BUILD/libwitch.so" WITCH_WATCHPOINTS=0 sh -c 'echo "$WITCH_PROBES"')
	# A root that arms nothing prices nothing: -1 both (0xbff0...).
	echo "$probes" | awk '{ exit !($(NF-2) == "bff0000000000000" && $(NF-1) == "bff0000000000000") }' ||
		{ echo "FAIL: a root with WITCH_WATCHPOINTS=0 handed prices down: $probes"; exit 1; }
	traps='{ $5 = "1"; $6 = "1"; if ($NF == "0000000000000000") $NF = "40d3880000000000"'
	priced=$(echo "$probes" | awk "$traps"'; $(NF-2) = "4088480000000000"; $(NF-1) = "3fe0000000000000"; print }')
	unpriced=$(echo "$probes" | awk "$traps"'; print }')
	run handed WITCH_PROBES="$priced" WITCH_RATE=1000 WITCH_OUTPUT="$tmp/handed.prof" -- "$P/small_copies"
	expect "$tmp/handed.prof" 0 0 1 777 500
	run tick WITCH_PROBES="$unpriced" WITCH_RATE=1000 WITCH_OUTPUT="$tmp/tick.prof" -- "$P/small_copies"
	[ "$(stat "$tmp/tick.prof" ticks)" -ge 5 ] || { echo "FAIL: small_copies took $(stat "$tmp/tick.prof" ticks) ticks"; exit 1; }
	expect "$tmp/tick.prof" 0 1 0
	;;
tree)
	run fork WITCH_RATE=1000 WITCH_OUTPUT="$tmp/fork-%p.prof" -- "$P/dead_fork"
	run exec WITCH_RATE=1000 WITCH_OUTPUT="$tmp/exec-%p.prof" -- sh -c "\"$P/small_copies\"; exit 0"
	for tree in fork exec; do
		set -- "$tmp/$tree"-*.prof
		[ $# = 2 ] || { echo "FAIL: $tree: $# profiles, want 2: $*"; exit 1; }
		# The root has the lower pid but for a wrap: its profile says start.
		root= child=
		for f; do [ "$(stat "$f" dr_priced_start)" = 1 ] && root=$f || child=$f; done
		[ -n "$root" ] || { echo "FAIL: $tree: no profile priced at start"; exit 1; }
		expect "$root" 1 0 0
		expect "$child" 0 0 1 "$(stat "$root" dr_fault_ns)" "$(stat "$root" dr_byte_ps)"
	done
	;;
*) echo "usage: $0 BUILD_DIR forged|tree"; exit 2 ;;
esac
echo "PASS: $MODE"
