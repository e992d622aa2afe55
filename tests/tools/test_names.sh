#!/bin/sh
# Names as people read them (issue 16), in every format of `witch report`:
#  - C++: tests/programs/cxx_names.cpp (a class template in a namespace,
#    an inlined function template) is built with c++ -O2 -g. A profile is
#    written whose pcs lie in ns::Foo<int>::bar (inside the inlined
#    ns::detail::step<unsigned int>), ::baz, ::sum and main, and each
#    format is checked against addr2line -i -f -C (binutils, demangling
#    through the same libiberty) for the same pcs: text, JSON (with the
#    mangled name in "raw", as addr2line -i -f without -C gives it),
#    folded, pprof (go tool pprof -traces; not checked without go) and
#    HTML. The program is also profiled for real under libwitch.so: where
#    its pairs exist (this needs hardware watchpoints that trap), their
#    C++ frames must be demangled.
#  - C++ heap objects (docs/objects.md): an allocation context from
#    operator new in the real libstdc++ through std::vector's inlined
#    allocator to ns::Foo<int>::Foo is named by the program's own frame,
#    its frames demangled as addr2line -i -f -C names them.
#  - Rust: tests/programs/rust_names.rs, where rustc is there: a profile
#    with pcs in rust_names::shapes::Grid::fill and ::clear, named in
#    text, JSON (raw: the mangled symbol), folded and HTML as addr2line -C
#    names them (the hash left out).
#  - Inlined calls: for every byte of ns::Foo<int>::bar and of
#    rust_names::shapes::Grid::fill, the frames (function and line,
#    inlined calls included) are addr2line -i's.
#  - Separate debug info: tests/tools/prog.c is built, its debug info
#    moved out (objcopy --only-keep-debug, strip --strip-all, objcopy
#    --add-gnu-debuglink) and a profile of the stripped binary must name
#    the same frames, files and lines as one of the unstripped binary,
#    with the debug file next to the binary and in its .debug/; without
#    the debug file the frames are "[unknown in prog]". By build-id: a
#    copy without the debug link, its debug file under .build-id/ of a
#    tree bound over /usr/lib/debug in a private mount namespace (unshare
#    -m; not checked where that is refused). With debuginfod
#    (Debian's debuginfod) a local server serves the debug file, found
#    through DEBUGINFOD_URLS alone.
# Skipped (77) without a C++ compiler.
#
# Usage: test_names.sh PATH/TO/witch PATH/TO/libwitch.so
set -eu
WITCH=${1:?usage: test_names.sh PATH/TO/witch PATH/TO/libwitch.so}
LIB=${2:?usage: test_names.sh PATH/TO/witch PATH/TO/libwitch.so}
case $WITCH in /*) ;; *) WITCH=$(pwd)/$WITCH ;; esac
SRC=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# rustc (rustup's) finds its toolchain under the real HOME.
REAL_HOME=${HOME:-/} HOME=$T python3 - "$WITCH" "$LIB" "$SRC" "$T" <<'PYEOF'
import html.parser, json, os, re, shutil, signal, socket, subprocess, sys, time
witch, lib, src, work = sys.argv[1:5]
sys.path.insert(0, src)
from profgen import Prog, check, finish, run

cxx = shutil.which("c++") or shutil.which("g++")
if cxx is None:
    print("no C++ compiler (apt-get install g++): skipped")
    sys.exit(77)

# ---- C++ ----
exe = os.path.join(work, "cxx_names")
subprocess.run([cxx, "-O2", "-g", "-fno-tree-vectorize", "-o", exe,
                os.path.join(src, "..", "programs", "cxx_names.cpp")], check=True)
syms = {}
for l in subprocess.run(["nm", "-S", "--defined-only", exe], capture_output=True, text=True,
                        check=True).stdout.splitlines():
    f = l.split()
    if len(f) == 4 and f[2] in "tTwW":
        syms[f[3]] = (int(f[0], 16), int(f[1], 16))
build_id = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(
    ["readelf", "-n", exe], capture_output=True, text=True, check=True).stdout).group(1)


def a2l(addr, demangle=True):
    """addr2line's frames of addr, innermost first: [(function, line)]."""
    out = subprocess.run(["addr2line", "-i", "-f"] + (["-C"] if demangle else []) +
                         ["-e", exe, "%x" % addr], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return [(out[i], int(re.search(r":(\d+)", out[i + 1]).group(1)) if
             re.search(r":(\d+)", out[i + 1]) else 0) for i in range(0, len(out) - 1, 2)]


def a2l_many(path, addrs):
    """addr2line -i -f -C of many pcs at once: {addr: [(function, line)]}."""
    out = subprocess.run(["addr2line", "-a", "-i", "-f", "-C", "-e", path] + ["%x" % a for a in addrs],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    res, cur = {}, None
    i = 0
    while i < len(out):
        if re.match(r"0x[0-9a-f]+$", out[i]):
            cur = res.setdefault(int(out[i], 16), [])
            i += 1
            continue
        m = re.search(r":(\d+)", out[i + 1])
        cur.append((out[i], int(m.group(1)) if m else 0))
        i += 2
    return res


def whole_function(what, path, sym, lo, size):
    """Every byte of a function, as witch --json and addr2line -i name it:
    the function names and lines of every frame, inlined ones included."""
    bid = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(
        ["readelf", "-n", path], capture_output=True, text=True, check=True).stdout).group(1)
    addrs = list(range(lo, lo + size))
    recs = ["witch-profile 1", "client dead", "sampler soft",
            "module 1 %#x %#x %#x %s %s" % (B, B + lo, B + lo + size, bid, path)]
    recs += ["node %d 0 %#x" % (i + 1, B + a) for i, a in enumerate(addrs)]
    recs += ["pair %d %d %d 0 1" % (i + 1, i + 1, i + 1) for i in range(len(addrs))]
    wf = os.path.join(work, what + "-whole.prof")
    with open(wf, "w") as f:
        f.write("\n".join(recs + ["end", ""]))
    rc, out, err = run(witch, "report", "--json", wf)
    want = a2l_many(path, addrs)
    bad = []
    for p in json.loads(out)["pairs"]:
        a = int(p["watch"][0]["address"], 16) - B
        got = [(f["function"], f["line"]) for f in p["watch"]]
        if got != want[a]:
            bad.append((hex(a), got, want[a]))
    check(rc == 0 and not bad, "%s: every pc of %s named as addr2line -i -f -C names it; %d differ: %r"
          % (what, sym, len(bad), bad[:3]))


def pick(sym, want):
    """A pc in sym whose addr2line frames satisfy want(frames)."""
    lo, size = syms[sym]
    for a in range(lo, lo + size):
        fr = a2l(a)
        if fr and all(l > 0 for _, l in fr) and want(fr):
            return a
    sys.exit("no pc in %s as wanted" % sym)


BAR, BAZ, SUM = "_ZN2ns3FooIiE3barEi", "_ZN2ns3FooIiE3bazEi", "_ZNK2ns3FooIiE3sumEv"
pcs = {
    "bar": pick(BAR, lambda f: len(f) == 2 and "step<" in f[0][0]),
    "baz": pick(BAZ, lambda f: len(f) == 1),
    "sum": pick(SUM, lambda f: len(f) == 1),
    "main": pick("main", lambda f: len(f) == 1 and f[0][0] == "main"),
}
B = 0x555555554000
text_lo = min(a for a, s in syms.values())
text_hi = max(a + s for a, s in syms.values()) + 16
prof = os.path.join(work, "cxx.prof")
with open(prof, "w") as f:
    f.write("\n".join([
        "witch-profile 1", "client dead", "sampler soft", "stat samples 10",
        "module 1 %#x %#x %#x %s %s" % (B, B + text_lo, B + text_hi, build_id, exe),
        "node 1 0 %#x" % (B + pcs["main"]), "node 2 1 %#x" % (B + pcs["bar"]),
        "node 3 0 %#x" % (B + pcs["main"]), "node 4 3 %#x" % (B + pcs["baz"]),
        "node 5 0 %#x" % (B + pcs["main"]), "node 6 5 %#x" % (B + pcs["sum"]),
        "pair 2 4 1000 0 5", "pair 4 6 0 900 4", "end", ""]))

# Expected contexts, leaf first: addr2line's frames of the leaf, then main's.
def context(leaf):
    return a2l(pcs[leaf]) + a2l(pcs["main"]), a2l(pcs[leaf], False) + a2l(pcs["main"], False)

watch, watch_raw = context("bar")
trap, trap_raw = context("baz")
check(watch[0][0] == "unsigned int ns::detail::step<unsigned int>(unsigned int)" and
      watch[1][0] == "ns::Foo<int>::bar(int)" and trap[0][0] == "ns::Foo<int>::baz(int)",
      "addr2line names the pcs as the test expects: %r %r" % (watch, trap))
whole_function("C++", exe, BAR, *syms[BAR])
inl_w = [True] + [False] * (len(watch) - 1)
inl_t = [False] * len(trap)


def check_text(out):
    for i, ((fn, line), inl) in enumerate(zip(watch, inl_w)):
        check(re.search(r"#%-2d %s%s at \S+cxx_names.cpp:%d in " % (i, re.escape(fn), " \\(inlined\\)" if inl else "", line),
                        out), "text shows frame #%d %s:%d\n%s" % (i, fn, line, out))
    check(re.search(r"#0  %s at \S+cxx_names.cpp:%d" % (re.escape(trap[0][0]), trap[0][1]), out),
          "text shows %s" % trap[0][0])
    check("_ZN" not in out, "no mangled name in the text report")


def check_json(out):
    j = json.loads(out)
    p = j["pairs"][0]
    for side, want, raw in (("watch", watch, watch_raw), ("trap", trap, trap_raw)):
        got = [(f["function"], f["line"]) for f in p[side]]
        check(got == want, "JSON %s frames\n got: %r\n addr2line: %r" % (side, got, want))
        got_raw = [f.get("raw") for f in p[side]]
        want_r = [r if r != fn else None for (r, _), (fn, _) in zip(raw, want)]
        check(got_raw == want_r, "JSON %s raw names\n got: %r\n want: %r" % (side, got_raw, want_r))


def check_folded(out):
    names = lambda fr, inl: [fn + ("_[i]" if i else "") for (fn, _), i in zip(fr, inl)]
    want = ";".join(list(reversed(names(watch, inl_w))) + ["KILLED_BY"] +
                    list(reversed(names(trap, inl_t)))) + " 1000\n"
    check(out == want, "folded\n got: %r\n want: %r" % (out, want))


def check_html(out):
    class P(html.parser.HTMLParser):
        fns, ctx = {"watch": [], "trap": []}, None
        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            cls = (a.get("class") or "").split()
            if tag == "tr" and "pair" in cls:
                self.row = a.get("data-rank")
            if tag == "td" and "ctx" in cls:
                self.ctx = cls[1]
            if tag == "li" and "frame" in cls and self.ctx and self.row == "1":
                self.fns[self.ctx].append(a["data-function"])
        def handle_endtag(self, tag):
            if tag == "td":
                self.ctx = None
    p = P(convert_charrefs=True)
    p.row = None
    p.feed(out)
    check(p.fns == {"watch": [f for f, _ in watch], "trap": [f for f, _ in trap]},
          "HTML pair table frames: %r" % p.fns)
    check("ns::Foo&lt;int&gt;::bar(int)" in out.split('id="flame-graph"')[0],
          "the HTML page's lead names ns::Foo<int>::bar(int)")


def check_pprof(_):
    go = shutil.which("go")
    if go is None:
        print("go is not installed: pprof names not checked")
        return
    path = os.path.join(work, "cxx.pb.gz")
    rc, out, err = run(witch, "report", "--format", "pprof", "-o", path, prof)
    p = subprocess.run([go, "tool", "pprof", "-traces", path], capture_output=True, text=True)
    check(p.returncode == 0, "go tool pprof: %s" % p.stderr)
    # pprof drops a C++ name's parameter list (and return type) in reports.
    for fn in ("ns::detail::step<unsigned int>", "ns::Foo<int>::bar", "ns::Foo<int>::baz"):
        check(fn in p.stdout, "go tool pprof -traces shows %s:\n%s" % (fn, p.stdout))
    check("_ZN" not in p.stdout, "no mangled name in pprof's report")


for fmt, fn in (("text", check_text), ("json", check_json), ("folded", check_folded),
                ("html", check_html), ("pprof", check_pprof)):
    if fmt == "pprof":
        fn(None)
        continue
    rc, out, err = run(witch, "report", "--format", fmt, prof)
    if check(rc == 0 and err == "", "report --format %s: %d %r" % (fmt, rc, err)):
        fn(out)

# A C++ heap object (docs/objects.md): Foo's std::vector allocates with
# operator new in libstdc++, the allocation context's leaf. The object is
# named by the program's own code: neither libstdc++ nor the std::vector
# and allocator frames inlined from /usr/include/c++ name it, but the
# first frame from cxx_names.cpp, ns::Foo<int>::Foo; its frames are
# demangled, operator new's with its mangled name in "raw".
stdcxx = os.path.realpath(subprocess.run([cxx, "-print-file-name=libstdc++.so.6"], capture_output=True,
                                         text=True, check=True).stdout.strip())
if os.path.exists(stdcxx):
    lb = 0x7f0000000000
    load = [l.split() for l in subprocess.run(["readelf", "-lW", stdcxx], capture_output=True, text=True,
                                              check=True).stdout.splitlines() if l.strip().startswith("LOAD")]
    xseg = [f for f in load if "E" in f[6:-1]][0]
    xlo, xsz = int(xseg[2], 16), int(xseg[5], 16)
    new_addr = [int(l.split()[0], 16) for l in subprocess.run(["nm", "-D", "--defined-only", stdcxx],
                capture_output=True, text=True, check=True).stdout.splitlines()
                if l.split()[-1].split("@")[0] == "_Znwm"][0]
    sbid = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(
        ["readelf", "-n", stdcxx], capture_output=True, text=True, check=True).stdout).group(1)
    dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", exe], capture_output=True, text=True,
                          check=True).stdout
    insns = [(int(m.group(1), 16), m.group(2)) for m in re.finditer(r"^\s*([0-9a-f]+):\s*(.*)$", dump, re.M)]
    mlo, msz = syms["main"]
    site = [insns[i + 1][0] - 1 for i, (a, t) in enumerate(insns[:-1])
            if mlo <= a < mlo + msz and t.startswith("call") and t.endswith("<_Znwm@plt>")][0]
    frames = subprocess.run(["addr2line", "-i", "-f", "-C", "-e", exe, "%x" % site], capture_output=True,
                            text=True, check=True).stdout.splitlines()
    own = [(frames[i], frames[i + 1]) for i in range(0, len(frames), 2)
           if "cxx_names.cpp" in frames[i + 1]][0]
    heap = os.path.join(work, "cxx_heap.prof")
    with open(heap, "w") as f:
        f.write("\n".join([
            "witch-profile 1", "client dead", "sampler soft", "exe " + exe,
            "module 1 %#x %#x %#x %s %s" % (B, B + text_lo, B + text_hi, build_id, exe),
            "module 2 %#x %#x %#x %s %s" % (lb, lb + xlo, lb + xlo + xsz, sbid, stdcxx),
            "node 1 0 %#x" % (B + pcs["main"]), "node 2 1 %#x" % (B + pcs["bar"]),
            "node 3 0 %#x" % (B + pcs["main"]), "node 4 3 %#x" % (B + pcs["baz"]),
            "node 5 0 %#x" % (B + site), "node 6 5 %#x" % (lb + new_addr + 4),
            "object 1 heap 33554432 6", "pair 2 4 1000 0 5", "pair_object 2 4 1 1000 0 0",
            "end", ""]))
    rc, out, err = run(witch, "report", "--json", heap)
    if check(rc == 0, "C++ heap object: %d %r" % (rc, err)):
        o = json.loads(out)["objects"][0]
        want = "heap from %s (%s)" % (own[0], os.path.basename(own[1].split(" ")[0]))
        check(o["name"] == want, "C++ heap object named by the program's code\n got  %r\n want %r" % (o["name"], want))
        check(o["alloc"][0]["function"] == "operator new(unsigned long)" and o["alloc"][0]["raw"] == "_Znwm"
              and o["alloc"][0]["module"] == stdcxx, "operator new demangled in alloc: %r" % o["alloc"][0])
        check([f["function"] for f in o["alloc"][1:]] == frames[0::2],
              "the allocation context's frames are addr2line -i -f -C's\n got  %r\n want %r"
              % ([f["function"] for f in o["alloc"][1:]], frames[0::2]))
    rc, out, err = run(witch, "report", heap)
    check(rc == 0 and "    heap from ns::Foo<int>::Foo(unsigned long) (" in out and
          "      #0  operator new(unsigned long) at " in out, "C++ heap object in the text report")
else:
    print("(no libstdc++.so.6 found: the C++ heap object is not checked)")

# The program profiled for real.
real = os.path.join(work, "real.prof")
env = dict(os.environ, LD_PRELOAD=lib, WITCH_SAMPLER="soft", WITCH_RATE="2000",
           WITCH_SEED="1", WITCH_OUTPUT=real)
ran = subprocess.run([exe, "6"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                     text=True, check=True)
if "hardware watchpoints do not trigger" in ran.stderr:
    print("(the real run is not checked: %s)" % ran.stderr.strip())
    rc = None
else:
    rc, out, err = run(witch, "report", "--json", real)
if rc is not None and check(rc == 0, "report of the real run: %r" % err):
    j = json.loads(out)
    fns = {f["function"] for p in j["pairs"] for s in ("watch", "trap") for f in p[s]}
    if j["pairs"]:
        check(any(f.startswith("ns::Foo<int>::") for f in fns) and
              not any(f.startswith("_Z") for f in fns),
              "the real run's frames are demangled: %r" % sorted(fns))
    else:
        print("(the real run has no pairs: no watchpoint trapped on this machine)")

# ---- Rust ----
rustc = shutil.which("rustc")
rexe = os.path.join(work, "rust_names")
built = rustc is not None and subprocess.run(
    [rustc, "-O", "-g", "-o", rexe, os.path.join(src, "..", "programs", "rust_names.rs")],
    env=dict(os.environ, HOME=os.environ.get("REAL_HOME", "/")), capture_output=True).returncode == 0
if not built:
    print("rustc is not installed or cannot build: Rust names not checked")
else:
    exe = rexe   # a2l() reads exe
    rsyms = {}
    for l in subprocess.run(["nm", "-S", "--defined-only", rexe], capture_output=True, text=True,
                            check=True).stdout.splitlines():
        f = l.split()
        if len(f) == 4 and re.search(r"Grid(4fill|5clear)", f[3]):
            rsyms["fill" if "4fill" in f[3] else "clear"] = (f[3], int(f[0], 16), int(f[1], 16))
    rpcs = {}
    for k, (sym, lo, size) in rsyms.items():
        for a in range(lo, lo + size):
            fr = a2l(a)
            if len(fr) == 1 and fr[0][1] > 0:
                rpcs[k] = a
                break
    whole_function("Rust", rexe, rsyms["fill"][0], *rsyms["fill"][1:])
    if check(set(rpcs) == {"fill", "clear"}, "pcs in Grid::fill and Grid::clear: %r" % rsyms):
        rid = re.search(r"Build ID: ([0-9a-f]+)", subprocess.run(
            ["readelf", "-n", rexe], capture_output=True, text=True, check=True).stdout).group(1)
        rprof = os.path.join(work, "rust.prof")
        with open(rprof, "w") as f:
            f.write("\n".join([
                "witch-profile 1", "client dead", "sampler soft",
                "module 1 %#x %#x %#x %s %s" % (B, B + 0x1000, B + 0x1000000, rid, rexe),
                "node 1 0 %#x" % (B + rpcs["fill"]), "node 2 0 %#x" % (B + rpcs["clear"]),
                "pair 1 2 64 0 1", "end", ""]))
        fill, clear = a2l(rpcs["fill"])[0][0], a2l(rpcs["clear"])[0][0]
        check((fill, clear) == ("rust_names::shapes::Grid::fill", "rust_names::shapes::Grid::clear"),
              "addr2line -C names them: %r" % ((fill, clear),))
        rc, out, err = run(witch, "report", "--json", rprof)
        p = json.loads(out)["pairs"][0]
        check([(f["function"], f.get("raw")) for f in p["watch"] + p["trap"]] ==
              [(fill, rsyms["fill"][0]), (clear, rsyms["clear"][0])],
              "Rust JSON names and raw symbols: %r" % (p["watch"] + p["trap"]))
        for fmt, want in (("text", "#0  %s at " % fill), ("folded", "%s;KILLED_BY;%s 64\n" % (fill, clear)),
                          ("html", 'data-function="%s"' % clear)):
            rc, out, err = run(witch, "report", "--format", fmt, rprof)
            check(rc == 0 and want in out and "_ZN" not in out,
                  "Rust names in %s: %r not in\n%s" % (fmt, want, out[:3000]))

# ---- separate debug info ----
g = Prog(src, work)
A = g.addr
plain = g.write("plain.prof", [
    "witch-profile 1", "client dead", "sampler soft", g.module_line(1, B),
    "node 1 0 %#x" % (B + A["main_first"]), "node 2 1 %#x" % (B + A["inline_store"]),
    "node 3 0 %#x" % (B + A["main_again"]), "node 4 3 %#x" % (B + A["kill"]),
    "pair 2 4 100 0 3"])
rc, out, err = run(witch, "report", "--json", plain)
want = json.loads(out)["pairs"]
sdir = os.path.join(work, "stripped")
os.makedirs(os.path.join(sdir, ".debug"))
sprog = os.path.join(sdir, "prog")
shutil.copy(g.prog, sprog)
dbg = os.path.join(sdir, "prog.debug")
subprocess.run(["objcopy", "--only-keep-debug", sprog, dbg], check=True)
subprocess.run(["strip", "--strip-all", sprog], check=True)
subprocess.run(["objcopy", "--add-gnu-debuglink=" + dbg, sprog], check=True)
secs = subprocess.run(["readelf", "-S", sprog], capture_output=True, text=True).stdout
check(".debug_info" not in secs and ".symtab" not in secs and ".gnu_debuglink" in secs,
      "the stripped binary has no debug info or symbols, and a debug link")
sprof = g.write("stripped.prof", [l.replace(g.prog, sprog) for l in open(plain).read().split("\n")[:-2]])


def frames_of(out):
    return [[(f["function"], f["file"], f["line"], f.get("inlined", False)) for f in p[s]]
            for p in json.loads(out)["pairs"] for s in ("watch", "trap")]


expect = [[(f["function"], f["file"], f["line"], f.get("inlined", False)) for f in p[s]]
          for p in want for s in ("watch", "trap")]
check(expect[0][0][0] == "fill" and expect[0][0][3], "the unstripped profile names fill (inlined)")
where = [("next to the binary", dbg), ("in .debug/", os.path.join(sdir, ".debug", "prog.debug")),
         ("nowhere", os.path.join(work, "hidden.debug"))]
for what, place in where:
    if place != dbg:
        os.rename(dbg if os.path.exists(dbg) else where[1][1], place)
    rc, out, err = run(witch, "report", "--json", sprof)
    got = frames_of(out) if rc == 0 else None
    if what == "nowhere":
        check(got is not None and all(f[0] == "[unknown in prog]" for fr in got for f in fr),
              "without the debug file the frames are [unknown in prog]: %r" % got)
    else:
        check(got == expect, "debug file %s: frames\n got: %r\n want: %r" % (what, got, expect))

# By build-id under /usr/lib/debug/.build-id, with no debug link: in a
# private mount namespace the test's own tree is bound over /usr/lib/debug
# (nothing outside the namespace sees it); not checked where unshare or
# the mount is refused (not root, a container without CAP_SYS_ADMIN).
nolink = os.path.join(sdir, "prog.nolink")
subprocess.run(["objcopy", "--remove-section=.gnu_debuglink", sprog, nolink], check=True)
nprof = g.write("nolink.prof", [l.replace(g.prog, nolink) for l in open(plain).read().split("\n")[:-2]])
tree = os.path.join(work, "usr-lib-debug")
os.makedirs(os.path.join(tree, ".build-id", g.build_id[:2]))
shutil.copy(os.path.join(work, "hidden.debug"),
            os.path.join(tree, ".build-id", g.build_id[:2], g.build_id[2:] + ".debug"))
ns = subprocess.run(["unshare", "-m", "sh", "-c", 'mount --bind "$1" /usr/lib/debug && "$2" report --json "$3"',
                     "sh", tree, witch, nprof], capture_output=True, text=True) \
    if shutil.which("unshare") and os.path.isdir("/usr/lib/debug") else None
if ns is None or ns.returncode != 0:
    print("no private mount namespace here (%s): the build-id directory not checked"
          % (ns.stderr.strip() if ns else "no unshare or /usr/lib/debug"))
else:
    got = frames_of(ns.stdout)
    check(got == expect, "debug file by build-id in /usr/lib/debug/.build-id: frames\n got: %r\n want: %r"
          % (got, expect))
    rc, out, err = run(witch, "report", "--json", nprof)
    check(rc == 0 and all(f[0] == "[unknown in prog.nolink]" for fr in frames_of(out) for f in fr),
          "without the build-id tree the binary without a debug link has no names")

# debuginfod: a local server has the debug file; the binary's own is gone.
dbgd = shutil.which("debuginfod")
if dbgd is None:
    print("debuginfod is not installed: not checked")
else:
    served = os.path.join(work, "served")
    os.makedirs(served)
    shutil.copy(os.path.join(work, "hidden.debug"), os.path.join(served, "prog.debug"))
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    srv = subprocess.Popen([dbgd, "-d", os.path.join(work, "dbi.sqlite"), "-p", str(port),
                            "-F", served, "-t", "0", "-g", "0"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        env = dict(os.environ, DEBUGINFOD_URLS="http://127.0.0.1:%d" % port,
                   DEBUGINFOD_CACHE_PATH=os.path.join(work, "dcache"), DEBUGINFOD_TIMEOUT="10")
        got = None
        for _ in range(40):   # until the server has scanned its directory
            rc, out, err = run(witch, "report", "--json", sprof, env=env)
            got = frames_of(out) if rc == 0 else None
            if got == expect:
                break
            shutil.rmtree(os.path.join(work, "dcache"), ignore_errors=True)
            time.sleep(0.25)
        check(got == expect, "debuginfod: frames\n got: %r\n want: %r" % (got, expect))
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait()
finish("test_names")
PYEOF
