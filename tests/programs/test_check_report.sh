#!/bin/bash
# test_check_report.sh: self-test of check_report.py on hand-written reports.
# Each case runs check_report.py and expects an exit status and, for failing
# cases, a FAIL line naming the check.  Prints PASS/FAIL per case and a final
# line; exit 0 when every case behaves as expected.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
CHECK="$HERE/check_report.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/witch-ckself.XXXXXX")
trap '[ -n "${KEEP_TMP-}" ] || rm -rf "$tmp"' EXIT

frame() { # function module [file line]
	printf '{"function":"%s","file":"%s","line":%s,"module":"%s","address":"0x401000"}' \
		"$1" "${3:-/src/prog.c}" "${4:-10}" "$2"
}
P=/build/tests/programs/prog
W=/build/libwitch.so
MAIN=$(frame main $P)
START=$(frame __libc_start_call_main /lib/x86_64-linux-gnu/libc.so.6)

# A fig42-like report: fraction 0.5, shares 0.5/0.333/0.167, plus use pairs.
# waste 600 = 300 + 200 + 100; use 600.
cat >"$tmp/good.json" <<EOF
{"client":"dead","sampler":"soft","samples":1200,"watchpoints_armed":400,"traps":380,
 "waste":600,"use":600,"fraction":0.5,"stats":{"traps_spurious":0,"steps":2000,"samples":4000},
 "pairs":[
  {"waste":300,"use":0,"share":0.5,"traps":20,
   "watch":[$(frame dead_a $P),$MAIN,$START],"trap":[$(frame kill_a $P),$MAIN,$START]},
  {"waste":200,"use":0,"share":0.3333,"traps":30,
   "watch":[$(frame dead_b.isra.0 $P),$MAIN],"trap":[$(frame kill_b $P),$MAIN]},
  {"waste":60,"use":0,"share":0.1,"traps":200,
   "watch":[$(frame dead_x $P),$MAIN],"trap":[$(frame kill_x $P),$MAIN]},
  {"waste":40,"use":0,"share":0.0667,"traps":100,
   "watch":[$(frame memset /lib/x86_64-linux-gnu/libc.so.6),$(frame dead_x $P),$MAIN],
   "trap":[$(frame kill_x $P),$MAIN]},
  {"waste":0,"use":600,"share":0,"traps":30,
   "watch":[$(frame kill_a $P),$MAIN],"trap":[$(frame dead_a $P),$MAIN]}
 ]}
EOF

# A stack_case-like report with the 4.5 failure: a deep slot trapped in
# shallow and in the runtime's handler.  Also fraction inconsistent with
# waste/use, and pairs out of order.
cat >"$tmp/bad.json" <<EOF
{"client":"dead","sampler":"soft","samples":10,"watchpoints_armed":5,"traps":3,
 "waste":100,"use":300,"fraction":0.4,
 "pairs":[
  {"waste":10,"use":0,"share":0.1,"traps":1,
   "watch":[$(frame deep $P),$(frame driver $P),$MAIN],"trap":[$(frame shallow $P),$(frame driver $P),$MAIN]},
  {"waste":80,"use":0,"share":0.8,"traps":1,
   "watch":[$(frame deep $P),$(frame driver $P),$MAIN],"trap":[$(frame witch_on_trap $W),$(frame __restore_rt /lib/x86_64-linux-gnu/libc.so.6),$(frame shallow $P)]},
  {"waste":10,"use":300,"share":0.1,"traps":1,
   "watch":[$(frame shallow $P),$(frame driver $P)],"trap":[$(frame shallow $P),$(frame driver $P)]}
 ]}
EOF

# A silent_fp-like report: all waste, half of it only approximately silent
# (nudge's), in two pairs; and a broken one whose waste_approx exceeds waste
# at the top level and is negative in a pair.
cat >"$tmp/silent.json" <<EOF
{"client":"silent","sampler":"soft","samples":1000,"watchpoints_armed":400,"traps":300,
 "waste":1000,"use":0,"fraction":1.0,"waste_approx":480,"stats":{"traps_spurious":0},
 "pairs":[
  {"waste":520,"use":0,"share":0.52,"traps":150,
   "watch":[$(frame exact $P),$MAIN],"trap":[$(frame exact $P),$MAIN]},
  {"waste":480,"use":0,"share":0.48,"traps":150,"waste_approx":480,
   "watch":[$(frame nudge $P),$MAIN],"trap":[$(frame nudge $P),$MAIN]}
 ]}
