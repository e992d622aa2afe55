#!/bin/bash
# needs_traps.sh [--without | --or-window] PROBE COMMAND [ARGS...]: run
# COMMAND as this machine's watchpoints allow (PROBE, tests/dr_probe.c: 0
# they trap, 77 a breakpoint opens and never traps, else none opens).
#   (no flag)    where they trap; skipped (77) where they never do, never
#                passed or failed.  For the tests whose answer comes from traps.
#   --without    only where they never trap; skipped elsewhere.  For the
#                runtime's fallback there.
#   --or-window  everywhere; where they never trap with TEST_WATCHPOINTS=window,
#                which the runner scripts pass on as WITCH_WATCHPOINTS (the
#                run-ahead alone, nothing armed).  For the tests of what the
#                runtime does around the program (a crash, its own allocator,
#                dlopen churn), which hold whatever decides the verdicts.
mode=need
case $1 in
--without) mode=without; shift ;;
--or-window) mode=window; shift ;;
esac
probe=$1
shift
why=$("$probe")
rc=$?
case $mode/$rc in
need/0 | without/77 | window/0) ;;
need/77)
	echo "SKIP: $why"
	exit 77
	;;
without/*)
	echo "SKIP: the fallback is not taken here: ${why:-hardware watchpoints trap}"
	exit 77
	;;
window/77)
	echo "note: $why: the profiled runs use WITCH_WATCHPOINTS=window"
	export TEST_WATCHPOINTS=window
	;;
*) echo "needs_traps: $why (running the test anyway)" ;;
esac
exec "$@"
