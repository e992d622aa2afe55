#!/bin/sh
# Tests of bad input to `witch report` (each with its exact message on
# stderr and exit status 2, nothing on stdout) and of the command line
# (help, unknown commands and options).
#
# Usage: test_errors.sh PATH/TO/witch
set -u
WITCH=${1:?usage: test_errors.sh PATH/TO/witch}
case $WITCH in /*) ;; *) WITCH=$(pwd)/$WITCH ;; esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
fails=0

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

# expect STATUS EXPECTED_STDERR witch-args...: exact stderr and status.
expect() {
	want_rc=$1
	want_err=$2
	shift 2
	"$WITCH" "$@" >out.txt 2>err.txt
	rc=$?
	got_err=$(cat err.txt)
	[ "$rc" -eq "$want_rc" ] || fail "witch $*: status $rc, expected $want_rc"
	[ "$got_err" = "$want_err" ] ||
		fail "witch $*: stderr
  got:      $got_err
  expected: $want_err"
	if [ "$want_rc" -eq 2 ] && [ -s out.txt ]; then
		fail "witch $*: wrote to stdout on error: $(cat out.txt)"
	fi
}

# A valid profile body (no module needed: pcs outside every module are
# reported as ??); variants below are built from it.
good() {
	cat <<'EOF'
witch-profile 1
client dead
sampler soft
stat samples 3
node 1 0 0x1000
node 2 1 0x2000
node 3 1 0x3000
pair 2 3 8 0 1
end
EOF
}

good >good.prof
expect 0 "" report good.prof

# Truncated: no `end` record; or cut in the middle of a line.
good | sed '$d' >trunc.prof
expect 2 "witch: trunc.prof:8: truncated profile: no 'end' record after the last line" report trunc.prof
good | head -n 5 | head -c -4 >cut.prof
expect 2 "witch: cut.prof:5: truncated profile: incomplete last line and no 'end' record" report cut.prof
: >empty.prof
expect 2 "witch: empty.prof:1: empty file, not a libwitch profile (expected 'witch-profile 1')" report empty.prof

# Header.
good | sed '1s/.*/perf-profile 1/' >magic.prof
expect 2 "witch: magic.prof:1: not a libwitch profile (expected 'witch-profile 1', got 'perf-profile 1')" report magic.prof
printf '\177ELF\002\001\001\000\000\n' >binary.prof
expect 2 "witch: binary.prof:1: malformed line: contains a NUL byte" report binary.prof
good | sed '1s/.*/witch-profile 2/' >version.prof
expect 2 "witch: version.prof:1: unsupported profile version 2 (this witch reads version 1)" report version.prof
good | sed '1s/.*/witch-profile one/' >version2.prof
expect 2 "witch: version2.prof:1: malformed header (expected 'witch-profile 1')" report version2.prof

# Nodes: unknown parent, parent defined later, id 0, duplicate id, bad pc.
good | sed 's/^node 3 1 /node 3 9 /' >parent.prof
expect 2 "witch: parent.prof:7: node 3: parent 9 is not an earlier node" report parent.prof
good | sed 's/^node 2 1 /node 2 3 /' >later.prof
expect 2 "witch: later.prof:6: node 2: parent 3 is not an earlier node" report later.prof
good | sed 's/^node 3 1 /node 0 1 /' >zero.prof
expect 2 "witch: zero.prof:7: node id 0 is out of range: node 0 is the root and is never written" report zero.prof
good | sed 's/^node 3 1 /node 2 1 /' >dup.prof
expect 2 "witch: dup.prof:7: duplicate node id 2" report dup.prof
good | sed 's/^node 3 1 0x3000/node 3 1 zz/' >pc.prof
expect 2 "witch: pc.prof:7: malformed 'node' record: pc 'zz' is not a 0x-prefixed hex address" report pc.prof
good | sed 's/^node 3 1 0x3000/node 3 1 0x3000 7/' >fields.prof
expect 2 "witch: fields.prof:7: malformed 'node' record: too many fields (expected 'node <id> <parent> <pc>')" report fields.prof
good | sed 's/^node 3 1 0x3000/node 3 99999999999999999999 0x3000/' >range.prof
expect 2 "witch: range.prof:7: malformed 'node' record: parent '99999999999999999999' is out of range" report range.prof