EOF
cat >"$tmp/badapprox.json" <<EOF
{"client":"silent","sampler":"soft","samples":10,"watchpoints_armed":5,"traps":3,
 "waste":100,"use":100,"fraction":0.5,"waste_approx":150,
 "pairs":[
  {"waste":100,"use":0,"share":1.0,"traps":2,"waste_approx":-5,
   "watch":[$(frame nudge $P),$MAIN],"trap":[$(frame nudge $P),$MAIN]},
  {"waste":0,"use":100,"share":0,"traps":1,
   "watch":[$(frame exact $P),$MAIN],"trap":[$(frame exact $P),$MAIN]}
 ]}
EOF

# Objects (docs/objects.md): a heap block with a site, a static array and
# the stack, 0.5/0.3/0.2; a pair's objects sum to its waste.  objbad.json:
# objects out of order, a pair whose objects do not add up; objkind.json:
# an unknown kind.
cat >"$tmp/objects.json" <<EOF
{"client":"dead","sampler":"oracle","samples":0,"watchpoints_armed":0,"traps":10,
 "waste":1000,"use":1000,"fraction":0.5,
 "pairs":[
  {"waste":1000,"use":0,"share":1.0,"traps":10,
   "watch":[$(frame fill $P),$MAIN],"trap":[$(frame refill $P),$MAIN],
   "objects":[{"kind":"heap","name":"heap from alloc_frames (prog.c:12)","waste":500,"use":0},
              {"kind":"static","name":"table","waste":300,"use":0},
              {"kind":"stack","name":"stack of work","waste":200,"use":0}]},
  {"waste":0,"use":1000,"share":0,"traps":10,
   "watch":[$(frame refill $P),$MAIN],"trap":[$(frame sum $P),$MAIN]}
 ],
 "objects":[
  {"kind":"heap","name":"heap from alloc_frames (prog.c:12)","alloc":[$(frame alloc_frames $P)],
   "size":4096,"waste":500,"use":500,"share":0.5,"sampled":1000},
  {"kind":"static","name":"table","alloc":[],"size":64,"waste":300,"use":300,"share":0.3,"sampled":600},
  {"kind":"stack","name":"stack of work","alloc":[],"size":0,"waste":200,"use":200,"share":0.2,"sampled":400}
 ]}
EOF
cat >"$tmp/objbad.json" <<EOF
{"client":"dead","sampler":"oracle","samples":0,"watchpoints_armed":0,"traps":10,
 "waste":1000,"use":0,"fraction":1.0,
 "pairs":[
  {"waste":1000,"use":0,"share":1.0,"traps":10,
   "watch":[$(frame fill $P),$MAIN],"trap":[$(frame refill $P),$MAIN],
   "objects":[{"kind":"heap","name":"heap from a","waste":500,"use":0}]}
 ],
 "objects":[
  {"kind":"heap","name":"heap from a","waste":400,"use":0},
  {"kind":"static","name":"table","waste":600,"use":0}
 ]}
EOF
sed 's/"kind":"static"/"kind":"global"/' "$tmp/objbad.json" >"$tmp/objkind.json"

echo '{"client":"dead", "samples":' >"$tmp/broken.json"
cat >"$tmp/nopairs.json" <<EOF
{"client":"dead","sampler":"soft","samples":0,"watchpoints_armed":0,"traps":0,
 "waste":0,"use":0,"fraction":0,"pairs":[]}
EOF

