#!/usr/bin/env python3
"""overhead.py: runtime and memory overhead of libwitch (see overhead.sh).

usage: overhead.py BUILD_DIR [RUNS] [CLIENT...]
  BUILD_DIR  has libwitch.so and tests/programs/<known-answer programs>
  RUNS       runs of each configuration (default 5)
  CLIENT...  clients to measure (default: dead)

For every program and client: RUNS native and RUNS profiled runs,
interleaved (native, profiled, native, profiled, ...) so drift in machine
speed hits both alike; wall time from time.perf_counter() around each run,
peak RSS from bench/real/rusage_run (wait4's ru_maxrss of the program
alone, KiB; see run()).
Prints a markdown table of medians and ratios.  A third run per round,
"witch run", is profiled as `witch run` launches it: with GLIBC_TUNABLES
that keep glibc's memcpy/memset off rep movsb/stosb (see RUN_TUNABLES).  Profiled runs get
LD_PRELOAD, WITCH_CLIENT and WITCH_OUTPUT (a temporary directory) and
otherwise inherit the environment: WITCH_RATE is not set, so the runtime's
default rate is measured unless you export one.  Native runs get neither
LD_PRELOAD nor any WITCH_* variable.  A run whose exit status or stdout
differs from the first native run's, or a profiled run that leaves no
profile, is counted in the notes column.  From the profiles: samples per
CPU-second, kernel round trips per sample, the runtime's own overhead
estimate beside the measured one (profiled / native - 1), and how many
samples a second 1% of measured overhead buys.  No timing is asserted.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# (name, path relative to BUILD_DIR or None for bench sources, args)
# Repeat counts are ~2x the known-answer defaults (~1 s native each).
PROGRAMS = [
    ("dead_two_loops", "tests/programs/dead_two_loops", ["20"]),
    ("fig42", "tests/programs/fig42", ["16"]),
    ("no_dead", "tests/programs/no_dead", ["80"]),
    ("dead_threads", "tests/programs/dead_threads", ["40"]),
    ("stack_case", "tests/programs/stack_case", ["1400"]),
    ("silent_refresh", "tests/programs/silent_refresh", ["896"]),
    ("silent_fp", "tests/programs/silent_fp", ["480"]),
    ("load_search", "tests/programs/load_search", ["320"]),
    ("load_threads", "tests/programs/load_threads", ["160"]),
    ("hashsort", None, ["8"]),
]

# What `witch run` adds for the profiled program (tools/witch/run.c): glibc
# off rep movsb/stosb, which an armed debug register slows 16-27x here
# (bench/dr_fast_string.c).  The "witch run" columns use it.
RUN_TUNABLES = ("glibc.cpu.x86_rep_movsb_threshold=4294967295:"
                "glibc.cpu.x86_rep_stosb_threshold=4294967295")
BENCH_SOURCES = {"hashsort": "hashsort.c"}


LAUNCHER = None  # bench/real/rusage_run, built in main()


def run(argv, env, stdout_path):
    """Run argv; return (wall seconds, exit status, max RSS KiB).

    Through bench/real/rusage_run: a child forked from this Python process
    would report Python's own RSS as its peak (the kernel keeps the
    pre-exec high-water mark), which hides small programs' memory.  The
    launcher is small, forks, execs and waits; LD_PRELOAD is handed to it as
    RUSAGE_RUN_LD_PRELOAD so the launcher itself runs unprofiled."""
    env = dict(env)
    if "LD_PRELOAD" in env:
        env["RUSAGE_RUN_LD_PRELOAD"] = env.pop("LD_PRELOAD")
    stat = stdout_path + ".rusage"
    with open(stdout_path, "wb") as out, open(os.devnull, "wb") as err:
        t0 = time.perf_counter()
        p = subprocess.run([LAUNCHER, stat] + argv, env=env, stdout=out, stderr=err)
        t1 = time.perf_counter()
    rss = 0
    with open(stat) as f:
        for line in f:
            k, _, v = line.partition(" ")
            if k == "maxrss":
                rss = int(v)
    return t1 - t0, p.returncode, rss


def build_launcher(tmp):
    cc = os.environ.get("CC", "cc")
    exe = os.path.join(tmp, "rusage_run")
    src = os.path.join(HERE, "real", "rusage_run.c")
    r = subprocess.run([cc, "-O2", src, "-o", exe], capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(f"overhead: cannot build {src}:\n{r.stderr}")
        return None
    return exe


def build_bench(name, tmp):
    cc = os.environ.get("CC", "cc")
    src = os.path.join(HERE, BENCH_SOURCES[name])
    exe = os.path.join(tmp, name)
    r = subprocess.run([cc, "-O2", "-g", src, "-o", exe], capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(f"overhead: cannot build {src}:\n{r.stderr}")
        return None
    return exe


def report_costs(rep):
    """From one `witch report --json` (one profile or several merged):
    samples per CPU-second of the sampler's clock, kernel round trips per
    sample, and the runtime's own overhead estimate in percent; None
    without samples or an estimate."""
    st = rep.get("stats", {})
    clock = st.get("clock_ns", 0) / 1e9
    samples = rep.get("samples") or 0
    if clock <= 0 or samples <= 0 or rep.get("overhead_estimate") is None:
        return None
    return (samples / clock, st.get("round_trips", 0) / samples, 100 * rep["overhead_estimate"])


def profile_costs(build, outdir):
    """Medians over the profiles in outdir of what the runtime says it did:
    samples per CPU-second, kernel round trips per sample, and its own
    overhead estimate in percent (witch report --json: overhead_estimate,
    stats).  None when no profile has them."""
    import json
    rows = []
    for f in sorted(os.listdir(outdir)):
        r = subprocess.run([os.path.join(build, "witch"), "report", "--json",
                            os.path.join(outdir, f)], capture_output=True, text=True)
        if r.returncode != 0:
            continue
        costs = report_costs(json.loads(r.stdout))
        if costs:
            rows.append(costs)
    if not rows:
        return None
    return {"samples_per_s": statistics.median(r[0] for r in rows),
            "trips_per_sample": statistics.median(r[1] for r in rows),
            "estimate_pct": statistics.median(r[2] for r in rows)}


def fmt_ratio(a, b):
    return f"{b / a:.2f}" if a > 0 else "n/a"


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    build = os.path.abspath(argv[0])
    try:
        runs = int(argv[1]) if len(argv) > 1 else 5
    except ValueError:
        sys.stderr.write(f"overhead: RUNS must be a number, got {argv[1]!r}\n")
        return 2
    if runs < 1:
        sys.stderr.write("overhead: RUNS must be >= 1\n")
        return 2
    clients = argv[2:] or ["dead"]
    lib = os.path.join(build, "libwitch.so")
    if not os.path.exists(lib):
        sys.stderr.write(f"overhead: {lib} not found\n")
        return 1

    base_env = {k: v for k, v in os.environ.items()
                if k != "LD_PRELOAD" and not k.startswith("WITCH_")}
    inherited = {k: v for k, v in os.environ.items() if k.startswith("WITCH_")}
    tmp = tempfile.mkdtemp(prefix="witch-overhead.")
    global LAUNCHER
    try:
        LAUNCHER = build_launcher(tmp)
        if LAUNCHER is None:
            return 1
        programs = []
        for name, rel, args in PROGRAMS:
            exe = build_bench(name, tmp) if rel is None else os.path.join(build, rel)
            if exe is None or not os.access(exe, os.X_OK):
                sys.stderr.write(f"overhead: skipping {name}: {exe} not found\n")
                continue
            programs.append((name, exe, args))

        print(f"# libwitch overhead: {runs} native + {runs} profiled runs each, interleaved; "
              f"medians")
        print()
        print(f"build: {build}; WITCH_RATE: "
              f"{inherited.get('WITCH_RATE', 'runtime default (not set)')}"
              + "".join(f"; {k}={v}" for k, v in sorted(inherited.items())
                        if k not in ("WITCH_RATE", "WITCH_CLIENT", "WITCH_OUTPUT")))
        print()
        print("| program | client | native s | profiled s | ratio | witch run s | ratio "
              "| native RSS MiB | profiled RSS MiB | RSS ratio | samples/CPU-s "
              "| round trips/sample | estimate % | measured % | samples/s per 1% | notes |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        sys.stdout.flush()
        for name, exe, args in programs:
            for client in clients:
                outdir = os.path.join(tmp, f"prof-{name}-{client}")
                os.makedirs(outdir)
                penv = dict(inherited)
                penv.update(base_env)
                penv.update(LD_PRELOAD=lib, WITCH_CLIENT=client,
                            WITCH_OUTPUT=os.path.join(outdir, "p-%p.prof"))
                renv = dict(penv)
                renv["GLIBC_TUNABLES"] = RUN_TUNABLES
                nt, pt, rt, nr, pr = [], [], [], [], []
                ref = None
                bad_native = bad_prof = 0
                for i in range(runs):
                    so = os.path.join(tmp, "out")
                    t, rc, rss = run([exe] + args, base_env, so)
                    with open(so, "rb") as f:
                        got = (rc, f.read())
                    if ref is None:
                        ref = got
                    bad_native += got != ref
                    nt.append(t); nr.append(rss)
                    t, rc, rss = run([exe] + args, penv, so)
                    with open(so, "rb") as f:
                        got = (rc, f.read())
                    bad_prof += got != ref
                    pt.append(t); pr.append(rss)
                    t, rc, rss = run([exe] + args, renv, so)
                    with open(so, "rb") as f:
                        got = (rc, f.read())
                    bad_prof += got != ref
                    rt.append(t)
                nprof = len(os.listdir(outdir))
                cost = profile_costs(build, outdir)
                notes = []
                if ref[0] != 0:
                    notes.append(f"native exit {ref[0]}")
                if bad_native:
                    notes.append(f"{bad_native} native run(s) differ")
                if bad_prof:
                    notes.append(f"{bad_prof} profiled run(s) differ in output/status")
                if nprof != 2 * runs:
                    notes.append(f"{nprof} profile(s) for {2 * runs} runs")
                mn, mp = statistics.median(nt), statistics.median(pt)
                mr = statistics.median(rt)
                rn, rp = statistics.median(nr) / 1024, statistics.median(pr) / 1024
                measured = (mp / mn - 1) * 100 if mn > 0 else float("nan")
                per_pct = (cost["samples_per_s"] / measured
                           if cost and measured > 0.05 else float("nan"))
                cols = (f"{cost['samples_per_s']:.0f} | {cost['trips_per_sample']:.1f} "
                        f"| {cost['estimate_pct']:.1f} | {measured:.1f} | {per_pct:.0f}"
                        if cost else "- | - | - | - | -")
                print(f"| {name} | {client} | {mn:.3f} | {mp:.3f} | {fmt_ratio(mn, mp)} "
                      f"| {mr:.3f} | {fmt_ratio(mn, mr)} | {rn:.1f} | {rp:.1f} | {fmt_ratio(rn, rp)} "
                      f"| {cols} | {'; '.join(notes)} |")
                sys.stdout.flush()
                shutil.rmtree(outdir, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
