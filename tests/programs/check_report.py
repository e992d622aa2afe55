#!/usr/bin/env python3
"""check_report.py: check a `witch report --json` output against known answers.

usage: check_report.py JSON [--fraction F --tol T] [--fraction-below X]
                       [--top-pair WATCHFN TRAPFN]
                       [--shares FN1:FN2=S1,FN3:FN4=S2,... --tol T]
                       [--approx-fraction F] [--approx-shares FN1:FN2=S1,...]
                       [--sampled-shares FN=S,... --tol T]
                       [--object-share NAME=S ...] [--object-kind NAME=KIND ...]
                       [--object-sampled-share NAME=S ...] [--no-object NAME ...]
                       [--no-trap-in-module M] [--no-watch-in-module M]
                       [--trap-fns-for WATCHFN=TRAPFN[,TRAPFN...]]
                       [--trap-path-for WATCHFN=FN/FN...]
                       [--min-samples N] [--min-traps N] [--max-stat NAME=N] [--min-stat NAME=N]
                       [--client NAME] [--sampler NAME] [--verdicts NAME]
                       [--covered F --tol T] [--match-depth K] [-v]

JSON is the report file ('-' = stdin):
  {"client":..., "sampler":..., "samples":N, "watchpoints_armed":N, "traps":N,
   "waste":B, "use":B, "fraction":F, ["waste_approx":B,]
   "pairs":[{"waste":B, "use":B, "share":S, "traps":N, ["waste_approx":B,]
             "watch":[FRAME,...], "trap":[FRAME,...]}, ...]}
  FRAME = {"function":..., "file":..., "line":N, "module":..., "address":"0x..."},
  frames leaf first, pairs sorted by waste (largest first).  waste_approx
  (silent client: the part of waste that was only approximately silent,
  floating-point values within WITCH_FP_TOLERANCE) appears only when
  nonzero; a missing one counts as 0.
  Data-centric attribution (docs/objects.md) adds a top-level
  "objects":[{"kind":..., "name":..., "alloc":[FRAME,...], "size":N,
  "waste":B, "use":B, "share":S, "sampled":B}, ...] sorted by waste, and
  per pair "objects":[{"kind","name","waste","use"}, ...].

Matching.  A function key FN matches a call path when one of the path's first
K frames (K = --match-depth, default 3) is function FN; K > 1 tolerates a
checked function whose leaf is something it called or that got inlined into
it (e.g. a store loop turned into memset: leaf memset, frame 2 the function).
Function names are compared after dropping gcc clone suffixes (`fill.isra.0`,
`fill.constprop.0`, `fill.part.0`, `fill.cold` all compare as `fill`).  A pair
matches WATCHFN:TRAPFN when its watch path matches WATCHFN and its trap path
matches TRAPFN.  --match-depth 1 makes every match leaf-only.

Checks (each failure prints what was expected and what was found):
  format            always: required keys present, numbers are numbers, pairs
                    sorted by waste, fraction == waste/(waste+use) (+-1e-3),
                    every waste_approx (top level, per pair) a number in
                    [0, the waste beside it]
  --fraction F      |fraction - F| <= tol
  --fraction-below X  fraction < X
  --top-pair W T    the pair with the most waste (waste > 0) matches W:T
  --shares K=S,...  for each key W:T, the sum of `share` over the pairs that
                    match it is within tol of S (a pair may count for several
                    keys).  `share` is the report's field (for the dead
                    client: the pair's part of all waste); a pair without it
                    gets waste/total waste.
  --approx-fraction F  |waste_approx / waste - F| <= tol, both the report's
                    top-level totals (0 when waste is 0)
  --sampled-shares FN=S,...  for each FN, the share of `sampled_total` (the
                    bytes the samples stand for, WITCH_WATCHPOINTS=0 or not)
                    in contexts whose first named function, leaf first, is FN:
                    within --tol of S
  --sampled-split FN=S,...  among the sampled contexts whose leaf (first
                    frame with a function name) matches one of the FNs (shell
                    patterns: `__memcpy_*`), each FN's share of their bytes:
                    within --split-tol of S.  Shares of code in one loop do
                    not move with the machine's speed on code elsewhere, as
                    shares of the whole do.
  --split-tol T     tolerance of --sampled-split (default 0.05)
  --approx-shares K=S,...  like --shares, for waste_approx: for each key
                    W:T, the sum of the matching pairs' waste_approx over
                    the total waste_approx is within tol of S (0 when there
                    is no approximate waste)
  --object-share NAME=S  (repeatable) the summed `share` (else waste/total
                    waste) of the report's objects named NAME, or NAME
                    followed by " (" (so "heap from alloc_a" matches
                    "heap from alloc_a (prog.c:12)"), is within --tol of S;
                    fails when the report has no "objects" list
  --object-sampled-share NAME=S  (repeatable) as --object-share, of the
                    objects' `sampled` bytes (what the samples stand for: the
                    whole answer with WITCH_WATCHPOINTS=0)
  --object-sampled-among KIND  the --object-sampled-share shares are of the
                    sampled bytes of KIND's objects only (heap: which site,
                    apart from what the program's own frames take)
  --object-kind NAME=KIND  (repeatable) every object NAME matches (as
                    above) is of kind KIND, and there is one
  --no-object NAME  (repeatable) no object NAME matches (as above) has
                    sampled bytes, waste or use; fails when the report has
                    no "objects" list
  format (objects)  when "objects" is present: each an object with a kind
                    of heap/static/tls/stack/unknown, a string name and
                    numeric waste and use, sorted by waste; a pair's
                    "objects", when present, sum to its waste and use
                    (within 0.1% + 2 bytes: estimates are rounded)
  --no-trap-in-module M   no frame of any trap path is in module M (compared
                    by file name: M, or M followed by a version suffix)
  --no-watch-in-module M  the same for watch paths
  --trap-fns-for W=T1,T2  every pair whose watch path matches W has a trap
                    path matching one of T1, T2, ... (repeatable)
  --trap-path-for W=F1/F2/...  every pair whose watch path's leaf is W
                    (after clone suffixes) has a trap path whose leading
                    functions are F1, F2, ... in that order, for one of the
                    alternatives given by repeating the option for W
  --min-samples N, --min-traps N   samples >= N, traps >= N
  --max-stat NAME=N  the report's "stats" object has counter NAME <= N
                     (NAME/DENOM=N: the ratio of two counters)
  --min-stat NAME=N  ... and counter NAME >= N
                    (repeatable; e.g. traps_spurious=0).  A missing "stats"
                    object or counter is a failure.
  --client NAME, --sampler NAME    the report's client/sampler field
  --verdicts NAME   the report's verdicts field (traps, window, none)
  --covered F       the verdicts' part of the sampled bytes, (waste + use) /
                    sampled_total, within --tol of F (with
                    WITCH_WATCHPOINTS=window: what the run-ahead reached)
--tol defaults to 0.1.  Exit status: 0 if every check passed, 1 if any failed
(or the report is unreadable), 2 on a usage error.  The last line printed is
a one-line summary starting `check_report: PASS` or `check_report: FAIL`.
"""

