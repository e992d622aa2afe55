#!/bin/bash
# real_programs.sh: real Debian programs natively and under libwitch (issue 6).
#
# usage: bench/real_programs.sh [BUILD_DIR=build] [RUNS=3] [CLIENT...] (default client: dead)
#        REAL_PROGRAMS=python,gcc bench/real_programs.sh build 3 silent load   # a subset
#
# Programs: python3 (bench/real/script.py), sqlite3 (bench/real/sqlite.sql),
# gzip -9, gcc -O2 (cc1, as, collect2, ld each write a profile), xz -T2 and
# pigz -p 2 (threads), redis-server on 127.0.0.1 under redis-benchmark with
# WITCH_FLUSH=1, stopped by SIGTERM.  Inputs are generated deterministically
# (bench/real/gen_inputs.py).  Native and profiled runs are interleaved, RUNS
# of each; prints a markdown table of medians: time, peak RSS, their ratios,
# samples, traps, fraction, and notes on any stdout/output-file/exit-status
# difference, hang, crash, missing or invalid profile.  Every profile is
# checked with `witch report --json`.  The work is in bench/real_programs.py
# (see its --help; REAL_OPTS passes it options, e.g. REAL_OPTS=--tunables).
#
# Missing programs are installed with apt-get (as root) from
# bench/real_programs.packages.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BUILD=${1:-build}
[ $# -gt 0 ] && shift
case $BUILD in -h|--help) exec /usr/bin/python3 "$HERE/real_programs.py" --help ;; esac

missing=
for cmd in /usr/bin/python3 sqlite3 gzip xz pigz gcc redis-server redis-benchmark redis-cli; do
	command -v "$cmd" >/dev/null 2>&1 || missing="$missing $cmd"
done
if [ -n "$missing" ]; then
	echo "real_programs: missing:$missing; installing bench/real_programs.packages" >&2
	if [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
			$(cat "$HERE/real_programs.packages") >&2 ||
			{ apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y \
				--no-install-recommends $(cat "$HERE/real_programs.packages") >&2; } ||
			{ echo "real_programs: apt-get install failed" >&2; exit 1; }
	else
		echo "real_programs: run as root, or: sudo apt-get install $(tr '\n' ' ' <"$HERE/real_programs.packages")" >&2
		exit 1
	fi
fi
# The Debian package starts no server here (policy-rc.d), but on a machine
# where it does, ours still runs on its own free port.
exec /usr/bin/python3 "$HERE/real_programs.py" ${REAL_OPTS:-} \
	${REAL_PROGRAMS:+--programs "$REAL_PROGRAMS"} "$BUILD" "$@"
