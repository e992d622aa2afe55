#!/bin/bash
# run_fsize_limit.sh BUILD_DIR: a program under a file size limit
# (ulimit -f) smaller than its profile runs as natively: same stdout and
# exit status.  Before, the profile's write at exit outgrew the limit and
# the kernel's SIGXFSZ ended the program (status 153 for 0), leaving a cut
# temporary file.  Each row: the limit (1 KiB blocks, bash's unit), then
#   small  the profile does not fit: one witch: line naming the limit
#          (twice where bash's image took a tick and wrote before its exec:
#          the same line, once per image), no profile and no temporary
#          file left
#   room   it fits: the profile, nothing on stderr
# The program is crash.c with no argument: it fills memory and returns 0.
set -u
. "$(dirname "$0")/table.sh"
table_begin "$1" fsize-limit
prog=$build/tests/programs/crash
row_env=(WITCH_RATE=2000)
rows=(
	"small|2|0|1"
	"room|4096|1|0"
)
for row in "${rows[@]}"; do
	IFS='|' read -r name blocks profiles lines <<<"$row"
	row_limited "ulimit -f $blocks" "$prog"
	bad=$row_bad
	n=$(sort -u "$tmp/err" | grep -c '^witch: ')
	[ "$n" = "$lines" ] && [ "$(sort -u "$tmp/err" | wc -l)" = "$lines" ] ||
		bad="$bad stderr: $(head -c 300 "$tmp/err")"
	[ "$lines" = 0 ] || grep -q 'ulimit -f' "$tmp/err" || bad="$bad the line does not name the limit"
	found=$(ls "$tmp/p" | grep -c '^r-crash-.*\.prof$')
	[ "$found" = "$profiles" ] || bad="$bad profiles: $found, not $profiles"
	ls "$tmp/p" | grep -q '^r-crash-.*\.tmp\.' && bad="$bad a temporary file left: $(ls "$tmp/p")"
	row_end "$name" "$bad" "ulimit -f $blocks: as native, $profiles profile(s), $lines line(s)"
done
table_end fsize_limit ${#rows[@]}
