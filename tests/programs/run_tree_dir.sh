#!/bin/bash
# run_tree_dir.sh: a process tree's profiles land where the tree began.
#
# usage: run_tree_dir.sh BUILD_DIR EXIT7
#
# A relative WITCH_OUTPUT (the default, witch-%e-%p.prof, among them) was
# expanded in whatever directory each process exited from: a script's
# programs left profiles all over its tree, `mkdir t; cd t; prog; cd ..;
# rmdir t` failed on the profile left in t, and a daemon's went to /.  The
# tree's first process now makes the pattern absolute against its own
# directory (profile.h, profile_anchor_output), as `witch run` does.
#
# Each row: the WITCH_OUTPUT to set (- for none), a command that bash -c
# runs from START (a directory with a '%' in its name, which must not read
# as a conversion), and where the profiles of the exit7s must be, relative
# to START, one glob each; no profile anywhere else under the test's
# directory, the command's stdout and status as native, nothing on stderr.
# No traps needed: WITCH_WATCHPOINTS=0 samples and writes on any machine.
set -u
build=$(cd "$1" && pwd) || exit 1
exit7=$(realpath "$2") || exit 1
lib=$build/libwitch.so
tmp=$(mktemp -d /tmp/witch-tree-dir.XXXXXX)
tok=${tmp##*.} # names a stray at / would have, this run's own
trap 'rm -rf "$tmp" /"$tok".prof*' EXIT
. "$(dirname "$0")/table.sh"
export exit7
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done

start="$tmp/run 100%p"
rows=(
	# the default name, a program run from a subdirectory
	"-|cd sub && \$exit7|witch-exit7-*.prof"
	# the directory it ran in is removed after: rmdir must find it empty
	"-|mkdir t && cd t && \$exit7; cd .. && rmdir t && echo removed|witch-exit7-*.prof"
	# a relative pattern with a directory of its own, two programs below
	# a shell that moved (the second through a grandchild shell)
	"out/p-%e-%p.prof|cd sub && \$exit7; sh -c 'cd / && \$exit7'|out/p-exit7-*.prof out/p-exit7-*.prof"
	# no %p: the first process's own name, the processes below it apart
	"$tok.prof|cd sub && \$exit7; cd / && \$exit7|$tok.prof.* $tok.prof.*"
	# an absolute pattern stays as written
	"$tmp/abs/a-%p.prof|cd sub && \$exit7|../abs/a-*.prof"
)
for row in "${rows[@]}"; do
	IFS='|' read -r output cmd want <<<"$row"
	rm -rf "$start" "$tmp/abs" && mkdir -p "$start/sub" "$start/out" "$tmp/abs" || exit 1
	(cd "$start" && bash -c "$cmd" >"$tmp/native.out" 2>"$tmp/native.err"; echo "status $?" >>"$tmp/native.out")
	rm -rf "$start/t"
	set -- LD_PRELOAD="$lib" WITCH_WATCHPOINTS=0
	[ "$output" = - ] || set -- "$@" WITCH_OUTPUT="$output"
	(cd "$start" && env "$@" bash -c "$cmd" >"$tmp/out" 2>"$tmp/err"; echo "status $?" >>"$tmp/out")
	bad=""
	cmp -s "$tmp/native.out" "$tmp/out" || bad="$bad stdout/status: $(tr '\n' ' ' <"$tmp/out")"
	[ -s "$tmp/err" ] && bad="$bad stderr: $(head -c 200 "$tmp/err")"
	# every exit7 profile where the row says, each glob its own file
	found=$(cd "$start" && grep -l '^exe .*/exit7$' $want 2>/dev/null | sort -u | wc -l)
	[ "$found" = "$(wc -w <<<"$want")" ] || bad="$bad exit7 profiles at '$want': $found"
	# and no profile below a directory a process moved to, or at /
	stray=$(find "$start/sub" "$start/t" -name '*.prof*' 2>/dev/null; ls /"$tok".prof* 2>/dev/null)
	[ -n "$stray" ] && bad="$bad stray: $(echo $stray)"
	where=$(cd "$tmp" && find . -name '*.prof*' | sed 's|/[^/]*$||' | sort | uniq -c | tr -s ' \n' ' ')
	row_end "$output: $cmd" "$bad" "profiles in:$where"
done
table_end tree_dir ${#rows[@]}
