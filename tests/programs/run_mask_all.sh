#!/bin/bash
# run_mask_all.sh: a program that blocks every signal halfway through (a
# daemon that takes its signals by signalfd or sigwait) is profiled on.
#
# usage: run_mask_all.sh BUILD_DIR
#
# mask_all.c does the same work twice, phase_one and phase_two, and blocks
# every signal between them.  Before sigguard.h kept the runtime's signal
# open under such a mask, its ticks stopped there: phase_two had none of
# the sampled bytes.  Each row: the way it blocks, and the shares of the
# profile's sampled bytes (WITCH_WATCHPOINTS=0: no traps needed), half
# each; rt_some blocks the real-time signals but the first three, a mask
# the program keeps as it asked (phase_two: none).  mask_all checks that
# its mask reads back as it set it (exit 1 otherwise).  Every row: stdout
# and status as native, nothing on stderr.
set -u
build=$(cd "$1" && pwd) || exit 1
prog=$build/tests/programs/mask_all
tmp=$(mktemp -d /tmp/witch-mask-all.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/table.sh"
here=$(cd "$(dirname "$0")" && pwd)
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done

rows=(
	"sigprocmask|phase_one=0.5,phase_two=0.5"
	"pthread_sigmask|phase_one=0.5,phase_two=0.5"
	"setmask|phase_one=0.5,phase_two=0.5"
	"signalfd|phase_one=0.5,phase_two=0.5"
	"rt_some|phase_one=1.0,phase_two=0.0"
)
for row in "${rows[@]}"; do
	IFS='|' read -r way shares <<<"$row"
	tol=0.15
	rm -rf "$tmp/p" && mkdir "$tmp/p"
	"$prog" "$way" >"$tmp/native.out" 2>&1
	echo "status $?" >>"$tmp/native.out"
	env LD_PRELOAD="$build/libwitch.so" WITCH_WATCHPOINTS=0 WITCH_RATE=2000 WITCH_SEED=7 \
		WITCH_OUTPUT="$tmp/p/s-%p.prof" "$prog" "$way" >"$tmp/out" 2>"$tmp/err"
	echo "status $?" >>"$tmp/out"
	bad=""
	cmp -s "$tmp/native.out" "$tmp/out" || bad="$bad stdout/status: $(tr '\n' ' ' <"$tmp/out")"
	[ -s "$tmp/err" ] && bad="$bad stderr: $(head -c 300 "$tmp/err")"
	if ! "$build/witch" report --json "$tmp"/p/*.prof >"$tmp/r.json" 2>"$tmp/r.err"; then
		bad="$bad witch report: $(head -c 200 "$tmp/r.err")"
	elif ! python3 "$here/check_report.py" "$tmp/r.json" --client dead --sampled-shares "$shares" \
		--tol "$tol" --min-samples 200 >"$tmp/check" 2>&1; then
		bad="$bad $(grep -h FAIL "$tmp/check" | head -n 3 | tr '\n' ' ')"
	fi
	row_end "$way" "$bad" "$shares within $tol"
done
table_end mask_all ${#rows[@]}
