#!/bin/sh
# Tests of `witch report` on hand-written profiles that point into a small
# program (prog.c, built here with -O2 -g): function names, file:line of
# marker lines, inlined frames, share/fraction arithmetic, sorting, --top,
# client wording, merging two profiles with different load bases, and
# modules that are missing or of another build.
#
# Usage: test_report.sh PATH/TO/witch      (needs cc, nm, readelf, python3)
set -eu
WITCH=${1:?usage: test_report.sh PATH/TO/witch}
case $WITCH in /*) ;; *) WITCH=$(pwd)/$WITCH ;; esac
SRC=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"

${CC:-cc} -O2 -g -o prog "$SRC/prog.c"

python3 - "$WITCH" "$SRC/prog.c" "$T/prog" <<'PYEOF'
import json, re, subprocess, sys

witch, src, prog = sys.argv[1:4]
failures = []

def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)

def run(*args):
    p = subprocess.run([witch] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr

# --- where things are in prog ---
marks = {}
for i, l in enumerate(open(src), 1):
    m = re.search(r"MARK_(\w+) \*/", l)
    if m:
        marks[m.group(1)] = i

syms = {}
for l in subprocess.run(["nm", "-S", "--defined-only", prog],
                        capture_output=True, text=True, check=True).stdout.splitlines():
    f = l.split()
    if len(f) == 4 and f[2] in "tT":
        syms[f[3]] = (int(f[0], 16), int(f[1], 16))

rows = {}  # address -> set of lines of prog.c
for l in subprocess.run(["readelf", "--debug-dump=decodedline", prog],
                        capture_output=True, text=True, check=True).stdout.splitlines():
    f = l.split()
    if len(f) >= 3 and f[0].endswith("prog.c") and f[1].isdigit() and f[2].startswith("0x"):
        rows.setdefault(int(f[2], 16), set()).add(int(f[1]))

def addr_of(mark, func):
    """File address of an instruction of line MARK inside FUNC: one whose
    line-table rows all name that line, so any reader maps it back to it."""
    line = marks[mark]
    lo, size = syms[func]
    for a in sorted(rows):
        if lo <= a < lo + size and rows[a] == {line}:
            return a
    sys.exit("no address for line %d in %s" % (line, func))

build_id = re.search(r"Build ID: ([0-9a-f]+)",
                     subprocess.run(["readelf", "-n", prog], capture_output=True,
                                    text=True, check=True).stdout).group(1)
text_lo = min(a for a, s in syms.values())
text_hi = max(a + s for a, s in syms.values()) + 16

A = {
    "main_first": addr_of("MAIN_FIRST", "main"),
    "main_again": addr_of("MAIN_AGAIN", "main"),
    "main_sum": addr_of("MAIN_SUM", "main"),
    "inline_store": addr_of("INLINE_STORE", "store_first"),
    "kill": addr_of("KILL", "store_again"),
    "load": addr_of("LOAD", "sum"),
}

def module_line(mid, base, path=prog, bid=build_id):
    return "module %d %#x %#x %#x %s %s" % (mid, base, base + text_lo, base + text_hi, bid, path)

def write(name, body):
    with open(name, "w") as f:
        f.write(body)

BASE1 = 0x555555554000
BASE2 = 0x5600aa000000

# Profile one: three pairs written smallest waste first (sorting), a
# counter beyond the three summary ones, and an unknown record type.
write("one.prof", "\n".join([
    "witch-profile 1",
    "client dead",
    "sampler soft",
    "period 1000000",
    "stat samples 100",
    "stat watchpoints_armed 40",
    "stat traps 30",
    "stat skips 7",
    "pid 100",
    "exe " + prog,
    module_line(1, BASE1),
    "node 1 0 %#x" % (BASE1 + A["main_first"]),
    "node 2 1 %#x" % (BASE1 + A["inline_store"]),
    "node 3 0 %#x" % (BASE1 + A["main_again"]),
    "node 4 3 %#x" % (BASE1 + A["kill"]),
    "node 5 0 %#x" % (BASE1 + A["main_sum"]),
    "node 6 5 %#x" % (BASE1 + A["load"]),
    "future-record whatever 1 2 3",
    "pair 6 4 0 50 1",
    "pair 4 4 100 0 2",
    "pair 2 4 300 100 6",
    "end", ""]))

