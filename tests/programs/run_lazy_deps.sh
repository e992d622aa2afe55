#!/bin/bash
# run_lazy_deps.sh BUILD_DIR: the decoder (Zydis) and the unwinder
# (libunwind, and the liblzma it needs) are loaded at a process's first
# tick that can, not at its start (deps.h), and never inside code that
# holds what loading needs (lazy_deps.c).
#
# Each row runs lazy_deps under the runtime (WITCH_WATCHPOINTS=0), most as a
# child of a profiled shell, which hands the machine's probes down as a
# process tree does; WITCH_RATE=1 is a first tick a CPU-second away,
# which a short run never reaches, 2000 ticks every 0.5 ms, 20 every 50.
#   short       a child that never ticks maps none of the three
#   ticks       one that ticks maps them, and samples
#   first       a tree's first process, which measures the machine
#               (costmodel.h) without the decoder: not loaded either
#   own_malloc  a program whose malloc is its own allocator's
#               (own_alloc_lib, as redis links jemalloc): loaded at start,
#               since that allocator may hold its lock in program code
#   handler     nearly all of the CPU time in the program's SIGPROF
#               handler: loaded, but never while the handler ran; its
#               ticks there wait
#   iterate     all of it in a dl_iterate_phdr callback (the loader's lock
#               held): never loaded there; the ticks there wait
#   nofds       every descriptor number taken for a while (from its start:
#               a bash under `ulimit -S -n 16` opens 3-14 and execs it, it
#               takes 15; the runtime's own go above the limit): the loads then
#               fail (EMFILE), the ticks wait, and once the numbers are
#               back a tick loads them (a first version gave up for the
#               process, with a line at exit)
# Every row that loads them loads the files where the build found them
# (LAZY_DEPS_PATHS, from CMake: the loader's names are those paths), not
# by soname, which maps ld.so.cache for each (~0.65 ms of a first tick);
# "-" for a file the build did not find, which any name may load.
# Before deps.h every row's process mapped all three at its start
# (short fails); without the handler's or the callback's check, the load
# happens inside them (handler and iterate read loaded_inside=1).  Which
# code a tick may load in is unit.deps's (ld.so's code among the refused:
# a load inside _dl_fini's count of the modules failed its assertion).
set -u
. "$(dirname "$0")/table.sh"
table_begin "$1" lazy-deps
prog=$build/tests/programs/lazy_deps
own=$build/tests/programs/lazy_deps_own
# row LABEL WANT_MAPS WANT_WAIT RATE DIRECT CMD...: WANT_MAPS the three
# flags wanted ("0 0 0" or "1 1 1", "-" for either: a tick after the
# callback may load them); WANT_WAIT "+" for at least one tick
# that waited, "" for no check; DIRECT 1 to run CMD as the tree's first
# process, else as a profiled sh's child.
row() {
	local label=$1 maps=$2 wait=$3 rate=$4 direct=$5
	shift 5
	rm -rf "$tmp/p" && mkdir "$tmp/p" || exit 1
	"$@" >"$tmp/native.out" 2>&1
	local native_rc=$?
	local run=(sh -c 'exec "$@"' sh "$@")
	[ "$direct" = 1 ] && run=("$@")
	env LD_PRELOAD="$build/libwitch.so" WITCH_WATCHPOINTS=0 WITCH_RATE="$rate" \
		WITCH_OUTPUT="$tmp/p/r-%e-%p.prof" "${run[@]}" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	local bad="" got
	got=$(sed -n 's/^zydis=\([01]\) unwind=\([01]\) lzma=\([01]\) .*/\1 \2 \3/p' "$tmp/out")
	[ "$rc" = "$native_rc" ] || bad="$bad status $rc (native $native_rc)"
	[ -s "$tmp/err" ] && bad="$bad stderr: $(head -c 300 "$tmp/err")"
	[ "$maps" = - ] || [ "$got" = "$maps" ] || bad="$bad mapped zydis/unwind/lzma: '$got', want '$maps'"
	if [ "$got" = "1 1 1" ] && [ -n "${LAZY_DEPS_PATHS:-}" ]; then
		local names want_names=""
		names=$(sed -n 's/^names //p' "$tmp/out")
		local i=1
		for want in $LAZY_DEPS_PATHS; do
			local have
			have=$(echo "$names" | cut -d' ' -f$i)
			[ "$want" = - ] || [ "$have" = "$want" ] || want_names="$want_names $have (want $want)"
			i=$((i + 1))
		done
		[ -z "$want_names" ] || bad="$bad loaded by another name:$want_names"
	fi
	grep -q ' loaded_inside=0$' "$tmp/out" || bad="$bad $(tr '\n' ' ' <"$tmp/out")"
	local profile=("$tmp"/p/r-lazy_deps*.prof)
	local waited samples
	if [ ! -f "${profile[0]}" ]; then
		bad="$bad no profile of lazy_deps: $(ls "$tmp/p" | tr '\n' ' ')"
	else
		waited=$(sed -n 's/^stat ticks_deps_wait //p' "${profile[0]}")
		samples=$(sed -n 's/^stat samples //p' "${profile[0]}")
		# (a first tick in the program's few instructions before its phase may
		# have loaded them: then no tick had to wait)
		[ "$wait" = "+" ] && [ "${waited:-0}" -lt 1 ] && ! grep -q ' loaded_before=1 ' "$tmp/out" &&
			bad="$bad no tick waited (ticks_deps_wait ${waited:-none})"
		[ "$maps" = "1 1 1" ] && [ "$rate" != 1 ] && [ "${samples:-0}" -lt 1 ] &&
			bad="$bad no samples"
	fi
	# (where the ticks went, for a row that fails: each skip's stat)
	local where=""
	[ -n "$bad" ] && [ -f "${profile[0]}" ] &&
		where=", $(sed -n 's/^stat \(ticks[a-z_]*\|skip_[a-z_]*\|clock_[a-z_]*\|cpu_ns\|handler_faults\) \([0-9]*\)$/\1 \2/p' "${profile[0]}" |
			grep -v ' 0$' | tr '\n' ',')"
	row_end "$label" "$bad" "mapped $got, $(sed 's/^zydis.* //' "$tmp/out"), ticks_deps_wait ${waited:-?}, samples ${samples:-?}$where"
}
row short "0 0 0" "" 1 0 "$prog" main 0
row ticks "1 1 1" "" 2000 0 "$prog" main 300
row first "0 0 0" "" 1 1 "$prog" main 0
row own_malloc "1 1 1" "" 1 0 "$own" main 0
row handler "1 1 1" "+" 2000 0 "$prog" handler 400
row iterate - "+" 2000 0 "$prog" iterate 300
take_all='ulimit -S -n 16; for fd in $(seq 3 14); do eval "exec $fd</dev/null"; done; exec "$0" nofds 400'
row nofds "1 1 1" "+" 20 1 bash -c "$take_all" "$prog"
table_end lazy_deps 7
