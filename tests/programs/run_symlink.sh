#!/bin/bash
# run_symlink.sh BUILD_DIR PROGRAM: the profile never goes through a link
# (issue 6).  WITCH_OUTPUT names a path where a symlink to another file
# ("victim") already stands: after the run the victim is unchanged and the
# path is a regular file holding the profile, with mode 0644 under umask
# 022 and 0600 under umask 077.
set -u
BUILD=$1 PROGRAM=$2
tmp=$(mktemp -d /tmp/witch-link.XXXXXX)
fail() { echo "FAIL symlink: $* (files kept in $tmp)"; ls -la "$tmp" | sed 's/^/    /'; exit 1; }
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done
# tests/needs_traps.sh --or-window, where watchpoints never trap
[ -z "${TEST_WATCHPOINTS-}" ] || export WITCH_WATCHPOINTS="$TEST_WATCHPOINTS"

for mask in 022 077; do
	echo precious >"$tmp/victim"
	rm -f "$tmp/out.prof"
	ln -s "$tmp/victim" "$tmp/out.prof"
	( umask $mask; env LD_PRELOAD="$BUILD/libwitch.so" WITCH_SAMPLER=soft \
		WITCH_OUTPUT="$tmp/out.prof" "$PROGRAM" >/dev/null 2>"$tmp/stderr" )
	[ "$(cat "$tmp/victim")" = precious ] || fail "umask $mask: the link's target was written"
	[ -f "$tmp/out.prof" ] && [ ! -L "$tmp/out.prof" ] || fail "umask $mask: out.prof is not a regular file"
	"$BUILD/witch" report "$tmp/out.prof" >/dev/null || fail "umask $mask: out.prof is not a profile"
	want=$([ $mask = 022 ] && echo 644 || echo 600)
	mode=$(stat -c %a "$tmp/out.prof")
	[ "$mode" = "$want" ] || fail "umask $mask: mode $mode, expected $want"
	! grep -q '^witch: ' "$tmp/stderr" || fail "umask $mask: $(cat "$tmp/stderr")"
done
echo "PASS symlink: link replaced, target untouched, modes 644/600"
rm -rf "$tmp"
