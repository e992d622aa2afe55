#!/bin/bash
# run_known_answer.sh: run one known-answer program natively and under
# libwitch, then check the profile against the program's expected values.
#
# usage: run_known_answer.sh BUILD_DIR PROGRAM CLIENT [PROGRAM_ARGS...] -- [check_report.py args...]
#
#   1. PROGRAM [PROGRAM_ARGS] natively (no LD_PRELOAD, no WITCH_* variables)
#   2. the same under LD_PRELOAD=BUILD_DIR/libwitch.so with
#        WITCH_CLIENT=CLIENT WITCH_SAMPLER=soft WITCH_OUTPUT=<tmpdir>/p-%p.prof
#      (soft: the expected values are derived for the software sampler, and
#      it is the sampler on every machine then, PMU or not)
#        WITCH_SEED=$KA_WITCH_SEED (default 4242) WITCH_RATE=$KA_WITCH_RATE (default 2000)
#      and WITCH_<X>=value for every other KA_WITCH_<X>=value in the
#      environment (e.g. KA_WITCH_WATCHPOINTS=1, KA_WITCH_SLOW_REARM=1)
#   3. checks: same stdout and exit status as the native run; exactly one
#      file written to the output directory, named p-<pid of the profiled
#      process>.prof; BUILD_DIR/witch report --json on it succeeds
#   4. check_report.py REPORT [check args]
# KA_EXPECT_WITCH="line": the profiled run's stderr must hold exactly that
# one `witch:` line (else `witch:` lines are only shown as a note).
# Prints one final line "PASS known_answer <program> ..." or
# "FAIL known_answer <program>: <reason>".  Exit 0 on PASS, 1 on FAIL, 77 (skipped) when the native run exits 77 (the program cannot run here).
# Set KA_KEEP=1 to keep the temporary directory (it is always kept, and its
# path printed, on FAIL).
set -u

usage() { echo "usage: $0 BUILD_DIR PROGRAM CLIENT [PROGRAM_ARGS...] -- [check_report.py args...]" >&2; exit 2; }
[ $# -ge 3 ] || usage
BUILD_DIR=$1 PROGRAM=$2 CLIENT=$3
shift 3
PROG_ARGS=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do PROG_ARGS+=("$1"); shift; done
[ "${1-}" = "--" ] && shift
CHECK_ARGS=("$@")

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NAME=$(basename "$PROGRAM")
RATE=${KA_WITCH_RATE:-2000}
SEED=${KA_WITCH_SEED:-4242}
LIB="$BUILD_DIR/libwitch.so"
WITCH="$BUILD_DIR/witch"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/witch-ka-$NAME.XXXXXX") || exit 1
keep=${KA_KEEP:-}
cleanup() { [ -n "$keep" ] || rm -rf "$tmp"; }
trap cleanup EXIT

fail() {
	keep=1
	echo "FAIL known_answer $NAME: $* (files kept in $tmp)"
	exit 1
}
show() { # label file: print a file's last lines, indented
	[ -s "$2" ] || return 0
	echo "--- $1 (last 20 lines of $2):"
	tail -n 20 "$2" | sed 's/^/    /'
}

[ -x "$PROGRAM" ] || fail "program $PROGRAM not found or not executable"
[ -f "$LIB" ] || fail "runtime $LIB not found (build the 'witch' target)"
[ -x "$WITCH" ] || fail "report tool $WITCH not found (build the 'witch_cmd' target)"

# A clean environment for both runs: no inherited preload or WITCH_* settings.
unset LD_PRELOAD
for v in $(compgen -e); do
	case $v in WITCH_*) unset "$v" ;; esac
done

now() { date +%s.%N; }

# 1. native
t0=$(now)
"$PROGRAM" "${PROG_ARGS[@]}" >"$tmp/native.out" 2>"$tmp/native.err"
nrc=$?
t1=$(now)

