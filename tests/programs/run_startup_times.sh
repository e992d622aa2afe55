#!/bin/bash
# run_startup_times.sh: WITCH_STARTUP_TIMES=1 has the exit say what each
# step of the runtime's start and exit took (startstep.h), in one line.
#
# usage: run_startup_times.sh BUILD_DIR EXIT7
#
# Each row: the setting, and the stderr it must give: "none", or "steps":
# exactly one line "witch: startup steps (us): NAME=US ..." naming every
# step the constructor and the exit mark, in their order (the names are
# witch.c's startstep_mark calls), each a whole number.  Every row: stdout
# and status as native, one profile.  No traps needed (WITCH_WATCHPOINTS=0).
set -u
build=$(cd "$1" && pwd) || exit 1
exit7=$2
tmp=$(mktemp -d /tmp/witch-startup-times.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/table.sh"
unset LD_PRELOAD
for v in $(compgen -e); do case $v in WITCH_*) unset "$v" ;; esac; done

steps="filter_check+config+probes output sampler_choice watchpoint_probe drcost_price
unwind+phdrs+costmodel+xsave memlat+cost+probes_down iocount+datasym
signal+profile+thread_module descendants+objects+bulk handlers+atfork+heap
thread_begin fatal+flush (program) exit_stop profile_write"
rows=("-|none" "0|none" "1|steps")
"$exit7" >"$tmp/native.out"
echo "status $?" >>"$tmp/native.out"
for row in "${rows[@]}"; do
	IFS='|' read -r setting want <<<"$row"
	rm -rf "$tmp/p" && mkdir "$tmp/p"
	set -- LD_PRELOAD="$build/libwitch.so" WITCH_WATCHPOINTS=0 WITCH_OUTPUT="$tmp/p/t-%p.prof"
	[ "$setting" = - ] || set -- "$@" WITCH_STARTUP_TIMES="$setting"
	env "$@" "$exit7" >"$tmp/out" 2>"$tmp/err"
	echo "status $?" >>"$tmp/out"
	bad=""
	cmp -s "$tmp/native.out" "$tmp/out" || bad="$bad stdout/status: $(tr '\n' ' ' <"$tmp/out")"
	[ "$(ls "$tmp/p" | wc -l)" = 1 ] || bad="$bad profiles: $(ls "$tmp/p" | tr '\n' ' ')"
	if [ "$want" = none ]; then
		[ -s "$tmp/err" ] && bad="$bad stderr: $(head -c 200 "$tmp/err")"
	else
		prefix="witch: startup steps (us):"
		line=$(cat "$tmp/err")
		if [ "$(wc -l <"$tmp/err")" != 1 ] || [ "${line#"$prefix"}" = "$line" ]; then
			bad="$bad stderr: '$(head -c 300 "$tmp/err")'"
		else
			got="" nums=1
			for tok in ${line#"$prefix"}; do
				got="$got ${tok%=*}"
				[[ ${tok##*=} =~ ^[0-9]+$ ]] || nums=0
			done
			[ "$(echo $got)" = "$(echo $steps)" ] || bad="$bad steps:$got"
			[ $nums = 1 ] || bad="$bad not whole numbers: $line"
		fi
	fi
	row_end "WITCH_STARTUP_TIMES=$setting" "$bad" "stderr $want"
done
table_end startup_times ${#rows[@]}
