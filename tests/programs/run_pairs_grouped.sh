#!/bin/bash
# run_pairs_grouped.sh: a profile's pairs come one record per <watch, trap>,
# in order, each with its parts by object summing to it.
#
# usage: run_pairs_grouped.sh BUILD_DIR
#
# The profile's table is keyed by <watch, trap, object> (pairtab.h); the
# writer sorts its entries and writes one `pair` per <watch, trap>, the sum
# of its entries, then their `pair_object` parts (profile.c, a heap sort
# since stop 76: qsort took a buffer from malloc, and a fatal signal's write
# may meet a broken heap).  Readers sum repeated pairs, so a sort that left
# a pair's entries apart would change no report: this test reads the file.
# bench/programs' hashtab at scale 1 (~1 s) at 2,000 ticks a second leaves
# 80-90 pairs with ~100 parts where the run-ahead decides (no traps here);
# fewer than 10 pairs fails (no verdicts is a failure of its own).
# Checked: status 0 and nothing on stderr; at least 10 pairs; no
# <watch, trap> twice; pairs in ascending <watch, trap>; every part's
# pair present; each pair's waste and use the sum of its parts (relative
# 1e-9, the %.17g records' rounding).
set -u
build=$1
lib=$build/libwitch.so
tmp=$(mktemp -d /tmp/witch-pairs.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# Where the watchpoints trap needs_traps.sh passes no TEST_WATCHPOINTS, and
# an empty WITCH_WATCHPOINTS is a configuration error: set it only if given.
[ -z "${TEST_WATCHPOINTS-}" ] || export WITCH_WATCHPOINTS="$TEST_WATCHPOINTS"
env LD_PRELOAD="$lib" WITCH_CLIENT=dead \
	WITCH_RATE=2000 WITCH_SEED=7 WITCH_OUTPUT="$tmp/p.prof" \
	"$build/bench/programs/hashtab" 1 >"$tmp/out" 2>"$tmp/err"
status=$?
if [ "$status" != 0 ] || [ -s "$tmp/err" ] || [ ! -s "$tmp/p.prof" ]; then
	echo "FAIL pairs_grouped: status $status, stderr: $(head -n 2 "$tmp/err"), profile: $(ls "$tmp")"
	exit 1
fi
python3 - "$tmp/p.prof" <<'PY'
import sys
pairs, order, parts = {}, [], {}
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "pair":
        key = (int(f[1]), int(f[2]))
        if key in pairs:
            print(f"FAIL pairs_grouped: pair {key} written twice")
            sys.exit(1)
        pairs[key] = (float(f[3]), float(f[4]))
        order.append(key)
    elif f and f[0] == "pair_object":
        key = (int(f[1]), int(f[2]))
        w, u = parts.get(key, (0.0, 0.0))
        parts[key] = (w + float(f[4]), u + float(f[5]))
bad = []
if len(pairs) < 10:
    bad.append(f"{len(pairs)} pairs, fewer than 10")
if order != sorted(order):
    bad.append("pairs not in ascending <watch, trap>")
for key, (w, u) in parts.items():
    if key not in pairs:
        bad.append(f"pair_object of {key} without its pair")
        continue
    pw, pu = pairs[key]
    if abs(w - pw) > 1e-9 * max(pw, 1) or abs(u - pu) > 1e-9 * max(pu, 1):
        bad.append(f"pair {key}: waste {pw} use {pu}, its parts {w} {u}")
if bad:
    print("FAIL pairs_grouped: " + "; ".join(bad[:5]))
    sys.exit(1)
n_parts = sum(1 for line in open(sys.argv[1]) if line.startswith("pair_object "))
print(f"PASS pairs_grouped: {len(pairs)} pairs, {n_parts} parts")
PY