import argparse
import fnmatch
import json
import math
import os
import sys

REQUIRED = {
    "client": str, "sampler": str, "samples": (int,), "watchpoints_armed": (int,),
    "traps": (int,), "waste": (int, float), "use": (int, float),
    "fraction": (int, float), "pairs": list,
}


def norm_fn(name):
    if not isinstance(name, str):
        return ""
    return name.split(".", 1)[0]


def frames(pair, side):
    fr = pair.get(side)
    return fr if isinstance(fr, list) else []


def path_matches(path, fn, depth):
    return any(isinstance(f, dict) and norm_fn(f.get("function")) == fn
               for f in path[:depth])


def pair_matches(pair, wfn, tfn, depth):
    return (path_matches(frames(pair, "watch"), wfn, depth) and
            path_matches(frames(pair, "trap"), tfn, depth))


def module_matches(module, want):
    if not isinstance(module, str) or not module:
        return False
    base = os.path.basename(module)
    return base == want or base.startswith(want + ".") or module == want


def frame_name(f):
    if not isinstance(f, dict):
        return "?"
    n = f.get("function")
    mod = os.path.basename(f.get("module") or "")
    return (n if isinstance(n, str) and n else "??") + (f"@{mod}" if mod else "")


def path_desc(path, depth=3):
    if not path:
        return "[]"
    more = ", ..." if len(path) > depth else ""
    return "[" + ", ".join(frame_name(f) for f in path[:depth]) + more + "]"


