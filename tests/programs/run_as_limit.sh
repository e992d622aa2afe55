#!/bin/bash
# run_as_limit.sh: a program under an address-space limit (ulimit -v)
# that uses most of it runs as without the profiler.
#
# usage: run_as_limit.sh BUILD_DIR
#
# The runtime maps ~140 MB of address space at start and ~17 MB a profiled
# thread, which RLIMIT_AS counts: before limitguard.h, as_limit.c's malloc
# of 250 MiB under a soft limit of 320 MiB, fine natively, failed profiled.  Each row: how bash sets the
# limit, as_limit's arguments, and what the profiled run must show.  Every
# row: stdout (the limit as the program reads it, each malloc's result)
# and status as native.
#   soft    ulimit -S -v: the kernel's soft limit is kept raised by what the
#           runtime holds; the program reads its own; one profile, nothing
#           on stderr
#   over    a malloc past the soft limit fails as natively (before stop 87
#           the limit was raised by the most the runtime might ever map,
#           1.2 GiB, and this 2 GiB malloc under 1 GiB succeeded)
#   exec    the same as soft, and the program execs itself: the child reads
#           the same limit (the program's limit is handed down, and the
#           raise made again from it); the image before the exec writes a
#           profile only if it ticked
#   set     the same, and the program sets its own soft limit (the runtime
#           raises that one too) and mallocs again
#   room    a hard limit 230 MiB above the soft one: room for the start's
#           maps (before stop 87 the runtime asked for 1.2 GiB, and stayed
#           out)
#   threads the same limits and 24 threads at once: the threads' maps past
#           the room are refused, those threads run unprofiled, and one
#           line says so; the program runs as natively
#   both    ulimit -v sets the hard limit too: no room for the runtime,
#           which says so in one line (RLIMIT_AS) and does not start
set -u
. "$(dirname "$0")/table.sh"
table_begin "$1" as-limit
prog=$build/tests/programs/as_limit

room="ulimit -S -v 327680 && ulimit -H -v 563200"
rows=(
	"soft|ulimit -S -v 327680|250|1|0|"
	"over|ulimit -S -v 1048576|2048|1|0|"
	"exec|ulimit -S -v 327680|250 exec|1+|0|"
	"set|ulimit -S -v 327680|250 set 360000|1|0|"
	"room|$room|250|1|0|"
	"threads|$room|100 threads 24|1|1|no room for a profiled thread.*RLIMIT_AS"
	"both|ulimit -v 327680|250|0|1|RLIMIT_AS (ulimit -v)"
)
for row in "${rows[@]}"; do
	IFS='|' read -r name limit args profiles lines pattern <<<"$row"
	# shellcheck disable=SC2086 # (args: as_limit's words)
	row_limited "$limit" "$prog" $args
	bad=$row_bad
	n=$(grep -c '^witch: ' "$tmp/err")
	[ "$n" = "$lines" ] && [ "$(wc -l <"$tmp/err")" = "$lines" ] || bad="$bad stderr: $(head -c 300 "$tmp/err")"
	[ "$lines" = 0 ] || grep -q "$pattern" "$tmp/err" || bad="$bad the line does not match '$pattern'"
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
