#!/usr/bin/python3
"""sampled.py: the software sampler's half of the answer, against the oracle,
on any machine (no watchpoint trap needed).

usage: bench/sampled.py BUILD_DIR [--quick] [--out DIR] [--seeds N]
                        [--programs P,...] [--oracle-dir DIR] [--native-libc]

--quick: the known-answer programs only (~7 min); without it also
bench/programs/ (~20 min on 2 cores).  --programs: only these.
--native-libc: libwitch's runs pick glibc's string functions for this CPU
(AVX-512) instead of the AVX2 ones the oracle runs under Valgrind.
--oracle-dir: keep the oracle's answers there and reuse them (the oracle
does not depend on libwitch: comparing two libwitch builds needs it once).

Every Witch estimate is a sum of sample weights (4.4.2's mu) distributed
over pairs by the watchpoints.  Whatever the watchpoints do, the weights by
calling context must add up to the bytes each context accessed, or no pair
can be right.  This measures that part alone:

- the oracle (witch-oracle --simulate=0) counts the bytes each context
  stored (dead) or loaded other than by pop/ret (load): its "sampled" list;
- libwitch runs with WITCH_WATCHPOINTS=0 (samples weighed, nothing armed:
  the profile's `sampled` records), at the default CPU budget and at a fixed
  2000/s, seeds 1..N;
- both sides are grouped by key: the innermost physical frame in the
  program's own executable (the code its author changes; memset called
  from bulk counts for bulk), else the leaf function;
- per row: the total variation distance between the two shares by key,
  1/2 sum |p - q| (0: the same distribution, 1: disjoint), mean over seeds,
  and the largest keys of each side.

Writes DIR/sampled.md (also printed) and sampled.json (default DIR
./sampled-results).  Exit status 0, 2 on bad usage or a missing build.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402  (profiled_env; Debian's python3, for its matplotlib)

KNOWN_ANSWER = ["dead_two_loops", "fig42", "stack_case", "dense_memset", "dense_memcpy",
                "dense_vector", "silent_refresh", "load_search",
                "objects_mix", "objects_stack", "objects_reuse", "alloc_churn"]
BENCH = ["lz", "sort", "hashtab", "stencil", "interp", "strings"]
QUICK_ARGS = {"dead_two_loops": ["4"], "fig42": ["4"], "stack_case": ["300"],
              "dense_memset": ["3000"], "dense_memcpy": ["3000"], "dense_vector": ["3000"],
              "silent_refresh": ["200"], "load_search": ["40"],
              "objects_mix": ["224"], "objects_stack": ["250"], "objects_reuse": ["8000"],
              "alloc_churn": ["10000000"]}
CLIENTS = ["dead", "load"]
RATES = {"default": None, "2000/s": 2000}
NATIVE_LIBC = False  # --native-libc


# The oracle lists its sampled contexts cut to their 8 innermost physical
# frames (tools/oracle/output.c, SAMPLED_DEPTH); libwitch's are cut alike
# before either is keyed, so that a context deeper than that (qsort's
# recursion in libc under sort's main) keys the same on both sides.
SAMPLED_DEPTH = 8


def context_cut(frames):
    """The innermost SAMPLED_DEPTH physical frames, each with the frames
    inlined into it (listed before it)."""
    out, physical = [], 0
    for f in frames:
        if physical == SAMPLED_DEPTH:
            break
        out.append(f)
        physical += not f.get("inlined")
    return out


def key_of(frames, exe):
    # Physical frames only (an AVX2 intrinsic inlined into bulk counts for
    # bulk on both sides); bench/names.py compares full contexts.
    # Unnamed frames (a PLT stub's GOT load: "memcpy@plt" on one side,
    # "???" on the other) name nothing: the caller does.
    frames = [f for f in context_cut(frames) if not f.get("inlined")]
    for f in frames:
        fn = f.get("function") or ""
        if fn.startswith("[unknown") or fn.endswith("@plt") or fn.strip("?") == "":
            continue
        # By file name: the oracle's answers are kept (--oracle-dir) for
        # builds elsewhere, whose program paths differ.
        if f.get("module") and os.path.basename(os.path.realpath(f["module"])) == exe:
            return fn
    return (frames[0].get("function") or "??") if frames else "??"


def shares(report, exe):
    total = report.get("sampled_total") or 0
    out = {}
    for ctx in report.get("sampled", []):
        k = key_of(ctx["context"], exe)
        out[k] = out.get(k, 0.0) + (ctx["bytes"] / total if total else 0.0)
    return out


# An oracle answer lists its largest contexts only (tools/oracle: 200
# before 2026-12-02, which held 73-83% of strings' and sort's bytes): what
# it leaves out reads as the sampler's distance, so a row says so.
LISTED_MIN = 0.995


def listed_share(answer):
    """The share of the answer's bytes its "sampled" list holds."""
    total = answer.get("sampled_total") or 0
    listed = answer.get("sampled_listed")
    if listed is None:
        listed = sum(c["bytes"] for c in answer.get("sampled", []))
    return listed / total if total else 1.0