# --- text report ---
rc, out, err = run("report", "one.prof")
check(rc == 0, "report one.prof exits 0 (got %d, stderr %r)" % (rc, err))
check(err == "", "no warnings for a matching build (got %r)" % err)
for want in ["client:            dead (dead stores)",
             "sampler:           soft (period 1000000)",
             "samples:           100",
             "watchpoints armed: 40",
             "traps:             30",
             "waste:             400 bytes",
             "use:               150 bytes",
             "fraction:          0.7273",
             "skips 7",
             "3 pairs by waste:",
             "#1  share 75.00%  waste 300 bytes  use 100 bytes  traps 6",
             "#2  share 25.00%  waste 100 bytes  use 0 bytes  traps 2",
             "#3  share 0.00%  waste 0 bytes  use 50 bytes  traps 1",
             "    dead store\n",
             "    killed by\n"]:
    check(want in out, "text report contains %r" % want)
p1 = out.index("\n#1  share")
p2 = out.index("\n#2  share")
first = out[p1:p2]
frames = [l.strip() for l in first.splitlines() if l.strip().startswith("#") and not l.startswith("#")]
exp = ["#0  fill (inlined) at %s:%d in %s [%#x]" % (src, marks["INLINE_STORE"], prog, BASE1 + A["inline_store"]),
       "#1  store_first at %s:%d in %s [%#x]" % (src, marks["CALL_FILL"], prog, BASE1 + A["inline_store"]),
       "#2  main at %s:%d in %s [%#x]" % (src, marks["MAIN_FIRST"], prog, BASE1 + A["main_first"]),
       "#0  store_again at %s:%d in %s [%#x]" % (src, marks["KILL"], prog, BASE1 + A["kill"]),
       "#1  main at %s:%d in %s [%#x]" % (src, marks["MAIN_AGAIN"], prog, BASE1 + A["main_again"])]
check(frames == exp, "frames of pair #1:\n%s\nexpected:\n%s" % ("\n".join(frames), "\n".join(exp)))

rc, out, err = run("report", "--top", "1", "one.prof")
check(rc == 0 and "top 1 of 3 pairs by waste:" in out and "\n#1  share" in out
      and "\n#2  share" not in out,
      "--top 1 shows one pair")

# --- JSON ---
rc, out, err = run("report", "--json", "one.prof")
check(rc == 0, "report --json exits 0")
j = json.loads(out)
check(j["client"] == "dead" and j["sampler"] == "soft", "json client/sampler")
check(j["samples"] == 100 and j["watchpoints_armed"] == 40 and j["traps"] == 30,
      "json summary counters")
check(j["waste"] == 400 and j["use"] == 150, "json waste/use")
check(abs(j["fraction"] - 400 / 550) < 1e-12, "json fraction = waste/(waste+use)")
check(j["stats"] == {"samples": 100, "watchpoints_armed": 40, "traps": 30, "skips": 7},
      "json stats has every counter: %r" % j["stats"])
check([p["waste"] for p in j["pairs"]] == [300, 100, 0], "json pairs sorted by waste, zero last")
check([p["share"] for p in j["pairs"]] == [0.75, 0.25, 0], "json shares")
check([p["traps"] for p in j["pairs"]] == [6, 2, 1], "json traps per pair")
w = j["pairs"][0]["watch"]
check([f["function"] for f in w] == ["fill", "store_first", "main"], "json watch functions leaf first")
check([f["line"] for f in w] == [marks["INLINE_STORE"], marks["CALL_FILL"], marks["MAIN_FIRST"]],
      "json watch lines")
check(w[0].get("inlined") is True and "inlined" not in w[1] and "inlined" not in w[2],
      "json inlined marks only the inlined frame")
check(all(f["file"] == src and f["module"] == prog for f in w), "json file/module")
check(w[0]["address"] == "%#x" % (BASE1 + A["inline_store"]), "json address")
t = j["pairs"][0]["trap"]
check([f["function"] for f in t] == ["store_again", "main"], "json trap functions")
check([f["line"] for f in t] == [marks["KILL"], marks["MAIN_AGAIN"]], "json trap lines")
lp = j["pairs"][2]["watch"]
check([f["function"] for f in lp] == ["sum", "main"] and lp[0]["line"] == marks["LOAD"],
      "json third pair watch is sum at the load line")

rc, out, err = run("report", "--json", "--top", "2", "one.prof")
check(len(json.loads(out)["pairs"]) == 2, "--json --top 2 lists two pairs")

