#!/bin/bash
# run_as_limit.sh: a program under an address-space limit (ulimit -v)
# that uses most of it runs as without the profiler.
#
# usage: run_as_limit.sh BUILD_DIR
#
# The runtime reserves ~140 MB of address space, which RLIMIT_AS counts:
# before limitguard.h, as_limit.c's malloc of 250 MiB under a soft limit of
# 320 MiB, fine natively, failed profiled.  Each row: how bash sets the
# limit, as_limit's arguments, and what the profiled run must show.  Every
# row: stdout (the limit as the program reads it, each malloc's result)
# and status as native.
#   soft    ulimit -S -v: the runtime raises the soft limit by its share;
#           the program reads its own; one profile, nothing on stderr
#   exec    the same, and the program execs itself: the child reads the
#           same limit (the raise is handed down, not made twice); the
#           image before the exec writes a profile only if it ticked
#   set     the same, and the program sets its own soft limit (the runtime
#           raises that one too) and mallocs again
#   both    ulimit -v sets the hard limit too: no room for the runtime,
#           which says so in one line (RLIMIT_AS) and does not start
set -u
. "$(dirname "$0")/table.sh"
table_begin "$1" as-limit
prog=$build/tests/programs/as_limit

rows=(
	"soft|ulimit -S -v 327680|250|1|0"
	"exec|ulimit -S -v 327680|250 exec|1+|0"
	"set|ulimit -S -v 327680|250 set 360000|1|0"
	"both|ulimit -v 327680|250|0|1"
)
for row in "${rows[@]}"; do
	IFS='|' read -r name limit args profiles lines <<<"$row"
	# shellcheck disable=SC2086 # (args: as_limit's words)
	row_limited "$limit" "$prog" $args
	bad=$row_bad
	n=$(grep -c '^witch: ' "$tmp/err")
	[ "$n" = "$lines" ] && [ "$(wc -l <"$tmp/err")" = "$lines" ] || bad="$bad stderr: $(head -c 300 "$tmp/err")"
	[ "$lines" = 0 ] || grep -q 'RLIMIT_AS (ulimit -v)' "$tmp/err" || bad="$bad the line does not name RLIMIT_AS"
	# (as_limit's: bash's too where bash took a tick before its exec, as
	# under ctest -j2)
	found=$(ls "$tmp/p" | grep -c '^r-as_limit-.*\.prof')
	case $profiles in
	*+) [ "$found" -ge "${profiles%+}" ] || bad="$bad profiles: $found, not $profiles" ;;
	*) [ "$found" = "$profiles" ] || bad="$bad profiles: $found, not $profiles" ;;
	esac
	row_end "$name" "$bad" "as native; $profiles profile(s), $lines witch: line(s)"
done
table_end as_limit ${#rows[@]}
