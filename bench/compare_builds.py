#!/usr/bin/python3
"""compare_builds.py: two libwitch builds against the native run, interleaved.

usage: compare_builds.py OLD_BUILD NEW_BUILD [--programs lz,sort,...] [--client dead]
                         [--runs 5] [--scale 6]

For each program of bench/programs (built in NEW_BUILD): RUNS rounds of
native, OLD, NEW (in that order, so drift hits all three alike), with the
default budget and plain LD_PRELOAD.  Prints a markdown table of medians:
wall-time ratios to native, samples per CPU-second, kernel round trips per
sample and the runtime's own overhead estimate, for each build; and the
geometric mean of each build's time ratios.  For issue 13's "before and
after" (what 1% of overhead buys).  Profiles are read with NEW_BUILD's witch.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PROGRAMS = ["lz", "sort", "hashtab", "strings", "interp", "stencil"]


def run(exe, scale, env):
    t0 = time.perf_counter()
    subprocess.run([exe, scale], env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


def profile_stats(witch, path):
    out = subprocess.run([witch, "report", "--json", path], capture_output=True, text=True,
                         check=True).stdout
    d = json.loads(out)
    st = d["stats"]
    cpu_s = st["clock_ns"] / 1e9
    return {
        "sps": d["samples"] / cpu_s if cpu_s else 0.0,
        "rt": st["round_trips"] / max(1, d["samples"]),
        "est": 100.0 * d["overhead_estimate"],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--programs", default=",".join(PROGRAMS))
    ap.add_argument("--client", default="dead")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scale", default="6")
    a = ap.parse_args()
    builds = {"old": os.path.abspath(a.old), "new": os.path.abspath(a.new)}
    for name, b in builds.items():
        if not os.path.exists(os.path.join(b, "libwitch.so")):
            sys.exit("compare_builds: %s has no libwitch.so" % b)
    witch = os.path.join(builds["new"], "witch")
    base = {k: v for k, v in os.environ.items() if not k.startswith("WITCH_") and k != "LD_PRELOAD"}
    tmp = tempfile.mkdtemp(prefix="witch-cmp.")
    res = {}
    for prog in a.programs.split(","):
        exe = os.path.join(builds["new"], "bench", "programs", prog)
        for r in range(a.runs):
            for v in ("native", "old", "new"):
                env = dict(base)
                out = os.path.join(tmp, "%s-%s.prof" % (prog, v))
                if v != "native":
                    env.update(LD_PRELOAD=os.path.join(builds[v], "libwitch.so"),
                               WITCH_CLIENT=a.client, WITCH_OUTPUT=out, WITCH_SEED=str(r + 1))
                    if os.path.exists(out):
                        os.unlink(out)
                rec = res.setdefault((prog, v), {"t": [], "sps": [], "rt": [], "est": []})
                rec["t"].append(run(exe, a.scale, env))
                if v != "native":
                    for k, x in profile_stats(witch, out).items():
                        rec[k].append(x)
    med = statistics.median
    print("# %s vs %s: %s client, bench/programs at scale %s, %d interleaved runs, medians\n"
          % (a.old, a.new, a.client, a.scale, a.runs))
    print("| program | old time ratio | new time ratio | old samples/CPU-s | new samples/CPU-s "
          "| old round trips/sample | new | old estimate % | new estimate % |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    logs = {"old": [], "new": []}
    for prog in a.programs.split(","):
        nat = med(res[(prog, "native")]["t"])
        o, n = res[(prog, "old")], res[(prog, "new")]
        logs["old"].append(math.log(med(o["t"]) / nat))
        logs["new"].append(math.log(med(n["t"]) / nat))
        print("| %s | %.3f | %.3f | %.0f | %.0f | %.1f | %.1f | %.2f | %.2f |"
              % (prog, med(o["t"]) / nat, med(n["t"]) / nat, med(o["sps"]), med(n["sps"]),
                 med(o["rt"]), med(n["rt"]), med(o["est"]), med(n["est"])))
    print("\ngeomean time ratio: old %.3f, new %.3f"
          % (math.exp(statistics.mean(logs["old"])), math.exp(statistics.mean(logs["new"]))))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
