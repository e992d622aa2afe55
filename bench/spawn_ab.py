#!/usr/bin/env python3
"""spawn_ab.py: CPU time of a command under several environments, interleaved.

usage: spawn_ab.py ROUNDS 'NAME=K=V;K=V' ['NAME=...' ...] -- COMMAND [ARGS...]

Each variant is a name and the variables it sets (none: the native run),
over an environment with every WITCH_* and LD_PRELOAD taken out.  Each
round runs COMMAND once under each variant, the order reversed every
other round, pinned to CPU 1, stdout and stderr to /dev/null; the child's
user + system time comes from wait4.  Prints each variant's median and
quartiles (us) and its median less the first variant's.  No timing is
asserted anywhere; for a short process's fixed costs, where bench/
startup.py's workloads do not tick (bench/short_tick.c does).
"""
import os
import statistics
import sys


def main():
    if "--" not in sys.argv or len(sys.argv) < 5:
        raise SystemExit(__doc__)
    cut = sys.argv.index("--")
    rounds, specs, argv = int(sys.argv[1]), sys.argv[2:cut], sys.argv[cut + 1:]
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("WITCH_") and k != "LD_PRELOAD"}
    variants = []
    for spec in specs:
        name, _, kv = spec.partition("=")
        env = dict(base)
        for pair in filter(None, kv.split(";")):
            k, _, v = pair.partition("=")
            env[k] = v
        variants.append((name, env))
    os.sched_setaffinity(0, {1})
    times = {name: [] for name, _ in variants}
    null = os.open(os.devnull, os.O_WRONLY)
    acts = [(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, null, 2)]
    for r in range(rounds):
        for name, env in (variants if r % 2 == 0 else variants[::-1]):
            pid = os.posix_spawnp(argv[0], argv, env, file_actions=acts)
            _, _, ru = os.wait4(pid, 0)
            times[name].append((ru.ru_utime + ru.ru_stime) * 1e6)
    first = statistics.median(times[variants[0][0]])
    print(f"`{' '.join(argv)}`, {rounds} interleaved rounds, CPU us (user + system)")
    print("| variant | median | q1 | q3 | added |")
    print("|---|---:|---:|---:|---:|")
    for name, _ in variants:
        xs = times[name]
        q = statistics.quantiles(xs, n=4)
        med = statistics.median(xs)
        print(f"| {name} | {med:,.0f} | {q[0]:,.0f} | {q[2]:,.0f} | {med - first:+,.0f} |")


if __name__ == "__main__":
    main()