# Pairs: unknown node, node 0, bad metric.
good | sed 's/^pair 2 3 /pair 2 77 /' >pairref.prof
expect 2 "witch: pairref.prof:8: pair: trap node 77 is not defined" report pairref.prof
good | sed 's/^pair 2 3 /pair 0 3 /' >pair0.prof
expect 2 "witch: pair0.prof:8: pair: node 0 is out of range: the root has no calling context" report pair0.prof
good | sed 's/^pair 2 3 8 /pair 2 3 -8 /' >neg.prof
expect 2 "witch: neg.prof:8: malformed 'pair' record: waste '-8' is not a non-negative number" report neg.prof

# Garbage line; unknown but well-formed record types are skipped.
good | sed '4a\
#!@ garbage' >garbage.prof
expect 2 "witch: garbage.prof:5: malformed line: '#!@ garbage' does not start with a record type" report garbage.prof
good | sed '4a\
futurerecord 1 2 3' >future.prof
expect 0 "" report future.prof

# Header records: missing, duplicate, unknown client, modules.
good | sed '/^client/d' >noclient.prof
expect 2 "witch: noclient.prof:8: missing 'client' record" report noclient.prof
good | sed '2a\
client load' >twoclients.prof
expect 2 "witch: twoclients.prof:3: duplicate 'client' record" report twoclients.prof
good | sed 's/^client dead/client lazy/' >client.prof
expect 2 "witch: client.prof:2: unknown client 'lazy' (expected dead, silent or load)" report client.prof
good | sed '3a\
verdicts guess' >verdicts.prof
expect 2 "witch: verdicts.prof:4: unknown verdicts 'guess' (expected traps, window or none)" report verdicts.prof
good | sed '3a\
verdicts window\
verdicts traps' >twoverdicts.prof
expect 2 "witch: twoverdicts.prof:5: duplicate 'verdicts' record" report twoverdicts.prof
good | sed '3a\
verdicts' >verdictsbare.prof
expect 2 "witch: verdictsbare.prof:4: malformed 'verdicts' record: too few fields (expected 'verdicts traps|window|none')" report verdictsbare.prof
good | sed '3a\
module 1 0 0x2000 0x1000 - /bin/true' >modrange.prof
expect 2 "witch: modrange.prof:4: module 1: start 0x2000 is above end 0x1000" report modrange.prof
good | sed '3a\
module 1 0 0x1000 0x2000 - /bin/true\
module 2 0 0x1800 0x2800 - /bin/false' >overlap.prof
expect 2 "witch: overlap.prof:5: module 2: executable range overlaps that of module 1" report overlap.prof
good | sed '3a\
module 1 0 0x1000 0x2000 -' >modpath.prof
expect 2 "witch: modpath.prof:4: malformed 'module' record: missing path (expected 'module <id> <base> <start> <end> <build-id|-> <path>')" report modpath.prof

