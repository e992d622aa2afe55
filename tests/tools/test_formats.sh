#!/bin/sh
# Tests of `witch report --format folded` and `--format pprof`, and of
# merging several profiles:
#  - folded: the exact output for a hand-written profile (root-first
#    stacks, marker frames of the three clients, inlined "_[i]" frames,
#    unknown frames as "[unknown in MODULE]", rounding, use-only pairs left out, merging);
#  - pprof: `go tool pprof -traces` and `-top` (for waste, use and traps)
#    on the written file must show the functions and values that
#    `witch report --json` gives for the same profiles: the hand-written
#    one, and two real fig42 runs under libwitch.so (merged, so this also
#    checks that merging real profiles sums their pairs).
# go (Debian's golang-go) is required: without it this test fails.
#
# Usage: test_formats.sh PATH/TO/witch [PATH/TO/libwitch.so PATH/TO/fig42]
set -eu
WITCH=${1:?usage: test_formats.sh PATH/TO/witch [libwitch.so fig42]}
case $WITCH in /*) ;; *) WITCH=$(pwd)/$WITCH ;; esac
SRC=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

if [ $# -ge 3 ]; then
	# Two real runs of a known-answer program (3 waste pairs each).
	for i in 1 2; do
		WITCH_SAMPLER=soft WITCH_CLIENT=dead WITCH_RATE=2000 WITCH_SEED=$i \
			WITCH_OUTPUT="$T/fig42-$i.prof" LD_PRELOAD="$2" "$3" >/dev/null
	done
fi

# pprof must not write its cache or history into the real home.
HOME=$T python3 - "$WITCH" "$SRC" "$T" <<'PYEOF'
import json, os, re, shutil, subprocess, sys
witch, src, work = sys.argv[1:4]
sys.path.insert(0, src)
from profgen import Prog, check, finish, run

g = Prog(src, work)
A = g.addr
B1, B2 = 0x555555554000, 0x5600aa000000
GONE = "module 2 0x7f0000000000 0x7f0000001000 0x7f0000009000 - /nonexistent/libgone.so"

def profile(name, client, base, nodes, pairs, extra=()):
    return g.write(name, ["witch-profile 1", "client " + client, "sampler soft",
                          "stat samples 10", g.module_line(1, base)] + list(extra) +
                   ["node %d %d %#x" % (i, p, pc) for i, p, pc in nodes] +
                   ["pair " + q for q in pairs])

std_nodes = [(1, 0, B1 + A["main_first"]), (2, 1, B1 + A["inline_store"]),
             (3, 0, B1 + A["main_again"]), (4, 3, B1 + A["kill"]),
             (5, 0, B1 + A["main_sum"]), (6, 5, B1 + A["load"]),
             (7, 0, 0x7f0000001234)]
# Waste .5 rounds away from zero; 0.4 rounds to 0 (left out of folded).
one = profile("one.prof", "dead", B1, std_nodes,
              ["2 4 300.5 100 6", "4 4 99.4 0 2", "6 4 0.4 50 1", "7 6 2500.5 0 1"],
              extra=[GONE])
# The same first pair at another base with other node ids, and a new one.
two = profile("two.prof", "dead", B2,
              [(10, 0, B2 + A["main_again"]), (11, 10, B2 + A["kill"]),
               (20, 0, B2 + A["main_first"]), (21, 20, B2 + A["inline_store"])],
              ["21 11 100 50 2", "11 21 7 0 1"])

# ---- folded ----
cases = [  # (line, files, expected stdout)
    (0, [one], "[unknown in libgone.so];KILLED_BY;main;sum 2501\n"
               "main;store_first;fill_[i];KILLED_BY;main;store_again 301\n"
               "main;store_again;KILLED_BY;main;store_again 99\n"),
    (0, [one, two], "[unknown in libgone.so];KILLED_BY;main;sum 2501\n"
                    "main;store_first;fill_[i];KILLED_BY;main;store_again 401\n"
                    "main;store_again;KILLED_BY;main;store_again 99\n"
                    "main;store_again;KILLED_BY;main;store_first;fill_[i] 7\n"),
]
for client, marker in [("silent", "OVERWRITTEN_BY_SAME_VALUE"), ("load", "RELOADED_BY")]:
    f = profile(client + ".prof", client, B1, std_nodes[:6], ["6 4 64 192 4 16"])
    cases.append((0, [f], "main;sum;%s;main;store_again 64\n" % marker))
cases = [(i, f, e) for i, (_, f, e) in enumerate(cases)]
for i, files, want in cases:
    rc, out, err = run(witch, "report", "--format", "folded", *files)
    check(rc == 0 and out == want,
          "folded case %d: rc %d\n got:\n%s expected:\n%s%s" % (i, rc, out, want, err))
# -o writes the same bytes to a file.
rc, out, err = run(witch, "report", "--format=folded", "-o", os.path.join(work, "f.txt"), one)
check(rc == 0 and out == "" and open(os.path.join(work, "f.txt")).read() == cases[0][2],
      "folded -o FILE: %d %r" % (rc, err))

# ---- pprof ----
go = shutil.which("go")
if not check(go is not None, "go is not installed (apt-get install golang-go): pprof output cannot be checked"):
    finish("test_formats")

def pprof(*args):
    p = subprocess.run([go, "tool", "pprof", "-unit=B"] + list(args),
                       capture_output=True, text=True)
    check(p.returncode == 0, "go tool pprof %s: %s" % (" ".join(args), p.stderr))
    return p.stdout

def expected(j):
    """From witch's JSON: per-sample stacks (leaf first, pprof's names)
    and per-index flat/cum sums by function."""
    marker = {"dead": "KILLED_BY", "silent": "OVERWRITTEN_BY_SAME_VALUE",
              "load": "RELOADED_BY"}[j["client"]]
    def names(frames):
        out = []
        for f in frames:
            out.append(f["function"] + (" (inline)" if f.get("inlined") else ""))
        return out
    stacks, sums = [], {}
    for p in j["pairs"]:
        st = names(p["trap"]) + [marker] + names(p["watch"])
        # pprof.c writes one sample per object the pair's bytes fell on
        # (label "object", the traps on the first), then one without a
        # label for what no object covers, if any of it rounds above 0.
        parts = p.get("objects", [])
        samples = [(o["name"], o["waste"], o["use"], p["traps"] if i == 0 else 0)
                   for i, o in enumerate(parts)]
        rest_w = p["waste"] - sum(o["waste"] for o in parts)
        rest_u = p["use"] - sum(o["use"] for o in parts)
        if not parts:
            samples.append((None, p["waste"], p["use"], p["traps"]))
        elif round_half_up(rest_w) > 0 or round_half_up(rest_u) > 0:
            samples.append((None, rest_w, rest_u, 0))
        for label, waste, use, traps in samples:
            vals = {"waste": round_half_up(waste), "use": round_half_up(use), "traps": traps}
            stacks.append((vals["waste"], label, st))
            for k, v in vals.items():
                flat, cum = sums.setdefault(k, ({}, {}))
                flat[st[0]] = flat.get(st[0], 0) + v
                for fn in set(st):
                    cum[fn] = cum.get(fn, 0) + v
    return stacks, sums

def round_half_up(x):
    import math
    return int(math.floor(x + 0.5))

def parse_traces(text):
    out = []
    for block in text.split("-----------+-------------------------------------------------------")[1:]:
        lines = [l for l in block.splitlines() if l.strip()]
        if not lines:
            continue
        # A labelled sample's block starts with its labels ("object: NAME").
        label = None
        m = re.match(r"\s*object:\s+(.*\S)\s*$", lines[0])
        if m:
            label, lines = m.group(1), lines[1:]
        m = re.match(r"\s*(\d+)B?\s+(.*\S)", lines[0])
        st = [m.group(2)] + [l.strip() for l in lines[1:]]
        out.append((int(m.group(1)), label, st))
    return out

def parse_top(text):
    rows = {}
    for l in text.splitlines():
        m = re.match(r"\s*(\d+)B?\s+\S+%\s+\S+%\s+(\d+)B?\s+\S+%\s+(.*\S)\s*$", l)
        if m:
            rows[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    return rows

def check_pprof(name, files):
    out_path = os.path.join(work, name + ".pb.gz")
    rc, out, err = run(witch, "report", "--format", "pprof", "-o", out_path, *files)
    if not check(rc == 0 and out == "", "%s: report --format pprof: %d %r" % (name, rc, err)):
        return
    check(open(out_path, "rb").read(2) == b"\x1f\x8b", "%s: pprof output is gzip" % name)
    rc, out, err = run(witch, "report", "--json", *files)
    j = json.loads(out)
    stacks, sums = expected(j)
    got = parse_traces(pprof("-traces", out_path))
    order = lambda t: (t[0], t[1] or "", t[2])  # noqa: E731 (label None sorts as "")
    check(sorted(got, key=order) == sorted(stacks, key=order),
          "%s: pprof -traces stacks\n got: %r\n expected (from --json): %r"
          % (name, sorted(got, key=order), sorted(stacks, key=order)))
    for idx in ("waste", "use", "traps"):
        # -nodefraction=0: pprof drops functions under 0.5% of the total
        # by default, and a real run can have a pair that small.
        rows = parse_top(pprof("-top", "-nodecount=1000", "-nodefraction=0", "-edgefraction=0",
                               "-sample_index=" + idx, out_path))
        flat, cum = sums[idx]
        want = {fn: (flat.get(fn, 0), cum[fn]) for fn in cum if cum[fn] or flat.get(fn, 0)}
        got_rows = {fn: v for fn, v in rows.items() if v != (0, 0)}
        check(got_rows == want,
              "%s: pprof -top -sample_index=%s (flat, cum) by function\n got: %r\n expected: %r"
              % (name, idx, got_rows, want))
    return j

j = check_pprof("hand", [one])
check(j is not None and [p["trap"][0]["function"] for p in j["pairs"]][:2] == ["sum", "store_again"],
      "hand profile JSON as expected")
check_pprof("merged", [one, two])

fig = [os.path.join(work, "fig42-%d.prof" % i) for i in (1, 2)]
if all(os.path.exists(f) for f in fig):
    jm = check_pprof("fig42", fig)
    # Merging real profiles: every pair of the merged report is the sum
    # of the same pair (same functions and lines) in the two files.
    def by_key(j):
        d = {}
        for p in j["pairs"]:
            k = (tuple((f["function"], f["line"]) for f in p["watch"]),
                 tuple((f["function"], f["line"]) for f in p["trap"]))
            w, u, t = d.get(k, (0, 0, 0))
            d[k] = (w + p["waste"], u + p["use"], t + p["traps"])
        return d
    singles = [by_key(json.loads(run(witch, "report", "--json", f)[1])) for f in fig]
    merged = by_key(jm)
    want = {}
    for s in singles:
        for k, (w, u, t) in s.items():
            a = want.get(k, (0, 0, 0))
            want[k] = (a[0] + w, a[1] + u, a[2] + t)
    check(set(merged) == set(want) and
          all(abs(merged[k][0] - want[k][0]) < 1e-6 and abs(merged[k][1] - want[k][1]) < 1e-6
              and merged[k][2] == want[k][2] for k in want),
          "merged fig42 pairs are the sums of both runs' pairs")
    check(jm["profiles"] == 2 and len(jm["pids"]) == 2, "merged fig42: two profiles")
    wf = {p["trap"][0]["function"] for p in jm["pairs"] if p["waste"] > 0}
    check({"kill_a", "kill_b", "kill_x"} <= wf, "fig42 waste pairs end in kill_a/b/x: %r" % wf)
    rc, out, err = run(witch, "report", "--format", "folded", *fig)
    lines = out.splitlines()
    check(rc == 0 and any(re.search(r";main;dead_a;KILLED_BY;.*;main;kill_a \d+$", l) for l in lines),
          "fig42 folded has dead_a;KILLED_BY;...;kill_a: %r" % lines)
else:
    print("(no libwitch.so/fig42 given: real-profile checks not run)")

# ---- bad usage ----
for args, status, want in [
        (["--format", "svg", one], 2, "witch: report: --format: 'svg' is not text, json, folded, pprof or html"),
        (["--json", "--format", "folded", one], 2, "witch: report: --json contradicts --format"),
        # An output that cannot be written is status 1, as for text.
        (["--format", "pprof", "-o", "/nonexistent/dir/x.pb.gz", one], 1,
         "witch: cannot create /nonexistent/dir/x.pb.gz: No such file or directory")]:
    rc, out, err = run(witch, "report", *args)
    check(rc == status and err.splitlines()[0] == want and out == "",
          "report %s: %d %r" % (" ".join(args), rc, err))
finish("test_formats")
PYEOF
