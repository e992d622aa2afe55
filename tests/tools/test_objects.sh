#!/bin/sh
# Objects (data-centric attribution, issue #15; docs/objects.md) in every
# witch command, on hand-written profiles whose pcs point into prog.c:
#  - every kind and its name (heap from the allocation context's leaf, or
#    the first frame in the executable when the leaf is in a library;
#    static in and outside the executable, unnamed data, tls, stack, the
#    unknown object 0), objects of one kind and name merged (two stack
#    pcs of one function), sizes, sampled bytes;
#  - shares of the waste, the order by waste, each pair's parts summing
#    to the pair, in JSON and in the text report (and the sample-only
#    text report's objects by sampled bytes);
#  - the same objects in two processes' profiles (other bases, other ids)
#    merged by what they are;
#  - a profile without object records: "objects": [] and no text section;
#  - pprof: an `object` label per sample, read back with go tool pprof
#    (skipped part without go);
#  - the HTML objects table; witch diff by object; witch check
#    --max-object-share (verdicts, exit statuses, bad values).
# Malformed object records are in test_errors.sh.
#
# Usage: test_objects.sh PATH/TO/witch   (needs cc, nm, readelf, objdump, python3)
set -eu
WITCH=${1:?usage: test_objects.sh PATH/TO/witch}
case $WITCH in /*) ;; *) WITCH=$(pwd)/$WITCH ;; esac
SRC=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
HOME=$T python3 - "$WITCH" "$SRC" "$T" <<'PYEOF'
import inspect, json, os, re, shutil, subprocess, sys
witch, src, work = sys.argv[1:4]
sys.path.insert(0, src)
from profgen import Prog, check, finish, run

g = Prog(src, work)
A, M, C = g.addr, g.marks, g.call
B1, B2 = 0x555555554000, 0x5600aa000000
LIB = "/nonexistent/libstdc++.so.6"
FOO = "/usr/lib/x86_64-linux-gnu/libfoo.so.1"
store_again = g.syms["store_again"][0]

def lib_module(mid, base):
    return "module %d %#x %#x %#x - %s" % (mid, base, base + 0x1000, base + 0x9000, LIB)

def header(pid, base):
    return ["witch-profile 1", "client dead", "sampler soft", "stat samples 100",
            "pid %d" % pid, "exe " + g.prog, g.module_line(1, base),
            lib_module(2, base + 0x7f0000000000 - B1)]

# One: contexts F (main->store_first->fill), K (main->store_again), L
# (main->sum); allocation contexts: main's malloc (node 7), make_table's
# calloc called from main (8, 9), a library wrapper called from main (10, 11).
def one_records(base, stack_pcs=(0, 4)):
    lib = base + 0x7f0000000000 - B1
    return header(100, base) + [
        "node 1 0 %#x" % (base + A["main_first"]), "node 2 1 %#x" % (base + A["inline_store"]),
        "node 3 0 %#x" % (base + A["main_again"]), "node 4 3 %#x" % (base + A["kill"]),
        "node 5 0 %#x" % (base + A["main_sum"]), "node 6 5 %#x" % (base + A["load"]),
        "node 7 0 %#x" % (base + C["alloc"]),
        "node 8 0 %#x" % (base + C["main_table"]), "node 9 8 %#x" % (base + C["calloc"]),
        "node 10 0 %#x" % (base + A["main_first"]), "node 11 10 %#x" % (lib + 0x1234),
        "object 1 heap 400 7",
        "object 2 heap 4000 9",
        "object 3 heap 64 11",
        "object 4 static 256 %#x counts %s" % (base + 0x4040, g.prog),
        "object 5 static 128 0x7f1234560000 table %s" % FOO,
        "object 6 static 64 0x7f1234560100 - %s" % FOO,
        "object 7 tls 8 0x10 tls_counter %s" % g.prog,
        "object 10 static 4 0x9000 nomod -", "object 11 tls 4 0x20 - -",
        "object 8 stack 0 %#x" % (base + store_again + stack_pcs[0]),
        "object 9 stack 0 %#x" % (base + store_again + stack_pcs[1]),
        "pair 2 4 300 100 6", "pair 4 4 100 0 2", "pair 6 4 0 50 1",
        "pair_object 2 4 1 200 60 0", "pair_object 2 4 4 100 40 0",
        "pair_object 4 4 2 50 0 0", "pair_object 4 4 8 30 0 0", "pair_object 4 4 9 20 0 0",
        "pair_object 6 4 3 0 50 0",
        "object_sampled 1 1000", "object_sampled 2 500", "object_sampled 4 300",
        "object_sampled 8 100", "object_sampled 9 50", "object_sampled 0 25",
        "stat objects_unknown 3", "stat objects_dropped 0"]

one = g.write("one.prof", one_records(B1))
# The library module is not there: its one warning is the only stderr.
WARN = ("witch: warning: cannot open module %s: No such file or directory; its frames are "
        "shown as [unknown in libstdc++.so.6]\n" % LIB)
loc = lambda mark: "%s:%d" % (g.src, M[mark])
# Names have the source file's name, frames its path.
H_MAIN = "heap from main (prog.c:%d)" % M["ALLOC"]
H_TABLE = "heap from make_table (prog.c:%d)" % M["CALLOC"]
H_WRAP = "heap from main (prog.c:%d)" % M["MAIN_FIRST"]
# (kind, name, size, waste, use, sampled), in the report's order: by waste,
# then sampled, then use, then kind and name.
want_objects = [
    ("heap", H_MAIN, 400, 200, 60, 1000),
    ("static", "counts", 256, 100, 40, 300),
    ("heap", H_TABLE, 4000, 50, 0, 500),
    ("stack", "stack of store_again", 0, 50, 0, 150),
    ("unknown", "unknown", 0, 0, 0, 25),
    ("heap", H_WRAP, 64, 0, 50, 0),
    ("static", "[data in libfoo.so.1]", 64, 0, 0, 0),
    ("static", "nomod", 4, 0, 0, 0),
    ("static", "table (libfoo.so.1)", 128, 0, 0, 0),
    ("tls", "[tls]", 4, 0, 0, 0),
    ("tls", "tls_counter (tls)", 8, 0, 0, 0),
]

rc, out, err = run(witch, "report", "--json", one)
check(rc == 0, "report --json: %d %r" % (rc, err))
j = json.loads(out)
got = [(o["kind"], o["name"], o["size"], o["waste"], o["use"], o["sampled"]) for o in j["objects"]]
check(got == want_objects, "objects\n got  %r\n want %r" % (got, want_objects))
check([o["share"] for o in j["objects"]] == [0.5, 0.25, 0.125, 0.125, 0, 0, 0, 0, 0, 0, 0],
      "object shares of the waste: %r" % [o["share"] for o in j["objects"]])
by = {o["name"]: o for o in j["objects"]}
al = by[H_MAIN]["alloc"]
check([(f["function"], f["line"], f["file"]) for f in al] == [("main", M["ALLOC"], g.src)]
      and al[0]["address"] == "%#x" % (B1 + C["alloc"]) and al[0]["module"] == g.prog,
      "heap alloc frames (leaf = the call of malloc): %r" % al)
al = by[H_TABLE]["alloc"]
check([(f["function"], f["line"]) for f in al] == [("make_table", M["CALLOC"]), ("main", M["MAIN_TABLE"])],
      "make_table's allocation context, leaf first: %r" % al)
al = by[H_WRAP]["alloc"]
check([(f["function"], f["module"]) for f in al] == [("[unknown in libstdc++.so.6]", LIB), ("main", g.prog)],
      "a library wrapper's object keeps its whole context and is named by main: %r" % al)
check(all(o["alloc"] == [] for o in j["objects"] if o["kind"] != "heap"), "alloc is [] but for heap")
pairs = {(p["watch"][0]["function"], p["trap"][0]["function"]): p for p in j["pairs"]}
po = lambda p: [(o["kind"], o["name"], o["waste"], o["use"]) for o in p["objects"]]
check(po(pairs[("fill", "store_again")]) == [("heap", H_MAIN, 200, 60), ("static", "counts", 100, 40)],
      "pair F->K objects: %r" % po(pairs[("fill", "store_again")]))
check(po(pairs[("store_again", "store_again")]) == [("heap", H_TABLE, 50, 0), ("stack", "stack of store_again", 50, 0)],
      "pair K->K objects (two stack pcs of one function summed): %r" % po(pairs[("store_again", "store_again")]))
for p in j["pairs"]:
    check(sum(o["waste"] for o in p["objects"]) == p["waste"] and
          sum(o["use"] for o in p["objects"]) == p["use"], "pair parts sum to the pair: %r" % p["objects"])
check(abs(sum(o["share"] for o in j["objects"]) - 1) < 1e-12, "object shares sum to 1")
check(j["stats"]["objects_unknown"] == 3, "objects stats kept")

# ---- text ----
rc, out, err = run(witch, "report", one)
check(rc == 0 and err == WARN, "text report: %d %r" % (rc, err))
rc, out, err = run(witch, "report", "--top", "0", one)
sec = out[out.index("\n11 objects by waste:\n"):] if "\n11 objects by waste:\n" in out else ""
check(sec != "", "text has '11 objects by waste:':\n%s" % out)
exp = ("\n11 objects by waste:\n"
       "\n#1  share 50.00%%  waste 200 bytes  use 60 bytes  heap  size 400 bytes  sampled 1000 bytes\n"
       "    %s\n"
       "    allocated at\n"
       "      #0  main at %s in %s [%#x]\n"
       "\n#2  share 25.00%%  waste 100 bytes  use 40 bytes  static  size 256 bytes  sampled 300 bytes\n"
       "    counts\n"
       "\n#3  share 12.50%%  waste 50 bytes  use 0 bytes  heap  size 4000 bytes (3.9 KiB)  sampled 500 bytes\n"
       "    %s\n"
       "    allocated at\n"
       "      #0  make_table at %s in %s [%#x]\n"
       "      #1  main at %s in %s [%#x]\n"
       "\n#4  share 12.50%%  waste 50 bytes  use 0 bytes  stack  sampled 150 bytes\n"
       "    stack of store_again\n"
       "\n#5  share 0.00%%  waste 0 bytes  use 0 bytes  unknown  sampled 25 bytes\n"
       "    unknown\n") % (H_MAIN, loc("ALLOC"), g.prog, B1 + C["alloc"], H_TABLE,
                           loc("CALLOC"), g.prog, B1 + C["calloc"], loc("MAIN_TABLE"), g.prog,
                           B1 + C["main_table"])
check(sec.startswith(exp), "text objects section\n got:\n%s\n want:\n%s" % (sec[:len(exp) + 200], exp))
check("\n    tls_counter (tls)\n" in sec and "\n    table (libfoo.so.1)\n" in sec and
      "\n    [data in libfoo.so.1]\n" in sec, "text lists every object")
check("    objects: %s waste 200 bytes; counts waste 100 bytes\n" % H_MAIN in out,
      "text pair lists its objects")
rc, out, err = run(witch, "report", "--top", "2", one)
check("\ntop 2 of 11 objects by waste:\n" in out and "\n#3  share 12.50%  waste 50 bytes  use 0 bytes  heap" not in out,
      "--top 2 limits the objects too")

# ---- two processes: other bases, other ids; the same objects merge ----
two = g.write("two.prof", header(200, B2) + [
    "node 30 0 %#x" % (B2 + A["main_again"]), "node 31 30 %#x" % (B2 + A["kill"]),
    "node 40 0 %#x" % (B2 + A["main_first"]), "node 41 40 %#x" % (B2 + A["inline_store"]),
    "node 50 0 %#x" % (B2 + C["alloc"]),
    "object 1 stack 0 %#x" % (B2 + store_again + 8),
    "object 2 heap 800 50",
    "object 3 static 256 %#x counts %s" % (B2 + 0x4040, g.prog),
    "pair 41 31 120 0 2",
    "pair_object 41 31 2 100 0 0", "pair_object 41 31 1 20 0 0",
    "object_sampled 2 10", "object_sampled 1 5"])
rc, out, err = run(witch, "report", "--json", one, two)
check(rc == 0, "merge: %d %r" % (rc, err))
jm = json.loads(out)
bym = {o["name"]: o for o in jm["objects"]}
check(len(jm["objects"]) == 11, "merged: no new object, all were the same: %r" % [o["name"] for o in jm["objects"]])
check((bym[H_MAIN]["waste"], bym[H_MAIN]["size"], bym[H_MAIN]["sampled"]) == (300, 800, 1010),
      "merged heap object: waste summed, size the largest: %r" % bym[H_MAIN])
check(bym["stack of store_again"]["waste"] == 70 and bym["stack of store_again"]["sampled"] == 155,
      "merged stack object: %r" % bym["stack of store_again"])
check(bym["counts"]["waste"] == 100, "static object merged across processes")
check(abs(bym[H_MAIN]["share"] - 300 / 520) < 1e-12, "merged share")
top = jm["pairs"][0]
check(po(top) == [("heap", H_MAIN, 300, 60), ("static", "counts", 100, 40),
                  ("stack", "stack of store_again", 20, 0)], "merged pair parts: %r" % po(top))

# ---- a profile without object records ----
old = g.write("old.prof", ["witch-profile 1", "client dead", "sampler soft", g.module_line(1, B1),
                           "node 1 0 %#x" % (B1 + A["main_again"]), "node 2 1 %#x" % (B1 + A["kill"]),
                           "pair 2 2 10 5 1"])
rc, out, err = run(witch, "report", "--json", old)
jo = json.loads(out)
check(rc == 0 and jo["objects"] == [] and "objects" not in jo["pairs"][0],
      "old profile: an empty objects list, no objects in its pair: %r" % jo)
rc, out, err = run(witch, "report", old)
check(rc == 0 and "object" not in out, "old profile: no objects in the text report:\n%s" % out)

# ---- sample-only: no pairs, objects by sampled bytes ----
so = g.write("sampleonly.prof", header(300, B1) + [
    "node 1 0 %#x" % (B1 + C["alloc"]), "node 2 0 %#x" % (B1 + A["main_again"]),
    "node 3 2 %#x" % (B1 + A["kill"]), "sampled 3 400",
    "object 1 heap 400 1", "object 2 static 16 %#x counts %s" % (B1 + 0x4040, g.prog),
    "object_sampled 1 300", "object_sampled 2 100"])
rc, out, err = run(witch, "report", so)
exp = ("\nbytes the samples stand for, by object (top 2 of 2):\n"
       "\n#1  share 75.00%%  300 bytes  heap  size 400 bytes\n"
       "    %s\n    allocated at\n      #0  main at %s in %s [%#x]\n"
       "\n#2  share 25.00%%  100 bytes  static  size 16 bytes\n    counts\n") % (
           H_MAIN, loc("ALLOC"), g.prog, B1 + C["alloc"])
check(rc == 0 and out.endswith(exp), "sample-only text: objects by sampled bytes\n got:\n%s\n want:\n%s" % (out, exp))

# ---- HTML ----
html = os.path.join(work, "r.html")
rc, out, err = run(witch, "report", "--format", "html", "-o", html, one)
page = open(html).read() if rc == 0 else ""
check(rc == 0, "html: %d %r" % (rc, err))
rows = re.findall(r'<tr class="object" data-rank="(\d+)" data-kind="(\w+)" data-share="([^"]*)" '
                  r'data-waste="([^"]*)" data-use="([^"]*)" data-size="([^"]*)" data-sampled="([^"]*)">', page)
check([(r[1], float(r[3]), float(r[2])) for r in rows][:4] ==
      [("heap", 200, 0.5), ("static", 100, 0.25), ("heap", 50, 0.125), ("stack", 50, 0.125)],
      "html objects rows: %r" % rows[:4])
check(len(rows) == 11, "html lists all objects: %d" % len(rows))
pos = [page.find(s) for s in ('<section id="top">', 'id="objects"', 'id="flame', 'id="pairs"')]
check(all(p >= 0 for p in pos) and pos == sorted(pos),
      "html: objects after the top pairs, before the flame graph: %r" % pos)
check("heap from main (" in page and "make_table" in page, "html object names")
rc, out, err = run(witch, "report", "--format", "html", "-o", html, old)
check(rc == 0 and 'id="objects"' not in open(html).read(), "html of an old profile: no objects table")

# ---- pprof: an object label per sample ----
go = shutil.which("go")
if go:
    pb = os.path.join(work, "o.pb.gz")
    rc, out, err = run(witch, "report", "--format", "pprof", "-o", pb, one)
    check(rc == 0, "pprof: %d %r" % (rc, err))
    def tags(*extra):
        p = subprocess.run([go, "tool", "pprof", "-tags"] + list(extra) + [pb], capture_output=True, text=True)
        check(p.returncode == 0, "go tool pprof -tags: %s" % p.stderr)
        vals = {}
        for l in p.stdout.splitlines():
            m = re.match(r"\s+([\d.]+)B \(\s*[\d.]+%\): (.*\S)\s*$", l)
            if m:
                vals[m.group(2)] = float(m.group(1))
        return p.stdout, vals
    text, vals = tags("-sample_index=waste")
    check(text.lstrip().startswith("object:"), "pprof tag key 'object': %s" % text)
    want = {H_MAIN: 200, "counts": 100, H_TABLE: 50, "stack of store_again": 50}
    check({k: v for k, v in vals.items() if v} == want, "pprof waste by object label\n got %r\n want %r" % (vals, want))
    text, vals = tags("-sample_index=use")
    check({k: v for k, v in vals.items() if v} == {H_MAIN: 60, "counts": 40, H_WRAP: 50},
          "pprof use by object label: %r" % vals)
    p = subprocess.run([go, "tool", "pprof", "-top", "-unit=B", "-tagfocus=object=counts", pb],
                       capture_output=True, text=True)
    check(p.returncode == 0 and re.search(r"accounting for 100B, 25.00% of 400B total", p.stdout) is not None,
          "pprof -tagfocus=object=counts keeps 100 bytes:\n%s" % p.stdout)
    rc, out, err = run(witch, "report", "--format", "pprof", "-o", pb, old)
    p = subprocess.run([go, "tool", "pprof", "-tags", pb], capture_output=True, text=True)
    check(p.returncode == 0 and "object" not in p.stdout, "old profile: no object label: %r" % p.stdout)
else:
    print("go is not installed: pprof labels not checked")

# ---- diff by object ----
new = g.write("new.prof", header(400, B2) + [
    "node 1 0 %#x" % (B2 + A["main_first"]), "node 2 1 %#x" % (B2 + A["inline_store"]),
    "node 3 0 %#x" % (B2 + A["main_again"]), "node 4 3 %#x" % (B2 + A["kill"]),
    "node 5 0 %#x" % (B2 + C["alloc"]),
    "object 1 heap 400 5", "object 2 tls 8 0x10 tls_counter %s" % g.prog,
    "object 3 static 64 0x7f00 fresh %s" % g.prog,
    "pair 2 4 350 0 6", "pair_object 2 4 1 250 0 0", "pair_object 2 4 2 70 0 0",
    "pair_object 2 4 3 30 0 0"])
rc, out, err = run(witch, "diff", "--json", one, new)
check(rc == 0, "diff: %d %r" % (rc, err))
jd = json.loads(out)
got = [(o["status"], o["kind"], o["name"], o["waste_change"]) for o in jd["objects"]]
wantd = [("vanished", "static", "counts", -100),
         ("grew", "tls", "tls_counter (tls)", 70),
         ("grew", "heap", H_MAIN, 50),
         ("vanished", "heap", H_TABLE, -50),
         ("vanished", "stack", "stack of store_again", -50),
         ("appeared", "static", "fresh", 30)]
check(got[:6] == wantd, "diff objects by |change|\n got  %r\n want %r" % (got, wantd))
o0 = {o["name"]: o for o in jd["objects"]}
check(o0[H_MAIN]["base"] == {"waste": 200, "use": 60, "share": 0.5} and
      o0[H_MAIN]["new"] == {"waste": 250, "use": 0, "share": 250 / 350}, "diff object metrics: %r" % o0[H_MAIN])
check(o0["fresh"]["base"] is None and o0["counts"]["new"] is None, "appeared/vanished sides are null")
check(jd["object_counts"]["grew"] == 2 and jd["object_counts"]["appeared"] == 1,
      "diff object_counts: %r" % jd["object_counts"])
rc, out, err = run(witch, "diff", one, new)
check(rc == 0 and "\nobjects:  2 grew, 0 shrank, 1 appeared," in out and
      "\n#1  vanished  waste 100 -> 0 bytes (-100)  share 25.00% -> 0.00%  static  counts\n" in out,
      "text diff lists objects:\n%s" % out)
rc, out, err = run(witch, "diff", "--json", old, old)
check(rc == 0 and json.loads(out)["objects"] == [], "diff of old profiles: no objects")

# ---- check --max-object-share ----
line = lambda: inspect.currentframe().f_back.f_lineno
cases = [  # (line, args, status, stdout)
    (line(), ["--max-object-share", "0.5", one], 0,
     "witch check: largest object share 0.50 <= 0.50 (max), %s: PASS" % H_MAIN),
    (line(), ["--max-object-share", "0.4", one], 1,
     "witch check: largest object share 0.50 > 0.40 (max), %s: FAIL" % H_MAIN),
    (line(), ["--max-object-share=0.499", one], 1,
     "witch check: largest object share 0.500 > 0.499 (max), %s: FAIL" % H_MAIN),
    (line(), ["--max-object-share", "0.6", one, two], 0,
     "witch check: largest object share 0.58 <= 0.60 (max), %s: PASS" % H_MAIN),
    (line(), ["--max-fraction", "0.9", "--max-object-share", "0.3", one], 1,
     "witch check: fraction 0.73 <= 0.90 (max); largest object share 0.50 > 0.30 (max), %s: FAIL" % H_MAIN),
    (line(), ["--baseline", old, "--max-increase", "0.1", "--max-object-share", "0.5", one], 0,
     "witch check: fraction 0.73, baseline 0.67: increase +0.06 <= 0.10 (max); "
     "largest object share 0.50 <= 0.50 (max), %s: PASS" % H_MAIN),
    (line(), ["--max-object-share", "0", old], 0,
     "witch check: largest object share 0.00 <= 0.00 (max), no objects in the profile: PASS"),
]
for ln, args, status, want in cases:
    rc, out, err = run(witch, "check", *args)
    check(rc == status and out == want + "\n" and err in ("", WARN),
          "line %d: check %s: status %d (want %d)\n stdout %r\n want   %r %r" % (ln, " ".join(args), rc, status, out, want, err))
finish("test_objects")
PYEOF
