#!/bin/bash
# run_tree_names.sh: every process of a profiled tree keeps its own profile.
#
# usage: run_tree_names.sh BUILD_DIR EXIT7
#
# With a WITCH_OUTPUT that has no %p, the tree's first process writes the
# pattern's name; every process below it must write a name of its own.  An
# exec'd image starts its profile as a new process does, so it wrote the
# pattern's very name too: a shell pipeline's two programs and then the
# shell replaced each other's finished profiles (rename over them), and
# one file was left for three processes.  The runtime now adds ".%p" to
# WITCH_OUTPUT for what the first process starts (profile.h).
#
# Each row: a command (run by bash -c, under LD_PRELOAD and WITCH_OUTPUT
# DIR/t.prof) and the profiles it must leave, by the executable each names
# (its `exe` record), exactly.  The shells are not counted: a shell's
# image writes a profile before it execs only if it took a tick by then
# (witch.c), which is chance.  Every exit7 that ran (its stdout line) must
# have its profile.  No traps needed: WITCH_WATCHPOINTS=0
# samples and writes profiles on any machine.  EXIT7 prints a line and
# exits 7.
set -u
build=$1
exit7=$2
lib=$build/libwitch.so
tmp=$(mktemp -d /tmp/witch-tree.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/table.sh"
export exit7

rows=(
	# bash, its pipeline's two programs, then bash execs exit7 (its own
	# pid: the shell's profile before, if it took a tick, exit7's after)
	"sed=1 grep=1 exit7=1|echo x | sed s/x/y/ | grep -c y; exec \$exit7"
	# dash running two exit7s, one through a grandchild shell
	"exit7=2|dash -c '\$exit7; sh -c \$exit7'"
	# exec with no fork: two images of one process
	"exit7=1|exec \$exit7"
)
for row in "${rows[@]}"; do
	want=${row%%|*}
	cmd=${row#*|}
	rm -f "$tmp"/t.prof*
	env LD_PRELOAD="$lib" WITCH_WATCHPOINTS=0 WITCH_OUTPUT="$tmp/t.prof" bash -c "$cmd" \
		>"$tmp/out" 2>"$tmp/err"
	# executables named by the profiles, one a line
	grep -h '^exe ' "$tmp"/t.prof* 2>/dev/null | sed 's|.*/||' >"$tmp/exes"
	bad=""
	for w in $want; do
		name=${w%=*}
		got=$(grep -cx "$name" "$tmp/exes")
		[ "$got" = "${w#*=}" ] || bad="$bad $name:$got"
	done
	ran=$(grep -c '^exit7' "$tmp/out")
	[ "$(grep -cx exit7 "$tmp/exes")" = "$ran" ] || bad="$bad exit7-ran:$ran"
	exes=$(sort "$tmp/exes" | tr '\n' ' ')
	[ -s "$tmp/err" ] && bad="$bad stderr"
	[ -n "$bad" ] && bad=" want $want; wrong:$bad; profiles of: $exes"
	row_end "$cmd" "$bad" "$exes" || sed 's/^/    /' "$tmp/err" | head -n 4
done
table_end tree_names ${#rows[@]}
