#!/bin/sh
# Tests of `witch run` with a fake runtime (fakewitch.c, built here as a
# shared library) that writes a valid profile from its constructor:
# output order, the report shown, exit status, profile naming, profiles
# of child processes, stale files, the library search, and failures.
#
# Usage: test_run.sh PATH/TO/witch      (needs cc, python3, /bin/sh)
set -u
WITCH=${1:?usage: test_run.sh PATH/TO/witch}
case $WITCH in /*) ;; *) WITCH=$(pwd)/$WITCH ;; esac
SRC=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
fails=0

fail() {
	echo "FAIL: $*" >&2
	fails=$((fails + 1))
}

${CC:-cc} -O2 -g -shared -fPIC -o "$T/fakewitch.so" "$SRC/fakewitch.c" -ldl ||
	{ echo "cannot build fakewitch.so" >&2; exit 1; }
unset WITCH_LIB WITCH_OUTPUT WITCH_CLIENT FAKE_WITCH_SKIP LD_PRELOAD

# 1. The basic case from the spec: program output first, then the report;
#    the program's exit status; the profile named with its pid.
mkdir r1 && cd r1 || exit 1
WITCH_LIB=$T/fakewitch.so "$WITCH" run -o out-%p.prof -- /bin/sh -c 'echo hi; exit 3' >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 3 ] || fail "run: status $rc, expected 3"
[ "$(head -n 1 out.txt)" = "hi" ] || fail "run: program output must come first: $(head -n 3 out.txt)"
[ ! -s err.txt ] || fail "run: unexpected stderr: $(cat err.txt)"
set -- out-*.prof
[ $# -eq 1 ] && [ -f "$1" ] || fail "run: expected one out-<pid>.prof, got: $*"
case $1 in out-[0-9]*.prof) ;; *) fail "run: profile name $1" ;; esac
for want in "client:            dead (dead stores)" "samples:           10" \
	"#1  share 100.00%  waste 64 bytes  use 16 bytes  traps 3" \
	"    dead store" "    killed by" "#0  witch_fake_dead_store at " \
	"#0  witch_fake_killer at " "fakewitch.c:" "in $T/fakewitch.so ["; do
	grep -qF -- "$want" out.txt || fail "run: report lacks '$want'"
done
cd "$T" || exit 1

# 2. Defaults: witch-<prog>-%p.prof in the current directory; the client
#    from -c reaches the runtime; LD_PRELOAD keeps what was there, after
#    the library; WITCH_OUTPUT is made absolute.
mkdir r2 && cd r2 || exit 1
LD_PRELOAD=libkeep-me.so WITCH_LIB=$T/fakewitch.so "$WITCH" run -c silent -- /bin/sh -c \
	'echo "$LD_PRELOAD"; echo "$WITCH_OUTPUT"; echo "$WITCH_CLIENT"' >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 0 ] || fail "defaults: status $rc"
[ "$(sed -n 1p out.txt)" = "$T/fakewitch.so:libkeep-me.so" ] ||
	fail "defaults: LD_PRELOAD seen by the program: $(sed -n 1p out.txt)"
[ "$(sed -n 2p out.txt)" = "$T/r2/witch-sh-%p.prof" ] ||
	fail "defaults: WITCH_OUTPUT seen by the program: $(sed -n 2p out.txt)"
[ "$(sed -n 3p out.txt)" = "silent" ] || fail "defaults: WITCH_CLIENT: $(sed -n 3p out.txt)"
set -- witch-sh-*.prof
[ $# -eq 1 ] && [ -f "$1" ] || fail "defaults: expected witch-sh-<pid>.prof, got: $*"
grep -qF "client:            silent (silent stores)" out.txt || fail "defaults: -c silent report"
grep -qF "overwritten with the same value by" out.txt || fail "defaults: silent wording"
# ld.so complains about libkeep-me.so on stderr; nothing else is expected.
grep -v "libkeep-me.so" err.txt >err2.txt
[ ! -s err2.txt ] || fail "defaults: unexpected stderr: $(cat err2.txt)"
cd "$T" || exit 1

# 3. Children: profiles of other pids written during the run are merged;
#    a stale one from before the run is not; --json output.
mkdir r3 && cd r3 || exit 1
printf 'witch-profile 1\nclient dead\nsampler soft\nstat samples 1000\nend\n' >kids-999999.prof
touch -d '2001-01-01' kids-999999.prof
WITCH_LIB=$T/fakewitch.so "$WITCH" run --json -o kids-%p.prof -- /bin/sh -c '/bin/sh -c "exit 0"; echo parent; exit 5' >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 5 ] || fail "children: status $rc, expected 5"
[ "$(head -n 1 out.txt)" = "parent" ] || fail "children: program output first"
[ ! -s err.txt ] || fail "children: unexpected stderr: $(cat err.txt)"
sed 1d out.txt | python3 -c '
import json, sys
j = json.load(sys.stdin)
assert j["profiles"] == 2, j["profiles"]
assert j["samples"] == 20, j["samples"]
assert len(j["pairs"]) == 1 and j["pairs"][0]["waste"] == 128 and j["pairs"][0]["traps"] == 6, j["pairs"]
assert j["pairs"][0]["watch"][0]["function"] == "witch_fake_dead_store"
assert j["pairs"][0]["trap"][0]["function"] == "witch_fake_killer"
' || fail "children: merged JSON report: $(cat out.txt)"
cd "$T" || exit 1

# 3b. A pattern without %p: the program's file has the pattern's name;
#     libwitch names a profile of a process forked without exec
#     <name>.<pid> (emulated here by copying the program's own profile).
mkdir r3b && cd r3b || exit 1
WITCH_LIB=$T/fakewitch.so "$WITCH" run -o fixed.prof -- /bin/sh -c 'cp fixed.prof fixed.prof.12345' >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 0 ] || fail "no %p: status $rc"
grep -qF "profiles:          2 (pids " out.txt && grep -qF "samples:           20" out.txt ||
	fail "no %p: expected fixed.prof and fixed.prof.12345 merged: $(cat out.txt err.txt)"
cd "$T" || exit 1

# 4. Killed by a signal: 128 + signal, report still shown.
mkdir r4 && cd r4 || exit 1
WITCH_LIB=$T/fakewitch.so "$WITCH" run -o k-%p.prof -- /bin/sh -c 'kill -TERM $$' >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 143 ] || fail "signal: status $rc, expected 143"
grep -qF "witch_fake_dead_store" out.txt || fail "signal: report missing"
cd "$T" || exit 1

# 5. No profile: one line on stderr, the program's status.  Where
# watchpoints never trap (WITCH_DR_PROBE, tests/dr_probe.c, exits 77) the
# runtime has said why in its own line, and run says nothing more.
mkdir r5 && cd r5 || exit 1
FAKE_WITCH_SKIP=1 WITCH_LIB=$T/fakewitch.so "$WITCH" run -o none-%p.prof -- /bin/sh -c 'exit 4' >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 4 ] || fail "no profile: status $rc, expected 4"
traps=yes
if [ -n "${WITCH_DR_PROBE-}" ]; then
	"$WITCH_DR_PROBE" >/dev/null
	[ $? = 77 ] && traps=no
fi
if [ $traps = yes ]; then
	[ "$(wc -l <err.txt)" -eq 1 ] && grep -q "^witch: no profile written (" err.txt ||
		fail "no profile: stderr: $(cat err.txt)"
else
	[ ! -s err.txt ] || fail "no profile, no traps here: stderr: $(cat err.txt)"
fi
[ ! -s out.txt ] || fail "no profile: stdout: $(cat out.txt)"
cd "$T" || exit 1

# 6. Library search: next to the executable, then ../lib.
mkdir -p b1 b2/bin b2/lib r6
cp "$WITCH" b1/witch && cp fakewitch.so b1/libwitch.so
cp "$WITCH" b2/bin/witch && cp fakewitch.so b2/lib/libwitch.so
cd r6 || exit 1
"$T/b1/witch" run -o a-%p.prof -- /bin/true >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 0 ] && grep -qF "in $T/b1/libwitch.so [" out.txt ||
	fail "lib next to witch: status $rc: $(cat out.txt err.txt)"
"$T/b2/bin/witch" run -o b-%p.prof -- /bin/true >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 0 ] && grep -qF "in $T/b2/lib/libwitch.so [" out.txt ||
	fail "lib in ../lib: status $rc: $(cat out.txt err.txt)"
cd "$T" || exit 1

# 7. Failures of witch itself.
WITCH_LIB=/nonexistent/libwitch.so "$WITCH" run -- /bin/true >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 2 ] || fail "bad WITCH_LIB: status $rc, expected 2"
[ "$(cat err.txt)" = "witch: run: WITCH_LIB=/nonexistent/libwitch.so: No such file or directory" ] ||
	fail "bad WITCH_LIB: stderr: $(cat err.txt)"
"$T/b1/witch" run -- /nonexistent/prog >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 127 ] || fail "missing program: status $rc, expected 127"
[ "$(cat err.txt)" = "witch: run: cannot execute /nonexistent/prog: No such file or directory" ] ||
	fail "missing program: stderr: $(cat err.txt)"
mkdir -p r7 && cp "$WITCH" r7/nolib-witch
r7/nolib-witch run -- /bin/true >out.txt 2>err.txt
rc=$?
[ "$rc" -eq 2 ] && grep -q "^witch: run: cannot find libwitch.so (tried " err.txt ||
	fail "no library found: status $rc: $(cat err.txt)"

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed" >&2
	exit 1
fi
echo "test_run: all checks passed"
