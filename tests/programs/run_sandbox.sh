#!/bin/bash
# run_sandbox.sh: a program that sandboxes itself with seccomp runs on as
# without the profiler, and its profile holds what came before.
#
# usage: run_sandbox.sh BUILD_DIR [--armed]
#
# --armed: with the debug registers the runtime takes by default, armed
# across the install (behind tests/needs_traps.sh --or-window, which
# passes TEST_WATCHPOINTS=window where they never trap); else
# WITCH_WATCHPOINTS=0, which samples and arms nothing on any machine.
#
# sandbox.c does the same work twice, phase_one and phase_two, and
# installs between them a filter that kills the process on any system
# call it does not make itself (or enters strict mode).  Before
# sandboxguard.h the runtime's first tick past it killed the program with
# SIGSYS (status 159).  Each row: the way it sandboxes, and the shares of
# the profile's sampled bytes (WITCH_WATCHPOINTS=0: no traps needed) the
# two phases must have.  Sandboxed, the runtime wrote the profile before
# the filter and stopped: phase_two has none of the bytes (a sample past
# the filter would need a tick, whose ioctl the filter kills).  Where the
# install fails, profiling went on: the same work each, half each.  The
# sealed rows allow 0.05: phase_two's 0 is what tells (a profile that went
# on would hold a quarter to a half there), and with the debug registers
# armed where they never trap (TEST_WATCHPOINTS=window) a run has ~300
# samples, a few of them in the thread's start and spin: tsync's phase_one
# read 0.973 once in a CI run, 1.000 in 12 runs after.  Every
# row: stdout and status as native, nothing on stderr, one profile.
# Skipped (77) where the kernel has no seccomp filters.
set -u
build=$(cd "$1" && pwd) || exit 1
prog=$build/tests/programs/sandbox
tmp=$(mktemp -d /tmp/witch-sandbox.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/table.sh"
here=$(cd "$(dirname "$0")" && pwd)
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done
watch=(WITCH_WATCHPOINTS=0)
if [ "${2-}" = --armed ]; then
	watch=()
	[ -z "${TEST_WATCHPOINTS-}" ] || watch=(WITCH_WATCHPOINTS="$TEST_WATCHPOINTS")
fi

"$prog" prctl 1 >/dev/null 2>&1 || { echo "SKIP sandbox: seccomp filters unavailable here (native run failed)"; exit 77; }

rows=(
	"prctl|phase_one=1.0,phase_two=0.0|0.05"
	"tsync|phase_one=1.0,phase_two=0.0|0.05"
	"listener|phase_one=1.0,phase_two=0.0|0.05"
	"strict|phase_one=1.0,phase_two=0.0|0.05"
	"crash|phase_one=1.0,phase_two=0.0|0.05"
	"fail|phase_one=0.5,phase_two=0.5|0.15"
)
row_env=("${watch[@]}")
row_profiles=1
for row in "${rows[@]}"; do
	IFS='|' read -r way shares tol <<<"$row"
	row_checks=(--sampled-shares "$shares" --tol "$tol" --min-samples 100)
	row_profiled "$prog" "$way"
	row_end "$way" "$row_bad" "$shares within $tol"
done
table_end "sandbox${2:+ $2}" ${#rows[@]}
