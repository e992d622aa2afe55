#!/bin/bash
# run_mlock_all.sh: a program that locks its memory (mlockall) runs under
# the profiler as it runs without it, at the same peak within a margin.
#
# usage: run_mlock_all.sh BUILD_DIR
#
# Before lockguard.h the call locked, and so filled, every page of the
# runtime's reservations: mlock_all.c peaked at ~220 MB where it peaks at
# ~40 MB natively, and under an RLIMIT_MEMLOCK sized for the program its
# mlockall failed.  Each row: how it locks, who runs it, and the most its
# peak (VmHWM) may exceed native's: the runtime's own pages in use and
# its libraries' text, locked with the program's (a few MiB).
#   current, future, both   mlockall(MCL_CURRENT), (MCL_FUTURE), both
#   unlock   both, then munlockall: nothing stays locked (VmLck 0, as
#            native)
#   limit    current, as nobody (no CAP_IPC_LOCK: RLIMIT_MEMLOCK counts,
#            8 MiB by default): the call succeeds as natively, where the
#            old runtime's reservations made it fail (ENOMEM); needs root
#            to become nobody, and a limit the native run fits in
# Every row: stdout (the call's result, the sums) and status as native,
# nothing on stderr, one profile.
set -u
. "$(dirname "$0")/table.sh"
table_begin "$1" mlock-all
prog=$build/tests/programs/mlock_all
margin_kib=$((8 * 1024))

rows=(
	"current|current|"
	"future|future|"
	"both|both|"
	"unlock|unlock|"
	"limit|current|nobody"
)
chmod 755 "$tmp"
for row in "${rows[@]}"; do
	IFS='|' read -r name mode user <<<"$row"
	run=("$prog" "$mode")
	if [ -n "$user" ]; then
		if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
			echo "skip [$name]: needs root and setpriv"
			continue
		fi
		run=(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all "${run[@]}")
	fi
	rm -rf "$tmp/p" && mkdir "$tmp/p" && chmod 777 "$tmp/p"
	MLOCK_REPORT="$tmp/p/native.hwm" "${run[@]}" >"$tmp/native.out" 2>&1
	echo "status $?" >>"$tmp/native.out"
	if [ -n "$user" ] && ! grep -q '^mlockall: ok' "$tmp/native.out"; then
		echo "skip [$name]: natively too: $(head -n 1 "$tmp/native.out")"
		continue
	fi
	MLOCK_REPORT="$tmp/p/prof.hwm" LD_PRELOAD="$build/libwitch.so" WITCH_WATCHPOINTS=0 \
		WITCH_RATE=2000 WITCH_OUTPUT="$tmp/p/m-%p.prof" "${run[@]}" >"$tmp/out" 2>"$tmp/err"
	echo "status $?" >>"$tmp/out"
	bad=""
	cmp -s "$tmp/native.out" "$tmp/out" ||
		bad="$bad stdout/status: $(tr '\n' ' ' <"$tmp/out")(native: $(tr '\n' ' ' <"$tmp/native.out"))"
	[ -s "$tmp/err" ] && bad="$bad stderr: $(head -c 300 "$tmp/err")"
	read -r _ nhwm _ nlck <"$tmp/p/native.hwm" || bad="$bad no native report"
	read -r _ phwm _ plck <"$tmp/p/prof.hwm" || bad="$bad no profiled report"
	if [ -n "${phwm-}" ] && [ -n "${nhwm-}" ]; then
		[ "$phwm" -le $((nhwm + margin_kib)) ] ||
			bad="$bad peak ${phwm} KiB, native ${nhwm} KiB"
		[ "$name" != unlock ] || [ "$plck" = 0 ] || bad="$bad ${plck} KiB locked after munlockall"
	fi
	found=$(ls "$tmp/p" | grep -c '\.prof$')
	[ "$found" = 1 ] || bad="$bad profiles: $found"
	row_end "$name" "$bad" "as native; peak ${phwm-?} KiB (native ${nhwm-?}), locked ${plck-?} (native ${nlck-?})"
done
table_end mlock_all ${#rows[@]}
