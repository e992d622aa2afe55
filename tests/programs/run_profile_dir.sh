#!/bin/bash
# run_profile_dir.sh: a program that chroots, or whose profile directory
# is replaced under it, still leaves its profile where WITCH_OUTPUT named.
#
# usage: run_profile_dir.sh BUILD_DIR
#
# The runtime opened WITCH_OUTPUT's path at exit: after a chroot the path
# did not resolve, the profile was lost, and one `witch:` line blamed the
# path ("cannot write profile ...: No such file or directory").  The
# directory is now held from just before the chroot (profdir.h); one
# deleted and made again goes by the path.  Each row: chroot_exit.c's way, and how many
# profiles must be in the output directory, each named by %e
# (chroot_exit-PID.prof: the executable's path is read before the chroot,
# as a chrooted process has no /proc) with the executable's path inside.  Every
# row: stdout and status as native, nothing on stderr, nothing in the jail.
# Skipped (77) where chroot is not allowed (not root).
set -u
. "$(dirname "$0")/table.sh"
table_begin "$1" profile-dir
prog=$build/tests/programs/chroot_exit

mkdir -p "$tmp/jail"
"$prog" exit "$tmp/jail" >/dev/null 2>&1
[ $? = 77 ] && { echo "SKIP profile_dir: chroot is not allowed here (not root)"; exit 77; }

rows=(
	"exit|1"
	"_exit|1"
	"fork|2"
	"replaced|1"
)
for row in "${rows[@]}"; do
	IFS='|' read -r way want <<<"$row"
	rm -rf "$tmp/out" "$tmp/jail" && mkdir "$tmp/out" "$tmp/jail" || exit 1
	dir=$tmp/jail
	[ "$way" = replaced ] && dir=$tmp/out
	"$prog" "$way" "$dir" >"$tmp/native.out" 2>&1
	echo "status $?" >>"$tmp/native.out"
	rm -rf "$tmp/out" "$tmp/jail" && mkdir "$tmp/out" "$tmp/jail" || exit 1
	env LD_PRELOAD="$build/libwitch.so" WITCH_WATCHPOINTS=0 WITCH_OUTPUT="$tmp/out/%e-%p.prof" \
		"$prog" "$way" "$dir" >"$tmp/out.txt" 2>"$tmp/err"
	echo "status $?" >>"$tmp/out.txt"
	bad=""
	cmp -s "$tmp/native.out" "$tmp/out.txt" || bad="$bad stdout/status: $(tr '\n' ' ' <"$tmp/out.txt")"
	[ -s "$tmp/err" ] && bad="$bad stderr: $(head -c 300 "$tmp/err")"
	found=$(grep -l "^exe $prog\$" "$tmp"/out/chroot_exit-[0-9]*.prof 2>/dev/null | wc -l)
	[ "$found" = "$want" ] || bad="$bad profiles: $(ls "$tmp/out" | tr '\n' ' ') ($found named and holding the exe, not $want)"
	stray=$(find "$tmp/jail" -mindepth 1 | head -3)
	[ -z "$stray" ] || bad="$bad in the jail: $stray"
	row_end "$way" "$bad" "$want profile(s) in the output directory"
done
table_end profile_dir ${#rows[@]}
