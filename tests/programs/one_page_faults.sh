#!/bin/bash
# one_page_faults.sh BUILD_DIR PROGRAM: the program's unwind tables fault in
# 16 pages at a time natively and one at a time under the runtime, and so
# do libZydis's constants, in the process and in a fork child (the checks
# and their answers: one_page_faults.c).  77 where the kernel cannot.
set -u
BUILD=$1 PROGRAM=$2
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done
out=$("$PROGRAM" native); rc=$?
[ $rc = 77 ] && { echo "$out"; exit 77; }
[ $rc = 0 ] || { printf 'FAIL: native run (exit %d):\n%s\n' $rc "$out"; exit 1; }
dir=$(mktemp -d) && trap 'rm -rf "$dir"' EXIT
got=$(LD_PRELOAD="$BUILD/libwitch.so" WITCH_WATCHPOINTS=0 WITCH_RATE=1 WITCH_OBJECTS=0 \
	WITCH_OUTPUT="$dir/p.%p.prof" "$PROGRAM" profiled 2>"$dir/err"); rc=$?
[ $rc = 77 ] && { echo "$got"; exit 77; }
[ -s "$dir/err" ] && { echo "FAIL: stderr: $(cat "$dir/err")"; exit 1; }
[ $rc = 0 ] || { printf 'FAIL: profiled run (exit %d; where, pages, other pages a fault mapped):\n%s\nnative:\n%s\n' $rc "$got" "$out"; exit 1; }
echo "PASS one_page_faults: native $(echo "$out" | awk '{print $4}') other pages a fault; profiled:" $(echo "$got" | awk 'NF == 4 {print $1 "/" $2 ":" $4}')
