#!/bin/sh
# Tests of `witch diff` (pairs matched across profiles with other load
# bases and node ids; grew/shrank/appeared/vanished/unchanged; both
# fractions; text and JSON) and `witch check` (verdict lines and exit
# statuses, table-driven, including the boundaries and bad input).
#
# Usage: test_diff_check.sh PATH/TO/witch      (needs cc, nm, readelf, python3)
set -eu
WITCH=${1:?usage: test_diff_check.sh PATH/TO/witch}
case $WITCH in /*) ;; *) WITCH=$(pwd)/$WITCH ;; esac
SRC=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

python3 - "$WITCH" "$SRC" "$T" <<'PYEOF'
import inspect, json, os, sys
witch, src, work = sys.argv[1:4]
sys.path.insert(0, src)
from profgen import Prog, check, finish, run

g = Prog(src, work)
A = g.addr
B1, B2 = 0x555555554000, 0x5600aa000000

def profile(name, base, pairs, client="dead", ids=1):
    """Pairs name contexts: F = main->store_first->fill (inlined store),
    K = main->store_again (kill), L = main->sum (load)."""
    nodes = {"F": [("main_first",), ("inline_store",)],
             "K": [("main_again",), ("kill",)],
             "L": [("main_sum",), ("load",)]}
    recs, nid, leaf = [], ids, {}
    for ctx, chain in nodes.items():
        parent = 0
        for (mark,) in chain:
            recs.append("node %d %d %#x" % (nid, parent, base + A[mark]))
            parent = nid
            nid += 1
        leaf[ctx] = parent
    return g.write(name, ["witch-profile 1", "client " + client, "sampler soft",
                          g.module_line(1, base)] + recs +
                   ["pair %d %d %s" % (leaf[w], leaf[t], m) for w, t, m in pairs])

# base: F->K 300 waste, K->K 100, L->K use only, K->L 5 (vanishes)
base = profile("base.prof", B1, [("F", "K", "300 100 6"), ("K", "K", "100 0 2"),
                                 ("L", "K", "0 50 1"), ("K", "L", "5 0 1")])
# new (other base, other node ids): F->K grew, K->K shrank, L->K unchanged,
# F->L appeared; K->L gone.
new = profile("new.prof", B2, [("F", "K", "500 100 9"), ("K", "K", "40 0 1"),
                                ("L", "K", "0 50 1"), ("F", "L", "60 0 3")], ids=40)

rc, out, err = run(witch, "diff", "--json", base, new)
check(rc == 0 and err == "", "diff --json exits 0: %d %r" % (rc, err))
j = json.loads(out)
check(j["client"] == "dead", "diff client")
check(j["base"]["waste"] == 405 and j["base"]["use"] == 150 and
      abs(j["base"]["fraction"] - 405 / 555) < 1e-12, "diff base side: %r" % j["base"])
check(j["new"]["waste"] == 600 and abs(j["new"]["fraction"] - 600 / 750) < 1e-12,
      "diff new side: %r" % j["new"])
check(abs(j["fraction_change"] - (600 / 750 - 405 / 555)) < 1e-12, "fraction_change")
check(j["counts"] == {"grew": 1, "shrank": 1, "appeared": 1, "vanished": 1, "unchanged": 1},
      "diff counts: %r" % j["counts"])
funcs = lambda fr: [f["function"] for f in fr]
got = [(p["status"], p["waste_change"], funcs(p["watch"]), funcs(p["trap"])) for p in j["pairs"]]
want = [("grew", 200, ["fill", "store_first", "main"], ["store_again", "main"]),
        ("appeared", 60, ["fill", "store_first", "main"], ["sum", "main"]),
        ("shrank", -60, ["store_again", "main"], ["store_again", "main"]),
        ("vanished", -5, ["store_again", "main"], ["sum", "main"]),
        ("unchanged", 0, ["sum", "main"], ["store_again", "main"])]
check(got == want, "diff pairs by |change|:\n got %r\n want %r" % (got, want))
p0 = j["pairs"][0]
check(p0["base"] == {"waste": 300, "use": 100, "share": 300 / 405, "traps": 6} and
      p0["new"] == {"waste": 500, "use": 100, "share": 500 / 600, "traps": 9},
      "grew pair metrics in both: %r" % p0)
check(j["pairs"][1]["base"] is None and j["pairs"][3]["new"] is None,
      "appeared has no base, vanished no new")
check(p0["watch"][0]["line"] == g.marks["INLINE_STORE"] and p0["watch"][0].get("inlined"),
      "diff frames carry lines and inlined marks")

rc, out, err = run(witch, "diff", base, new)
check(rc == 0, "text diff exits 0")
for want_line in ["fraction: 0.7297 -> 0.8000 (+0.0703)",
                  "pairs:    1 grew, 1 shrank, 1 appeared, 1 vanished, 1 unchanged",
                  "#1  grew  waste 300 -> 500 bytes (+200)  share 74.07% -> 83.33%  traps 6 -> 9",
                  "#4  vanished  waste 5 -> 0 bytes (-5)  share 1.23% -> 0.00%  traps 1 -> 0",
                  "      #0  fill (inlined) at %s:%d" % (g.src, g.marks["INLINE_STORE"]),
                  "    KILLED_BY\n      #0  store_again at %s:%d" % (g.src, g.marks["KILL"])]:
    check(want_line in out, "text diff has %r:\n%s" % (want_line, out))
rc, out, err = run(witch, "diff", "--top", "1", base, new)
check("\n#1  grew" in out and "\n#2  " not in out and "top 1 of 5 pairs" in out, "diff --top 1")
# The same profile against itself: everything unchanged.
rc, out, err = run(witch, "diff", "--json", base, base)
check(rc == 0 and json.loads(out)["counts"]["unchanged"] == 4, "diff of a profile with itself")

silent = profile("silent.prof", B1, [("F", "K", "1 1 1")], client="silent")
for args, want in [
        ([base], "witch: diff: needs two profiles, BASE and NEW"),
        ([base, new, base], "witch: diff: one BASE and one NEW profile, not '%s' too" % base),
        (["--frob", base, new], "witch: diff: unknown option '--frob'"),
        ([base, os.path.join(work, "missing.prof")],
         "witch: %s: No such file or directory" % os.path.join(work, "missing.prof")),
        ([base, silent], "witch: diff: %s is a 'dead' profile and %s a 'silent' one; compare profiles of one client" % (base, silent))]:
    rc, out, err = run(witch, "diff", *args)
    check(rc == 2 and out == "" and err.splitlines()[0] == want,
          "diff %r: %d %r" % (args, rc, err))

# ---- check ----
f30 = profile("f30.prof", B1, [("F", "K", "30 70 5")])     # fraction 0.30
f42 = profile("f42.prof", B1, [("F", "K", "42 58 5")])     # fraction 0.42
f00 = profile("f00.prof", B1, [])                          # no pairs: 0
line = lambda: inspect.currentframe().f_back.f_lineno
cases = [  # (line, args, status, stdout)
    (line(), ["--max-fraction", "0.30", f42], 1, "witch check: fraction 0.42 > 0.30 (max): FAIL"),
    (line(), ["--max-fraction", "0.5", f42], 0, "witch check: fraction 0.42 <= 0.50 (max): PASS"),
    (line(), ["--max-fraction", "0.3", f30], 0, "witch check: fraction 0.30 <= 0.30 (max): PASS"),
    (line(), ["--max-fraction=0.299", f30], 1, "witch check: fraction 0.300 > 0.299 (max): FAIL"),
    (line(), ["--max-fraction", "0", f00], 0, "witch check: fraction 0.00 <= 0.00 (max): PASS"),
    (line(), ["--max-fraction", "0.35", f30, f42], 1, "witch check: fraction 0.36 > 0.35 (max): FAIL"),
    (line(), ["--baseline", f30, "--max-increase", "0.05", f42], 1,
     "witch check: fraction 0.42, baseline 0.30: increase +0.12 > 0.05 (max): FAIL"),
    (line(), ["--baseline", f30, "--max-increase", "0.12", f42], 0,
     "witch check: fraction 0.42, baseline 0.30: increase +0.12 <= 0.12 (max): PASS"),
    (line(), ["--baseline", f42, "--max-increase", "0", f30], 0,
     "witch check: fraction 0.30, baseline 0.42: increase -0.12 <= 0.00 (max): PASS"),
    (line(), ["--max-fraction", "0.5", "--baseline", f30, "--max-increase", "0.1", f42], 1,
     "witch check: fraction 0.42 <= 0.50 (max); baseline 0.30: increase +0.12 > 0.10 (max): FAIL"),
    (line(), ["--max-fraction", "0.5", "--baseline", f30, "--baseline", f42,
              "--max-increase", "0.1", f42], 0,
     "witch check: fraction 0.42 <= 0.50 (max); baseline 0.36: increase +0.06 <= 0.10 (max): PASS"),
]
usage = "Usage: witch check [--max-fraction F] [--max-object-share S] [--baseline BASE --max-increase D] PROFILE..."
trunc = os.path.join(work, "trunc.prof")
open(trunc, "w").write(open(f30).read().replace("end\n", ""))
bad = [  # (line, args, first stderr line)
    (line(), [f30], "witch: check: nothing to check: give --max-fraction F, --max-object-share S and/or --baseline BASE --max-increase D"),
    (line(), ["--max-fraction", "1.5", f30], "witch: check: --max-fraction: '1.5' is not a fraction from 0 to 1"),
    (line(), ["--max-fraction", "-0.1", f30], "witch: check: --max-fraction: '-0.1' is not a fraction from 0 to 1"),
    (line(), ["--max-fraction", "abc", f30], "witch: check: --max-fraction: 'abc' is not a fraction from 0 to 1"),
    (line(), ["--max-fraction"], "witch: check: --max-fraction needs a value"),
    (line(), ["--max-object-share", "1.5", f30], "witch: check: --max-object-share: '1.5' is not a share from 0 to 1"),
    (line(), ["--max-object-share", "-0.1", f30], "witch: check: --max-object-share: '-0.1' is not a share from 0 to 1"),
    (line(), ["--max-object-share", "half", f30], "witch: check: --max-object-share: 'half' is not a share from 0 to 1"),
    (line(), ["--max-object-share=", f30], "witch: check: --max-object-share: '' is not a share from 0 to 1"),
    (line(), ["--max-object-share", "nan", f30], "witch: check: --max-object-share: 'nan' is not a share from 0 to 1"),
    (line(), [f30, "--max-object-share"], "witch: check: --max-object-share needs a value"),
    (line(), ["--max-object-share", "0.5", trunc],
     "witch: %s:11: truncated profile: no 'end' record after the last line" % trunc),
    (line(), ["--max-fraction", "0.5"], "witch: check: no profile file given"),
    (line(), ["--max-increase", "0.1", f30], "witch: check: --max-increase needs --baseline BASE"),
    (line(), ["--baseline", f30, f42], "witch: check: --baseline needs --max-increase D"),
    (line(), ["--frob", f30], "witch: check: unknown option '--frob'"),
    (line(), ["--max-fraction", "0.5", trunc],
     "witch: %s:11: truncated profile: no 'end' record after the last line" % trunc),
    (line(), ["--baseline", trunc, "--max-increase", "0.1", f30],
     "witch: %s:11: truncated profile: no 'end' record after the last line" % trunc),
]
for ln, args, status, want in cases:
    rc, out, err = run(witch, "check", *args)
    check(rc == status and out == want + "\n" and err == "",
          "line %d: check %s: status %d (want %d), stdout %r (want %r) %r" % (ln, " ".join(args), rc, status, out, want, err))
for ln, args, want in bad:
    rc, out, err = run(witch, "check", *args)
    check(rc == 2 and out == "" and err.splitlines()[0] == want,
          "line %d: check %s: status %d, stderr %r, want %r" % (ln, " ".join(args), rc, err, want))
    if want.startswith("witch: check: "):
        check(err.splitlines()[1] == usage, "line %d: usage line after the error" % ln)
finish("test_diff_check")
PYEOF
