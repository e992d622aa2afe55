#!/bin/bash
# fork_counts.sh BUILD_DIR PROGRAM: a fork child's profile counts the
# child's CPU time only, whether or not the parent's profile had folded
# anything when it forked (profile_postfork_child keeps the tables of a
# parent that folded nothing, and starts them again otherwise).
#
# The parent spends 400 ms, the child 100 ms; WITCH_RATE=1000 and nothing
# armed (WITCH_WATCHPOINTS=0: no debug register needed).  Each case's
# child profile must have clock_ns (the CPU time its ticks stand for) of
# 30-250 ms (100 ms and its ~100 ticks' spread; the parent's 250-700), and
# its samples' bytes (sampled_total, stores at a steady rate) 0.08-0.6 of
# the parent's: 0.25 expected, 1.25 with the parent's folded contexts
# carried into the child.
#   pristine: no sleep, so nothing is folded before the fork;
#   folded:   1.5 s asleep under WITCH_FLUSH=1, so the periodic writer
#             folds the parent's thread into the process's profile first.
set -u
BUILD=$1 PROGRAM=$2
tmp=$(mktemp -d /tmp/witch-fork-counts.XXXXXX)
fails=0
for case in "pristine 0" "folded 1500"; do
	set -- $case
	name=$1 sleep_ms=$2
	mkdir "$tmp/$name"
	env -u WITCH_BUDGET LD_PRELOAD="$BUILD/libwitch.so" WITCH_SAMPLER=soft WITCH_RATE=1000 \
		WITCH_WATCHPOINTS=0 WITCH_FLUSH=1 WITCH_SEED=7 \
		WITCH_OUTPUT="$tmp/$name/p-%p.prof" "$PROGRAM" 400 100 "$sleep_ms" 2>"$tmp/$name.err"
	rc=$?
	if [ "$rc" != 0 ] || [ -s "$tmp/$name.err" ]; then
		echo "FAIL $name: exit $rc, stderr: $(head -3 "$tmp/$name.err")"
		fails=$((fails + 1))
		continue
	fi
	for f in "$tmp/$name"/p-*.prof; do
		"$BUILD/witch" report --json "$f" >"$f.json" || { echo "FAIL $name: witch report $f"; fails=$((fails + 1)); }
	done
	out=$(python3 - "$tmp/$name" <<'PY'
import json, glob, sys
rows = []
for f in sorted(glob.glob(sys.argv[1] + "/p-*.prof.json")):
    d = json.load(open(f))
    rows.append((d["stats"]["clock_ns"] / 1e6, d["sampled_total"]))
# the child's profile is the one with less CPU time (checked below anyway)
rows.sort()
ratio = rows[0][1] / rows[1][1] if len(rows) == 2 and rows[1][1] > 0 else -1
print(" ".join("%.0f" % c for c, _ in rows), len(rows), "%.0f" % (1000 * ratio))
PY
)
	set -- $out
	if [ "${3:-0}" != 2 ]; then
		echo "FAIL $name: want 2 profiles, read: $out"
		fails=$((fails + 1))
		continue
	fi
	child=$1 parent=$2 permille=$4
	if [ "$child" -lt 30 ] || [ "$child" -gt 250 ] || [ "$parent" -lt 250 ] || [ "$parent" -gt 700 ] ||
		[ "$permille" -lt 80 ] || [ "$permille" -gt 600 ]; then
		echo "FAIL $name: child clock_ns $child ms (want 30-250), parent $parent ms (want 250-700), child's sampled bytes $permille/1000 of the parent's (want 80-600)"
		fails=$((fails + 1))
	else
		echo "ok $name: child $child ms, parent $parent ms of ticks; child's sampled bytes $permille/1000 of the parent's"
	fi
done
[ "$fails" = 0 ] || { echo "files kept in $tmp"; exit 1; }
rm -rf "$tmp"
