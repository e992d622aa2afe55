#!/usr/bin/env python3
"""thread_rss.py: what a busy thread costs the runtime in memory.

usage: thread_rss.py LIB[,LIB...] [--threads 1,8,20] [--runs 3] [--env K=V,...]

  LIB        one or more libwitch.so builds (an A/B: the old build first)
  --threads  thread counts of bench/thread_rss.c to run (default 1,8,20)
  --runs     rounds (default 3); each round runs every count natively and
             under each LIB, interleaved
  --env      settings for the profiled runs (default WITCH_WATCHPOINTS=0,
             WITCH_CLIENT=dead: on a machine whose debug registers never
             trap the runtime would otherwise run unprofiled)

Peak RSS is ru_maxrss from wait4 (bench/real/rusage_run.c, so the driver's
own RSS is not folded in).  Prints, per count and build, the median peak
RSS over native in KiB, and per build the slope: KiB a busy thread, from
the least and the most threads ((rss_max - rss_min) / (max - min)).  Issue
13 asks for +4 MiB a process at most; a program of many busy threads
(java, node) reaches it by this slope.  No timing is asserted.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def build(tmp):
    exe = os.path.join(tmp, "thread_rss")
    run = os.path.join(tmp, "rusage_run")
    subprocess.run(["cc", "-O2", "-pthread", "-o", exe, os.path.join(HERE, "thread_rss.c")], check=True)
    subprocess.run(["cc", "-O2", "-o", run, os.path.join(HERE, "real", "rusage_run.c")], check=True)
    return exe, run


def peak_rss(run, exe, n, lib, env, tmp):
    out = os.path.join(tmp, "ru")
    e = dict(os.environ)
    for k in list(e):
        if k.startswith("WITCH_") or k == "LD_PRELOAD":
            del e[k]
    if lib:
        e.update(env)
        e["RUSAGE_RUN_LD_PRELOAD"] = lib
        e["WITCH_OUTPUT"] = os.path.join(tmp, "p-%p.prof")
    p = subprocess.run([run, out, exe, str(n)], env=e, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0 or p.stdout.strip() != "ok" or (lib and p.stderr.strip()):
        sys.exit("thread_rss %d under %s: exit %d, stderr %r" % (n, lib or "native", p.returncode,
                                                                  p.stderr[:300]))
    for line in open(out):
        k, v = line.split()
        if k == "maxrss":
            return int(v)
    sys.exit("no maxrss from rusage_run")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("libs")
    ap.add_argument("--threads", default="1,8,20")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--env", default="WITCH_WATCHPOINTS=0,WITCH_CLIENT=dead")
    a = ap.parse_args()
    libs = [os.path.abspath(x) for x in a.libs.split(",")]
    counts = [int(x) for x in a.threads.split(",")]
    env = dict(kv.split("=", 1) for kv in a.env.split(",") if kv)
    with tempfile.TemporaryDirectory() as tmp:
        exe, run = build(tmp)
        rss = {(n, lib): [] for n in counts for lib in [None] + libs}
        for _ in range(a.runs):
            for n in counts:
                for lib in [None] + libs:
                    rss[(n, lib)].append(peak_rss(run, exe, n, lib, env, tmp))
    med = {k: statistics.median(v) for k, v in rss.items()}
    print("# peak RSS over native, KiB (medians of %d interleaved runs; %s)\n" % (a.runs, a.env))
    print("| threads | native KiB | " + " | ".join(os.path.relpath(l) for l in libs) + " |")
    print("|---:|---:|" + "---:|" * len(libs))
    for n in counts:
        print("| %d | %d | " % (n, med[(n, None)]) +
              " | ".join("+%d" % (med[(n, l)] - med[(n, None)]) for l in libs) + " |")
    lo, hi = min(counts), max(counts)
    if hi > lo:
        print("\nKiB a busy thread (from %d to %d threads): " % (lo, hi) + ", ".join(
            "%s %.0f" % (os.path.relpath(l), ((med[(hi, l)] - med[(hi, None)]) -
                                              (med[(lo, l)] - med[(lo, None)])) / (hi - lo))
            for l in libs))


if __name__ == "__main__":
    main()
