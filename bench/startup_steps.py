#!/usr/bin/env python3
"""startup_steps.py: a short process's fixed cost, step by step.

usage: startup_steps.py LIB[,LIB...] [--runs N] [--cpu C] [-- COMMAND ...]

  LIB      one or more libwitch.so builds (an A/B of a change: the old first)
  --runs   runs of COMMAND under each LIB, interleaved (default 40)
  --cpu    run on this CPU (default 1; -1: anywhere): the project's VM's two
           vCPUs differ in process start-up (bench/startup.py)
  COMMAND  the process to time (default /bin/true)

Each run has WITCH_STARTUP_TIMES=1, with which the runtime's exit says how
long each step of its constructor and exit took, by the TSC
(libwitch/include/witch/startstep.h), and WITCH_WATCHPOINTS=0 (a machine
whose debug registers never trap would otherwise run unprofiled).  The
machine's probes are handed down as in a process tree (WITCH_PROBES from
a first profiled shell), since that is how most short processes start.
Prints each step's median (us) per LIB as a markdown table, the step
"(program)" being the program's own run.  A program that closes stderr
before its exit (GNU grep and sed: gnulib's close_stdout) says nothing:
time bash -c :, basename or /bin/true instead.  No timing is asserted.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

PREFIX = "witch: startup steps (us):"


def probes(lib):
    """The machine's probes as a profiled process hands them down."""
    env = dict(os.environ, LD_PRELOAD=lib, WITCH_WATCHPOINTS="0")
    with tempfile.TemporaryDirectory() as d:
        env["WITCH_OUTPUT"] = os.path.join(d, "p-%p.prof")
        out = subprocess.run(["sh", "-c", 'echo "$WITCH_PROBES"'], env=env,
                             capture_output=True, text=True, check=True)
    return out.stdout.strip()


def one_run(lib, command, probe_env, cpu, outdir):
    env = {k: v for k, v in os.environ.items() if not k.startswith("WITCH_")}
    env.update(LD_PRELOAD=lib, WITCH_WATCHPOINTS="0", WITCH_STARTUP_TIMES="1",
               WITCH_PROBES=probe_env, WITCH_OUTPUT=os.path.join(outdir, "p-%p.prof"))
    # (the CPU set in the child itself: a taskset in front would be the
    # profiled process)
    pin = (lambda: os.sched_setaffinity(0, {cpu})) if cpu >= 0 else None
    r = subprocess.run(command, env=env, capture_output=True, text=True, preexec_fn=pin)
    for line in r.stderr.splitlines():
        if line.startswith(PREFIX):
            steps = {}
            for tok in line[len(PREFIX):].split():
                name, _, us = tok.rpartition("=")
                steps[name] = float(us)
            return steps
    return None  # (stderr closed before the exit: gnulib's close_stdout in grep, sed)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("libs")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--cpu", type=int, default=1)
    argv = sys.argv[1:]
    command = argv[argv.index("--") + 1:] if "--" in argv else []
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    a.command = command or ["/bin/true"]
    libs = [os.path.abspath(x) for x in a.libs.split(",")]
    probe_env = probes(libs[0])
    runs = {lib: [] for lib in libs}
    with tempfile.TemporaryDirectory() as d:
        for _ in range(a.runs):
            for lib in libs:
                steps = one_run(lib, a.command, probe_env, a.cpu, d)
                if steps is not None:
                    runs[lib].append(steps)
                for f in os.listdir(d):
                    os.unlink(os.path.join(d, f))
    if any(not r for r in runs.values()):
        raise SystemExit("no 'startup steps' line: does the command close stderr before it "
                         "exits (GNU grep, sed: gnulib's close_stdout)?")
    names = []
    for lib in libs:
        for steps in runs[lib]:
            names += [n for n in steps if n not in names]
    said = ", ".join(str(len(runs[lib])) for lib in libs)
    print(f"`{' '.join(a.command)}`, {a.runs} runs each ({said} said their steps), "
          "medians (us)\n")
    print("| step | " + " | ".join(os.path.basename(os.path.dirname(lib)) + "/" +
                                   os.path.basename(lib) for lib in libs) + " |")
    print("|---|" + "---:|" * len(libs))
    totals = {lib: 0.0 for lib in libs}
    for n in names:
        cells = []
        for lib in libs:
            m = statistics.median(s.get(n, 0.0) for s in runs[lib])
            if n != "(program)":
                totals[lib] += m
            cells.append(f"{m:.0f}")
        print(f"| {n} | " + " | ".join(cells) + " |")
    print("| sum of the medians, the program's aside | " +
          " | ".join(f"{totals[lib]:.0f}" for lib in libs) + " |")


if __name__ == "__main__":
    sys.exit(main())