# Object records (docs/objects.md): kinds, ids, references, fields.
good | sed '8a\
object 1 blob 8 2' >objkind.prof
expect 2 "witch: objkind.prof:9: malformed 'object' record: unknown kind 'blob' (expected heap, static, tls or stack)" report objkind.prof
good | sed '8a\
object 1' >objfew.prof
expect 2 "witch: objfew.prof:9: malformed 'object' record: too few fields (expected 'object <id> heap|static|tls|stack <size> ...')" report objfew.prof
good | sed '8a\
object 0 heap 8 2' >obj0.prof
expect 2 "witch: obj0.prof:9: object id 0 is out of range: object 0 is the unknown object and is never written" report obj0.prof
good | sed '8a\
object 1 heap 8 2\
object 1 stack 0 0x1000' >objdup.prof
expect 2 "witch: objdup.prof:10: duplicate object id 1" report objdup.prof
good | sed '8a\
object 1 heap 8 9' >objnode.prof
expect 2 "witch: objnode.prof:9: object 1: allocation node 9 is not defined" report objnode.prof
good | sed '8a\
object 1 heap 8 0' >objnode0.prof
expect 2 "witch: objnode0.prof:9: object 1: allocation node 0 is out of range: the root has no calling context" report objnode0.prof
good | sed '8a\
object 1 heap 8 2 7' >objmany.prof
expect 2 "witch: objmany.prof:9: malformed 'object' record: too many fields (expected 'object <id> heap <size> <alloc-node>')" report objmany.prof
good | sed '8a\
object 1 stack 0 0x1000 x' >objstackmany.prof
expect 2 "witch: objstackmany.prof:9: malformed 'object' record: too many fields (expected 'object <id> stack <size> <pc>')" report objstackmany.prof
good | sed '8a\
object 1 static 8 0x4000 counts' >objpath.prof
expect 2 "witch: objpath.prof:9: malformed 'object' record: missing module path (expected 'object <id> static <size> <addr> <name|-> <module path>')" report objpath.prof
good | sed '8a\
object 1 static 8 4000 counts /bin/true' >objaddr.prof
expect 2 "witch: objaddr.prof:9: malformed 'object' record: address '4000' is not a 0x-prefixed hex address" report objaddr.prof
good | sed '8a\
object 1 tls 8' >objtls.prof
expect 2 "witch: objtls.prof:9: malformed 'object' record: too few fields (expected 'object <id> tls <size> <offset> <name|-> <module path>')" report objtls.prof
good | sed '8a\
object 1 stack -1 0x1000' >objsize.prof
expect 2 "witch: objsize.prof:9: malformed 'object' record: size '-1' is not a number" report objsize.prof
good | sed '8a\
object 1 stack 0 pc' >objpc.prof
expect 2 "witch: objpc.prof:9: malformed 'object' record: pc 'pc' is not a 0x-prefixed hex address" report objpc.prof
good | sed '8a\
pair_object 2 3 5 8 0 0' >poobj.prof
expect 2 "witch: poobj.prof:9: pair_object: object 5 is not defined" report poobj.prof
good | sed '8a\
pair_object 3 2 0 8 0 0' >popair.prof
expect 2 "witch: popair.prof:9: pair_object: no 'pair 3 2' record for it to be part of" report popair.prof
good | sed '8a\
pair_object 2 3 0 8 0' >pofew.prof
expect 2 "witch: pofew.prof:9: malformed 'pair_object' record: too few fields (expected 'pair_object <watch-node> <trap-node> <object-id> <waste> <use> <waste_approx>')" report pofew.prof
good | sed '8a\
pair_object 2 3 0 -8 0 0' >poneg.prof
expect 2 "witch: poneg.prof:9: malformed 'pair_object' record: waste '-8' is not a non-negative number" report poneg.prof
good | sed '8a\
pair_object 2 9 0 8 0 0' >ponode.prof
expect 2 "witch: ponode.prof:9: pair_object: trap node 9 is not defined" report ponode.prof
good | sed '8a\
pair_object 0 3 0 8 0 0' >ponode0.prof
expect 2 "witch: ponode0.prof:9: pair_object: node 0 is out of range: the root has no calling context" report ponode0.prof
good | sed '8a\
object_sampled 4 10' >osobj.prof
expect 2 "witch: osobj.prof:9: object_sampled: object 4 is not defined" report osobj.prof
good | sed '8a\
object_sampled 0 x' >osbytes.prof
expect 2 "witch: osbytes.prof:9: malformed 'object_sampled' record: bytes 'x' is not a non-negative number" report osbytes.prof
# Well-formed: object 0 (unknown) needs no record; an object after the
# pair_object that names it, and a stack pc outside every module.
good | sed '8a\
pair_object 2 3 0 5 0 0\
pair_object 2 3 1 3 0 0\
object_sampled 0 4\
object 1 stack 0 0x1000' >objok.prof
expect 0 "" report objok.prof