npass=0 nfail=0
# case_ NAME EXPECTED_STATUS "substring|!absent-substring|..." -- check_report args
case_() {
	local name=$1 want=$2 needles=$3
	shift 4
	local out rc
	out=$(python3 "$CHECK" "$@" 2>&1)
	rc=$?
	local ok=1 why=""
	if [ "$rc" != "$want" ]; then ok=0; why="exit status $rc, expected $want"; fi
	local last
	last=$(printf '%s\n' "$out" | tail -n 1)
	case "$want" in
	0) [[ $last == "check_report: PASS"* ]] || { ok=0; why="$why; last line not a PASS summary"; } ;;
	1) [[ $last == "check_report: FAIL"* ]] || { ok=0; why="$why; last line not a FAIL summary"; } ;;
	esac
	if [ -n "$needles" ]; then
		local IFS='|'
		for n in $needles; do
			if [[ $n == '!'* ]]; then
				if grep -qF -- "${n#!}" <<<"$out"; then ok=0; why="$why; unexpected output: ${n#!}"; fi
			elif ! grep -qF -- "$n" <<<"$out"; then
				ok=0; why="$why; missing output: $n"
			fi
		done
	fi
	if [ $ok = 1 ]; then
		npass=$((npass + 1)); echo "ok   $name"
	else
		nfail=$((nfail + 1)); echo "FAIL $name: $why"; printf '%s\n' "$out" | sed 's/^/     | /'
	fi
}

G="$tmp/good.json" B="$tmp/bad.json"
case_ pass.all 0 "" -- "$G" --client dead --sampler soft --fraction 0.5 --tol 0.1 \
	--top-pair dead_a kill_a \
	--shares dead_a:kill_a=0.5,dead_b:kill_b=0.333,dead_x:kill_x=0.167 \
	--no-trap-in-module libwitch.so --no-watch-in-module libwitch.so \
	--trap-fns-for dead_a=kill_a --trap-fns-for dead_x=kill_x \
	--min-samples 1000 --min-traps 300
case_ pass.fraction-below 0 "" -- "$G" --fraction-below 0.6
case_ pass.stdin 0 "" -- - --fraction 0.5 <"$G"
case_ fail.fraction 1 "FAIL fraction: expected fraction 0.2000 +- 0.1000; found 0.5000" -- "$G" --fraction 0.2
case_ fail.fraction-below 1 "FAIL fraction-below: expected fraction < 0.0500; found 0.5000" -- "$G" --fraction-below 0.05
case_ fail.top-pair 1 "FAIL top-pair: expected top waste pair fill -> overwrite|found watch [dead_a@prog, main@prog, __libc_start_call_main@libc.so.6] -> trap [kill_a@prog" -- "$G" --top-pair fill overwrite
case_ fail.shares 1 "FAIL share dead_x:kill_x: expected share 0.5000|FAIL share dead_a:kill_a" -- "$G" \
	--shares dead_a:kill_a=0.167,dead_x:kill_x=0.5 --tol 0.05
# memset leaf + dead_x in frame 2 counts only with the default depth 3:
case_ fail.match-depth-1 1 "FAIL share dead_x:kill_x: expected share 0.1670 +- 0.0100; found 0.1000 from 1 matching pair" -- "$G" \
	--shares dead_x:kill_x=0.167 --tol 0.01 --match-depth 1
case_ pass.match-depth-3 0 "" -- "$G" --shares dead_x:kill_x=0.167 --tol 0.01
case_ fail.min 1 "FAIL min-samples: expected samples >= 5000; found 1200|FAIL min-traps: expected traps >= 1000; found 380" -- "$G" \
	--min-samples 5000 --min-traps 1000
case_ pass.max-stat 0 "" -- "$G" --max-stat traps_spurious=0 --max-stat steps=2000
case_ fail.max-stat 1 "FAIL max-stat steps: expected stats.steps <= 10; found 2000|FAIL max-stat nosuch: expected stats.nosuch <= 0; found no counter 'nosuch' in stats" -- "$G" \
	--max-stat steps=10 --max-stat nosuch=0
case_ pass.min-stat 0 "" -- "$G" --min-stat steps=2000 --min-stat traps_spurious=0
case_ fail.min-stat 1 "FAIL min-stat steps: expected stats.steps >= 2001; found 2000" -- "$G" \
	--min-stat steps=2001
case_ pass.stat-ratio 0 "" -- "$G" --min-stat steps/samples=0.5 --max-stat steps/samples=0.5
case_ fail.stat-ratio 1 "FAIL min-stat steps/samples: expected stats.steps/samples >= 0.6; found 0.5 (2000 / 4000)" -- "$G" \
	--min-stat steps/samples=0.6