def object_shares(report):
    """Shares of the objects' sampled bytes, by name (docs/objects.md); the
    oracle's are exact bytes per object, libwitch's what its samples stand
    for.  Names meet: both sides name a heap block by the allocation
    context's leaf line, static data by symbol."""
    objs = [o for o in report.get("objects", []) if isinstance(o.get("sampled"), (int, float))]
    total = sum(o["sampled"] for o in objs)
    out = {}
    for o in objs:
        out[o["name"]] = out.get(o["name"], 0.0) + (o["sampled"] / total if total else 0.0)
    return out


def tvd(p, q):
    return 0.5 * sum(abs(p.get(k, 0.0) - q.get(k, 0.0)) for k in set(p) | set(q))


def run_oracle(build, argv, prefix):
    if all(os.path.exists(f"{prefix}.{c}.json") for c in CLIENTS):
        return {c: json.load(open(f"{prefix}.{c}.json")) for c in CLIENTS}
    cmd = [os.path.join(build, "tools", "oracle", "witch-oracle"), "--simulate=0",
           f"--out={prefix}", "--"] + argv
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=3600)
    return {c: json.load(open(f"{prefix}.{c}.json")) for c in CLIENTS
            if os.path.exists(f"{prefix}.{c}.json")}


def run_witch(build, argv, client, rate, seed, workdir):
    os.makedirs(workdir, exist_ok=True)
    env = accuracy.profiled_env(build, client, workdir, rate, seed)
    env["WITCH_WATCHPOINTS"] = "0"
    if not NATIVE_LIBC:
        # The C library's string functions as under Valgrind (AVX2, no
        # AVX-512: other stores, overlapping ones), so both sides count
        # the bytes of the same code (accuracy.py does the same).
        env["GLIBC_TUNABLES"] = accuracy.ORACLE_CPU_TUNABLES
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=600)
    return read_profiles(build, workdir)


