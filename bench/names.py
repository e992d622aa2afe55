#!/usr/bin/python3
"""names.py: do libwitch and witch-oracle name the same thing the same way?

usage: bench/names.py BUILD_DIR --oracle-dir DIR [--programs P,...]
                      [--seeds N] [--out FILE.json] [--top N] [--work DIR]

Before a disagreement between the sampler and the oracle can be trusted,
both must name a calling context and an object alike.  This compares the
sampled bytes by FULL calling context: every frame, inlined ones included,
as `witch report` prints them (function + source file base name + line),
and by object name:

- the oracle's answers are DIR/PROG.CLIENT.json (witch-oracle
  --simulate=0; computed once, see bench/sampled.py --oracle-dir): its
  `sampled` list (the 200 largest contexts) and `objects`;
- libwitch runs WITCH_WATCHPOINTS=0 WITCH_RATE=2000 (sample-only), read
  back with `witch report --json --top 0`.

Per program and client:
- `named` (libwitch side): the share of libwitch's sampled bytes on
  contexts whose full name also appears in the oracle's list;
- `found` (oracle side): the share of the oracle's bytes (of the listed
  contexts) on contexts libwitch also sampled under the same name; rare
  contexts libwitch never sampled count against it, so it is a floor;
- `tvd`: total variation distance of the two full-context distributions;
- the same for objects (`obj_named`, `obj_tvd`), where the oracle has them;
- the largest contexts and objects named on one side only.

Two differences of environment, not of naming, are folded on both sides:
a leaf in one of glibc's string functions (ifuncs: AVX-512 variants
natively, AVX2 under Valgrind, and memcpy/memmove aliases) is named by
its family, `[memmove]`; a thread's first frame (clone3 natively, clone
under Valgrind) is `[clone]`.  Known differences left in: glibc malloc's
own accesses (the oracle's malloc is Valgrind's), and functions only one
side runs (Valgrind's preloads, libwitch's own).

Exit status 0, 2 on bad usage.
"""
import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402
import sampled  # noqa: E402

CLIENTS = ["dead", "load"]


# glibc's string functions are ifuncs: natively this CPU runs the AVX-512
# variants, under Valgrind (no AVX-512) the AVX2 ones, and aliases
# (__memcpy_X = __memmove_X) name one code two ways.  Neither side is
# wrong: a leaf in one of these files is named by the file's function.
STRING_FILES = accuracy.STRING_FILES


def frame_name(f):
    fn = f.get("function") or "??"
    if fn.startswith("[unknown") or fn.strip("?") == "":
        fn = "??"
    base = os.path.basename(f.get("file") or "??")
    m = STRING_FILES.match(base)
    if m:
        return f"[{m.group(1)}]"
    # A thread's first frame: natively glibc starts threads with clone3,
    # Valgrind has no clone3 and glibc falls back to clone.
    if base in ("clone3.S", "clone.S"):
        return "[clone]"
    return f"{fn} ({base}:{f.get('line') or 0})"


def context_name(frames):
    # Frames past main (_start, __libc_start_call_main, clone) are the
    # same on both sides but add nothing; keep them: a difference there is
    # a naming difference too.
    return " < ".join(frame_name(f) for f in frames)


def context_shares(report):
    # Cut as the oracle lists them (sampled.context_cut).
    total = sum(c["bytes"] for c in report.get("sampled", []))
    out = {}
    for c in report.get("sampled", []):
        k = context_name(sampled.context_cut(c["context"]))
        out[k] = out.get(k, 0.0) + (c["bytes"] / total if total else 0.0)
    return out


def run_witch(build, argv, client, seed, workdir):
    """The report of one sample-only run; a run already in workdir is reused
    (--work: before/after compare the same runs when only the oracle or the
    report tool changed)."""
    os.makedirs(workdir, exist_ok=True)
    if glob.glob(os.path.join(workdir, "*.prof")):
        return sampled.read_profiles(build, workdir)
    env = accuracy.profiled_env(build, client, workdir, 2000, seed)
    env["WITCH_WATCHPOINTS"] = "0"
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=900)
    return sampled.read_profiles(build, workdir)