# 2. profiled
mkdir "$tmp/prof"
penv=(LD_PRELOAD="$LIB" WITCH_CLIENT="$CLIENT" WITCH_SAMPLER=soft WITCH_OUTPUT="$tmp/prof/p-%p.prof"
      WITCH_SEED="$SEED" WITCH_RATE="$RATE")
extra=""
for v in $(compgen -e); do
	case $v in
	KA_WITCH_RATE | KA_WITCH_SEED) ;;
	KA_WITCH_*) penv+=("${v#KA_}=${!v}"); extra="$extra ${v#KA_}=${!v}" ;;
	esac
done
t2=$(now)
env "${penv[@]}" "$PROGRAM" "${PROG_ARGS[@]}" >"$tmp/profiled.out" 2>"$tmp/profiled.err" &
pid=$!
wait $pid
prc=$?
t3=$(now)
times=$(python3 -c "import sys; a=[float(x) for x in sys.argv[1:]]; print(f'native {a[1]-a[0]:.2f} s, profiled {a[3]-a[2]:.2f} s')" "$t0" "$t1" "$t2" "$t3")
echo "known_answer $NAME: client=$CLIENT rate=$RATE seed=$SEED$extra; $times"

# 3. behaviour unchanged, one profile
if [ "$nrc" = 77 ]; then
	echo "SKIP known_answer $NAME: $(head -n 1 "$tmp/native.out")"
	exit 77
fi
if [ "$nrc" != 0 ]; then
	show "native stderr" "$tmp/native.err"
	fail "the native run itself exited with status $nrc"
fi
if [ "$prc" != "$nrc" ]; then
	show "profiled stderr" "$tmp/profiled.err"
	fail "profiled run exited with status $prc, native with $nrc"
fi
if ! cmp -s "$tmp/native.out" "$tmp/profiled.out"; then
	diff "$tmp/native.out" "$tmp/profiled.out" | head -n 20 | sed 's/^/    /'
	show "profiled stderr" "$tmp/profiled.err"
	fail "profiled stdout differs from native stdout"
fi
files=()
while IFS= read -r f; do files+=("$f"); done < <(ls -A "$tmp/prof")
if [ ${#files[@]} != 1 ]; then
	show "profiled stderr" "$tmp/profiled.err"
	fail "expected exactly one file in the WITCH_OUTPUT directory, found ${#files[@]}: ${files[*]-}"
fi
if [ "${files[0]}" != "p-$pid.prof" ]; then
	fail "profile is named ${files[0]}, expected p-$pid.prof (WITCH_OUTPUT=p-%p.prof, pid $pid)"
fi
profile="$tmp/prof/${files[0]}"

# 4. report and checks
if ! "$WITCH" report --json "$profile" >"$tmp/report.json" 2>"$tmp/report.err"; then
	show "witch report stderr" "$tmp/report.err"
	fail "'witch report --json $profile' failed"
fi
if ! python3 "$HERE/check_report.py" "$tmp/report.json" "${CHECK_ARGS[@]}" >"$tmp/check.out" 2>&1; then
	cat "$tmp/check.out"
	show "profiled stderr" "$tmp/profiled.err"
	fail "$(tail -n 1 "$tmp/check.out")"
fi
cat "$tmp/check.out"
if [ -n "${KA_EXPECT_WITCH-}" ]; then
	got=$(grep '^witch: ' "$tmp/profiled.err")
	[ "$got" = "$KA_EXPECT_WITCH" ] ||
		fail "runtime lines on stderr: '$got', expected exactly '$KA_EXPECT_WITCH'"
elif grep -q '^witch: ' "$tmp/profiled.err"; then
	echo "note: the profiled run printed runtime messages:"
	grep '^witch: ' "$tmp/profiled.err" | head -n 5 | sed 's/^/    /'
fi
echo "PASS known_answer $NAME: $(tail -n 1 "$tmp/check.out" | sed 's/^check_report: PASS //')"
exit 0