# Data after `end`.
{ good; echo "node 4 1 0x4000"; } >after.prof
expect 2 "witch: after.prof:10: data after the 'end' record" report after.prof

# Files: missing, given twice; the first bad file of several is named.
expect 2 "witch: missing.prof: No such file or directory" report missing.prof
expect 2 "witch: good.prof: same file as good.prof, given twice (metrics would be counted twice)" report good.prof good.prof
expect 2 "witch: trunc.prof:8: truncated profile: no 'end' record after the last line" report good.prof trunc.prof

# Command line.
expect 2 "witch: unknown command 'frobnicate'
Usage: witch run|report|diff|check|help ... (see 'witch --help')" frobnicate
expect 2 "witch: unknown option '--frob'
Usage: witch run|report|diff|check|help ... (see 'witch --help')" --frob
expect 2 "witch: no command given
Usage: witch run|report|diff|check|help ... (see 'witch --help')"
expect 2 "witch: report: unknown option '--frob'
Usage: witch report [--format text|json|folded|pprof|html] [--json] [--top N] [--width N] [--source] [-o FILE] FILE...
(see 'witch --help')" report --frob good.prof
expect 2 "witch: report: no profile file given
Usage: witch report [--format text|json|folded|pprof|html] [--json] [--top N] [--width N] [--source] [-o FILE] FILE...
(see 'witch --help')" report
expect 2 "witch: report: --top: 'x' is not a count (0 for all)
Usage: witch report [--format text|json|folded|pprof|html] [--json] [--top N] [--width N] [--source] [-o FILE] FILE...
(see 'witch --help')" report --top x good.prof
expect 2 "witch: report: --width: '5' is not a column count of at least 20 (0 for no limit)
Usage: witch report [--format text|json|folded|pprof|html] [--json] [--top N] [--width N] [--source] [-o FILE] FILE...
(see 'witch --help')" report --width 5 good.prof
expect 2 "witch: report: --width: '-1' is not a column count of at least 20 (0 for no limit)
Usage: witch report [--format text|json|folded|pprof|html] [--json] [--top N] [--width N] [--source] [-o FILE] FILE...
(see 'witch --help')" report --width=-1 good.prof
expect 2 "witch: report: --width needs a number
Usage: witch report [--format text|json|folded|pprof|html] [--json] [--top N] [--width N] [--source] [-o FILE] FILE...
(see 'witch --help')" report good.prof --width
expect 2 "witch: run: unknown option '--frob'
Usage: witch run [-c dead|silent|load] [-o FILE] [--json] [--top N] [--] PROG [ARGS...]
(see 'witch --help')" run --frob -- true
expect 2 "witch: run: -c: unknown client 'lazy' (dead, silent or load)
Usage: witch run [-c dead|silent|load] [-o FILE] [--json] [--top N] [--] PROG [ARGS...]
(see 'witch --help')" run -c lazy -- true
expect 2 "witch: run: no program given
Usage: witch run [-c dead|silent|load] [-o FILE] [--json] [--top N] [--] PROG [ARGS...]
(see 'witch --help')" run --

for h in --help help -h; do
	expect 0 "" $h
	for word in run report WITCH_CLIENT WITCH_SAMPLER WITCH_RATE WITCH_PERIOD \
		WITCH_WATCHPOINTS WITCH_OUTPUT WITCH_SEED WITCH_VERBOSE \
		WITCH_MAX_STEPS WITCH_DEPTH WITCH_SLOW_REARM WITCH_LIB; do
		grep -q -- "$word" out.txt || fail "witch $h does not mention $word"
	done
done

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "test_errors: all checks passed"
