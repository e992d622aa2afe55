#!/bin/bash
# without_traps.sh PROBE COMMAND [ARGS...]: run COMMAND where hardware
# watchpoints never trap (tests/dr_probe.c exits 77); exit 77 (skipped)
# where they do.  The inverse of needs_traps.sh, for the tests of what the
# runtime does on such machines (its run-ahead-alone fallback, README
# "Machines whose watchpoints never trap").
probe=$1
shift
why=$("$probe")
rc=$?
if [ $rc != 77 ]; then
	echo "SKIP: the fallback is not taken here: ${why:-hardware watchpoints trap}"
	exit 77
fi
exec "$@"