# --- the runtime's overhead estimate: (handler + kernel + start-up and
# exit + allocation tracking + inline code) over the program's CPU time
# (the clock less the handlers) ---
for case, stats, want in [
    # 1e7 + 5e6 + 5e6 over 1e9 - 1e7
    ("with start-up",
     {"clock_ns": 1e9, "cost_handler_ns": 1e7, "cost_kernel_ns": 5e6, "cost_startup_ns": 5e6}, 2e7 / 9.9e8),
    # an older profile, without cost_startup_ns: 1.5e7 / 9.9e8
    ("no start-up record",
     {"clock_ns": 1e9, "cost_handler_ns": 1e7, "cost_kernel_ns": 5e6}, 1.5e7 / 9.9e8),
    # allocation sites' finding is the runtime's too: 1e7 + 5e6 + 5e6 + 4e6 over 1e9 - 1e7
    ("with allocation sites",
     {"clock_ns": 1e9, "cost_handler_ns": 1e7, "cost_kernel_ns": 5e6, "cost_startup_ns": 5e6,
      "cost_heap_ns": 4e6}, 2.4e7 / 9.9e8),
    # ticks in the runtime's inline code (interposers, wrappers) count too:
    # 1e7 + 5e6 + 5e6 + 4e6 + 3e6 over 1e9 - 1e7
    ("with inline code",
     {"clock_ns": 1e9, "cost_handler_ns": 1e7, "cost_kernel_ns": 5e6, "cost_startup_ns": 5e6,
      "cost_heap_ns": 4e6, "cost_inline_ns": 3e6}, 2.7e7 / 9.9e8),
    # no handler time: no estimate
    ("no handler time",
     {"clock_ns": 1e9, "cost_startup_ns": 5e6}, None),
]:
    write("ovh.prof", "\n".join(["witch-profile 1", "client dead", "sampler soft", "period 1000000",
                                  "stat ticks 100"] +
                                 ["stat %s %d" % (k, v) for k, v in stats.items()] + ["end", ""]))
    rc, out, err = run("report", "--json", "ovh.prof")
    got = json.loads(out).get("overhead_estimate") if rc == 0 else "rc %d" % rc
    check(got is None if want is None else (isinstance(got, float) and abs(got - want) < 1e-9),
          "%s: overhead_estimate %r, want %r" % (case, got, want))

# --- merge: same contexts at another load base, other node ids ---
write("two.prof", "\n".join([
    "witch-profile 1",
    "client dead",
    "sampler soft",
    "period 1000000",
    "stat samples 60",
    "stat traps 10",
    "stat verdicts_traced 12",
    "stat steps 5",
    "pid 200",
    "exe " + prog,
    module_line(7, BASE2),
    "node 10 0 %#x" % (BASE2 + A["main_again"]),
    "node 11 10 %#x" % (BASE2 + A["kill"]),
    "node 20 0 %#x" % (BASE2 + A["main_first"]),
    "node 21 20 %#x" % (BASE2 + A["inline_store"]),
    "node 22 0 %#x" % (BASE2 + A["main_sum"]),
    "node 23 22 %#x" % (BASE2 + A["load"]),
    "pair 21 11 100 50 2",
    "pair 23 21 20 0 1",
    "end", ""]))
rc, out, err = run("report", "--json", "one.prof", "two.prof")
check(rc == 0, "merge exits 0 (%r)" % err)
j = json.loads(out)
check(j["profiles"] == 2 and j["pids"] == [100, 200], "merged profiles and pids")
check(j["samples"] == 160 and j["traps"] == 40 and j["watchpoints_armed"] == 40,
      "merged stats summed")
check(j["stats"].get("steps") == 5 and j["stats"].get("skips") == 7, "merged stats union")
check(len(j["pairs"]) == 4, "merged: 3 + 1 new pair (got %d)" % len(j["pairs"]))
top = j["pairs"][0]
check(top["waste"] == 400 and top["use"] == 150 and top["traps"] == 8,
      "same pair at different bases summed: %r" % {k: top[k] for k in ("waste", "use", "traps")})
check([f["function"] for f in top["watch"]] == ["fill", "store_first", "main"]
      and [f["function"] for f in top["trap"]] == ["store_again", "main"], "merged pair contexts")