def describe(pair):
    return (f"watch {path_desc(frames(pair, 'watch'))} -> trap {path_desc(frames(pair, 'trap'))}"
            f" waste={num(pair.get('waste'))} use={num(pair.get('use'))}"
            f" share={num(pair.get('share'))} traps={pair.get('traps')}"
            + (f" waste_approx={num(pair.get('waste_approx'))}" if "waste_approx" in pair else ""))


def num(x):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return repr(x)
    if isinstance(x, int):
        return str(x)
    return f"{x:.4g}"


def is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def parse_key(key, what):
    if ":" not in key:
        raise argparse.ArgumentTypeError(f"{what}: expected WATCHFN:TRAPFN, got {key!r}")
    w, t = key.split(":", 1)
    if not w or not t:
        raise argparse.ArgumentTypeError(f"{what}: expected WATCHFN:TRAPFN, got {key!r}")
    return w, t


def parse_shares(text, opt="--shares"):
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise argparse.ArgumentTypeError(f"{opt}: expected FN1:FN2=S, got {item!r}")
        key, val = item.rsplit("=", 1)
        w, t = parse_key(key, opt)
        try:
            s = float(val)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{opt}: {val!r} is not a number")
        out.append((w, t, s))
    if not out:
        raise argparse.ArgumentTypeError(f"{opt}: empty list")
    return out


def parse_approx_shares(text):
    return parse_shares(text, "--approx-shares")


def parse_trap_path(text):
    w, sep, path = text.partition("=")
    fns = [f for f in path.split("/") if f]
    if not sep or not w or not fns:
        raise argparse.ArgumentTypeError(
            f"--trap-path-for: expected WATCHFN=FN/FN..., got {text!r}")
    return w, fns


def parse_trap_fns(text):
    if "=" not in text:
        raise argparse.ArgumentTypeError(
            f"--trap-fns-for: expected WATCHFN=TRAPFN[,TRAPFN...], got {text!r}")
    w, ts = text.split("=", 1)
    tl = [t for t in (x.strip() for x in ts.split(",")) if t]
    if not w or not tl:
        raise argparse.ArgumentTypeError(
            f"--trap-fns-for: expected WATCHFN=TRAPFN[,TRAPFN...], got {text!r}")
    return w, tl


def parse_stat(text):
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"--max-stat: expected NAME=N, got {text!r}")
    name, val = text.split("=", 1)
    if name.count("/") > 1 or name.startswith("/") or name.endswith("/"):
        raise argparse.ArgumentTypeError(f"--max-stat: expected NAME or NAME/NAME, got {name!r}")
    try:
        return name, float(val)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--max-stat: {val!r} is not a number")


def parse_sampled_shares(text):
    out = []
    for item in text.split(","):
        fn, sep, val = item.strip().rpartition("=")
        try:
            if not sep or not fn:
                raise ValueError
            out.append((fn, float(val)))
        except ValueError:
            raise argparse.ArgumentTypeError(f"--sampled-shares: expected FN=S, got {item!r}")
    return out


def parse_sampled_split(text):
    try:
        return parse_sampled_shares(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"--sampled-split: expected FN=S,..., got {text!r}")


def parse_object_share(text):
    name, sep, val = text.rpartition("=")
    try:
        if not sep or not name:
            raise ValueError
        return name, float(val)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--object-share: expected NAME=S, got {text!r}")


def parse_object_kind(text):
    name, sep, kind = text.rpartition("=")
    if not sep or not name or kind not in OBJECT_KINDS:
        raise argparse.ArgumentTypeError(
            f"--object-kind: expected NAME=KIND, KIND one of {'/'.join(OBJECT_KINDS)}, got {text!r}")
    return name, kind


OBJECT_KINDS = ("heap", "static", "tls", "stack", "unknown")


def object_named(obj, name):
    n = obj.get("name") if isinstance(obj, dict) else None
    return isinstance(n, str) and (n == name or n.startswith(name + " ("))


