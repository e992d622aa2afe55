#!/bin/bash
# run_empty_profile.sh: a process that took no tick writes a profile with
# no module records, and the report reads it; one that ticked names its
# modules.
#
# usage: run_empty_profile.sh BUILD_DIR
#
# Modules name the code of the profile's nodes, pairs and objects.  A
# process with none (most of a script's: a 1 ms process at the default
# 20 ticks a second is never ticked) resolved every module's path at its
# exit all the same, ~25 system calls, ~0.25 ms of each such process here
# (bench/results/startup.md).  It still writes its profile: its start-up
# cost and CPU time are the tree's, which the report's estimate counts.
#
# Each row: a program, its arguments (run with WITCH_WATCHPOINTS=0, which
# samples on any machine), the settings it runs under, its exit status,
# and whether it should tick.  Its profile must then hold:
#   no tick (`stat ticks` 0): no `module` record at all;
#   samples (`stat samples` > 0): a `module` record naming the program's
#   own file;
# and `witch report` must read it and print its sample count.  `exit7 1`
# does ~1 ms of work and exits 7: at WITCH_RATE=1 its first tick would
# come 0-1 s of CPU time in, so ~3 runs in 1,000 tick; such a run is
# checked as a ticked one and says so.  dead_two_loops runs ~0.8 s: at
# 2000 a second it takes ~1,600 ticks.
set -u
build=$1
lib=$build/libwitch.so
witch=$build/witch
tmp=$(mktemp -d /tmp/witch-empty.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/table.sh"

rows=(
	# program and arguments|settings|status|ticks
	"exit7 1|WITCH_RATE=1|7|0"
	"dead_two_loops|WITCH_RATE=2000|0|1"
)
for row in "${rows[@]}"; do
	IFS='|' read -r cmd settings want_status want_ticked <<<"$row"
	prog=${cmd%% *}
	rm -f "$tmp"/p.prof*
	# shellcheck disable=SC2086 # settings and arguments are words
	env LD_PRELOAD="$lib" WITCH_WATCHPOINTS=0 WITCH_OUTPUT="$tmp/p.prof" $settings \
		"$build/tests/programs/"$cmd >"$tmp/out" 2>"$tmp/err"
	status=$?
	bad=""
	note=""
	[ "$status" = "$want_status" ] || bad="$bad status:$status"
	[ -s "$tmp/err" ] && bad="$bad stderr:$(head -n 1 "$tmp/err")"
	prof=$(ls "$tmp"/p.prof* 2>/dev/null | head -n 1)
	ticks=0 samples=0 nmod=0
	if [ -z "$prof" ]; then
		bad="$bad no-profile"
	else
		ticks=$(awk '$1 == "stat" && $2 == "ticks" { print $3 }' "$prof")
		samples=$(awk '$1 == "stat" && $2 == "samples" { print $3 }' "$prof")
		nmod=$(grep -c '^module ' "$prof")
		own=$(grep -c "^module .*/$prog\$" "$prof")
		if [ "${ticks:-0}" = 0 ]; then
			[ "$want_ticked" = 1 ] && bad="$bad no-tick"
			[ "$nmod" = 0 ] || bad="$bad modules-without-a-tick:$nmod"
		else
			[ "$want_ticked" = 0 ] && note=" (ticked by chance: checked as a ticked run)"
			[ "${samples:-0}" -gt 0 ] && [ "$own" = 0 ] &&
				bad="$bad samples-without-own-module:$nmod"
			[ "$want_ticked" = 1 ] && [ "${samples:-0}" = 0 ] && bad="$bad no-samples"
		fi
		if ! "$witch" report "$prof" >"$tmp/report" 2>"$tmp/report_err"; then
			bad="$bad report:$(head -n 1 "$tmp/report_err")"
		elif ! grep -Eq "^samples: *${samples:-x}( |\$)" "$tmp/report"; then
			bad="$bad report-samples:$(grep '^samples:' "$tmp/report")"
		fi
	fi
	row_end "$cmd $settings" "$bad" "ticks $ticks, samples $samples, modules $nmod$note"
done
table_end empty_profile ${#rows[@]}
