#!/bin/bash
# run_mask_all.sh: a program that blocks every signal halfway through (a
# daemon that takes its signals by signalfd or sigwait) is profiled on.
#
# usage: run_mask_all.sh BUILD_DIR
#
# mask_all.c does the same work twice, phase_one and phase_two, and blocks
# every signal between them.  Before sigguard.h kept the runtime's signal
# open under such a mask, its ticks stopped there: phase_two had none of
# the sampled bytes.  Each row: the way it blocks, and the shares of the
# profile's sampled bytes (WITCH_WATCHPOINTS=0: no traps needed), half
# each; rt_some blocks the real-time signals but the first three, a mask
# the program keeps as it asked (phase_two: none).  mask_all checks that
# its mask reads back as it set it (exit 1 otherwise).  Every row: stdout
# and status as native, nothing on stderr.
set -u
. "$(dirname "$0")/table.sh"
table_begin "$1" mask-all
prog=$build/tests/programs/mask_all

rows=(
	"sigprocmask|phase_one=0.5,phase_two=0.5"
	"pthread_sigmask|phase_one=0.5,phase_two=0.5"
	"setmask|phase_one=0.5,phase_two=0.5"
	"signalfd|phase_one=0.5,phase_two=0.5"
	"rt_some|phase_one=1.0,phase_two=0.0"
)
row_env=(WITCH_WATCHPOINTS=0)
for row in "${rows[@]}"; do
	IFS='|' read -r way shares <<<"$row"
	row_checks=(--sampled-shares "$shares" --tol 0.15 --min-samples 200)
	row_profiled "$prog" "$way"
	row_end "$way" "$row_bad" "$shares within 0.15"
done
table_end mask_all ${#rows[@]}
