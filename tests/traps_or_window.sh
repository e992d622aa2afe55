#!/bin/bash
# traps_or_window.sh PROBE COMMAND [ARGS...]: run COMMAND; where hardware
# watchpoints never trap (tests/dr_probe.c exits 77) with
# TEST_WATCHPOINTS=window, which the runner scripts pass on as
# WITCH_WATCHPOINTS=window (the run-ahead alone, nothing armed).  For the
# tests of what the runtime does around the program (a crash, its own
# allocator, dlopen churn), which hold whatever decides the verdicts: run
# so on such a machine rather than skipped.
probe=$1
shift
why=$("$probe")
case $? in
0) ;;
77)
	echo "note: $why: the profiled runs use WITCH_WATCHPOINTS=window"
	export TEST_WATCHPOINTS=window
	;;
*) echo "traps_or_window: $why (running the test anyway)" ;;
esac
exec "$@"
