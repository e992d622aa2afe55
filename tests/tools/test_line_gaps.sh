#!/bin/sh
# A pc outside every line sequence has no source line, as addr2line says
# (??:0).  libdw answers a pc in a gap between a compile unit's ranges
# with the row before the gap: crt1's _start (no debug info), linked right
# after a main that tail-calls (main in .text.startup, a range of its
# own), was "_start at gap.c:<main's line>" in libwitch's reports and
# "_start" in the oracle's, so no full context agreed (bench/names.py).
# Checked on a hand-written profile: the _start frame has no file and
# line, main's frame keeps its own.
#
# Usage: test_line_gaps.sh PATH/TO/witch   (needs cc, nm, readelf, addr2line)
set -eu
WITCH=${1:?usage: test_line_gaps.sh PATH/TO/witch}
case $WITCH in /*) ;; *) WITCH=$(pwd)/$WITCH ;; esac
SRC=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
HOME=$T python3 - "$WITCH" "$SRC" "$T" <<'PYEOF'
import json, os, re, subprocess, sys
witch, src, work = sys.argv[1:4]
sys.path.insert(0, src)
from profgen import check, finish, run

# main only tail-calls a constprop clone: its range is a few bytes of
# .text.startup, then _start.
source = r'''#include <string.h>
__attribute__((noinline)) static int run(int argc, char **argv, const char *name)
{
	volatile int s = 0;
	for (int i = 0; i < argc; i++)
		s += (int)strlen(argv[i]) + name[0];
	return s;
}

int main(int argc, char **argv)
{
	return run(argc, argv, "gap"); /* MAIN */
}
'''
c = os.path.join(work, "gap.c")
prog = os.path.join(work, "gap")
open(c, "w").write(source)
subprocess.run([os.environ.get("CC", "cc"), "-O2", "-g", "-fno-inline", "-o", prog, c], check=True)
main_line = next(i for i, l in enumerate(source.splitlines(), 1) if "/* MAIN */" in l)
syms = {}
for l in subprocess.run(["nm", "-S", "--defined-only", prog], capture_output=True, text=True,
                        check=True).stdout.splitlines():
    f = l.split()
    if len(f) == 4 and f[2] in "tT":
        syms[f[3]] = (int(f[0], 16), int(f[1], 16))
bid = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(
    ["readelf", "-n", prog], capture_output=True, text=True, check=True).stdout).group(1)
lo = min(a for a, s in syms.values())
hi = max(a + s for a, s in syms.values()) + 16
start, size = syms["_start"]
at = start + size // 2
mainpc = syms["main"][0]
a2l = subprocess.run(["addr2line", "-e", prog, "%#x" % at], capture_output=True,
                     text=True).stdout.strip()
B = 0x555555554000
with open(os.path.join(work, "gap.prof"), "w") as f:
    f.write("\n".join(["witch-profile 1", "client dead", "sampler soft", "stat samples 1",
                       "pid 1", "exe " + prog,
                       "module 1 %#x %#x %#x %s %s" % (B, B + lo, B + hi, bid, prog),
                       "node 1 0 %#x" % (B + at), "node 2 1 %#x" % (B + mainpc),
                       "sampled 2 100", "end", ""]))
rc, out, err = run(witch, "report", "--json", os.path.join(work, "gap.prof"))
check(rc == 0, "report: %d %s" % (rc, err))
ctx = json.loads(out)["sampled"][0]["context"] if rc == 0 else []
names = [(f["function"], f["file"].split("/")[-1], f["line"]) for f in ctx]
check(a2l.startswith("??"), "addr2line names _start+%#x %r: not a gap here" % (at - start, a2l))
check(len(names) == 2 and names[1] == ("_start", "??", 0),
      "_start outside every line sequence: %r, expected ('_start', '??', 0)" % names)
check(names and names[0] == ("main", "gap.c", main_line), "main keeps its line: %r" % names)
finish("test_line_gaps")
PYEOF
