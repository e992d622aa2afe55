#!/bin/bash
# run_bulk_declined.sh BUILD_DIR: a runtime that does not start still
# passes the program's memset, memcpy, memmove, mempcpy and memcmp on to
# the C library's (bulk.h, bulk_resolve).  It had left its wrappers byte
# loops: declined by a bad setting or a hard RLIMIT_AS, a program's 64 MiB
# memsets took 0.59 s of user time for 0.07 natively, its memcpys 1.19 for
# 0.13 (found by a sweep of Debian programs, 2026-12-07).
#
# Counted, not timed: cachegrind counts the instructions of bulk_calls'
# 64 calls of 256 KiB, natively and preloaded.  Under Valgrind the runtime
# does not start (vgguard.h), nor with WITCH_RATE=abc: both rows decline.
# Natively the calls take ~17.4M instructions (Valgrind counts each step
# of the C library's rep stosb and rep movsb, ~1 a byte; memcmp's vector
# loop 2.9M); the byte loops took 69M for memset, 103M for memcpy.  A row
# passes when the preloaded count is under 1.5x the native one (the
# runtime's start-up and the wrappers add ~0.2M).
set -u
. "$(dirname "$0")/table.sh"
table_begin "$1" bulk_declined
if ! command -v valgrind >/dev/null; then
	echo "SKIP: no valgrind (apt-get install valgrind)"
	exit 77
fi
prog=$build/tests/programs/bulk_calls

# Instructions the run took (cachegrind's I refs), or empty.
irefs() {
	env "$@" valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$tmp/cg.out" \
		"$prog" "$fn" >"$tmp/out" 2>"$tmp/err" || return
	awk '/^summary:/ {print $2}' "$tmp/cg.out"
}

rows=(
	"memset|"
	"memcpy|"
	"memmove|"
	"mempcpy|"
	"memcmp|"
	"memset|WITCH_RATE=abc"
	"memcpy|WITCH_RATE=abc"
)
for row in "${rows[@]}"; do
	IFS='|' read -r fn setting <<<"$row"
	native=$(irefs LANG=C)
	profiled=$(irefs LD_PRELOAD="$build/libwitch.so" WITCH_OUTPUT="$tmp/p.prof" $setting)
	bad=""
	if [ -z "$native" ] || [ -z "$profiled" ]; then
		bad=" no count: $(head -c 300 "$tmp/err")"
	elif [ $((profiled * 2)) -ge $((native * 3)) ]; then
		bad=" $profiled instructions preloaded, $native natively"
	fi
	row_end "$fn ${setting:-(under Valgrind)}" "$bad" "$profiled instructions preloaded, $native natively"
done
table_end bulk_declined ${#rows[@]}
