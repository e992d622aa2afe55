#!/bin/bash
# run_valgrind_guard.sh: a program run under Valgrind with the runtime
# preloaded runs as it does under Valgrind alone (vgguard.h).
#
# usage: run_valgrind_guard.sh BUILD_DIR
#
# Valgrind resumes its translated code from the guest state of its last
# write-back point, so a watchpoint's trap there loses the registers the
# translated code held: bench/programs' lz under `valgrind --tool=none`
# died (SIGSEGV) in 4 of 5 runs before vgguard, and printed a wrong
# checksum in the fifth.  Each row: WITCH_WATCHPOINTS, and what is wanted
#   out    one witch: line naming Valgrind, no profile
#   prof   no witch: line, a profile with samples (no debug register
#          armed: the tick's handler alone, as bench/cold_misses.py runs)
# and every row: stdout and status as under Valgrind alone.
set -u
. "$(dirname "$0")/table.sh"
table_begin "$1" valgrind_guard
if ! command -v valgrind >/dev/null; then
	echo "SKIP: no valgrind (apt-get install valgrind)"
	exit 77
fi

rows=(
	"|out"
	"window|prof"
	"0|prof"
)
# Where debug registers never trap (dr_probe exits 77), valgrind's
# launcher, preloaded too, finds so first and says it; what it execs (the
# tool, then its guest) is handed that answer and stays quiet
# (probes_hand_down_no_traps): that one line instead.
out_line='^witch: this program runs under Valgrind'
"$build/dr_probe" >/dev/null 2>&1
[ $? = 77 ] && out_line='^witch: hardware watchpoints do not trigger on this machine'
prog=("$build/bench/programs/lz" 1)
vg=(valgrind -q --tool=none)
"${vg[@]}" "${prog[@]}" >"$tmp/native.out" 2>/dev/null
echo "status $?" >>"$tmp/native.out"
for row in "${rows[@]}"; do
	IFS='|' read -r wps want <<<"$row"
	rm -rf "$tmp/p" && mkdir "$tmp/p"
	env ${wps:+WITCH_WATCHPOINTS=$wps} LD_PRELOAD="$build/libwitch.so" WITCH_RATE=200 \
		WITCH_OUTPUT="$tmp/p/v-%p.prof" "${vg[@]}" "${prog[@]}" >"$tmp/out" 2>"$tmp/err"
	echo "status $?" >>"$tmp/out"
	bad=""
	cmp -s "$tmp/native.out" "$tmp/out" ||
		bad="$bad stdout/status: $(tr '\n' ' ' <"$tmp/out")(alone: $(tr '\n' ' ' <"$tmp/native.out"))"
	if [ "$want" = out ]; then
		row_stayed_out "$out_line"
	else
		profiles=$(ls "$tmp/p" | grep -c '\.prof$')
		! grep -q '^witch: ' "$tmp/err" || bad="$bad witch: $(grep '^witch: ' "$tmp/err" | head -c 300)"
		samples=$(cat "$tmp"/p/*.prof 2>/dev/null | awk '$1 == "stat" && $2 == "samples" {s += $3} END {print s + 0}')
		[ "$profiles" = 1 ] && [ "$samples" -gt 0 ] ||
			bad="$bad $profiles profile(s), $samples samples"
	fi
	row_end "WITCH_WATCHPOINTS=${wps:-(unset)}" "$bad" "as under Valgrind alone, $want"
done
table_end valgrind_guard ${#rows[@]}
