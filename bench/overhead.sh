#!/bin/bash
# overhead.sh: runtime and peak-RSS overhead of libwitch on the known-answer
# programs (larger repeat counts) and bench/hashsort.c.
#
# usage: bench/overhead.sh BUILD_DIR [RUNS=5] [CLIENT...]      (default client: dead)
#
# Interleaves native and profiled runs (native, profiled, native, ...), RUNS
# of each, and prints a markdown table of median wall time, peak RSS and the
# profiled/native ratios.  WITCH_RATE is not set (the runtime's default rate
# is measured) unless exported by the caller.  Needs python3; the work is in
# bench/overhead.py.  Build the programs first:
#   cmake --build BUILD_DIR --target witch dead_two_loops fig42 no_dead dead_threads stack_case
set -u
if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [RUNS=5] [CLIENT...]" >&2
	exit 2
fi
exec python3 "$(dirname "${BASH_SOURCE[0]}")/overhead.py" "$@"
