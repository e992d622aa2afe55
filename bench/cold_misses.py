#!/usr/bin/python3
"""cold_misses.py: the handler's cache misses a tick, counted by cachegrind.

usage: cold_misses.py BUILD [BUILD2] [--rates 50,2000] [--programs lz,hashtab]
                      [--scale 1] [--env K=V,...] [--l2 1048576,16,64] [--top 12]

At the budget's rates (20-100 ticks a CPU-second) a tick's handler finds
its code and tables cold: lz's handler time a tick is ~130 us at 50/s
against ~35 at 2000/s on the EPYC VM.  Without a PMU no counter says which
misses make that up; cachegrind simulates the caches instead, the same
count for the same run on any machine, whatever else the machine does.
Its last level is set to one core's L2 (--l2: size,ways,line; default the
1 MiB of the EPYC's), so a miss there is a line the program pushed out
between ticks.

Each build, program and rate: one run under valgrind --tool=cachegrind,
WITCH_RATE=rate, WITCH_SEED=7, the --env settings (default
WITCH_WATCHPOINTS=0: the window and the picks without arming, which runs
where debug registers never trap, as bench/handler_ab.py does).  The
counts of the runtime's own source files (libwitch/src, libwitch/include)
are summed and divided by the profile's ticks (every profile of the run).
Not counted: what the runtime calls in libc (memcpy, memcmp, memset) and
in Zydis or libunwind, which cachegrind cannot tell apart from the
program's own calls without their symbols and callers.

Prints a markdown table (instructions, then L2 misses a tick: instruction
fetches, data reads, data writes) and, per build, the runtime's functions
with the most L2 misses a tick at the lowest rate of the first program.
Valgrind slows the program ~50x and its ticks count the slowed CPU time,
so the lowest rate here is colder than the same rate natively: compare
builds and rates with it, not with a native run's figures.
"""
import argparse
import collections
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EVENTS = ("Ir", "ILmr", "DLmr", "DLmw")


def runtime_file(path):
    return "/libwitch/src/" in path or "/libwitch/include/" in path


def read_cachegrind(path):
    """{(file, function): {event: count}} of a cachegrind.out file."""
    names, fl, fn = None, "", ""
    sums = collections.defaultdict(lambda: collections.Counter())
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                names = line.split()[1:]
            elif line.startswith("fl="):
                fl = line[3:].strip()
            elif line.startswith("fn="):
                fn = line[3:].strip()
            elif line[:1].isdigit() and names:
                counts = line.split()[1:]
                c = sums[(fl, fn)]
                for name, v in zip(names, counts):
                    c[name] += int(v)
    return sums


def profile_ticks(outdir):
    ticks = 0
    for p in glob.glob(os.path.join(outdir, "*.prof")):
        with open(p) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 3 and parts[0] == "stat" and parts[1] == "ticks":
                    ticks += int(parts[2])
    return ticks


def one_run(build, prog, scale, rate, env_extra, l2, tmp):
    outdir = tempfile.mkdtemp(dir=tmp)
    cg = os.path.join(outdir, "cachegrind.out")
    env = dict(os.environ)
    env.update(env_extra)
    env.update({"LD_PRELOAD": os.path.join(build, "libwitch.so"), "WITCH_RATE": str(rate),
                "WITCH_SEED": "7", "WITCH_OUTPUT": os.path.join(outdir, "p-%p.prof")})
    argv = ["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--LL=" + l2,
            "--cachegrind-out-file=" + cg, os.path.join(build, "bench", "programs", prog), scale]
    r = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode != 0 or not os.path.exists(cg):
        sys.exit("cold_misses: %s failed (exit %d):\n%s" % (" ".join(argv), r.returncode,
                                                             r.stderr[-2000:]))
    ticks = profile_ticks(outdir)
    per_fn = {k: v for k, v in read_cachegrind(cg).items() if runtime_file(k[0])}
    shutil.rmtree(outdir, ignore_errors=True)
    return ticks, per_fn


def misses(c):
    return c["ILmr"] + c["DLmr"] + c["DLmw"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("builds", nargs="+")
    ap.add_argument("--rates", default="50,2000")
    ap.add_argument("--programs", default="lz,hashtab")
    ap.add_argument("--scale", default="1")
    ap.add_argument("--env", default="WITCH_WATCHPOINTS=0",
                    help="K=V,... for the profiled runs (a WITCH_PROBES value may hold no comma)")
    ap.add_argument("--l2", default="1048576,16,64")
    ap.add_argument("--top", type=int, default=12)
    a = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("cold_misses: needs valgrind (apt-get install valgrind)")
    env_extra = dict(kv.split("=", 1) for kv in a.env.split(",") if kv)
    rates = [int(r) for r in a.rates.split(",")]
    programs = a.programs.split(",")
    tmp = tempfile.mkdtemp(prefix="cold_misses.")
    rows, tops = [], {}
    try:
        for prog in programs:
            for rate in rates:
                for build in a.builds:
                    ticks, per_fn = one_run(build, prog, a.scale, rate, env_extra, a.l2, tmp)
                    total = collections.Counter()
                    for c in per_fn.values():
                        total.update(c)
                    t = max(ticks, 1)
                    rows.append((prog, rate, build, ticks) + tuple(total[e] / t for e in EVENTS))
                    if prog == programs[0] and rate == min(rates):
                        tops[build] = (t, per_fn)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("| program | rate | build | ticks | instructions a tick | L2 misses a tick: "
          "code | data read | data written | all |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for prog, rate, build, ticks, ir, il, dr, dw in rows:
        print("| %s | %d | %s | %d | %.0f | %.1f | %.1f | %.1f | %.1f |"
              % (prog, rate, build, ticks, ir, il, dr, dw, il + dr + dw))
    for build, (t, per_fn) in tops.items():
        print("\n%s, %s at %d/s: the runtime's functions by L2 misses a tick "
              "(code / data read / data written)" % (build, programs[0], min(rates)))
        for (fl, fn), c in sorted(per_fn.items(), key=lambda kv: -misses(kv[1]))[:a.top]:
            print("  %6.1f  %5.1f %5.1f %5.1f  %s (%s)" % (misses(c) / t, c["ILmr"] / t,
                                                       c["DLmr"] / t, c["DLmw"] / t, fn,
                                                       os.path.basename(fl)))


if __name__ == "__main__":
    main()