check(j["waste"] == 520 and abs(top["share"] - 400 / 520) < 1e-12, "merged share")
check(abs(j["fraction"] - 520 / (520 + 200)) < 1e-12, "merged fraction")
rc, out, err = run("report", "one.prof", "two.prof")
check("profiles:          2 (pids 100, 200)" in out, "text merged header")
# one.prof has no verdicts_traced (the plain line above); merged, two's 12 show
check("traps:             40 (and 12 samples decided from the window, no trap)" in out,
      "text merged traps with verdicts decided from the window")

# --- other clients' wording, waste_approx ---
for client, watch, trap in [("silent", "silent store", "overwritten with the same value by"),
                            ("load", "load", "same value loaded again by")]:
    write(client + ".prof", "\n".join([
        "witch-profile 1", "client " + client, "sampler pmu", "period 5000",
        module_line(1, BASE1),
        "node 1 0 %#x" % (BASE1 + A["load"]),
        "node 2 0 %#x" % (BASE1 + A["kill"]),
        "pair 1 2 64 192 4 16",
        "end", ""]))
    rc, out, err = run("report", client + ".prof")
    check(rc == 0 and ("\n    %s\n" % watch) in out and ("\n    %s\n" % trap) in out,
          "%s wording" % client)
    check("fraction:          0.2500" in out, "%s fraction" % client)
    rc, out, err = run("report", "--json", client + ".prof")
    j = json.loads(out)
    check(j["client"] == client and j["sampler"] == "pmu", "%s json client" % client)
    check(j["pairs"][0]["waste_approx"] == 16 and j["waste_approx"] == 16,
          "%s json waste_approx" % client)
    check(j["samples"] == 0, "%s: absent counters are 0" % client)

rc, out, err = run("report", "one.prof", "silent.prof")
check(rc == 2 and err == "witch: silent.prof: client 'silent' differs from client 'dead' of one.prof; only profiles of one client can be merged\n",
      "merging different clients fails: %d %r" % (rc, err))

# --- modules that cannot be used: missing file, another build ---
write("gone.prof", "\n".join([
    "witch-profile 1", "client dead", "sampler soft",
    "module 1 0x7f0000000000 0x7f0000001000 0x7f0000009000 - /nonexistent/libgone.so",
    module_line(2, BASE1, bid="00112233445566778899aabbccddeeff00112233"),
    "module 3 0x7fff00000000 0x7fff00000000 0x7fff00002000 - linux-vdso.so.1",
    "node 1 0 0x7f0000001234",
    "node 2 0 0x7f0000002000",
    "node 3 0 %#x" % (BASE1 + A["kill"]),
    "node 4 0 0x1000",
    "node 5 0 0x7fff00000a00",
    "pair 1 2 10 0 1",
    "pair 3 4 5 0 1",
    "pair 5 4 1 0 1",
    "end", ""]))
rc, out, err = run("report", "--json", "gone.prof")
check(rc == 0, "unusable modules still give a report")
lines = err.splitlines()
check(len(lines) == 2, "one warning per unusable module, none for the vDSO: %r" % err)
check(any(l.startswith("witch: warning: cannot open module /nonexistent/libgone.so: ") for l in lines),
      "missing module warning")
check(any(l == "witch: warning: %s has build-id %s but the profile recorded 00112233445566778899aabbccddeeff00112233 (rebuilt since the run?); its frames are shown as [unknown in prog]" % (prog, build_id) for l in lines),
      "build-id mismatch warning: %r" % err)
j = json.loads(out)
f = j["pairs"][0]["watch"][0]
check(f["function"] == "[unknown in libgone.so]" and f["file"] == "??" and f["line"] == 0 and
      f["module"] == "/nonexistent/libgone.so" and f["address"] == "0x7f0000001234",
      "missing module frame keeps module and address: %r" % f)
f = j["pairs"][1]["watch"][0]
check(f["function"] == "[unknown in prog]" and f["module"] == prog, "other build gives [unknown in prog]: %r" % f)
f = j["pairs"][2]["watch"][0]
check(f["function"] == "[unknown in linux-vdso.so.1]", "a vDSO frame: %r" % f)
f = j["pairs"][1]["trap"][0]
check(f["function"] == "[JIT]" and f["module"] == "??" and f["address"] == "0x1000",
      "pc outside every module: %r" % f)
rc, out, err = run("report", "gone.prof")
check("#0  [unknown in libgone.so] at ?? in /nonexistent/libgone.so [0x7f0000001234]" in out,
      "text unknown frame shows module and address")

if failures:
    print("%d check(s) failed" % len(failures), file=sys.stderr)
    sys.exit(1)
print("test_report: all checks passed")
PYEOF
