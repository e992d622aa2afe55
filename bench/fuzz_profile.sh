#!/bin/sh
# Fuzz the profile reader (tools/witch/profile_read.c) with libFuzzer.
#
#   bench/fuzz_profile.sh BUILD_DIR [SECONDS] [JOBS]
#
# BUILD_DIR is a cmake build of this tree on a machine with clang and its
# fuzzer runtime (Debian: clang, libclang-rt-14-dev), where the build made
# BUILD_DIR/tests/tools/fuzz_profile_read. Runs it for SECONDS (default
# 600) on JOBS processes (default 1), starting from the seed profiles in
# tests/tools/fuzz_seeds; the corpus it grows is kept in
# BUILD_DIR/fuzz-corpus between runs. A crash, leak, sanitizer report or
# timeout ends the run with status 1 and leaves the input as
# BUILD_DIR/fuzz-artifacts/crash-* (or leak-*, timeout-*); reproduce with
#   BUILD_DIR/tests/tools/fuzz_profile_read FILE
# The ctest tools.fuzz runs this for 20 seconds.
set -eu
BUILD=${1:?usage: fuzz_profile.sh BUILD_DIR [SECONDS] [JOBS]}
SECS=${2:-600}
JOBS=${3:-1}
HERE=$(cd "$(dirname "$0")/.." && pwd)
FUZZ=$BUILD/tests/tools/fuzz_profile_read
if [ ! -x "$FUZZ" ]; then
	echo "fuzz_profile.sh: $FUZZ not built (needs clang with -fsanitize=fuzzer: apt-get install clang libclang-rt-14-dev, then re-run cmake)" >&2
	exit 2
fi
mkdir -p "$BUILD/fuzz-corpus" "$BUILD/fuzz-artifacts"
# -max_len: profiles are line-oriented text; 64 KiB leaves room for many
# records without making each run slow. -timeout: any input taking 10 s
# is a hang in a reader that should be linear.
set -- -max_total_time="$SECS" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix="$BUILD/fuzz-artifacts/" -print_final_stats=1 \
	"$BUILD/fuzz-corpus" "$HERE/tests/tools/fuzz_seeds"
if [ "$JOBS" -gt 1 ]; then
	exec "$FUZZ" -fork="$JOBS" "$@"
fi
exec "$FUZZ" "$@"
