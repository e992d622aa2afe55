#!/bin/bash
# run_stderr_reuse.sh BUILD_DIR: the runtime's witch: lines harm no
# program whose standard error is no longer the user's (stderr_reuse.c).
# Under WITCH_MEMORY_MB=16 the runtime has a line to say (the memory cap).
#   file  a daemon that closed its standard streams and opened files of
#         its own at 0, 1 and 2: before log.c noted standard error at the
#         start, the line went into the program's file at 2.  The files'
#         sizes, reported on 9, as native
#   pipe  standard error a pipe whose reader has gone: the line's SIGPIPE
#         ended the program (141 for 0).  Status as native
# Both: the profile written.
set -u
. "$(dirname "$0")/table.sh"
table_begin "$1" stderr-reuse
prog=$build/tests/programs/stderr_reuse
mkdir -p "$tmp/n" "$tmp/w" "$tmp/p"
"$prog" "$tmp/n" 9>"$tmp/native.out" 2>&1
echo "status $?" >>"$tmp/native.out"
LD_PRELOAD="$build/libwitch.so" WITCH_WATCHPOINTS=0 WITCH_MEMORY_MB=16 \
	WITCH_OUTPUT="$tmp/p/s-%p.prof" "$prog" "$tmp/w" 9>"$tmp/out" 2>"$tmp/err"
echo "status $?" >>"$tmp/out"
bad=""
cmp -s "$tmp/native.out" "$tmp/out" ||
	bad="$bad sizes/status: $(tr '\n' ' ' <"$tmp/out")(native: $(tr '\n' ' ' <"$tmp/native.out"))"
grep -q witch "$tmp/w/data" && bad="$bad the program's file holds: $(grep witch "$tmp/w/data" | head -c 200)"
[ "$(ls "$tmp/p" | grep -c '\.prof$')" = 1 ] || bad="$bad profiles: $(ls "$tmp/p")"
row_end file "$bad" "the program's files as native: $(tr '\n' ' ' <"$tmp/out")"

# Its standard error a pipe whose reader is gone: status as native.
rm -rf "$tmp/p" && mkdir "$tmp/p"
"$prog" pipe 9>"$tmp/native.out" 2>&1 | true
echo "status ${PIPESTATUS[0]}" >>"$tmp/native.out"
LD_PRELOAD="$build/libwitch.so" WITCH_WATCHPOINTS=0 WITCH_MEMORY_MB=16 \
	WITCH_OUTPUT="$tmp/p/s-%p.prof" "$prog" pipe 9>"$tmp/out" 2>&1 | true
echo "status ${PIPESTATUS[0]}" >>"$tmp/out"
bad=""
cmp -s "$tmp/native.out" "$tmp/out" ||
	bad="$bad stdout/status: $(tr '\n' ' ' <"$tmp/out")(native: $(tr '\n' ' ' <"$tmp/native.out"))"
[ "$(ls "$tmp/p" | grep -c '\.prof$')" = 1 ] || bad="$bad profiles: $(ls "$tmp/p")"
row_end pipe "$bad" "as native: $(tr '\n' ' ' <"$tmp/out")"
table_end stderr_reuse 2
