#!/bin/bash
# run_oracle_ka.sh: run a known-answer program under witch-oracle and check
# the oracle's exact answer (tools/oracle) with check_report.py.
#
# usage: run_oracle_ka.sh BUILD_DIR PROGRAM CLIENT [PROGRAM_ARGS...] -- [check_report.py args...]
#                         [--count PERIOD [check_report.py args...]]
#
# With --count, the oracle also runs its count-based simulation of Witch
# (three seeds, a sample every ~PERIOD stores or loads), and each seed's
# CLIENT file must pass the checks after PERIOD.
# The program runs natively and under the oracle; its stdout and exit
# status must not change, the oracle must write all three JSON files, and
# BUILD_DIR's CLIENT file must pass the checks.  Prints one final line
# "PASS oracle <program> ..." or "FAIL oracle <program>: <reason>".
set -u
[ $# -ge 3 ] || { echo "usage: $0 BUILD_DIR PROGRAM CLIENT [ARGS...] -- [checks...]" >&2; exit 2; }
BUILD_DIR=$1 PROGRAM=$2 CLIENT=$3
shift 3
ARGS=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do ARGS+=("$1"); shift; done
[ "${1-}" = "--" ] && shift
CHECKS=()
while [ $# -gt 0 ] && [ "$1" != "--count" ]; do CHECKS+=("$1"); shift; done
SIM=(--simulate=0) PERIOD=
if [ "${1-}" = "--count" ]; then
	PERIOD=$2
	shift 2
	SIM=(--simulate=3 --store-period="$PERIOD" --load-period="$PERIOD")
fi
NAME=$(basename "$PROGRAM")
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TMP=$(mktemp -d)
fail() { echo "FAIL oracle $NAME: $*  (kept $TMP)"; exit 1; }

"$PROGRAM" "${ARGS[@]}" >"$TMP/native.out" 2>/dev/null
native_rc=$?
"$BUILD_DIR/tools/oracle/witch-oracle" "${SIM[@]}" --out="$TMP/o" -- "$PROGRAM" "${ARGS[@]}" \
	>"$TMP/oracle.out" 2>"$TMP/oracle.err"
oracle_rc=$?
[ $oracle_rc = $native_rc ] || fail "exit status $oracle_rc under the oracle, $native_rc natively: $(head -5 "$TMP/oracle.err")"
cmp -s "$TMP/native.out" "$TMP/oracle.out" || fail "stdout differs under the oracle"
for c in dead silent load; do
	[ -s "$TMP/o.$c.json" ] || fail "no $c file: $(head -5 "$TMP/oracle.err")"
done
python3 "$HERE/../programs/check_report.py" "$TMP/o.$CLIENT.json" --client "$CLIENT" \
	--sampler oracle "${CHECKS[@]}" || fail "checks"
if [ -n "$PERIOD" ]; then
	for seed in 1 2 3; do
		python3 "$HERE/../programs/check_report.py" "$TMP/o.$CLIENT.count.$seed.json" \
			--client "$CLIENT" --sampler count "$@" || fail "count seed $seed checks"
	done
fi
rm -rf "$TMP"
echo "PASS oracle $NAME"