def read_profiles(build, workdir):
    """witch report --json of the profiles in workdir, or None."""
    profs = glob.glob(os.path.join(workdir, "*.prof"))
    if not profs:
        return None
    r = subprocess.run([os.path.join(build, "witch"), "report", "--json", "--top", "0"] + profs,
                       capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else None


def main(argv):
    ap = argparse.ArgumentParser(prog="sampled.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default="sampled-results")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--programs", default="")
    ap.add_argument("--oracle-dir", default="")
    ap.add_argument("--native-libc", action="store_true",
                    help="let libwitch's runs pick glibc's AVX-512 string functions "
                         "(the oracle's, under Valgrind, are AVX2)")
    args = ap.parse_args(argv)
    global NATIVE_LIBC
    NATIVE_LIBC = args.native_libc
    build = os.path.abspath(args.build)
    if not os.path.exists(os.path.join(build, "tools", "oracle", "witch-oracle")):
        print(f"sampled.py: {build}/tools/oracle/witch-oracle not found: build it first",
              file=sys.stderr)
        return 2
    # The known-answer programs at a few repetitions always (their shares do
    # not depend on the count; dense_memset's 12000 take 10 min under the
    # oracle); --quick leaves out the realistic programs.
    progs = [(n, [os.path.join(build, "tests", "programs", n)] + QUICK_ARGS[n])
             for n in KNOWN_ANSWER]
    if not args.quick:
        progs += [(n, [os.path.join(build, "bench", "programs", n)]) for n in BENCH]
    progs = [(n, a) for n, a in progs if os.access(a[0], os.X_OK)]
    if args.programs:
        progs = [(n, a) for n, a in progs if n in args.programs.split(",")]
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="witch-sampled.")
    odir = os.path.abspath(args.oracle_dir) if args.oracle_dir else tmp
    os.makedirs(odir, exist_ok=True)
    rows = []
    # Two CPUs, a program keeping two busy runs alone (accuracy.CpuSlots).
    slots = accuracy.CpuSlots(2)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        oracles = {n: pool.submit(slots.run, 1, run_oracle, build, a, os.path.join(odir, n))
                   for n, a in progs}
        runs = {(n, c, r, s): pool.submit(slots.run, accuracy.busy_threads(n), run_witch, build,
                                          a, c, rate, s,
                                          os.path.join(tmp, f"{n}-{c}-{r.replace('/', '')}-{s}"))
                for n, a in progs for c in CLIENTS for r, rate in RATES.items()
                for s in range(1, args.seeds + 1)}
        for n, a in progs:
            exe = os.path.basename(os.path.realpath(a[0]))
            orc = oracles[n].result()
            for c in CLIENTS:
                if c not in orc:
                    continue
                want = shares(orc[c], exe)
                want_obj = object_shares(orc[c])
                row = {"program": n, "client": c, "oracle_listed": listed_share(orc[c]),
                       "oracle_top": sorted(want.items(), key=lambda kv: -kv[1])[:3],
                       "oracle_objects": sorted(want_obj.items(), key=lambda kv: -kv[1])[:3]}
                for r in RATES:
                    got = [runs[(n, c, r, s)].result() for s in range(1, args.seeds + 1)]
                    got = [g for g in got if g and g.get("sampled_total")]
                    ds = [tvd(want, shares(g, exe)) for g in got]
                    do = [tvd(want_obj, object_shares(g)) for g in got] if want_obj else []
                    row[r] = {"tvd": statistics.mean(ds) if ds else None,
                              "object_tvd": statistics.mean(do) if do else None,
                              "objects": sorted(object_shares(got[0]).items(),
                                                key=lambda kv: -kv[1])[:3] if got else [],
                              "samples": statistics.mean(g["samples"] for g in got) if got else 0,
                              "top": sorted(shares(got[0], exe).items(),
                                            key=lambda kv: -kv[1])[:3] if got else []}
                rows.append(row)

    def top(t):
        return ", ".join(f"{k} {100 * v:.0f}" for k, v in t) or "—"

    md = ["# The sampler's half: sampled bytes by context vs the oracle", "",
          f"`bench/sampled.py {' '.join(argv)}`; libwitch WITCH_WATCHPOINTS=0, seeds 1-"
          f"{args.seeds}; distance = total variation of the shares by key (0 = same)", "",
          "| program | client | oracle top (%) | default: distance | samples | top (%) "
          "| 2000/s: distance | samples | top (%) |", "|---|---|---|---:|---:|---|---:|---:|---|"]
    for row in rows:
        cells = [row["program"], row["client"], top(row["oracle_top"])]
        for r in RATES:
            d = row[r]["tvd"]
            cells += ["—" if d is None else f"{d:.3f}", f"{row[r]['samples']:.0f}",
                      top(row[r]["top"])]
        md.append("| " + " | ".join(cells) + " |")
    vals = {r: [row[r]["tvd"] for row in rows if row[r]["tvd"] is not None] for r in RATES}
    md += [""] + [f"- {r}: median distance {statistics.median(v):.3f} over {len(v)} rows, "
                  f"max {max(v):.3f}" for r, v in vals.items() if v]
    partial = [f"{row['program']}/{row['client']} {100 * row['oracle_listed']:.1f}%"
               for row in rows if row["oracle_listed"] < LISTED_MIN]
    if partial:
        md += [f"- oracle answers whose context list holds less than {100 * LISTED_MIN:.1f}% of "
               f"their bytes (the rest counts as distance; rerun the oracle): "
               + ", ".join(partial)]
    # By object (docs/objects.md): the same distance over the objects'
    # sampled bytes, where the oracle names objects.
    orows = [row for row in rows if row.get("oracle_objects")]
    if orows:
        md += ["", "By object (shares of the bytes by object; the oracle's exact):", "",
               "| program | client | oracle objects (%) | 2000/s: distance | objects (%) |",
               "|---|---|---|---:|---|"]
        for row in orows:
            d = row["2000/s"]["object_tvd"]
            md.append(f"| {row['program']} | {row['client']} | {top(row['oracle_objects'])} | "
                      f"{'—' if d is None else f'{d:.3f}'} | {top(row['2000/s']['objects'])} |")
        ov = [row["2000/s"]["object_tvd"] for row in orows if row["2000/s"]["object_tvd"] is not None]
        if ov:
            md += ["", f"- objects, 2000/s: median distance {statistics.median(ov):.3f} over "
                   f"{len(ov)} rows, max {max(ov):.3f}"]
    write_results(args.out, "sampled", "\n".join(md) + "\n", rows)
    return 0


def write_results(out_dir, stem, text, rows):
    """OUT/STEM.md (also printed) and OUT/STEM.json."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, stem + ".md"), "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, stem + ".json"), "w") as f:
        json.dump(rows, f, indent=1)
    sys.stdout.write(text)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
