#!/bin/bash
# run_link_deps.sh: what the runtime makes every process load, and that the
# allocation-site walks use the runtime's own copy of libgcc's unwinder.
#
# usage: run_link_deps.sh BUILD_DIR
#
# Each library a preloaded runtime brings is an open, four or five maps and
# a few page faults in every process, profiled or not (~0.15 ms each here,
# bench/results/startup.md).  heap_sites.c walks with libgcc's unwinder,
# linked in from libgcc_eh.a: so
#   1. a C program run under the runtime maps no libgcc_s.so (cat of its
#      own /proc/self/maps: cat is C, and links no libgcc_s);
#   2. libwitch.so imports no _Unwind_* function: one would bind to
#      whichever library exports it first, libunwind.so's among them (its
#      _Unwind_Backtrace runs on unw_step, slower, and shares state with
#      the handlers' walks);
#   3. libwitch.so's needed libraries are the C library and the loader, no
#      more: Zydis and libunwind are loaded by a tick (deps.h; lazy_deps
#      checks where), and imported from neither (their forwarders are
#      libwitch.so's own).
# The build before libgcc_eh was linked in fails 1 and 3; the one before
# deps.h fails 3.
set -u
build=$1
lib=$build/libwitch.so
fails=0
fail() { echo "FAIL link_deps: $*"; fails=$((fails + 1)); }

[ -f "$lib" ] || { echo "FAIL link_deps: $lib not found"; exit 1; }
command -v readelf >/dev/null || { echo "SKIP link_deps: no readelf"; exit 77; }

maps=$(LD_PRELOAD=$lib WITCH_OUTPUT=/dev/null cat /proc/self/maps 2>&1)
echo "$maps" | grep -q "libwitch.so" || fail "libwitch.so not mapped in a preloaded cat (the preload did not load)"
if echo "$maps" | grep -q "libgcc_s"; then
	fail "a preloaded cat maps libgcc_s.so: $(echo "$maps" | grep -m1 libgcc_s)"
fi

undef=$(readelf --dyn-syms -W "$lib" | awk '$7 == "UND" && $8 ~ /^_Unwind_/ {print $8}')
[ -z "$undef" ] || fail "libwitch.so imports $(echo $undef)"

needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
want="ld-linux-x86-64.so.2 libc.so.6 "
[ "$needed" = "$want" ] || fail "libwitch.so needs: $needed (want: $want)"
undef=$(readelf --dyn-syms -W "$lib" | awk '$7 == "UND" && $8 ~ /^(Zydis|_UL|_Ux86)/ {print $8}')
[ -z "$undef" ] || fail "libwitch.so imports $(echo $undef)"

if [ $fails -gt 0 ]; then
	exit 1
fi
echo "PASS link_deps: no libgcc_s in a C program, no _Unwind_ import, needs: $needed"
