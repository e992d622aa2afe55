#!/usr/bin/env python3
"""startup.py: what the runtime costs a process whatever it runs: its start
(loading, the constructor's probes and index), its exit (the profile), and
what it adds to each process of a tree of short ones (a shell pipeline,
a compile), where that fixed cost is most of the run.

usage: startup.py LIB[,LIB...] [--runs N] [--env K=V,...] [--cpu C] [--out FILE]

  LIB      one or more libwitch.so builds, compared with each other and
           with the native run (an A/B of a change: the old build first)
  --runs   rounds (default 20); each round runs every workload natively
           and under each LIB, interleaved, so drift hits all alike
  --env    settings for the profiled runs (default WITCH_WATCHPOINTS=0:
           on a machine whose debug registers never trap the runtime
           would otherwise run unprofiled, and arms nothing anyway
           until the first tick)
  --cpu    run everything on this CPU (default 1; -1: anywhere).  On the
           project's 2-vCPU VM the two CPUs differ by ~40% in process
           start-up, which made the medians bimodal.

Per workload and build: the median CPU time (user + system, the whole
process tree, from wait4 in bench/real/rusage_run), the median wall time, and the median CPU time
over native; "a process" divides the added CPU time by the processes the
tree ran (the distinct pids among the profiles one profiled run wrote:
every process writes its own, tests/programs/run_tree_names.sh).  No
timing is asserted.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PIPELINE = "for i in $(seq 20); do echo x$i | sed s/x/y/ | grep -c y >/dev/null; done"


FORKS = 200


def workloads(tmp, fork_exec):
    """(name, argv, forks): a process that does nothing, a shell's
    pipelines, a compile (the driver, cc1, as, collect2, ld), and forks
    alone: a parent that ran 30 ms forks FORKS children that exec
    /bin/true unprofiled (bench/real/fork_exec.c), so that what is added
    is the fork's side, divided by the forks."""
    src = os.path.join(tmp, "hello.c")
    with open(src, "w") as f:
        f.write("#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n")
    out = [("true", ["/bin/true"], 0),
           ("pipeline (60 processes)", ["/bin/bash", "-c", PIPELINE], 0)]
    if shutil.which("gcc"):
        out.append(("gcc -O2 hello.c", ["gcc", "-O2", "-o", os.path.join(tmp, "hello"), src], 0))
    out.append((f"fork+exec x{FORKS}, children unprofiled",
                [fork_exec, str(FORKS), "30", "/bin/true"], FORKS))
    return out


def build_tool(tmp, name):
    """bench/real/NAME.c built into tmp.  rusage_run is the launcher, so
    the program is forked from a small process (a child forked from
    Python pays for Python's pages first: /bin/true read 15 ms of CPU that
    way, 1.5 ms this way)."""
    exe = os.path.join(tmp, name)
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "real", name + ".c")
    r = subprocess.run([os.environ.get("CC", "cc"), "-O2", src, "-o", exe],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"startup: cannot build {src}:\n{r.stderr}")
    return exe


def run_once(launcher, argv, env, cpu, stat):
    """(CPU seconds of the whole tree, wall seconds, exit status)."""
    env = dict(env)
    if "LD_PRELOAD" in env:
        env["RUSAGE_RUN_LD_PRELOAD"] = env.pop("LD_PRELOAD")
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu >= 0 else None
    t0 = time.perf_counter()
    p = subprocess.run([launcher, stat] + argv, env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=pin)
    wall = time.perf_counter() - t0
    got = {}
    with open(stat) as f:
        for line in f:
            k, _, v = line.partition(" ")
            got[k] = v.strip()
    return float(got.get("user", 0)) + float(got.get("sys", 0)), wall, p.returncode


def pids_of(outdir):
    """Distinct processes among the profiles in outdir (p.prof, p.prof.PID,
    p.prof.PID.exec: the first process's name has no pid)."""
    pids = set()
    for name in os.listdir(outdir):
        parts = name.split(".")
        pids.add(next((p for p in parts[2:] if p.isdigit()), "first"))
    return len(pids)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("libs")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--env", default="WITCH_WATCHPOINTS=0")
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--out")
    args = ap.parse_args()
    libs = [os.path.abspath(l) for l in args.libs.split(",")]
    extra = dict(kv.split("=", 1) for kv in args.env.split(",") if kv)
    tmp = tempfile.mkdtemp(prefix="witch-startup.")
    outdir = os.path.join(tmp, "prof")
    os.mkdir(outdir)
    loads = workloads(tmp, build_tool(tmp, "fork_exec"))
    launcher = build_tool(tmp, "rusage_run")
    stat = os.path.join(tmp, "rusage")
    configs = ["native"] + libs
    res = {(w, c): [] for w, _, _ in loads for c in configs}
    procs = {}
    bad = {}
    for r in range(args.runs):
        for w, argv, _ in loads:
            for c in configs:
                env = dict(os.environ)
                for k in list(env):
                    if k.startswith("WITCH_") or k == "LD_PRELOAD":
                        del env[k]
                if c != "native":
                    env.update(extra, LD_PRELOAD=c, WITCH_OUTPUT=os.path.join(outdir, "p.prof"))
                cpu, wall, rc = run_once(launcher, argv, env, args.cpu, stat)
                if rc != 0:
                    bad[(w, c)] = bad.get((w, c), 0) + 1
                res[(w, c)].append((cpu, wall))
                if c != "native":
                    procs[w] = max(procs.get(w, 0), pids_of(outdir))
                for f in os.listdir(outdir):
                    os.unlink(os.path.join(outdir, f))
    shutil.rmtree(tmp, ignore_errors=True)

    lines = ["# What a process costs whatever it runs: start-up and exit", "",
             f"`bench/startup.py {args.libs} --runs {args.runs} --env {args.env} --cpu {args.cpu}`; "
             "medians of interleaved runs; CPU = user + system of the whole tree (wait4)", "",
             "| workload | build | CPU ms | wall ms | CPU over native | added a process or fork (ms) |",
             "|---|---|---:|---:|---:|---:|"]
    for w, _, forks in loads:
        nat = statistics.median(c for c, _ in res[(w, "native")])
        for c in configs:
            cpu = statistics.median(x for x, _ in res[(w, c)])
            wall = statistics.median(x for _, x in res[(w, c)])
            label = "native" if c == "native" else os.path.relpath(c)
            per = "" if c == "native" else \
                f"{(cpu - nat) * 1e3 / forks:.3f} a fork" if forks else \
                "" if not procs.get(w) else \
                f"{(cpu - nat) * 1e3 / procs[w]:.2f} ({procs[w]} processes)"
            note = f" ({bad[(w, c)]} runs failed)" if bad.get((w, c)) else ""
            lines.append(f"| {w} | {label}{note} | {cpu * 1e3:.2f} | {wall * 1e3:.2f} | "
                         f"{cpu / nat:.3f} | {per} |")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