case_ fail.stat-ratio-zero 1 "FAIL max-stat steps/traps_spurious: expected stats.steps/traps_spurious <= 1; found traps_spurious = 0" -- "$G" \
	--max-stat steps/traps_spurious=1
case_ fail.max-stat-no-stats 1 "found no \"stats\" object in the report" -- "$B" --max-stat traps_spurious=0
case_ fail.client 1 "FAIL client: expected 'load'; found 'dead'" -- "$G" --client load
case_ fail.stack 1 "FAIL no-trap-in-module libwitch.so|FAIL trap-fns-for deep: expected every pair watched in deep trapped in deep; found 2 of 2|FAIL format.fraction|FAIL format.sorted" -- "$B" \
	--no-trap-in-module libwitch.so --trap-fns-for deep=deep
case_ fail.format-only 1 "FAIL format.fraction|!FAIL no-watch-in-module|!FAIL trap-fns-for" -- "$B" \
	--no-watch-in-module libwitch.so --trap-fns-for shallow=shallow
case_ fail.broken-json 1 "FAIL read: cannot read a JSON report" -- "$tmp/broken.json" --fraction 0.5
case_ fail.missing-file 1 "FAIL read" -- "$tmp/does-not-exist.json"
case_ fail.no-pairs 1 "FAIL top-pair: expected top waste pair fill -> overwrite; found no pairs at all" -- "$tmp/nopairs.json" --top-pair fill overwrite
case_ pass.no-pairs 0 "" -- "$tmp/nopairs.json" --fraction-below 0.05
case_ usage.bad-shares 2 "" -- "$G" --shares dead_a=0.5

# waste_approx (silent client, floating point)
S="$tmp/silent.json"
case_ pass.approx 0 "" -- "$S" --client silent --fraction 1.0 --approx-fraction 0.5 \
	--shares exact:exact=0.5,nudge:nudge=0.5 --approx-shares nudge:nudge=1.0,exact:exact=0 \
	--top-pair exact exact --trap-fns-for nudge=nudge
case_ fail.approx-fraction 1 "FAIL approx-fraction: expected waste_approx/waste 0.0000 +- 0.1000; found 0.4800 (waste_approx 480 B, waste 1000 B)" -- "$S" \
	--approx-fraction 0
case_ fail.approx-fraction-tol 1 "FAIL approx-fraction: expected waste_approx/waste 0.6000 +- 0.0500; found 0.4800" -- "$S" \
	--approx-fraction 0.6 --tol 0.05
# no waste_approx key at all counts as 0
case_ pass.approx-absent 0 "" -- "$G" --approx-fraction 0 --tol 0.01
case_ fail.approx-absent 1 "FAIL approx-fraction: expected waste_approx/waste 0.5000 +- 0.1000; found 0.0000 (waste_approx 0 B [absent], waste 600 B)" -- "$G" \
	--approx-fraction 0.5
case_ pass.approx-no-waste 0 "" -- "$tmp/nopairs.json" --approx-fraction 0
case_ fail.approx-shares 1 "FAIL approx-share exact:exact: expected approximate-waste share 0.5000 +- 0.1000; found 0.0000 from 1 matching pair|FAIL approx-share nudge:nudge: expected approximate-waste share 0.5000 +- 0.1000; found 1.0000" -- "$S" \
	--approx-shares exact:exact=0.5,nudge:nudge=0.5
case_ fail.approx-shares-absent 1 "FAIL approx-share dead_a:kill_a: expected approximate-waste share 1.0000 +- 0.1000; found 0.0000 from 1 matching pair" -- "$G" \
	--approx-shares dead_a:kill_a=1.0
case_ fail.format-approx 1 "FAIL format.waste_approx: expected top-level waste_approx in [0, waste]; found waste_approx 150, waste 100|FAIL format.pairs.waste_approx: expected every pair's waste_approx in [0, its waste]; found bad pairs at index [0]" -- "$tmp/badapprox.json"
case_ fail.client-silent 1 "FAIL client: expected 'load'; found 'silent'" -- "$S" --client load
case_ usage.bad-approx-shares 2 "" -- "$S" --approx-shares nudge=1.0

