#!/usr/bin/python3
"""sampled_real.py: the software sampler's weights by function on programs
whose oracle answers bench/accuracy.py made (python3, sqlite3, the bench
programs), against the bytes each function accessed.

usage: bench/sampled_real.py BUILD_DIR --oracle-dir DIR [--programs P,...]
                             [--clients dead,load] [--seeds N] [--out DIR]

bench/sampled.py does the same for the known-answer and bench programs
with answers of its own (witch-oracle --simulate=0); this reads the
answers accuracy.py keeps in --oracle-dir (DIR/P.run.json: the command;
DIR/P.CLIENT.json: its "functions", each with the bytes the function
accessed, stores for dead and silent, loads for load).  An answer made
before the oracle counted those bytes has none: it is named and skipped.

- libwitch runs the same command with WITCH_WATCHPOINTS=0 (samples
  weighed, nothing armed), under the oracle's glibc tunables, at the
  default budget and at 2000/s, seeds 1..N;
- both sides are keyed by the leaf's physical function (unnamed code: "??
  (MODULE)"), the oracle's top 300 functions by waste and use (its
  functions list), libwitch's every sampled context (witch report --json
  --top 0);
- per row: the total variation distance between the two shares, mean over
  seeds, the whole estimate against the oracle's count of the client's
  bytes (median over seeds), and the functions whose shares differ most
  (oracle -> sampled).

Writes DIR/sampled_real.md (also printed) and .json (default
./sampled-real-results).  Exit status 0, 2 on bad usage.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy  # noqa: E402
import sampled  # noqa: E402

RATES = {"default": None, "2000/s": 2000}


# ---- read ----

def oracle_shares(answer):
    """Shares of the accessed bytes by function, or None without them."""
    funcs = answer.get("functions") or []
    if not funcs or "bytes" not in funcs[0]:
        return None
    total = sum(f["bytes"] for f in funcs)
    out = {}
    for f in funcs:
        k = accuracy.function_key(f["function"], f.get("module"))
        out[k] = out.get(k, 0.0) + (f["bytes"] / total if total else 0.0)
    return out


def sampled_shares(report):
    total = report.get("sampled_total") or 0
    out = {}
    for ctx in report.get("sampled", []):
        frames = [f for f in ctx["context"] if not f.get("inlined")] or ctx["context"]
        leaf = frames[0] if frames else {}
        k = accuracy.function_key(leaf.get("function"), leaf.get("module"))
        out[k] = out.get(k, 0.0) + (ctx["bytes"] / total if total else 0.0)
    return out


def run_witch(build, argv, client, rate, seed, workdir):
    os.makedirs(workdir, exist_ok=True)
    env = accuracy.profiled_env(build, client, workdir, rate, seed)
    env["WITCH_WATCHPOINTS"] = "0"
    env["GLIBC_TUNABLES"] = accuracy.ORACLE_CPU_TUNABLES
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=3600, cwd=workdir)  # files the program writes stay there
    return sampled.read_profiles(build, workdir)


# ---- model ----

def measure(build, odir, program, client, seeds, tmp):
    try:
        stamp = json.load(open(os.path.join(odir, f"{program}.run.json")))["stamp"]
        answer = json.load(open(os.path.join(odir, f"{program}.{client}.json")))
        want = oracle_shares(answer)
    except (OSError, KeyError, ValueError):
        return {"program": program, "client": client, "missing": "no oracle answer"}
    if want is None:
        return {"program": program, "client": client,
                "missing": "the answer has no bytes by function (made before they were kept)"}
    row = {"program": program, "client": client}
    for r, rate in RATES.items():
        got = []
        for s in range(1, seeds + 1):
            rep = run_witch(build, stamp["argv"], client, rate, s,
                            os.path.join(tmp, f"{program}-{client}-{r.replace('/', '')}-{s}"))
            if rep and rep.get("sampled_total"):
                got.append((sampled_shares(rep), rep.get("samples", 0), rep["sampled_total"]))
        mean = {}
        for shares, _, _ in got:
            for k, v in shares.items():
                mean[k] = mean.get(k, 0.0) + v / len(got)
        moved = sorted(set(want) | set(mean), key=lambda k: -abs(want.get(k, 0) - mean.get(k, 0)))
        truth = answer.get("sampled_total")  # the oracle's count of the client's bytes
        row[r] = {"tvd": statistics.mean(sampled.tvd(want, g) for g, _, _ in got) if got else None,
                  "samples": statistics.mean(n for _, n, _ in got) if got else 0,
                  "total": statistics.median(t / truth for _, _, t in got) if got and truth else None,
                  "moved": [(k, want.get(k, 0.0), mean.get(k, 0.0)) for k in moved[:3]]}
    return row


# ---- render ----

def markdown(rows, argv):
    def moved(m):
        return ", ".join(f"{k} {100 * a:.1f} -> {100 * b:.1f}" for k, a, b in m) or "—"
    md = ["# The sampler's weights by function on real programs, against the oracle", "",
          f"`bench/sampled_real.py {' '.join(argv)}`; libwitch WITCH_WATCHPOINTS=0; distance ="
          " total variation of the shares by leaf function (0 = same)", "",
          "estimate = the sampled bytes in all / the oracle's count, median over seeds", "",
          "| program | client | default: distance | samples | estimate | 2000/s: distance | samples "
          "| estimate | 2000/s: largest moves (% oracle -> sampled) |",
          "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for row in rows:
        if "missing" in row:
            md.append(f"| {row['program']} | {row['client']} | {row['missing']} | | | | | | |")
            continue
        cells = [row["program"], row["client"]]
        for r in RATES:
            d = row[r]["tvd"]
            t = row[r]["total"]
            cells += ["—" if d is None else f"{d:.3f}", f"{row[r]['samples']:.0f}",
                      "—" if t is None else f"{t:.2f}"]
        cells.append(moved(row["2000/s"]["moved"]))
        md.append("| " + " | ".join(cells) + " |")
    return "\n".join(md) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(prog="sampled_real.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--oracle-dir", required=True)
    ap.add_argument("--programs", default="python3,sqlite3")
    ap.add_argument("--clients", default="dead,load")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", default="sampled-real-results")
    args = ap.parse_args(argv)
    build = os.path.abspath(args.build)
    if not os.path.exists(os.path.join(build, "libwitch.so")):
        print(f"sampled_real.py: {build}/libwitch.so not found: build it first", file=sys.stderr)
        return 2
    odir = os.path.abspath(args.oracle_dir)
    tmp = tempfile.mkdtemp(prefix="witch-sampled-real.")
    rows = [measure(build, odir, p, c, args.seeds, tmp)
            for p in args.programs.split(",") for c in args.clients.split(",")]
    sampled.write_results(args.out, "sampled_real", markdown(rows, argv), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