def main(argv):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("json", metavar="JSON")
    ap.add_argument("--fraction", type=float)
    ap.add_argument("--tol", type=float, default=0.1)
    ap.add_argument("--fraction-below", type=float)
    ap.add_argument("--top-pair", nargs=2, metavar=("WATCHFN", "TRAPFN"))
    ap.add_argument("--shares", type=parse_shares)
    ap.add_argument("--sampled-shares", type=parse_sampled_shares, metavar="FN=S[,FN=S...]")
    ap.add_argument("--sampled-split", type=parse_sampled_split, metavar="FN=S[,FN=S...]")
    ap.add_argument("--split-tol", type=float, default=0.05)
    ap.add_argument("--object-share", type=parse_object_share, action="append", default=[],
                    metavar="NAME=S")
    ap.add_argument("--object-kind", type=parse_object_kind, action="append", default=[],
                    metavar="NAME=KIND")
    ap.add_argument("--object-sampled-share", type=parse_object_share, action="append",
                    default=[], metavar="NAME=S")
    ap.add_argument("--object-sampled-among", choices=OBJECT_KINDS, metavar="KIND")
    ap.add_argument("--no-object", action="append", default=[], metavar="NAME")
    ap.add_argument("--max-object-share", type=parse_object_share, action="append",
                    default=[], metavar="NAME=S")
    ap.add_argument("--approx-fraction", type=float)
    ap.add_argument("--approx-shares", type=parse_approx_shares)
    ap.add_argument("--no-trap-in-module", action="append", default=[], metavar="M")
    ap.add_argument("--no-watch-in-module", action="append", default=[], metavar="M")
    ap.add_argument("--trap-path-for", type=parse_trap_path, action="append", default=[])
    ap.add_argument("--trap-fns-for", type=parse_trap_fns, action="append", default=[],
                    metavar="WATCHFN=TRAPFN[,...]")
    ap.add_argument("--min-samples", type=int)
    ap.add_argument("--min-traps", type=int)
    ap.add_argument("--max-stat", type=parse_stat, action="append", default=[],
                    metavar="NAME=N")
    ap.add_argument("--min-stat", type=parse_stat, action="append", default=[],
                    metavar="NAME=N")
    ap.add_argument("--client")
    ap.add_argument("--sampler")
    ap.add_argument("--verdicts")
    ap.add_argument("--covered", type=float)
    ap.add_argument("--match-depth", type=int, default=3)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    if args.match_depth < 1:
        ap.error("--match-depth must be >= 1")

    name = args.json
    try:
        if name == "-":
            rep = json.load(sys.stdin)
            name = "<stdin>"
        else:
            with open(name) as f:
                rep = json.load(f)
    except (OSError, ValueError) as e:
        print(f"FAIL read: cannot read a JSON report from {name}: {e}")
        print(f"check_report: FAIL {name}: unreadable report")
        return 1
    if not isinstance(rep, dict):
        print(f"FAIL format: expected a JSON object at the top level, found {type(rep).__name__}")
        print(f"check_report: FAIL {name}: not a report object")
        return 1

    n_checks = 0
    failures = []

    def check(what, ok, expected, found):
        nonlocal n_checks
        n_checks += 1
        if not ok:
            failures.append(what)
            print(f"FAIL {what}: expected {expected}; found {found}")
        elif args.verbose:
            print(f"ok {what}: expected {expected}; found {found}")
        return ok

    # ---- format ----
    fmt_ok = True
    for key, typ in REQUIRED.items():
        v = rep.get(key)
        good = key in rep and isinstance(v, typ) and not isinstance(v, bool)
        if good and typ in ((int,), (int, float)):
            good = math.isfinite(v)
        if not good:
            fmt_ok = False
            check(f"format.{key}", False,
                  f"key {key!r} of type {'/'.join(t.__name__ for t in (typ if isinstance(typ, tuple) else (typ,)))}",
                  "missing" if key not in rep else f"{v!r}")
    pairs = rep.get("pairs") if isinstance(rep.get("pairs"), list) else []
    bad_pairs = [i for i, p in enumerate(pairs)
                 if not (isinstance(p, dict) and is_num(p.get("waste")) and is_num(p.get("use"))
                         and isinstance(p.get("watch"), list) and isinstance(p.get("trap"), list))]
    check("format.pairs", not bad_pairs,
          "every pair an object with numeric waste/use and watch/trap frame lists",
          f"bad pairs at index {bad_pairs[:5]}")
    pairs = [p for i, p in enumerate(pairs) if i not in set(bad_pairs)]
    wastes = [p["waste"] for p in pairs]
    check("format.sorted", all(wastes[i] >= wastes[i + 1] for i in range(len(wastes) - 1)),
          "pairs sorted by waste, largest first",
          "first out-of-order index " + str(next((i for i in range(len(wastes) - 1)
                                                  if wastes[i] < wastes[i + 1]), None)))
    # waste_approx: optional (absent when 0), never negative, never more
    # than the waste it is part of.
    def approx_ok(obj):
        if "waste_approx" not in obj:
            return True
        a, w = obj["waste_approx"], obj.get("waste")
        return is_num(a) and is_num(w) and 0 <= a <= w + 1e-9 * max(1.0, abs(w))
    if not approx_ok(rep):
        check("format.waste_approx", False, "top-level waste_approx in [0, waste]",
              f"waste_approx {num(rep.get('waste_approx'))}, waste {num(rep.get('waste'))}")
    bad_approx = [i for i, p in enumerate(pairs) if not approx_ok(p)]
    if bad_approx:
        check("format.pairs.waste_approx", False, "every pair's waste_approx in [0, its waste]",
              f"bad pairs at index {bad_approx[:5]}, e.g. {describe(pairs[bad_approx[0]])}"
              f" waste_approx={num(pairs[bad_approx[0]].get('waste_approx'))}")
    waste = rep.get("waste") if is_num(rep.get("waste")) else 0
    use = rep.get("use") if is_num(rep.get("use")) else 0
    frac = rep.get("fraction") if is_num(rep.get("fraction")) else None
    if is_num(rep.get("waste")) and is_num(rep.get("use")) and frac is not None:
        if waste + use > 0:
            want = waste / (waste + use)
            check("format.fraction", abs(frac - want) <= 1e-3,
                  f"fraction = waste/(waste+use) = {want:.6f}", f"{frac:.6f}")
        else:
            check("format.fraction", frac == 0, "fraction 0 when waste+use = 0", num(frac))

    # ---- objects (docs/objects.md), when the report has them ----
    objects = rep.get("objects")
    if objects is not None:
        def object_ok(o):
            return (isinstance(o, dict) and o.get("kind") in OBJECT_KINDS and
                    isinstance(o.get("name"), str) and is_num(o.get("waste")) and
                    is_num(o.get("use")))
        bad = ([o for o in objects if not object_ok(o)] if isinstance(objects, list)
               else [objects])
        good = not bad
        check("format.objects", good,
              "a list of objects with a kind, a name and numeric waste and use",
              "none bad" if good else f"{bad[0]!r:.200}")
        if good:
            ow = [o["waste"] for o in objects]
            check("format.objects.sorted", all(ow[i] >= ow[i + 1] for i in range(len(ow) - 1)),
                  "objects sorted by waste, largest first", f"wastes {ow[:6]}")
        else:
            objects = []
    bad_po = []
    for i, p in enumerate(pairs):
        po = p.get("objects")
        if po is None:
            continue
        ok = isinstance(po, list) and all(isinstance(o, dict) and is_num(o.get("waste")) and
                                          is_num(o.get("use")) for o in po)
        if ok:
            for key in ("waste", "use"):
                tot = sum(o[key] for o in po)
                if abs(tot - p[key]) > 2 + 1e-3 * abs(p[key]):
                    ok = False
        if not ok:
            bad_po.append(i)
    if bad_po:
        check("format.pairs.objects", False,
              "each pair's objects summing to its waste and use",
              f"bad pairs at index {bad_po[:5]}, e.g. {describe(pairs[bad_po[0]])}")

    # ---- header fields ----
    if args.client is not None:
        check("client", rep.get("client") == args.client, repr(args.client), repr(rep.get("client")))
    if args.sampler is not None:
        check("sampler", rep.get("sampler") == args.sampler, repr(args.sampler),
              repr(rep.get("sampler")))
    if args.verdicts is not None:
        check("verdicts", rep.get("verdicts") == args.verdicts, repr(args.verdicts),
              repr(rep.get("verdicts")))
    if args.covered is not None:
        total = rep.get("sampled_total")
        got = ((rep.get("waste", 0) + rep.get("use", 0)) / total
               if is_num(total) and total > 0 else None)
        check("covered", got is not None and abs(got - args.covered) <= args.tol,
              f"(waste + use) / sampled_total {args.covered} +- {args.tol}",
              "no sampled_total" if got is None else f"{got:.4f}")
    if args.min_samples is not None:
        s = rep.get("samples")
        check("min-samples", is_num(s) and s >= args.min_samples,
              f"samples >= {args.min_samples}", num(s))
    if args.min_traps is not None:
        t = rep.get("traps")
        check("min-traps", is_num(t) and t >= args.min_traps, f"traps >= {args.min_traps}", num(t))

    for (sname, limit), is_max in ([(x, True) for x in args.max_stat] +
                                   [(x, False) for x in args.min_stat]):
        stats = rep.get("stats")
        v = None
        names = sname.split("/")
        if not isinstance(stats, dict):
            found = "no \"stats\" object in the report"
        elif any(x not in stats for x in names):
            found = f"no counter {next(x for x in names if x not in stats)!r} in stats"
        elif len(names) == 1:
            v = stats[sname]
            found = num(v)
        elif not is_num(stats[names[1]]) or not stats[names[1]]:
            found = f"{names[1]} = {num(stats[names[1]])}"
        else:
            v = stats[names[0]] / stats[names[1]] if is_num(stats[names[0]]) else None
            found = f"{num(v)} ({num(stats[names[0]])} / {num(stats[names[1]])})"
        ok = is_num(v) and (v <= limit if is_max else v >= limit)
        op = "<=" if is_max else ">="
        check(f"{'max' if is_max else 'min'}-stat {sname}", ok, f"stats.{sname} {op} {num(limit)}",
              found)

    # ---- fraction ----
    fdesc = (f"{num(frac) if frac is None else f'{frac:.4f}'} "
             f"(waste {num(waste)} B, use {num(use)} B)")
    if args.fraction is not None:
        check("fraction", frac is not None and abs(frac - args.fraction) <= args.tol,
              f"fraction {args.fraction:.4f} +- {args.tol:.4f}", fdesc)
    if args.fraction_below is not None:
        check("fraction-below", frac is not None and frac < args.fraction_below,
              f"fraction < {args.fraction_below:.4f}", fdesc)

    # ---- pairs ----
    depth = args.match_depth
    top = None
    for p in pairs:
        if top is None or p["waste"] > top["waste"]:
            top = p
    if args.top_pair:
        w, t = args.top_pair
        if top is None or top["waste"] <= 0:
            check("top-pair", False, f"top waste pair {w} -> {t}",
                  "no pair with waste > 0" if pairs else "no pairs at all")
        else:
            check("top-pair", pair_matches(top, w, t, depth),
                  f"top waste pair {w} -> {t} (within the first {depth} frames)",
                  describe(top))

    if args.shares:
        total_waste = sum(p["waste"] for p in pairs)
        basis = set()

        def share_of(p):
            s = p.get("share")
            if is_num(s):
                basis.add("share field")
                return s
            basis.add("waste/total waste")
            return p["waste"] / total_waste if total_waste > 0 else 0.0

        for w, t, want in args.shares:
            got = sum(share_of(p) for p in pairs if pair_matches(p, w, t, depth))
            n = sum(1 for p in pairs if pair_matches(p, w, t, depth))
            check(f"share {w}:{t}", abs(got - want) <= args.tol,
                  f"share {want:.4f} +- {args.tol:.4f}",
                  f"{got:.4f} from {n} matching pair(s) [{', '.join(sorted(basis)) or 'no pairs'}]")

    # ---- what the samples stand for, by function (WITCH_WATCHPOINTS=0) ----
    # A sampled context counts for the first of the named functions in its
    # frames, leaf first (memset called from bulk counts for bulk when bulk
    # is named and memset is not); the share is of the report's total.
    if args.sampled_shares:
        names = [fn for fn, _ in args.sampled_shares]
        total = rep.get("sampled_total", 0)
        got = dict.fromkeys(names, 0.0)
        for ctx in rep.get("sampled", []):
            fns = [f.get("function") for f in ctx.get("context", [])]
            hit = next((f for f in fns if f in got), None)
            if hit is not None and is_num(total) and total > 0:
                got[hit] += ctx["bytes"] / total
        for fn, want in args.sampled_shares:
            check(f"sampled {fn}", abs(got[fn] - want) <= args.tol,
                  f"share {want:.4f} +- {args.tol:.4f} of the sampled bytes",
                  f"{got[fn]:.4f} of {total} bytes")

    # A leaf counts for the first pattern it matches; the shares are of the
    # matched contexts' bytes only.
    if args.sampled_split:
        got = dict.fromkeys([fn for fn, _ in args.sampled_split], 0.0)
        for ctx in rep.get("sampled", []):
            leaf = next((f.get("function") for f in ctx.get("context", []) if f.get("function")), None)
            hit = next((p for p in got if leaf and fnmatch.fnmatchcase(leaf, p)), None)
            if hit is not None:
                got[hit] += ctx["bytes"]
        matched = sum(got.values())
        for fn, want in args.sampled_split:
            share = got[fn] / matched if matched > 0 else 0.0
            check(f"sampled split {fn}", abs(share - want) <= args.split_tol,
                  f"share {want:.4f} +- {args.split_tol:.4f} of the split's sampled bytes",
                  f"{share:.4f} of {matched} bytes")

    # ---- objects: waste shares and kinds by name ----
    if (args.object_share or args.object_kind or args.object_sampled_share or args.no_object or
            args.max_object_share):
        objs = objects if isinstance(objects, list) else []
        total_w = sum(o["waste"] for o in objs)
        listing = ", ".join(f"{o['name']}={o.get('share', 0):.4f}" for o in objs[:6]) or "none"
        for oname, want in args.object_share:
            mine = [o for o in objs if object_named(o, oname)]
            got = sum(o["share"] if is_num(o.get("share")) else
                      (o["waste"] / total_w if total_w > 0 else 0.0) for o in mine)
            found = (f"{got:.4f} from {len(mine)} object(s) [top: {listing}]" if objects is not None
                     else "no \"objects\" list in the report")
            check(f"object-share {oname}", objects is not None and abs(got - want) <= args.tol,
                  f"share {want:.4f} +- {args.tol:.4f}", found)
        def sampled_bytes(mine):
            return sum(o["sampled"] for o in mine if is_num(o.get("sampled")))

        total_s = sampled_bytes(objs)

        def sampled_share(mine):
            return sampled_bytes(mine) / total_s if total_s > 0 else 0.0

        among = args.object_sampled_among
        pool = [o for o in objs if o.get("kind") == among] if among else objs
        pool_s = sampled_bytes(pool)
        of_what = f"the {among} objects' sampled bytes" if among else "the objects' sampled bytes"
        for oname, want in args.object_sampled_share:
            mine = [o for o in pool if object_named(o, oname)]
            got = sampled_bytes(mine) / pool_s if pool_s > 0 else 0.0
            check(f"object-sampled-share {oname}", objects is not None and abs(got - want) <= args.tol,
                  f"share {want:.4f} +- {args.tol:.4f} of {of_what}",
                  f"{got:.4f} from {len(mine)} object(s) of {num(pool_s)} bytes")
        for oname in args.no_object:
            mine = [o for o in objs if object_named(o, oname) and
                    any(is_num(o.get(k)) and o[k] > 0 for k in ("sampled", "waste", "use"))]
            found = (f"{len(mine)} object(s), sampled {num(sum(o.get('sampled', 0) for o in mine))} "
                     f"bytes [top: {listing}]" if objects is not None
                     else "no \"objects\" list in the report")
            check(f"no-object {oname}", objects is not None and not mine, "none", found)
        # at most S of the waste and at most S of the sampled bytes (an
        # object a few samples may fall on, where none would be too strict)
        for oname, most in args.max_object_share:
            mine = [o for o in objs if object_named(o, oname)]
            got_s = sampled_share(mine)
            got_w = sum(o["waste"] for o in mine if is_num(o.get("waste")))
            got_w = got_w / total_w if total_w > 0 else 0.0
            check(f"max-object-share {oname}", objects is not None and max(got_s, got_w) <= most,
                  f"waste and sampled shares at most {most:.4f}",
                  f"waste {got_w:.4f}, sampled {got_s:.4f} from {len(mine)} object(s)"
                  if objects is not None else "no \"objects\" list in the report")
        for oname, kind in args.object_kind:
            mine = [o for o in objs if object_named(o, oname)]
            kinds = sorted({o.get("kind") for o in mine})
            check(f"object-kind {oname}", bool(mine) and kinds == [kind], f"kind {kind}",
                  f"kinds {kinds}" if mine else f"no such object [top: {listing}]")

    # ---- approximate waste (silent client, floating point) ----
    def approx_of(obj):
        a = obj.get("waste_approx", 0)
        return a if is_num(a) else 0

    total_approx = approx_of(rep)
    if args.approx_fraction is not None:
        af = total_approx / waste if waste > 0 else 0.0
        check("approx-fraction", abs(af - args.approx_fraction) <= args.tol,
              f"waste_approx/waste {args.approx_fraction:.4f} +- {args.tol:.4f}",
              f"{af:.4f} (waste_approx {num(total_approx)} B"
              f"{'' if 'waste_approx' in rep else ' [absent]'}, waste {num(waste)} B)")
    if args.approx_shares:
        basis = total_approx if total_approx > 0 else sum(approx_of(p) for p in pairs)
        for w, t, want in args.approx_shares:
            mine = [p for p in pairs if pair_matches(p, w, t, depth)]
            got = sum(approx_of(p) for p in mine) / basis if basis > 0 else 0.0
            check(f"approx-share {w}:{t}", abs(got - want) <= args.tol,
                  f"approximate-waste share {want:.4f} +- {args.tol:.4f}",
                  f"{got:.4f} from {len(mine)} matching pair(s) (total waste_approx {num(basis)} B)")

    for mod in args.no_trap_in_module:
        bad = [p for p in pairs
               if any(isinstance(f, dict) and module_matches(f.get("module"), mod)
                      for f in frames(p, "trap"))]
        check(f"no-trap-in-module {mod}", not bad, f"no trap path through {mod}",
              f"{len(bad)} pair(s), e.g. {describe(bad[0])}" if bad else "none")
    for mod in args.no_watch_in_module:
        bad = [p for p in pairs
               if any(isinstance(f, dict) and module_matches(f.get("module"), mod)
                      for f in frames(p, "watch"))]
        check(f"no-watch-in-module {mod}", not bad, f"no watch path through {mod}",
              f"{len(bad)} pair(s), e.g. {describe(bad[0])}" if bad else "none")

    for w, tl in args.trap_fns_for:
        mine = [p for p in pairs if path_matches(frames(p, "watch"), w, depth)]
        bad = [p for p in mine
               if not any(path_matches(frames(p, "trap"), t, depth) for t in tl)]
        check(f"trap-fns-for {w}", not bad,
              f"every pair watched in {w} trapped in {' or '.join(tl)}",
              f"{len(bad)} of {len(mine)} such pair(s) trap elsewhere, e.g. {describe(bad[0])}"
              if bad else f"{len(mine)} pair(s), all fine")

    want_paths = {}
    for w, fns in args.trap_path_for:
        want_paths.setdefault(w, []).append(fns)
    for w, alts in want_paths.items():
        mine = [p for p in pairs if path_matches(frames(p, "watch"), w, 1)]
        lead = lambda p, n: [norm_fn(f.get("function")) if isinstance(f, dict) else ""
                             for f in frames(p, "trap")[:n]]
        bad = [p for p in mine if not any(lead(p, len(fns)) == fns for fns in alts)]
        check(f"trap-path-for {w}", bool(mine) and not bad,
              f"every pair watched at {w} trapped at {' or '.join('/'.join(a) for a in alts)}",
              f"{len(bad)} of {len(mine)} such pair(s) trap elsewhere, e.g. {describe(bad[0])}"
              if bad else f"{len(mine)} pair(s), all fine")

    summary = (f"client={rep.get('client')} sampler={rep.get('sampler')} "
               f"samples={num(rep.get('samples'))} traps={num(rep.get('traps'))} "
               f"fraction={'?' if frac is None else f'{frac:.4f}'}"
               + (f" approx={total_approx / waste:.4f}" if waste > 0 and total_approx > 0 else "")
               + f" pairs={len(pairs)}")
    if failures or args.verbose:
        print("top pairs by waste (first 3 frames of each path, leaf first):")
        for p in pairs[:8]:
            print("  " + describe(p))
    if failures:
        print(f"check_report: FAIL {len(failures)} of {n_checks} checks ({', '.join(failures)}); "
              f"{summary}")
        return 1
    print(f"check_report: PASS {n_checks} checks; {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