def overlap(p, q):
    """The share of p's mass on keys q has."""
    return sum(v for k, v in p.items() if k in q)


def only(p, q, n):
    return sorted(((k, v) for k, v in p.items() if k not in q), key=lambda kv: -kv[1])[:n]


def compare(orc, got, top):
    want = context_shares(orc)
    have = [context_shares(g) for g in got]
    union = {}
    for h in have:
        for k, v in h.items():
            union[k] = union.get(k, 0.0) + v / len(have)
    row = {"named": statistics.mean(overlap(h, want) for h in have),
           "found": overlap(want, union),
           "tvd": statistics.mean(sampled.tvd(want, h) for h in have),
           "witch_only": only(union, want, top), "oracle_only": only(want, union, top)}
    want_obj = sampled.object_shares(orc)
    if want_obj:
        objs = [sampled.object_shares(g) for g in got]
        ounion = {}
        for h in objs:
            for k, v in h.items():
                ounion[k] = ounion.get(k, 0.0) + v / len(objs)
        row.update(obj_named=statistics.mean(overlap(h, want_obj) for h in objs),
                   obj_found=overlap(want_obj, ounion),
                   obj_tvd=statistics.mean(sampled.tvd(want_obj, h) for h in objs),
                   obj_witch_only=only(ounion, want_obj, top),
                   obj_oracle_only=only(want_obj, ounion, top))
    return row


def main(argv):
    ap = argparse.ArgumentParser(prog="names.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--oracle-dir", required=True)
    ap.add_argument("--programs", default="")
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--out", default="")
    ap.add_argument("--work", default="", help="keep (and reuse) libwitch's profiles here")
    args = ap.parse_args(argv)
    build = os.path.abspath(args.build)
    progs = [(n, [os.path.join(build, "tests", "programs", n)] + sampled.QUICK_ARGS[n])
             for n in sampled.KNOWN_ANSWER]
    progs += [(n, [os.path.join(build, "bench", "programs", n)]) for n in sampled.BENCH]
    if args.programs:
        progs = [(n, a) for n, a in progs if n in args.programs.split(",")]
    tmp = args.work or tempfile.mkdtemp(prefix="witch-names.")
    rows = []
    for n, a in progs:
        for c in CLIENTS:
            path = os.path.join(args.oracle_dir, f"{n}.{c}.json")
            if not os.path.exists(path) or not os.access(a[0], os.X_OK):
                continue
            orc = json.load(open(path))
            got = [run_witch(build, a, c, s, os.path.join(tmp, f"{n}-{c}-{s}"))
                   for s in range(1, args.seeds + 1)]
            got = [g for g in got if g and g.get("sampled")]
            if not got:
                continue
            row = {"program": n, "client": c, **compare(orc, got, args.top)}
            rows.append(row)
            line = (f"{n:14s} {c:4s} named {100 * row['named']:5.1f}% found "
                    f"{100 * row['found']:5.1f}% tvd {row['tvd']:.3f}")
            if "obj_tvd" in row:
                line += (f" | objects named {100 * row['obj_named']:5.1f}% "
                         f"tvd {row['obj_tvd']:.3f}")
            print(line, flush=True)
            for side in ("witch_only", "oracle_only", "obj_witch_only", "obj_oracle_only"):
                for k, v in row.get(side, []):
                    if v >= 0.005:
                        print(f"    {side:15s} {100 * v:5.1f}%  {k[:300]}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(rows, f, indent=1)
    for key in ("named", "found", "tvd", "obj_named", "obj_tvd"):
        v = [r[key] for r in rows if key in r]
        if v:
            print(f"median {key}: {statistics.median(v):.3f} over {len(v)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
