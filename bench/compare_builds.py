#!/usr/bin/python3
"""compare_builds.py: two libwitch builds against the native run, interleaved.

usage: compare_builds.py OLD_BUILD NEW_BUILD [--programs lz,sort,...] [--client dead]
                         [--runs 5] [--scale 6] [--real] [--env K=V,...]

For each program of bench/programs (built in NEW_BUILD): RUNS rounds of
native, OLD, NEW (in that order, so drift hits all three alike), with the
default budget and plain LD_PRELOAD.  Prints a markdown table of medians:
wall-time ratios to native, samples per CPU-second, kernel round trips per
sample and the runtime's own overhead estimate, for each build; and the
geometric mean of each build's time ratios; the same paired (each run over
its round's native run, the median of those: a vCPU slowed for a while
moves its whole round); the median over programs of new's samples a
CPU-second over old's; and a second table of each build's samples over the
CPU time (user + system) it added to the native run, for builds that run at
different overheads.  For issue 13's "before and after" (what 1% of
overhead buys).  Profiles are read with NEW_BUILD's witch.

--real: the batch programs of bench/real_programs.py instead (python,
sqlite, gzip, gcc, xz, pigz; inputs from bench/real/gen_inputs.py in a
temporary directory), their CPU time (user + system of the process tree)
and wall time as ratios to native; no profile columns (gcc writes five).

--env: settings for the profiled runs (the environment's WITCH_* are not
passed), e.g. WITCH_WATCHPOINTS=0 on a machine whose debug registers never
trap, where the runtime would otherwise run unprofiled.
"""
import argparse
import glob
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PROGRAMS = ["lz", "sort", "hashtab", "strings", "interp", "stencil"]
HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(HERE, "real")
# name -> (argv, stdin); {t} is the temporary directory (real_programs.py's sizes)
REAL_PROGRAMS = {
    "python": (["/usr/bin/python3", REAL + "/script.py"], None),
    "sqlite": (["sqlite3", "-batch", "{t}/test.db"], REAL + "/sqlite.sql"),
    "gzip": (["gzip", "-9", "-c", "{t}/text.txt"], None),
    "gcc": (["gcc", "-O2", "-o", "{t}/gen", "{t}/gen.c"], None),
    "xz": (["xz", "-T2", "-3", "--block-size=3MiB", "-c", "{t}/xz.txt"], None),
    "pigz": (["pigz", "-p", "2", "-9", "-c", "{t}/text.txt"], None),
}


def run_real(argv, stdin, tmp, env):
    """CPU seconds (the tree's user + system) and wall seconds of one run."""
    db = os.path.join(tmp, "test.db")
    if os.path.exists(db):
        os.unlink(db)
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    with open(stdin or os.devnull) as f:
        subprocess.run([x.format(t=tmp) for x in argv], stdin=f, env=env,
                       stdout=subprocess.DEVNULL, check=True)
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime), t1 - t0


def compare_real(a, builds, base):
    tmp = tempfile.mkdtemp(prefix="witch-cmp.")
    gen = [sys.executable, os.path.join(REAL, "gen_inputs.py")]
    subprocess.run(gen + ["text", os.path.join(tmp, "text.txt"), "24"], check=True)
    subprocess.run(gen + ["text", os.path.join(tmp, "xz.txt"), "12"], check=True)
    subprocess.run(gen + ["csource", os.path.join(tmp, "gen.c"), "150"], check=True)
    progs = list(REAL_PROGRAMS) if a.programs == ",".join(PROGRAMS) else a.programs.split(",")
    med = statistics.median
    print("# %s vs %s: %s client, real programs, %d interleaved runs, medians of CPU time "
          "(wall time)\n" % (a.old, a.new, a.client, a.runs))
    print("| program | native CPU s | old | new |")
    print("|---|---:|---:|---:|")
    logs = {"old": [], "new": []}
    for prog in progs:
        argv, stdin = REAL_PROGRAMS[prog]
        res = {v: ([], []) for v in ("native", "old", "new")}
        for r in range(a.runs):
            for v in res:
                env = dict(base, PYTHONHASHSEED="0")
                if v != "native":
                    env.update(a.extra, LD_PRELOAD=os.path.join(builds[v], "libwitch.so"),
                               WITCH_CLIENT=a.client, WITCH_OUTPUT=os.path.join(tmp, "p-%p.prof"),
                               WITCH_SEED=str(r + 1))
                cpu, wall = run_real(argv, stdin, tmp, env)
                res[v][0].append(cpu)
                res[v][1].append(wall)
                for f in glob.glob(os.path.join(tmp, "p-*.prof")):
                    os.unlink(f)
        nc, nw = med(res["native"][0]), med(res["native"][1])
        cells = []
        for v in ("old", "new"):
            logs[v].append(math.log(med(res[v][0]) / nc))
            cells.append("%.3f (%.3f)" % (med(res[v][0]) / nc, med(res[v][1]) / nw))
        print("| %s | %.2f | %s | %s |" % (prog, nc, cells[0], cells[1]), flush=True)
    print("\ngeomean CPU time ratio: old %.3f, new %.3f"
          % (math.exp(statistics.mean(logs["old"])), math.exp(statistics.mean(logs["new"]))))
    shutil.rmtree(tmp, ignore_errors=True)


def run(exe, scale, env):
    """Wall seconds and CPU seconds (user + system) of one run."""
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run([exe, scale], env=env, stdout=subprocess.DEVNULL, check=True)
    t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    return t1 - t0, r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime


def profile_stats(witch, path):
    out = subprocess.run([witch, "report", "--json", path], capture_output=True, text=True,
                         check=True).stdout
    d = json.loads(out)
    st = d["stats"]
    cpu_s = st["clock_ns"] / 1e9
    return {
        "n": d["samples"],
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
    ap.add_argument("--real", action="store_true")
    ap.add_argument("--env", default="",
                    help="K=V,... for the profiled runs (WITCH_WATCHPOINTS=0 where no trap comes)")
    a = ap.parse_args()
    a.extra = dict(kv.split("=", 1) for kv in a.env.split(",") if kv)
    builds = {"old": os.path.abspath(a.old), "new": os.path.abspath(a.new)}
    for name, b in builds.items():
        if not os.path.exists(os.path.join(b, "libwitch.so")):
            sys.exit("compare_builds: %s has no libwitch.so" % b)
    witch = os.path.join(builds["new"], "witch")
    base = {k: v for k, v in os.environ.items() if not k.startswith("WITCH_") and k != "LD_PRELOAD"}
    if a.real:
        compare_real(a, builds, base)
        return
    tmp = tempfile.mkdtemp(prefix="witch-cmp.")
    res = {}
    for prog in a.programs.split(","):
        exe = os.path.join(builds["new"], "bench", "programs", prog)
        for r in range(a.runs):
            for v in ("native", "old", "new"):
                env = dict(base)
                out = os.path.join(tmp, "%s-%s.prof" % (prog, v))
                if v != "native":
                    env.update(a.extra, LD_PRELOAD=os.path.join(builds[v], "libwitch.so"),
                               WITCH_CLIENT=a.client, WITCH_OUTPUT=out, WITCH_SEED=str(r + 1))
                    if os.path.exists(out):
                        os.unlink(out)
                rec = res.setdefault((prog, v), {"t": [], "cpu": [], "n": [], "sps": [], "rt": [],
                                                 "est": []})
                wall, cpu = run(exe, a.scale, env)
                rec["t"].append(wall)
                rec["cpu"].append(cpu)
                if v != "native":
                    for k, x in profile_stats(witch, out).items():
                        rec[k].append(x)
    med = statistics.median
    print("# %s vs %s: %s client, bench/programs at scale %s, %d interleaved runs, medians\n"
          % (a.old, a.new, a.client, a.scale, a.runs))
    # "paired": the median over rounds of each run's time over the native
    # run's of its round.  On these VMs a vCPU slows by up to ~40% for
    # seconds at a time (its host core shared), which moves a whole round
    # together: a ratio of medians then reads 0.76-1.13 for one program.
    print("| program | old time ratio | new time ratio | old paired | new paired "
          "| old samples/CPU-s | new samples/CPU-s | new / old "
          "| old round trips/sample | new | old estimate % | new estimate % |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    logs = {"old": [], "new": []}
    paired_logs = {"old": [], "new": []}
    sps_gains = []
    for prog in a.programs.split(","):
        nat = med(res[(prog, "native")]["t"])
        o, n = res[(prog, "old")], res[(prog, "new")]
        logs["old"].append(math.log(med(o["t"]) / nat))
        logs["new"].append(math.log(med(n["t"]) / nat))
        native_t = res[(prog, "native")]["t"]
        paired = {}
        for v, r in (("old", o), ("new", n)):
            paired[v] = med([t / b for t, b in zip(r["t"], native_t)])
            paired_logs[v].append(math.log(paired[v]))
        gain = med(n["sps"]) / med(o["sps"]) if med(o["sps"]) > 0 else float("nan")
        sps_gains.append(gain)
        print("| %s | %.3f | %.3f | %.3f | %.3f | %.0f | %.0f | %.2fx | %.1f | %.1f | %.2f | %.2f |"
              % (prog, med(o["t"]) / nat, med(n["t"]) / nat, paired["old"], paired["new"],
                 med(o["sps"]), med(n["sps"]), gain,
                 med(o["rt"]), med(n["rt"]), med(o["est"]), med(n["est"])))
    print("\ngeomean time ratio: old %.3f, new %.3f; paired: old %.3f, new %.3f"
          % (math.exp(statistics.mean(logs["old"])), math.exp(statistics.mean(logs["new"])),
             math.exp(statistics.mean(paired_logs["old"])),
             math.exp(statistics.mean(paired_logs["new"]))))
    print("samples a CPU-second, new over old: median %.2fx over %d programs"
          % (med(sps_gains), len(sps_gains)))
    # Samples a CPU-second of overhead: each build's samples over the CPU
    # time it added to the native run (medians), so builds that run at
    # different overheads compare at the same one, as far as cost grows
    # with samples.  At the default budget the added time is ~1% of the
    # run and reads to a few percent of itself at best; a fixed rate with
    # a larger overhead (--env WITCH_RATE=...) reads it closer.
    print("\n| program | native CPU s | old added CPU ms | new added CPU ms | old samples | new samples "
          "| old us/sample | new us/sample | old / new |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    gains = []
    for prog in a.programs.split(","):
        nat = med(res[(prog, "native")]["cpu"])
        cells, per = [], {}
        for v in ("old", "new"):
            r = res[(prog, v)]
            added, samples = med(r["cpu"]) - nat, med(r["n"])
            per[v] = 1e6 * added / samples if added > 0 and samples else float("nan")
            cells.append((1e3 * added, samples))
        gain = per["old"] / per["new"]  # nan where either read none
        if not math.isnan(gain):
            gains.append(gain)
        print("| %s | %.2f | %.1f | %.1f | %.0f | %.0f | %.0f | %.0f | %.2fx |"
              % (prog, nat, cells[0][0], cells[1][0], cells[0][1], cells[1][1], per["old"],
                 per["new"], gain))
    if gains:
        print("\nsamples a CPU-second of overhead, new over old: median %.2fx over %d programs "
              "(a program whose added time read <= 0 has none)" % (med(gains), len(gains)))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
