#!/bin/sh
# Test of `witch report --format html`: the page is loaded in headless
# Chromium and what the browser shows after the page's script ran is
# checked against `witch report --json` of the same hand-written profile:
#  - summary values; the title; strings with markup characters (the
#    program path, a module path with "</script>", "<!--<script>", quotes
#    and "&") appear as text and inject nothing;
#  - the objects table (docs/objects.md) after the top pairs, names with
#    markup shown as text;
#  - flame graph: one frame per node of the tree of root-first stacks
#    (C_watch, KILLED_BY, C_trap) with the expected name, depth and waste,
#    widths proportional to waste, children inside their parents;
#  - clicking a frame zooms into it (its ancestors and descendants fill
#    the width, the rest is gone), hovering shows name, bytes and share,
#    clicking the root resets (a copy of the page with a test script);
#  - the pair table: rank, share, waste, use, traps and both contexts
#    (function, file, line, inlined) of every pair;
#  - the page leads with the answer: a sentence with the fraction, the
#    three pairs with most waste (share, what to look at, both contexts,
#    the source lines of both accesses with the line marked '>'), then the
#    flame graph (an icicle: depth d is d rows from the top), all pairs,
#    and the counters in a collapsed <details>;
#  - screenshots of a desktop (1366x900) and a phone (390x844) window show
#    a lead pair with its marked source line; a tall one (1366x2400) the
#    red marker frames of the flame graph.
# Without Chromium (Debian's chromium) the test is skipped (77).
# The page and the screenshots are kept in ARTIFACT_DIR as
# html_report.html, html_report.png, html_report_phone.png and
# html_report_full.png.
#
# Usage: test_html.sh PATH/TO/witch ARTIFACT_DIR  (needs cc, nm, readelf, python3)
set -eu
WITCH=${1:?usage: test_html.sh PATH/TO/witch ARTIFACT_DIR}
ART=${2:?usage: test_html.sh PATH/TO/witch ARTIFACT_DIR}
case $WITCH in /*) ;; *) WITCH=$(pwd)/$WITCH ;; esac
mkdir -p "$ART"
ART=$(cd "$ART" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# Chromium keeps its profile and caches under HOME: not the real one.
HOME=$T python3 - "$WITCH" "$SRC" "$T" "$ART" <<'PYEOF'
import html.parser, json, os, re, shutil, struct, subprocess, sys, zlib
witch, src, work, art = sys.argv[1:5]
sys.path.insert(0, src)
from profgen import Prog, check, finish, run

chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if chromium is None:
    print("chromium is not installed (apt-get install chromium): the HTML report cannot be checked; skipped")
    sys.exit(77)

g = Prog(src, work)
A = g.addr
B = 0x555555554000
EXE = "/opt/<b id=\"pwn\">&amp;'</script><script>document.title='pwned'</script>/app"
# The basename goes into the flame graph's JSON: "<!--<script>" there
# would keep a raw "</script>" from closing the element.
MOD = "/nonexistent/dir</script>/x<!--<script>&\"'.so"
OBJSYM = "x</script><script>document.title='pwned'</script><b_id=\"pwn2\">"
prof = g.write("one.prof", [
    "witch-profile 1", "client dead", "sampler soft", "period 1000",
    "stat samples 100", "stat watchpoints_armed 40", "stat traps 30", "stat skips 7",
    "pid 4242", "exe " + EXE, g.module_line(1, B),
    "module 2 0x7f0000000000 0x7f0000001000 0x7f0000009000 - " + MOD,
    "node 1 0 %#x" % (B + A["main_first"]), "node 2 1 %#x" % (B + A["inline_store"]),
    "node 3 0 %#x" % (B + A["main_again"]), "node 4 3 %#x" % (B + A["kill"]),
    "node 5 0 %#x" % (B + A["main_sum"]), "node 6 5 %#x" % (B + A["load"]),
    "node 7 0 0x7f0000001234",
    "pair 2 4 300.5 100 6", "pair 4 4 99.25 0 2", "pair 6 4 0 50 1",
    "pair 7 6 2500.5 0 1", "pair 6 2 40 0 1",
    # Objects (docs/objects.md): a heap object, and a static one whose
    # symbol and module hold markup (shown as text, never as elements).
    "node 8 0 %#x" % (B + g.call["alloc"]),
    "object 1 heap 4096 8", "object 2 static 64 0x555555558040 " + OBJSYM + " " + MOD,
    "pair_object 7 6 1 2000.5 0 0", "pair_object 7 6 2 500 0 0",
    "pair_object 2 4 2 300.5 100 0", "object_sampled 1 900", "object_sampled 2 100"])

page = os.path.join(art, "html_report.html")
shot = os.path.join(art, "html_report.png")
for f in (page, shot):
    if os.path.exists(f):
        os.unlink(f)
rc, out, err = run(witch, "report", "--format", "html", "-o", page, prof)
check(rc == 0 and out == "", "report --format html -o: %d %r" % (rc, err))
rc, out, err = run(witch, "report", "--json", prof)
j = json.loads(out)
MARKER = "KILLED_BY"
if not check(len(j["pairs"]) == 5, "5 pairs in the JSON report"):
    finish("test_html")
# The same page on stdout.
rc, out, err = run(witch, "report", "--format=html", prof)
check(rc == 0 and out == open(page).read(), "--format html on stdout is the -o file")


def browser(*args, url):
    """Chromium's stdout; it may complain on stderr (dbus), which is ignored."""
    try:
        p = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                            "--no-first-run", "--user-data-dir=" + os.path.join(work, "chrome")]
                           + list(args) + [url], capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        check(False, "chromium %s timed out" % " ".join(args))
        return ""
    check(p.returncode == 0, "chromium %s: exit %d: %s" % (" ".join(args), p.returncode,
                                                          p.stderr.decode(errors="replace")[-2000:]))
    return p.stdout.decode("utf-8", errors="replace")


class Dom(html.parser.HTMLParser):
    """What the checks need of a dumped DOM."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.ids, self.frames, self.summary, self.pairs = set(), [], {}, []
        self.text = {}          # element id -> its text
        self.title = ""
        self._open = []         # ids of open elements whose text is collected
        self._in_title = False
        self._ctx = None        # "watch"/"trap" in a pair row
        self._li = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if "id" in a:
            self.ids.add(a["id"])
            if tag not in ("script", "table", "tbody", "thead", "ol"):
                self._open.append([a["id"], tag, ""])
        if tag == "title":
            self._in_title = True
        if tag == "div" and "fr" in cls:
            self.frames.append(a)
        if tag == "tr" and a.get("id", "").startswith("sum-"):
            self.summary[a["id"][4:]] = a
        if tag == "tr" and "pair" in cls:
            self.pairs.append({"attrs": a, "watch": [], "trap": [], "cells": []})
        if tag == "td" and self.pairs and "ctx" in cls:
            self._ctx = "watch" if "watch" in cls else "trap"
        if tag == "li" and "frame" in cls and self._ctx:
            self._li = {"attrs": a, "inlined": "inlined" in cls, "text": ""}
            self.pairs[-1][self._ctx].append(self._li)

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        if tag == "li":
            self._li = None
        if tag == "td":
            self._ctx = None
        if self._open and self._open[-1][1] == tag:
            i, _, t = self._open.pop()
            self.text[i] = t

    def handle_data(self, d):
        if self._in_title:
            self.title += d
        if self._li is not None:
            self._li["text"] += d
        for o in self._open:
            o[2] += d


def label(f):
    return f["function"] + (" (inlined)" if f.get("inlined") else "")


def tree(pairs):
    """The flame graph's nodes: root-first path -> waste."""
    nodes = {(): 0.0}
    for p in pairs:
        if p["waste"] <= 0:
            continue
        path = [("w", label(f)) for f in reversed(p["watch"])] + [("m", MARKER)] + \
               [("t", label(f)) for f in reversed(p["trap"])]
        nodes[()] += p["waste"]
        for i in range(1, len(path) + 1):
            nodes[tuple(path[:i])] = nodes.get(tuple(path[:i]), 0.0) + p["waste"]
    return nodes


def pct(style, prop):
    m = re.search(r"(?:^|;)\s*%s:\s*([-0-9.e]+)%%" % prop, style)
    return float(m.group(1)) if m else None


def check_frames(what, frames, nodes, focus):
    """frames: the drawn divs; nodes: tree(); focus: the zoomed path."""
    n_root = sum(1 for p in j["pairs"] if p["waste"] > 0)
    want = {}
    for path, v in nodes.items():
        if path[:len(focus)] != focus and focus[:len(path)] != path:
            continue        # neither an ancestor nor a descendant of focus
        name = path[-1][1] if path else "all (%d pairs)" % n_root
        want.setdefault((len(path), name), []).append(v)
    got = {}
    for f in frames:
        got.setdefault((int(f["data-depth"]), f["data-name"]), []).append(float(f["data-waste"]))
    norm = lambda d: {k: sorted(round(x, 6) for x in v) for k, v in d.items()}
    check(norm(got) == norm(want),
          "%s: flame frames (depth, name) -> waste\n got: %r\n expected: %r"
          % (what, sorted(norm(got).items()), sorted(norm(want).items())))
    fv = nodes[focus]
    boxes = []
    for f in frames:
        d, v = int(f["data-depth"]), float(f["data-waste"])
        left, width = pct(f.get("style", ""), "left"), pct(f.get("style", ""), "width")
        if not check(left is not None and width is not None, "%s: frame %r has left/width in %%"
                     % (what, f["data-name"])):
            continue
        full = d <= len(focus)
        check(abs(width - (100 if full else 100 * v / fv)) < 1e-3,
              "%s: frame %r width %.4f%% (waste %g of %g)" % (what, f["data-name"], width, v, fv))
        boxes.append((d, left, left + width, f["data-name"]))
    for d, lo, hi, name in boxes:
        if d > 0:
            check(any(pd == d - 1 and plo - 1e-3 <= lo and hi <= phi + 1e-3
                      for pd, plo, phi, _ in boxes),
                  "%s: frame %r [%.3f, %.3f] at depth %d lies on a frame below it"
                  % (what, name, lo, hi, d))
        for d2, lo2, hi2, name2 in boxes:
            if d2 == d and (lo, name) < (lo2, name2):
                check(hi <= lo2 + 1e-3 or hi2 <= lo + 1e-3,
                      "%s: frames %r and %r overlap at depth %d" % (what, name, name2, d))


# ---- the page as the browser shows it ----
dom = Dom(browser("--dump-dom", url="file://" + page))
check(dom.title == "witch report: dead stores in app", "title: %r" % dom.title)
check("pwn" not in dom.ids, "markup in the program path made no element")
check(dom.text.get("sum-program") == "program" + EXE,
      "program path shown as text: %r" % dom.text.get("sum-program"))
for key, jk in [("samples", "samples"), ("watchpoints", "watchpoints_armed"),
                ("traps", "traps"), ("waste", "waste"), ("use", "use"),
                ("fraction", "fraction")]:
    v = dom.summary.get(key, {}).get("data-value")
    check(v is not None and abs(float(v) - j[jk]) < 1e-9,
          "summary %s = %r, JSON %r" % (key, v, j[jk]))
check(dom.text.get("sum-waste") == "waste2940 bytes (2.9 KiB)", "waste text %r" % dom.text.get("sum-waste"))
check(dom.text.get("sum-client") == "clientdead (dead stores)", "client text")
check(dom.text.get("sum-sampler") == "samplersoft (period 1000)", "sampler text")
check(dom.text.get("sum-others") == "other countersskips 7", "other counters")

nodes = tree(j["pairs"])
check(len(dom.frames) == len(nodes), "one frame per tree node: %d drawn, %d nodes"
      % (len(dom.frames), len(nodes)))
check_frames("page", dom.frames, nodes, ())
names = {f["data-name"] for f in dom.frames}
for fn in ["main", "store_first", "fill (inlined)", MARKER, "store_again", "sum",
           "[unknown in x<!--<script>&\"'.so]"]:
    check(fn in names, "flame graph has a frame %r" % fn)
check(dom.text.get("flame-info", "").startswith("all (4 pairs): 2940 bytes (2.9 KiB), 100.00% of waste"),
      "info line: %r" % dom.text.get("flame-info"))

# The pair table against the JSON.
check(len(dom.pairs) == len(j["pairs"]), "%d table rows, %d pairs" % (len(dom.pairs), len(j["pairs"])))
for k, (row, p) in enumerate(zip(dom.pairs, j["pairs"])):
    a = row["attrs"]
    check(int(a["data-rank"]) == k + 1 and float(a["data-waste"]) == p["waste"] and
          float(a["data-use"]) == p["use"] and float(a["data-share"]) == p["share"] and
          int(a["data-traps"]) == p["traps"],
          "row %d values %r, JSON %r" % (k + 1, a, {x: p[x] for x in ("waste", "use", "share", "traps")}))
    for side in ("watch", "trap"):
        got = [(li["attrs"]["data-function"], li["attrs"]["data-file"], int(li["attrs"]["data-line"]),
                li["inlined"]) for li in row[side]]
        want = [(f["function"], f["file"], f["line"], bool(f.get("inlined"))) for f in p[side]]
        check(got == want, "row %d %s frames\n got: %r\n JSON: %r" % (k + 1, side, got, want))
        for li, f in zip(row[side], p[side]):
            loc = f["file"] + (":%d" % f["line"] if f["line"] else "")
            txt = "%s%s at %s in %s [%s]" % (f["function"], "inlined" if f.get("inlined") else "",
                                               loc, f["module"], f["address"])
            check(li["text"] == txt, "row %d frame text %r, expected %r" % (k + 1, li["text"], txt))
r2 = dom.pairs[1]
check([li["attrs"]["data-line"] for li in r2["watch"]] ==
      [str(g.marks[m]) for m in ("INLINE_STORE", "CALL_FILL", "MAIN_FIRST")],
      "pair 2 watch lines are prog.c's marked lines")

# ---- clicking and hovering ----
probe = r"""<script>
(function () {
  function frames() {
    return Array.prototype.map.call(document.querySelectorAll("#flame .fr"), function (d) {
      return {"data-name": d.getAttribute("data-name"), "data-depth": d.getAttribute("data-depth"),
              "data-waste": d.getAttribute("data-waste"), "style": d.getAttribute("style")};
    });
  }
  function find(name) {
    return Array.prototype.find.call(document.querySelectorAll("#flame .fr"),
                                     function (d) { return d.getAttribute("data-name") === name; });
  }
  var r = {};
  find("store_first").click();
  r.zoom = frames();
  r.zoomInfo = document.getElementById("flame-info").textContent;
  find("KILLED_BY").dispatchEvent(new MouseEvent("mouseover", {bubbles: true}));
  r.hover = document.getElementById("flame-info").textContent;
  document.querySelector("#flame .fr-root").click();
  r.reset = frames();
  var pre = document.createElement("pre");
  pre.id = "probe-result";
  pre.textContent = JSON.stringify(r);
  document.body.appendChild(pre);
})();
</script>
"""
text = open(page).read()
check(text.count("</body>") == 1, "one </body>")
probed = os.path.join(work, "probed.html")
with open(probed, "w") as f:
    f.write(text.replace("</body>", probe + "</body>"))
pd = Dom(browser("--dump-dom", url="file://" + probed))
res = pd.text.get("probe-result")
if check(res is not None, "the probe script ran (no probe-result in the DOM)"):
    r = json.loads(res)
    focus = (("w", "main"), ("w", "store_first"))
    check_frames("zoomed into store_first", r["zoom"], nodes, focus)
    check({f["data-name"] for f in r["zoom"]} ==
          {"all (4 pairs)", "main", "store_first", "fill (inlined)", MARKER, "store_again"},
          "zoom shows only store_first, its callers and its tower: %r"
          % sorted(f["data-name"] for f in r["zoom"]))
    sf = nodes[focus]
    check(r["zoomInfo"] == "store_first: 301 bytes, %.2f%% of waste" % (100 * sf / j["waste"]),
          "info after the click: %r" % r["zoomInfo"])
    check(r["hover"] == "KILLED_BY: 301 bytes, %.2f%% of waste" % (100 * 300.5 / j["waste"]),
          "hover: %r" % r["hover"])
    check_frames("reset", r["reset"], nodes, ())
    check(len(r["reset"]) == len(nodes), "reset draws every frame again")

# ---- a profile without waste: nothing to draw, one row ----
use_only = g.write("use.prof", [
    "witch-profile 1", "client silent", "sampler soft", g.module_line(1, B),
    "node 1 0 %#x" % (B + A["kill"]), "node 2 0 %#x" % (B + A["load"]),
    "pair 1 2 0 64 3"])
upage = os.path.join(work, "use.html")
rc, out, err = run(witch, "report", "--format", "html", "-o", upage, use_only)
check(rc == 0, "report --format html of a use-only profile: %d %r" % (rc, err))
ud = Dom(browser("--dump-dom", url="file://" + upage))
check(ud.frames == [] and ud.text.get("flame-info") == "no pairs with waste: nothing to draw",
      "use-only profile: no flame frames, says so: %r" % ud.text.get("flame-info"))
check(len(ud.pairs) == 1 and ud.pairs[0]["attrs"]["data-use"] == "64" and
      [li["attrs"]["data-function"] for li in ud.pairs[0]["trap"]] == ["sum"],
      "use-only profile: one row with use 64, trapped in sum")

# ---- the page leads with the answer ----
class Lead(html.parser.HTMLParser):
    """Section order, the lead pairs, their source excerpts, <details>."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.order, self.leads, self.details_open, self.objects = [], [], None, []
        self._pre = self._span = self._oname = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if a.get("id") in ("answer", "top", "objects", "flame", "pairs", "counters"):
            self.order.append(a["id"])
        if tag == "tr" and "object" in cls:
            self.objects.append([a, ""])
        if tag == "div" and "oname" in cls and self.objects:
            self._oname = True
        if tag == "details":
            self.details_open = "open" in a
        if tag == "div" and "lead" in cls:
            self.leads.append({"attrs": a, "srcs": [], "look": "", "sides": []})
        if self.leads and tag == "div" and "side" in cls:
            self.leads[-1]["sides"].append(cls[1])
        if self.leads and tag == "pre" and "src" in cls:
            self._pre = {"file": a["data-file"], "line": int(a["data-line"]), "lines": []}
            self.leads[-1]["srcs"].append(self._pre)
        if self._pre is not None and tag == "span":
            self._span = [int(a["data-line"]), "mark" in cls, ""]
            self._pre["lines"].append(self._span)
        if self.leads and tag == "p" and "look" in cls:
            self._look = True

    def handle_endtag(self, tag):
        if tag == "pre":
            self._pre = None
        if tag == "span":
            self._span = None
        if tag == "p":
            self._look = False
        if tag == "div":
            self._oname = None

    def handle_data(self, d):
        if self._oname:
            self.objects[-1][1] += d
        if self._span is not None:
            self._span[2] += d
        if getattr(self, "_look", False):
            self.leads[-1]["look"] += d


ld = Lead(browser("--dump-dom", url="file://" + page))
check(ld.order == ["answer", "top", "objects", "flame", "pairs", "counters"],
      "sections: the answer, the top pairs, the objects, the flame graph, all pairs, counters: %r"
      % ld.order)
check([(o[0]["data-kind"], float(o[0]["data-waste"]), float(o[0]["data-share"]), o[1]) for o in ld.objects] ==
      [("heap", 2000.5, 2000.5 / j["waste"], "heap from main (prog.c:%d)" % g.marks["ALLOC"]),
       ("static", 800.5, 800.5 / j["waste"], OBJSYM + " (" + os.path.basename(MOD) + ")")],
      "objects table rows, names as text: %r" % ld.objects)
check("pwn2" not in dom.ids, "markup in an object's symbol made no element")
check(ld.details_open is False, "the counters are in a collapsed <details>")
waste_pairs = [p for p in j["pairs"] if p["waste"] > 0]
check(len(ld.leads) == 3 and [float(x["attrs"]["data-share"]) for x in ld.leads] ==
      [p["share"] for p in waste_pairs[:3]],
      "the page leads with the 3 pairs with most waste: %r" % [x["attrs"] for x in ld.leads])
check(all(x["sides"] == ["watch", "trap"] for x in ld.leads), "each lead pair shows both contexts")
# Pair 2 (fill inlined in store_first, killed by store_again): both
# instructions' lines of prog.c, marked, with 3 lines each side.
src_c = os.path.join(src, "prog.c")
if check(len(ld.leads) >= 2 and len(ld.leads[1]["srcs"]) == 2, "lead pair 2 has two source excerpts"):
    lines = open(src_c).read().split("\n")
    for ex, mark in zip(ld.leads[1]["srcs"], ("INLINE_STORE", "KILL")):
        want_line = g.marks[mark]
        check(ex["file"] == src_c and ex["line"] == want_line,
              "excerpt at %s:%d, expected %s:%d" % (ex["file"], ex["line"], src_c, want_line))
        check([l[0] for l in ex["lines"]] == list(range(want_line - 3, want_line + 4)),
              "excerpt lines %r" % [l[0] for l in ex["lines"]])
        check([l[0] for l in ex["lines"] if l[1]] == [want_line], "one marked line, the access's")
        for n, marked, text in ex["lines"]:
            check(text == "%s %5d  %s" % (">" if marked else " ", n, lines[n - 1]),
                  "excerpt line %d reads %r" % (n, text))
    check(ld.leads[1]["look"].startswith("Look at fill (prog.c:%d), inlined in store_first: what it stores is overwritten by "
                                         "store_again (prog.c:%d)" % (g.marks["INLINE_STORE"], g.marks["KILL"])),
          "what to look at: %r" % ld.leads[1]["look"])
# The icicle: the root at the top, every frame one row below its parent.
tops = {}
for f in dom.frames:
    m = re.search(r"top:\s*([0-9.]+)px", f.get("style", ""))
    tops.setdefault(int(f["data-depth"]), set()).add(float(m.group(1)) if m else None)
check(all(v == {18.0 * d} for d, v in tops.items()),
      "flame frames at depth d are d rows from the top (an icicle): %r" % tops)

# ---- screenshots: a desktop and a phone window, kept as artifacts ----
browser("--screenshot=" + shot, "--window-size=1366,900", "--hide-scrollbars",
        url="file://" + page)
phone = os.path.join(art, "html_report_phone.png")
browser("--screenshot=" + phone, "--window-size=390,844", "--hide-scrollbars",
        url="file://" + page)
tall = os.path.join(art, "html_report_full.png")
browser("--screenshot=" + tall, "--window-size=1366,2400", "--hide-scrollbars",
        url="file://" + page)


def png_pixels(path):
    """(width, height, rows of RGB(A) tuples) of an 8-bit RGB/RGBA PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        return (w, h, None)
    bpp = 3 if ctype == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ft == 1:
                line[i] = (line[i] + a) & 255
            elif ft == 2:
                line[i] = (line[i] + b) & 255
            elif ft == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ft == 4:
                p_ = a + b - c
                pa, pb, pc = abs(p_ - a), abs(p_ - b), abs(p_ - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return (w, h, [[tuple(r[x * bpp:x * bpp + 3]) for x in range(w)] for r in rows])


if check(os.path.exists(shot) and os.path.getsize(shot) > 1000,
         "screenshot %s written and not empty" % shot):
    px = png_pixels(shot)
    for path, size in ((shot, (1366, 900)), (phone, (390, 844)), (tall, (1366, 2400))):
        px = png_pixels(path)
        if not check(px is not None and px[:2] == size, "%s is a %dx%d PNG: %r"
                     % (path, size[0], size[1], (px[:2] if px else None))):
            continue
        if not check(px[2] is not None, "screenshot is 8-bit RGB(A), not interlaced"):
            continue
        count = lambda rgb: sum(row.count(rgb) for row in px[2])
        colors = len({c for row in px[2][::4] for c in row[::4]})
        check(colors > 20, "%s is not blank (%d colours)" % (path, colors))
        # The first screen shows a lead pair: its red edge and a marked
        # source line (#ffe08a).
        check(count((0xd0, 0x30, 0x30)) > 500 and count((0xff, 0xe0, 0x8a)) > 2000,
              "%s shows a lead pair and a marked source line" % path)
    px = png_pixels(tall)
    if px and px[2]:
        # Below the lead pairs, the flame graph: the widest KILLED_BY
        # frame (85% of 1366 px) is 17 px high less its white border; the
        # lead pairs' red edges are 5 px wide, the other KILLED_BY frames
        # under 200 px.
        red_rows = sum(1 for row in px[2] if row.count((0xd0, 0x30, 0x30)) > 200)
        check(red_rows >= 12, "the full page shows the red KILLED_BY frames (%d rows)" % red_rows)
print("page and screenshots: %s, %s, %s, %s" % (page, shot, phone, tall))
finish("test_html")
PYEOF
