#!/bin/bash
# run_fd_limit.sh: a threaded program that uses every descriptor number
# its soft RLIMIT_NOFILE gives it gets as many profiled as natively.
#
# usage: run_fd_limit.sh BUILD_DIR
#
# A profiled thread holds one to six of the runtime's descriptors (its
# clock, its fault log, four breakpoints where they trap).  Before
# fdguard.h put them above the program's soft limit, they came out of the
# program's numbers: under a soft limit of 256, fd_limit.c with 16
# threads opened ~230 where it opens 253 natively, and a server of 150
# threads under the usual 1,024 would run out.  Each row: how bash sets
# the limit (-S: the soft one alone, the hard one leaving room above it),
# fd_limit's arguments, and what the profile must show.  Every row but
# noroom: stdout (the limit as read, each count and highest number) and
# status as native, nothing on stderr, every thread profiled, and at most
# one of the runtime's descriptors in the program's range
# (fd_in_program_range): a thread waits up to 20 ms for another's lift
# (fdguard.c), and under ctest -j2 on two cores a lift's thread lost the
# CPU for longer: one descriptor in `fork`, once (2026-12-07; in stop 74,
# before the wait grew to 20 ms, 3 in `full`).  Before fdguard.h every
# thread put one to six there (~23 for 16 threads), so a row still fails
# without it.
#   threads  16 threads, then the count
#   fork     the same in a child forked after the count
#   set      the program lowers its own soft limit first
#   full     8 more threads start with every number of the program's in
#            use: their descriptors are opened above its limit too, and
#            the profile is written at an exit with none free
#   noroom   ulimit -n sets both limits: no room above, so the runtime's
#            go in the program's range (counted), the program runs on with
#            its status, and loses no more numbers than they take
set -u
. "$(dirname "$0")/table.sh"
table_begin "$1" fd-limit
prog=$build/tests/programs/fd_limit
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt 1024 ]; then
	echo "SKIP: the hard RLIMIT_NOFILE ($hard) leaves no room above a soft limit of 256"
	exit 77
fi

rows=(
	"threads|ulimit -S -n 256|16|--min-stat threads=17 --max-stat fd_in_program_range=1"
	"fork|ulimit -S -n 256|8 fork|--min-stat threads=9 --max-stat fd_in_program_range=1"
	"set|ulimit -S -n 256|8 set 128|--min-stat threads=9 --max-stat fd_in_program_range=1"
	"full|ulimit -S -n 256|8 full|--min-stat threads=17 --max-stat threads_unprofiled=0 --max-stat fd_in_program_range=1"
	"noroom|ulimit -n 256|8|--min-stat fd_in_program_range=1"
)
row_env=(WITCH_WATCHPOINTS=0)
for row in "${rows[@]}"; do
	IFS='|' read -r name limit args checks <<<"$row"
	read -ra row_checks <<<"--min-samples 50 $checks"
	row_own_stdout=0
	[ "$name" = noroom ] && row_own_stdout=1
	row_profiled bash -c "$limit && exec \"\$0\" $args" "$prog"
	if [ "$name" = noroom ]; then
		# The runtime's descriptors are the program's loss here: at most
		# six a thread (nine threads), and the status as native.
		native=$(sed -n 's/^main opened \([0-9]*\),.*/\1/p' "$tmp/native.out")
		got=$(sed -n 's/^main opened \([0-9]*\),.*/\1/p' "$tmp/out")
		[ "$(tail -n 1 "$tmp/out")" = "$(tail -n 1 "$tmp/native.out")" ] ||
			row_bad="$row_bad status: $(tail -n 1 "$tmp/out")"
		[ -n "$got" ] && [ "$got" -ge $((native - 54)) ] ||
			row_bad="$row_bad opened ${got:-none} (native $native)"
	fi
	row_end "$name" "$row_bad" "$args: as native, $checks"
done
table_end fd_limit ${#rows[@]}
