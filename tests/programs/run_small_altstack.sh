#!/bin/bash
# run_small_altstack.sh: a program with a small signal stack of its own,
# or none, is profiled without the handlers writing past it.
#
# usage: run_small_altstack.sh BUILD_DIR
#
# small_altstack.c registers a 16 KiB sigaltstack (by the C library, or by
# raw system call as Go's runtime does), or turns it off in a thread of a
# 24 KiB stack, runs stores for ~0.5 s and checks the memory around its
# stack.  Before thread_on_own_stack (thread.h) the handlers ran where the
# kernel delivered: past the 16 KiB stack into the program's block below
# it ("7984 bytes below the stack were written", exit 1), and off the end
# of the thread's small stack (SIGSEGV, 139).  Each row: the way, and the profile must hold
# at least 200 samples and 100 handler runs moved to the thread's own
# stack (stat signals_off_stack; WITCH_WATCHPOINTS=0, WITCH_RATE=2000: no
# traps needed).  Every row: stdout and status as native, nothing on
# stderr.
set -u
build=$(cd "$1" && pwd) || exit 1
prog=$build/tests/programs/small_altstack
tmp=$(mktemp -d /tmp/witch-small-altstack.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/table.sh"
here=$(cd "$(dirname "$0")" && pwd)
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done

rows=(libc raw thread)
for way in "${rows[@]}"; do
	rm -rf "$tmp/p" && mkdir "$tmp/p"
	"$prog" "$way" >"$tmp/native.out" 2>&1
	echo "status $?" >>"$tmp/native.out"
	env LD_PRELOAD="$build/libwitch.so" WITCH_WATCHPOINTS=0 WITCH_RATE=2000 WITCH_SEED=7 \
		WITCH_OUTPUT="$tmp/p/s-%p.prof" "$prog" "$way" >"$tmp/out" 2>"$tmp/err"
	echo "status $?" >>"$tmp/out"
	bad=""
	cmp -s "$tmp/native.out" "$tmp/out" || bad="$bad stdout/status: $(tr '\n' ' ' <"$tmp/out")"
	[ -s "$tmp/err" ] && bad="$bad stderr: $(head -c 300 "$tmp/err")"
	if ! "$build/witch" report --json "$tmp"/p/*.prof >"$tmp/r.json" 2>"$tmp/r.err"; then
		bad="$bad witch report: $(head -c 200 "$tmp/r.err")"
	elif ! python3 "$here/check_report.py" "$tmp/r.json" --client dead --min-samples 200 \
		--min-stat signals_off_stack=100 >"$tmp/check" 2>&1; then
		bad="$bad $(grep -h FAIL "$tmp/check" | head -n 3 | tr '\n' ' ')"
	fi
	row_end "$way" "$bad" "200 samples or more, 100 runs moved to the thread's own stack"
done
table_end small_altstack ${#rows[@]}
