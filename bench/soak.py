#!/usr/bin/python3
"""soak.py: random process mixes never change a program and never lose a profile.

usage: soak.py BUILD_DIR [--runs N | --seconds S] [--seed S] [--clients dead,silent,load]
                         [--rate R]

Each run draws a seed and a client (in turn) and runs tests/programs/soak
SEED twice: natively, then under LD_PRELOAD=BUILD_DIR/libwitch.so with that
client, at the default budget or at WITCH_RATE=2000 in turn (--rate fixes one).  soak.c's plan
mixes threads that signal each other, fork with and without exec,
posix_spawn, dlopen/dlclose, the program's own breakpoint event, crashes
(SIGSEGV in the main thread or another, abort), raise(SIGTERM), SIGTERM from
a parent, exit, _exit and return, in process trees up to three deep.

Checked per run:
  - stdout, stderr and exit status equal the native run's;
  - every process that logged itself (SOAK_LOG, soak.c) and ran at least
    --min-cpu-ms of CPU left a profile (WITCH_OUTPUT=DIR/p-%p.prof; an image
    that exec'd leaves its own beside the new image's), and each profile
    reads back with `witch report --json`;
  - the tree ends within --timeout s; one that does not fails, and the
    stacks of its processes' threads go to stderr first (gdb).
Prints a line per failure and a summary: runs, processes, threads, signals
handled, forks, execs, spawns, crashes, profiles read, differences, lost
profiles.  Exit 0 when there were no failures.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

CLIENTS = ["dead", "silent", "load"]


def clean_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("WITCH_") and k != "LD_PRELOAD"}
    return env


def tree_stacks(sid):
    """Every thread's stack of the processes in session sid, by gdb when
    there is one: what a tree that ran out of time was waiting on."""
    pids = subprocess.run(["pgrep", "-s", str(sid)], capture_output=True, text=True).stdout.split()
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")[:120]
            r = subprocess.run(["gdb", "-p", pid, "-batch", "-ex", "thread apply all bt 30"],
                               capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            continue
        out.append(f"--- pid {pid}: {cmd}")
        out += [l for l in r.stdout.splitlines() if l.startswith(("Thread", "#"))]
    return "\n".join(out)


def run_soak(prog, seed, env, timeout):
    """(returncode, stdout, stderr) of one soak tree, cores off.  A tree
    still running after timeout s: its stacks on stderr, then killed."""
    p = subprocess.Popen(["/bin/sh", "-c", 'ulimit -c 0; exec "$0" "$@"', prog, str(seed)],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"soak: seed {seed} still running after {timeout} s; its stacks:\n"
              + tree_stacks(p.pid), file=sys.stderr, flush=True)
        subprocess.run(["pkill", "-9", "-s", str(p.pid)])
        p.communicate()
        raise
    return p.returncode, out, err


def read_log(d):
    """{pid: [cpu_ns, threads, signals, forks, execs, spawns, crashes]} of SOAK_LOG dir d."""
    out = {}
    for name in os.listdir(d):
        with open(os.path.join(d, name)) as f:
            out[int(name)] = [int(x) for x in f.read().split()]
    return out


def one_run(args, seed, client, rate, tally):
    """Returns a list of failure strings."""
    tmp = tempfile.mkdtemp(prefix="witch-soak.")
    fails = []
    try:
        prog = os.path.join(args.build, "tests/programs/soak")
        dl = os.path.join(args.build, "tests/programs/libdlwork.so")
        nlog, plog, prof = (os.path.join(tmp, x) for x in ("nlog", "plog", "prof"))
        for d in (nlog, plog, prof):
            os.mkdir(d)
        env = clean_env()
        env.update(SOAK_DL=dl, SOAK_LOG=nlog)
        native = run_soak(prog, seed, env, args.timeout)
        env.update(SOAK_LOG=plog, LD_PRELOAD=os.path.join(args.build, "libwitch.so"),
                   WITCH_CLIENT=client, WITCH_OUTPUT=os.path.join(prof, "p-%p.prof"))
        if rate:
            env["WITCH_RATE"] = str(rate)
        if os.environ.get("TEST_WATCHPOINTS"):  # tests/needs_traps.sh --or-window
            env["WITCH_WATCHPOINTS"] = os.environ["TEST_WATCHPOINTS"]
        profiled = run_soak(prog, seed, env, args.timeout)
        name = f"seed {seed} client {client} " + (f"WITCH_RATE={rate}" if rate else "default budget")
        if native[0] != profiled[0]:
            fails.append(f"{name}: exit status {profiled[0]}, native {native[0]}")
        if native[1] != profiled[1]:
            diff = next((f"{a!r} natively, {b!r} profiled" for a, b in
                         zip(native[1].splitlines(), profiled[1].splitlines()) if a != b),
                        f"{len(native[1].splitlines())} lines natively, "
                        f"{len(profiled[1].splitlines())} profiled")
            fails.append(f"{name}: stdout differs: {diff}")
        if native[2] != profiled[2]:
            fails.append(f"{name}: stderr differs: {profiled[2][:200]!r}")
        procs = read_log(plog)
        profiles = os.listdir(prof)
        for pid, row in procs.items():
            tally["processes"] += 1
            for k, v in zip(("threads", "signals", "forks", "execs", "spawns", "crashes"), row[1:]):
                tally[k] += v
            if row[0] < args.min_cpu_ms * 1e6:
                continue
            if not any(p == f"p-{pid}.prof" or p.startswith(f"p-{pid}.prof.") for p in profiles):
                fails.append(f"{name}: process {pid} ({row[0] / 1e6:.0f} ms CPU) left no profile")
                tally["lost"] += 1
        for p in profiles:
            r = subprocess.run([os.path.join(args.build, "witch"), "report", "--json",
                                os.path.join(prof, p)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
            try:
                json.loads(r.stdout)
                ok = r.returncode == 0
            except ValueError:
                ok = False
            if not ok:
                fails.append(f"{name}: {p} does not read back: {r.stderr[:200]!r}")
            tally["profiles"] += 1
    except subprocess.TimeoutExpired:
        fails.append(f"seed {seed} client {client}: timed out after {args.timeout} s")
    if fails and args.keep:
        print(f"soak: files kept in {tmp}", file=sys.stderr)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return fails


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--clients", default=",".join(CLIENTS))
    ap.add_argument("--rate", type=int, default=-1,
                    help="WITCH_RATE for every run; 0 = the default budget; default: "
                         "alternate the default budget and 2000/s, whose signals stress more")
    ap.add_argument("--min-cpu-ms", type=float, default=10)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    if not args.runs and not args.seconds:
        args.runs = 12
    clients = args.clients.split(",")
    rnd = random.Random(args.seed)
    tally = dict.fromkeys(("processes", "threads", "signals", "forks", "execs", "spawns",
                           "crashes", "profiles", "lost"), 0)
    start = time.monotonic()
    runs = diffs = 0
    while True:
        if args.runs and runs >= args.runs:
            break
        if args.seconds and time.monotonic() - start >= args.seconds:
            break
        seed = rnd.getrandbits(48)
        rate = args.rate if args.rate >= 0 else (0, 2000)[(runs // len(clients)) % 2]
        fails = one_run(args, seed, clients[runs % len(clients)], rate, tally)
        runs += 1
        diffs += sum(1 for f in fails if "left no profile" not in f)
        for f in fails:
            print("FAIL", f)
        sys.stdout.flush()
    print(f"soak: {runs} runs in {time.monotonic() - start:.0f} s; {tally['processes']} processes, "
          f"{tally['threads']} threads, {tally['signals']} signals handled, {tally['forks']} forks, "
          f"{tally['execs']} execs, {tally['spawns']} spawns, {tally['crashes']} crashes; "
          f"{tally['profiles']} profiles read back; {diffs} differences, {tally['lost']} lost profiles")
    return 1 if diffs or tally["lost"] else 0


if __name__ == "__main__":
    sys.exit(main())
