#!/bin/sh
# `witch report --source` (issue 16): for each pair shown, the source
# lines of the watched and of the trapping instruction, 3 lines each side,
# the line itself marked '>', for a known-answer target (tests/tools/prog.c,
# whose MARK_* comments name the lines). Table of cases, each the exact
# text expected after the pair's frames:
#  - the lines of fill's inlined store (MARK_INLINE_STORE) and of
#    store_again's (MARK_KILL), of sum's load (MARK_LOAD);
#  - a frame without a line ([JIT]): one line saying so;
#  - the source file gone: one line with its path and line;
#  - the source file shorter than the line (another version): one line.
# And: without --source no source lines; --source with --json or another
# format than text and html is a usage error (status 2).
#
# Usage: test_source.sh PATH/TO/witch
set -eu
WITCH=${1:?usage: test_source.sh PATH/TO/witch}
case $WITCH in /*) ;; *) WITCH=$(pwd)/$WITCH ;; esac
SRC=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 - "$WITCH" "$SRC" "$T" <<'PYEOF'
import os, shutil, sys
witch, src, work = sys.argv[1:4]
sys.path.insert(0, src)
from profgen import Prog, check, finish, run

# prog.c copied, so that the test can take it away.
sdir = os.path.join(work, "src")
os.makedirs(sdir)
shutil.copy(os.path.join(src, "prog.c"), sdir)
cfile = os.path.join(sdir, "prog.c")
g = Prog(sdir, work)
A, M, B = g.addr, g.marks, 0x555555554000
text = open(cfile).read().split("\n")


def excerpt(what, fn, mark):
    line = M[mark]
    out = "    %s: %s:%d (%s)\n" % (what, cfile, line,
                                  fn + (", inlined in store_first" if fn == "fill" else ""))
    for n in range(max(1, line - 3), line + 4):
        out += "      %s %5d  %s\n" % (">" if n == line else " ", n, text[n - 1])
    return out


prof = g.write("p.prof", [
    "witch-profile 1", "client dead", "sampler soft", "stat samples 10", g.module_line(1, B),
    "node 1 0 %#x" % (B + A["main_first"]), "node 2 1 %#x" % (B + A["inline_store"]),
    "node 3 0 %#x" % (B + A["main_again"]), "node 4 3 %#x" % (B + A["kill"]),
    "node 5 0 %#x" % (B + A["main_sum"]), "node 6 5 %#x" % (B + A["load"]),
    "node 7 0 0x1000",
    "pair 2 4 300 0 6", "pair 7 4 40 0 1", "pair 4 6 0 50 2"])


def pair_tail(out, rank):
    """What follows pair #rank's frames: the lines from its first line
    that is neither a heading nor a frame, to the next pair."""
    block = out.split("\n#%d  share" % rank, 1)[1].split("\n\n#", 1)[0].split("\n")[1:]
    i = 0
    while i < len(block) and (block[i].startswith("      #") or block[i] in
                              ("    dead store", "    killed by", "    store", "    read by")):
        i += 1
    return "\n".join(block[i:]).rstrip("\n") + "\n"


def short_file():
    with open(cfile, "w") as f:
        f.write("int x;\n" * 5)

cases = [  # (what, setup, pair rank, expected tail)
    ("lines of both stores", None, 1,
     excerpt("dead store", "fill", "INLINE_STORE") + excerpt("killed by", "store_again", "KILL")),
    ("a frame without a line", None, 2,
     "    dead store: no source line for [JIT]\n" + excerpt("killed by", "store_again", "KILL")),
    ("a use pair", None, 3,
     excerpt("store", "store_again", "KILL") + excerpt("read by", "sum", "LOAD")),
    ("the source file gone", lambda: os.unlink(cfile), 1,
     "    dead store: %s:%d (fill, inlined in store_first): source file not found\n"
     "    killed by: %s:%d (store_again): source file not found\n" % (cfile, M["INLINE_STORE"], cfile, M["KILL"])),
    ("another version of the file", short_file, 1,
     "    dead store: %s:%d (fill, inlined in store_first): the source file has no such line (another version of it?)\n"
     "    killed by: %s:%d (store_again): the source file has no such line (another version of it?)\n"
     % (cfile, M["INLINE_STORE"], cfile, M["KILL"])),
]
for what, setup, rank, want in cases:
    if setup:
        setup()
    rc, out, err = run(witch, "report", "--source", prof)
    if check(rc == 0 and err == "", "%s: report --source: %d %r" % (what, rc, err)):
        got = pair_tail(out, rank)
        check(got == want, "%s: pair #%d\n got:\n%s\n want:\n%s" % (what, rank, got, want))

rc, out, err = run(witch, "report", prof)
check(rc == 0 and " >  " not in out and "source" not in out, "without --source, no source lines")
for args in (["--json"], ["--format", "json"], ["--format", "folded"], ["--format", "pprof", "-o", "x"]):
    rc, out, err = run(witch, "report", "--source", *args, prof)
    check(rc == 2 and err.startswith("witch: report: --source is for the text report"),
          "--source %s: %d %r" % (" ".join(args), rc, err))
rc, out, err = run(witch, "report", "--source", "--format", "html", prof)
check(rc == 0, "--source --format html is allowed: %d %r" % (rc, err))
finish("test_source")
PYEOF
