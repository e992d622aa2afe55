#!/bin/bash
# needs_traps.sh PROBE COMMAND [ARGS...]: run COMMAND where hardware
# watchpoints trap; exit 77 (skipped) where they do not (tests/dr_probe.c).
# Tests whose answer comes from traps use it, so a VM whose hypervisor
# drops debug-register traps reports them skipped, never passed or failed.
probe=$1
shift
why=$("$probe")
rc=$?
if [ $rc = 77 ]; then
	echo "SKIP: $why"
	exit 77
fi
[ $rc = 0 ] || echo "needs_traps: $why (running the test anyway)"
exec "$@"
