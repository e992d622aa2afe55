#!/bin/bash
# run_bad_config.sh: the runtime's handling of bad WITCH_* settings.
#
# usage: run_bad_config.sh BUILD_DIR [PROGRAM]
#   PROGRAM defaults to BUILD_DIR/tests/programs/exit7 (prints one line,
#   exits with status 7).
#
# For each case in the table below the program runs under
# LD_PRELOAD=BUILD_DIR/libwitch.so with a valid base configuration
# (WITCH_CLIENT=dead, WITCH_SAMPLER=soft, WITCH_OUTPUT=<tmp>/out/p-%p.prof)
# plus the case's
# VAR=VALUE, and must
#   - print the same stdout and exit with the same status as the unprofiled run,
#   - write exactly the expected line(s) to stderr (see the kinds below).
# Prints "ok"/"FAIL"/"skip" per case and a final "PASS bad_config" or
# "FAIL bad_config" line; exit 0 on PASS, 1 on FAIL.
set -u

# ---------------------------------------------------------------------------
# The table: the only place that knows the runtime's message texts.
# One case per line: VAR|VALUE|KIND|TEXT
#   exact   stderr is exactly one line:
#             witch: VAR=VALUE: TEXT${SUFFIX}
#           and no profile is written (the program runs without profiling)
#   pmu     on a machine without a usable PMU: stderr is exactly one line
#             witch: VAR=VALUE: TEXT...; running without profiling
#           and no profile; skipped where a CPU PMU is present
#   fallback  on a machine without a usable PMU: the program runs profiled
#           by the software sampler and says nothing (all is well); the one
#           profile written says why (witch report --json: sampler_why
#           starts with TEXT); skipped where a CPU PMU is present
#   output  the program runs profiled; at exit stderr is exactly one line
#           starting with "witch: TEXT" (and nothing else)
#   ok      a valid setting: no stderr line starting "witch: ", and exactly
#           one profile is written
SUFFIX='; running without profiling'
CASES='
WITCH_CLIENT|dead|ok|
WITCH_CLIENT|silent|ok|
WITCH_CLIENT|load|ok|
WITCH_FP_TOLERANCE|2|exact|expected a relative tolerance from 0 to 1 (0.01 = 1%, 0 = exact only)
WITCH_CLIENT|bogus|exact|expected dead, silent or load
WITCH_SAMPLER|fast|exact|expected auto, soft or pmu
WITCH_RATE|0|exact|expected a whole number of samples per second from 1 to 10000
WITCH_RATE|abc|exact|expected a whole number of samples per second from 1 to 10000
WITCH_BUDGET|0|exact|expected a percentage of CPU time from 0.1 to 50 (e.g. 1)
WITCH_BUDGET|1%|exact|expected a percentage of CPU time from 0.1 to 50 (e.g. 1)
WITCH_BUDGET|5|ok|
WITCH_WATCHPOINTS|9|exact|expected 1 to 4, 0 to weigh samples without watching them, or window to decide them by the run-ahead alone
WITCH_WATCHPOINTS|0|ok|
WITCH_WATCHPOINTS|window|ok|
WITCH_OBJECTS|0|ok|
WITCH_OBJECTS|1|ok|
WITCH_OBJECTS|2|exact|expected 1 to attribute to data objects, or 0 to track no heap blocks
WITCH_OBJECTS|yes|exact|expected 1 to attribute to data objects, or 0 to track no heap blocks
WITCH_SEED|-1|exact|expected a decimal unsigned 64-bit number
WITCH_SAMPLER|pmu|pmu|no precise store event on this CPU (
WITCH_SAMPLER|auto|fallback|no precise store event on this CPU (
WITCH_EVENT||exact|expected a libpfm4 event of 1 to 255 bytes, e.g. MEM_INST_RETIRED:ALL_STORES
WITCH_OUTPUT|/nonexistent-dir/x-%p.prof|output|cannot write profile
'
# ---------------------------------------------------------------------------

[ $# -ge 1 ] || { echo "usage: $0 BUILD_DIR [PROGRAM]" >&2; exit 2; }
BUILD_DIR=$1
PROGRAM=${2:-$BUILD_DIR/tests/programs/exit7}
LIB="$BUILD_DIR/libwitch.so"

[ -x "$PROGRAM" ] || { echo "FAIL bad_config: program $PROGRAM not found"; exit 1; }
[ -f "$LIB" ] || { echo "FAIL bad_config: runtime $LIB not found"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/witch-badcfg.XXXXXX") || exit 1
trap '[ -n "${KEEP_TMP-}" ] || rm -rf "$tmp"' EXIT

unset LD_PRELOAD
for v in $(compgen -e); do
	case $v in WITCH_*) unset "$v" ;; esac
done

have_pmu() {
	local d
	for d in cpu cpu_core cpu_atom ibs_op; do
		[ -e "/sys/bus/event_source/devices/$d" ] && return 0
	done
	return 1
}

"$PROGRAM" >"$tmp/native.out" 2>"$tmp/native.err"
nrc=$?
if [ -s "$tmp/native.err" ]; then
	echo "FAIL bad_config: the unprofiled program wrote to stderr:"; sed 's/^/    /' "$tmp/native.err"
	exit 1
fi

npass=0 nfail=0 nskip=0 i=0
while IFS='|' read -r var value kind text; do
	[ -n "$var" ] || continue
	i=$((i + 1))
	label="$var=$value"
	if { [ "$kind" = pmu ] || [ "$kind" = fallback ]; } && have_pmu; then
		echo "skip $label: this machine has a CPU PMU"
		nskip=$((nskip + 1))
		continue
	fi
	out="$tmp/case$i"
	mkdir -p "$out/out"
	env LD_PRELOAD="$LIB" WITCH_CLIENT=dead WITCH_SAMPLER=soft WITCH_OUTPUT="$out/out/p-%p.prof" \
		"$var=$value" "$PROGRAM" >"$out/stdout" 2>"$out/stderr"
	rc=$?
	why=()
	[ "$rc" = "$nrc" ] || why+=("exit status $rc, expected $nrc")
	cmp -s "$out/stdout" "$tmp/native.out" || why+=("stdout differs from the unprofiled run")
	nlines=$(wc -l <"$out/stderr")
	[ -s "$out/stderr" ] && [ "$(tail -c 1 "$out/stderr" | od -An -c | tr -d ' ')" != '\n' ] &&
		nlines=$((nlines + 1))
	line=$(head -n 1 "$out/stderr")
	nprof=$(ls -A "$out/out" | wc -l)
	case $kind in
	exact)
		want="witch: $var=$value: $text$SUFFIX"
		[ "$nlines" = 1 ] && [ "$line" = "$want" ] ||
			why+=("stderr should be exactly the line: $want")
		[ "$nprof" = 0 ] || why+=("a profile was written ($nprof file(s)), expected none")
		;;
	pmu)
		[ "$nlines" = 1 ] && [[ $line == "witch: $var=$value: $text"* ]] &&
			[[ $line == *"$SUFFIX" ]] ||
			why+=("stderr should be exactly one line 'witch: $var=$value: $text...$SUFFIX'")
		[ "$nprof" = 0 ] || why+=("a profile was written ($nprof file(s)), expected none")
		;;
	fallback)
		[ "$nlines" = 0 ] || why+=("stderr should be empty (falling back is quiet), found: $line")
		if [ "$nprof" = 1 ]; then
			reason=$("$BUILD_DIR/witch" report --json "$out/out/"* |
				python3 -c 'import json,sys; print(json.load(sys.stdin).get("sampler_why", ""))')
			[[ $reason == "$text"* ]] ||
				why+=("the profile's sampler_why should start with '$text', found '$reason'")
		else
			why+=("expected exactly one profile, found $nprof")
		fi
		;;
	output)
		[ "$nlines" = 1 ] && [[ $line == "witch: $text"* ]] ||
			why+=("stderr should be exactly one line starting 'witch: $text'")
		;;
	ok)
		grep -q '^witch: ' "$out/stderr" && why+=("stderr has a 'witch: ' line for a valid setting")
		[ "$nprof" = 1 ] || why+=("expected exactly one profile, found $nprof")
		;;
	*)
		why+=("bad table entry: unknown kind '$kind'")
		;;
	esac
	if [ ${#why[@]} = 0 ]; then
		echo "ok   $label"
		npass=$((npass + 1))
	else
		echo "FAIL $label:"
		for w in "${why[@]}"; do echo "       $w"; done
		echo "     stderr ($nlines line(s)):"
		head -n 10 "$out/stderr" | sed 's/^/       | /'
		nfail=$((nfail + 1))
	fi
done <<<"$CASES"

echo "bad_config: $npass passed, $nfail failed, $nskip skipped"
if [ "$nfail" = 0 ] && [ "$npass" -gt 0 ]; then
	echo "PASS bad_config"
	exit 0
fi
echo "FAIL bad_config"
exit 1