# objects (data-centric attribution)
O="$tmp/objects.json"
case_ pass.objects 0 "" -- "$O" --object-share "heap from alloc_frames=0.5" \
	--object-share table=0.3 --object-share "stack of work=0.2" --tol 0.01 \
	--object-kind "heap from alloc_frames=heap" --object-kind table=static \
	--object-kind "stack of work=stack"
case_ fail.object-share 1 "FAIL object-share table: expected share 0.5000 +- 0.1000; found 0.3000 from 1 object(s)" -- "$O" \
	--object-share table=0.5
# a name matches itself or itself followed by " (": not a longer name
case_ fail.object-share-prefix 1 "FAIL object-share heap from alloc: expected share 0.5000 +- 0.1000; found 0.0000 from 0 object(s)" -- "$O" \
	--object-share "heap from alloc=0.5"
case_ fail.object-kind 1 "FAIL object-kind table: expected kind heap; found kinds ['static']|FAIL object-kind nothing: expected kind stack; found no such object" -- "$O" \
	--object-kind table=heap --object-kind nothing=stack
case_ fail.object-share-none 1 "FAIL object-share table: expected share 0.2000 +- 0.1000; found no \"objects\" list in the report" -- "$G" \
	--object-share table=0.2
case_ fail.format-objects 1 "FAIL format.objects.sorted|FAIL format.pairs.objects" -- "$tmp/objbad.json"
case_ fail.format-objects-kind 1 "FAIL format.objects: expected a list of objects with a kind" -- "$tmp/objkind.json"
case_ usage.bad-object-share 2 "" -- "$O" --object-share table
# the objects' sampled bytes (1000, 600, 400): what WITCH_WATCHPOINTS=0 measures
case_ pass.object-sampled 0 "" -- "$O" --object-sampled-share "heap from alloc_frames=0.5" \
	--object-sampled-share table=0.3 --object-sampled-share "stack of work=0.2" --tol 0.01
case_ fail.object-sampled-share 1 "FAIL object-sampled-share table: expected share 0.5000 +- 0.1000 of the objects' sampled bytes; found 0.3000 from 1 object(s) of 2000 bytes" -- "$O" \
	--object-sampled-share table=0.5
case_ usage.bad-object-sampled-share 2 "" -- "$O" --object-sampled-share table
# --object-sampled-among: of the heap's 1000 bytes alone, alloc_frames is
# all; a static object is none of them (the pool leaves it out)
case_ pass.object-sampled-among 0 "" -- "$O" --object-sampled-among heap \
	--object-sampled-share "heap from alloc_frames=1.0" --object-sampled-share table=0 --tol 0.01
case_ fail.object-sampled-among 1 "FAIL object-sampled-share heap from alloc_frames: expected share 0.5000 +- 0.1000 of the heap objects' sampled bytes; found 1.0000 from 1 object(s) of 1000 bytes" -- "$O" \
	--object-sampled-among heap --object-sampled-share "heap from alloc_frames=0.5"
case_ usage.bad-object-sampled-among 2 "" -- "$O" --object-sampled-among frames \
	--object-sampled-share table=0.5
# --max-object-share: waste 0.2 and sampled 400/2000 = 0.2 pass at 0.2; at
# 0.1 fail; a name with no object is 0 of both
case_ pass.max-object-share 0 "" -- "$O" --max-object-share "stack of work=0.2" \
	--max-object-share "stack of main=0"
case_ fail.max-object-share 1 "FAIL max-object-share stack of work: expected waste and sampled shares at most 0.1000; found waste 0.2000, sampled 0.2000 from 1 object(s)" -- "$O" \
	--max-object-share "stack of work=0.1"
# --no-object: a name with no object passes; one the report has fails
case_ pass.no-object 0 "" -- "$O" --no-object "stack of fill" --no-object "heap from alloc"
case_ fail.no-object 1 "FAIL no-object stack of work: expected none; found 1 object(s), sampled 400 bytes" -- "$O" \
	--no-object "stack of work"
case_ fail.no-object-none 1 "FAIL no-object table: expected none; found no \"objects\" list in the report" -- "$G" \
	--no-object table
