#!/bin/bash
# run_said_once.sh: a `witch:` line is said once per process tree.
#
# usage: run_said_once.sh BUILD_DIR EXIT7
#
# A bad setting (WITCH_RATE=abc) makes every process that loads the
# runtime print the same line, before anything depends on the machine.
# A program's children share its settings and machine, so a shell
# running five commands under LD_PRELOAD must print it once, not six
# times (make's compilers: hundreds), while unrelated runs each still
# say it.  EXIT7 prints one line and exits 7.  Each row: how the
# commands are started, and how many `witch:` lines stderr must hold.
set -u
build=$1
exit7=$2
lib=$build/libwitch.so
line='witch: WITCH_RATE=abc: expected a whole number of samples per second from 1 to 10000; running without profiling'
tmp=$(mktemp -d /tmp/witch-said.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/table.sh"

pre() { env LD_PRELOAD="$lib" WITCH_CLIENT=dead WITCH_RATE=abc "$@"; }
export -f pre
export lib exit7

# want  command (run by bash -c, itself not preloaded)
rows=(
	# a preloaded shell and its four children (sequential, concurrent, a
	# grandchild): one process tree, one line
	"1|pre sh -c '\$exit7; \$exit7 & \$exit7; wait; sh -c \$exit7'"
	# a child started through a process that did not load the runtime
	# (env -u LD_PRELOAD) is still below the one that said it
	"1|pre sh -c 'env -u LD_PRELOAD sh -c \"LD_PRELOAD=\$lib \$exit7\"'"
	# two runs one after the other: each is its own tree and says it
	"2|pre \$exit7; pre \$exit7"
	# two at once, siblings under a shell that did not load it: two
	"2|pre sh -c 'sleep 0.3; \$exit7' & pre sh -c 'sleep 0.3; \$exit7'; wait"
)
for row in "${rows[@]}"; do
	want=${row%%|*}
	cmd=${row#*|}
	bash -c "$cmd" >"$tmp/out" 2>"$tmp/err"
	got=$(grep -c '^witch: ' "$tmp/err")
	other=$(grep -v '^witch: ' "$tmp/err" | head -n 3)
	wrong=$(grep '^witch: ' "$tmp/err" | grep -vxF "$line" | head -n 1)
	nout=$(grep -c '^exit7' "$tmp/out")
	bad=""
	if [ "$got" != "$want" ] || [ -n "$other" ] || [ -n "$wrong" ] || [ "$nout" = 0 ]; then
		bad=" $got witch: lines, want $want; stdout lines $nout"
	fi
	row_end "$cmd" "$bad" "$got" || sed 's/^/    /' "$tmp/err" | head -n 8
done
table_end said_once ${#rows[@]}
