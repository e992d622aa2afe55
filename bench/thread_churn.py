#!/usr/bin/env python3
"""thread_churn.py: what the runtime adds to a thread's start and end.

usage: thread_churn.py LIB[,LIB...] [--runs N] [--build DIR] [--env K=V,...]

  LIB      one or more libwitch.so builds (an A/B of a change: the old first)
  --runs   rounds (default 9); each runs the program natively and under
           each LIB in turn, so drift hits all alike
  --build  where tests/programs/threads_many was built (default build)
  --env    settings for the profiled runs (default WITCH_WATCHPOINTS=0:
           on a machine whose debug registers never trap the runtime would
           otherwise run unprofiled)

The program is tests/programs/threads_many: 2,000 threads of ~0.2 ms, 8 at
a time, 64 detached ones, then 24 long ones (2,088 threads in all), the
pattern of a pool that makes a thread a task.  Per build: the medians of
CPU time (user + system, wait4), wall time and minor page faults, the CPU
time over native, and the CPU time added a thread (all of it divided by
the 2,088 threads: the long threads' sampling is in it too, ~10-20% of
it at the default budget).  The machine's probes are handed down from a
first profiled shell, as in a process tree.  No timing is asserted.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

THREADS = 2088


def probes(lib, env):
    """WITCH_PROBES as a profiled process hands them down."""
    e = dict(env, LD_PRELOAD=lib)
    out = subprocess.run(["sh", "-c", 'echo "$WITCH_PROBES"'], env=e, capture_output=True,
                         text=True, check=True)
    return out.stdout.strip()


def run(argv, env):
    """(CPU s, wall s, minor faults) of one run."""
    t0 = time.monotonic()
    pid = os.posix_spawn(argv[0], argv, env,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        sys.exit(f"thread_churn: {argv[0]} ended with status {status}")
    return ru.ru_utime + ru.ru_stime, wall, ru.ru_minflt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("libs")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--build", default="build")
    ap.add_argument("--env", default="WITCH_WATCHPOINTS=0")
    a = ap.parse_args()
    prog = os.path.abspath(os.path.join(a.build, "tests/programs/threads_many"))
    libs = [os.path.abspath(l) for l in a.libs.split(",")]
    base = {k: v for k, v in os.environ.items() if not k.startswith("WITCH_") and k != "LD_PRELOAD"}
    extra = dict(kv.split("=", 1) for kv in a.env.split(",") if kv)
    with tempfile.TemporaryDirectory() as tmp:
        envs = {"native": base}
        for lib in libs:
            e = dict(base, **extra, WITCH_OUTPUT=os.path.join(tmp, "p-%p.prof"))
            e["WITCH_PROBES"] = probes(lib, e)
            envs[lib] = dict(e, LD_PRELOAD=lib)
        res = {k: [] for k in envs}
        for _ in range(a.runs):
            for k, e in envs.items():
                res[k].append(run([prog], e))
                for f in os.listdir(tmp):
                    os.unlink(os.path.join(tmp, f))
    med = {k: [statistics.median(r[i] for r in v) for i in range(3)] for k, v in res.items()}
    print(f"`bench/thread_churn.py {a.libs} --runs {a.runs} --env {a.env}`; "
          f"tests/programs/threads_many ({THREADS} threads), medians of interleaved runs\n")
    print("| build | CPU s | wall s | minor faults | CPU over native | CPU added a thread (us) |")
    print("|---|---:|---:|---:|---:|---:|")
    n = med["native"]
    for k, (cpu, wall, flt) in med.items():
        added = "" if k == "native" else f"{(cpu - n[0]) / THREADS * 1e6:.0f}"
        print(f"| {k if k == 'native' else os.path.relpath(k)} | {cpu:.3f} | {wall:.3f} | "
              f"{flt:.0f} | {cpu / n[0]:.3f} | {added} |")


if __name__ == "__main__":
    main()