case_ usage.bad-object-kind 2 "" -- "$O" --object-kind table=global

# sampled bytes by context (WITCH_WATCHPOINTS=0): fill 500, copy_rows 100
# with memcpy under it 400: by first named function, copy_rows 0.5 when
# memcpy is not named; by leaf, copy_rows 0.2 of the copy loop's 500.
cat >"$tmp/sampled.json" <<EOF
{"client":"dead","sampler":"soft","samples":600,"watchpoints_armed":0,"traps":0,
 "waste":0,"use":0,"fraction":0,"pairs":[],"sampled_total":1000,
 "sampled":[
  {"bytes":500,"context":[$(frame fill $P),$MAIN]},
  {"bytes":400,"context":[$(frame __memcpy_avx_unaligned_erms /lib/x86_64-linux-gnu/libc.so.6),$(frame copy_rows $P),$MAIN]},
  {"bytes":100,"context":[$(frame copy_rows $P),$MAIN]}
 ]}
EOF
D="$tmp/sampled.json"
case_ pass.sampled-shares 0 "" -- "$D" --sampled-shares fill=0.5,copy_rows=0.5 --tol 0.001
case_ pass.sampled-shares-named 0 "" -- "$D" --sampled-shares fill=0.5,copy_rows=0.1,__memcpy_avx_unaligned_erms=0.4 --tol 0.001
case_ fail.sampled-shares 1 "FAIL sampled fill: expected share 0.6000 +- 0.0500 of the sampled bytes; found 0.5000 of 1000 bytes" -- "$D" \
	--sampled-shares fill=0.6 --tol 0.05
case_ pass.sampled-split 0 "" -- "$D" --sampled-split "copy_rows=0.2,__memcpy_*=0.8" --split-tol 0.001
case_ fail.sampled-split 1 "FAIL sampled split copy_rows: expected share 0.1000 +- 0.0500 of the split's sampled bytes; found 0.2000 of 500.0 bytes" -- "$D" \
	--sampled-split "copy_rows=0.1,__memcpy_*=0.9"
# the leaf only: memcpy's bytes are not copy_rows'
case_ fail.sampled-split-leaf 1 "FAIL sampled split copy_rows: expected share 0.5000 +- 0.0500 of the split's sampled bytes; found 0.1667 of 600.0 bytes" -- "$D" \
	--sampled-split "copy_rows=0.5,fill=0.5"
case_ usage.bad-sampled-split 2 "" -- "$D" --sampled-split copy_rows

# verdicts by the run-ahead alone (WITCH_WATCHPOINTS=window): waste 150 +
# use 450 of 1000 sampled bytes, so the verdicts cover 0.6.
cat >"$tmp/window.json" <<EOF
{"client":"dead","sampler":"soft","verdicts":"window","samples":600,"watchpoints_armed":0,
 "traps":0,"waste":150,"use":450,"fraction":0.25,"sampled_total":1000,
 "pairs":[
  {"waste":150,"use":0,"share":1,"traps":0,
   "watch":[$(frame step $P),$MAIN],"trap":[$(frame kill $P),$(frame step $P),$MAIN]},
  {"waste":0,"use":450,"share":0,"traps":0,
   "watch":[$(frame step $P),$MAIN],"trap":[$(frame look $P),$(frame step $P),$MAIN]}
 ]}
EOF
V="$tmp/window.json"
case_ pass.verdicts 0 "" -- "$V" --verdicts window --covered 0.6 --tol 0.001
case_ fail.verdicts 1 "FAIL verdicts: expected 'traps'; found 'window'" -- "$V" --verdicts traps
case_ fail.covered 1 "FAIL covered: expected (waste + use) / sampled_total 0.8 +- 0.05; found 0.6000" -- "$V" \
	--covered 0.8 --tol 0.05
case_ fail.covered-none 1 "FAIL covered: expected (waste + use) / sampled_total 0.8 +- 0.1; found no sampled_total" -- "$G" \
	--covered 0.8

echo "check_report.selftest: $npass passed, $nfail failed"
if [ $nfail = 0 ]; then
	echo "PASS check_report.selftest"
	exit 0
fi
echo "FAIL check_report.selftest"
exit 1
