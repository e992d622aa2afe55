#!/bin/sh
# A PLT entry is named after the function its GOT slot binds, "malloc@plt",
# as perf and objdump name it (symbolize.c, plt_name): LoadCraft's pairs on
# the GOT loads of PLT calls are a program's own redundant loads, and
# "[unknown in prog]" told nothing.  tests/tools/prog.c is built twice:
# with the lazy-binding .plt (jmp *GOT first) and with IBT's .plt.sec
# (endbr64, then the jmp).  A hand-written profile has a node at each
# entry objdump labels NAME@plt, at its start and at its jmp, and at PLT0
# (the resolver stub: no relocation, so no name); `witch report --json`
# must name them NAME@plt, NAME@plt and "[unknown in prog]".
#
# Usage: test_plt_names.sh PATH/TO/witch   (needs cc, objdump, readelf, nm)
set -eu
WITCH=${1:?usage: test_plt_names.sh PATH/TO/witch}
case $WITCH in /*) ;; *) WITCH=$(pwd)/$WITCH ;; esac
SRC=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
HOME=$T python3 - "$WITCH" "$SRC" "$T" <<'PYEOF'
import json, os, re, subprocess, sys
witch, src, work = sys.argv[1:4]
sys.path.insert(0, src)
from profgen import check, finish, run

B = 0x555555554000
VARIANTS = [("lazy", []), ("ibt", ["-fcf-protection=full", "-Wl,-z,ibtplt"])]
for tag, flags in VARIANTS:
    prog = os.path.join(work, "prog-" + tag)
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-g"] + flags +
                   ["-o", prog, os.path.join(src, "prog.c")], check=True)
    secs = {}
    for l in subprocess.run(["readelf", "-SW", prog], capture_output=True, text=True,
                            check=True).stdout.splitlines():
        m = re.search(r"\]\s+(\.\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", l)
        if m:
            secs[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16))
    dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", prog], capture_output=True,
                          text=True, check=True).stdout
    # Each NAME@plt entry and the address of its jmp *GOT.
    entries = {}
    for m in re.finditer(r"^([0-9a-f]+) <(\w+)@plt>:\n((?:\s+[0-9a-f]+:.*\n)+)", dump, re.M):
        jmp = re.search(r"^\s+([0-9a-f]+):\s+(?:bnd )?jmp\s+\*", m.group(3), re.M)
        if jmp:
            entries[m.group(2)] = (int(m.group(1), 16), int(jmp.group(1), 16))
    check("malloc" in entries and "calloc" in entries,
          "%s: objdump labels malloc@plt and calloc@plt: %r" % (tag, sorted(entries)))
    if tag == "ibt":
        check(".plt.sec" in secs and entries.get("malloc", (0, 0))[1] == entries.get("malloc", (0, 0))[0] + 4,
              "ibt: .plt.sec with endbr64 before the jmp: %r" % (entries.get("malloc"),))
    bid = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(
        ["readelf", "-n", prog], capture_output=True, text=True, check=True).stdout).group(1)
    plt0 = secs[".plt"][0]
    lo = plt0
    hi = max(a + s for n, (a, s) in secs.items() if n in (".text", ".fini"))
    want = {}
    nodes = []
    for name in ("malloc", "calloc"):
        if name in entries:
            for at in entries[name]:
                want[len(nodes) + 1] = name + "@plt"
                nodes.append(at)
    want[len(nodes) + 1] = "[unknown in prog-%s]" % tag
    nodes.append(plt0)
    lines = ["witch-profile 1", "client load", "sampler soft", "stat samples 1", "pid 1",
             "exe " + prog, "module 1 %#x %#x %#x %s %s" % (B, B + lo, B + hi, bid, prog)]
    lines += ["node %d 0 %#x" % (i + 1, B + at) for i, at in enumerate(nodes)]
    lines += ["sampled %d 100" % (i + 1) for i in range(len(nodes))]
    path = os.path.join(work, tag + ".prof")
    open(path, "w").write("\n".join(lines + ["end", ""]))
    rc, out, err = run(witch, "report", "--json", "--top", "0", path)
    check(rc == 0, "%s: report: %d %s" % (tag, rc, err))
    got = {}
    for s in (json.loads(out).get("sampled", []) if rc == 0 else []):
        f = s["context"][0]
        got[int(f["offset"], 16)] = f["function"]
    for i, at in enumerate(nodes, 1):
        check(got.get(at) == want[i], "%s: the frame at %#x is %r, expected %r" %
              (tag, at, got.get(at), want[i]))
finish("test_plt_names")
PYEOF
