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
. "$(dirname "$0")/table.sh"
table_begin "$1" small-altstack
prog=$build/tests/programs/small_altstack

rows=(libc raw thread)
row_env=(WITCH_WATCHPOINTS=0)
row_checks=(--min-samples 200 --min-stat signals_off_stack=100)
for way in "${rows[@]}"; do
	row_profiled "$prog" "$way"
	row_end "$way" "$row_bad" "200 samples or more, 100 runs moved to the thread's own stack"
done
table_end small_altstack ${#rows[@]}
