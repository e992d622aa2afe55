#!/bin/bash
# run_output_target.sh BUILD_DIR PROGRAM: what already stands at the path
# WITCH_OUTPUT names, and what the profile does to it.  The profile is
# renamed over its path, which replaces whatever is there: a device node
# or FIFO too.  link_deps ran `cat` with WITCH_OUTPUT=/dev/null, and as
# root every run of it left /dev/null a regular file holding a profile
# (git then read that text as its input; 2026-12-07).  Now only a regular
# file or a link (run_symlink.sh) is replaced.  Each row: what stands at
# the path (made in a directory of the test's, except the real
# /dev/null), then
#   replaced  a regular file holding the profile after, nothing on stderr
#   discarded /dev/null: still the null device, nothing on stderr
#   kept      still what it was, one witch: line saying it is no regular file
# and every row: the program's stdout and status as native.  Device nodes
# need root (mknod): those rows are skipped otherwise.
set -u
. "$(dirname "$0")/table.sh"
table_begin "$1" output_target
PROGRAM=$2
# tests/needs_traps.sh --or-window, where watchpoints never trap
[ -z "${TEST_WATCHPOINTS-}" ] || export WITCH_WATCHPOINTS="$TEST_WATCHPOINTS"

rows=(
	"file|replaced"
	"null|discarded"
	"fifo|kept"
	"dir|kept"
	"zero_node|kept"
)
"$PROGRAM" >"$tmp/native.out" 2>/dev/null
echo "status $?" >>"$tmp/native.out"
for row in "${rows[@]}"; do
	IFS='|' read -r what want <<<"$row"
	path=$tmp/out.prof
	rm -rf "$path"
	case $what in
	file) echo old >"$path" ;;
	null) path=/dev/null ;;
	fifo) mkfifo "$path" ;;
	dir) mkdir "$path" ;;
	zero_node)
		if ! mknod "$path" c 1 5 2>/dev/null; then
			echo "skip [$what]: mknod needs root"
			continue
		fi
		;;
	esac
	type_before=$(stat -c %F "$path")
	LD_PRELOAD="$build/libwitch.so" WITCH_OUTPUT="$path" "$PROGRAM" >"$tmp/out" 2>"$tmp/err"
	echo "status $?" >>"$tmp/out"
	bad=""
	cmp -s "$tmp/native.out" "$tmp/out" || bad="$bad stdout/status: $(tr '\n' ' ' <"$tmp/out")"
	type_after=$(stat -c %F "$path")
	lines=$(grep -c '^witch: ' "$tmp/err")
	case $want in
	replaced)
		[ "$type_after" = "regular file" ] && "$build/witch" report "$path" >/dev/null 2>&1 ||
			bad="$bad not a profile: $type_after"
		[ "$lines" = 0 ] || bad="$bad $(head -c 300 "$tmp/err")"
		;;
	discarded)
		[ "$type_after" = "character special file" ] && [ "$(stat -c %t,%T "$path")" = 1,3 ] ||
			bad="$bad /dev/null is now a $type_after"
		[ "$lines" = 0 ] || bad="$bad $(head -c 300 "$tmp/err")"
		;;
	kept)
		[ "$type_after" = "$type_before" ] || bad="$bad a $type_before became a $type_after"
		[ "$lines" = 1 ] && grep -q "^witch: cannot write profile .*: it is not a regular file" "$tmp/err" ||
			bad="$bad witch: lines: $(head -c 300 "$tmp/err")"
		;;
	esac
	ls "$tmp" | grep -q '\.tmp\.' && bad="$bad a temporary file left: $(ls "$tmp" | grep '\.tmp\.')"
	row_end "$what" "$bad" "$want"
done
table_end output_target ${#rows[@]}
