#!/usr/bin/python3
"""tick_refill.py: what an empty tick costs a program, by its working set.

usage: tick_refill.py [--rounds 15] [--rate 400] [--sizes 16,256,1024,8192]

Builds bench/tick_refill.c (cc -O2, into a temporary directory), and for
each working set (KiB) runs it without a clock,
with the timer's and with perf's (each tick an empty handler), interleaved
over rounds with the order rotated, and prints the median CPU time (user +
system, wait4) and the cost of one signal: (CPU time with - without) /
signals, medians.  Steps are scaled so that each run takes ~0.9 s.  The
runtime's estimate (cost.h) prices a timer tick at COST_SIGNAL_NS and times
a perf tick's kernel round trip; what the program refills after it is in
neither.  This measures that part where the handler does nothing.
No timing is asserted; this is a benchmark.
"""
import argparse
import os
import statistics
import shutil
import subprocess
import sys
import tempfile

# Million chase steps a ~0.9 s run takes, by working set (this EPYC VM).
STEPS = {16: 600, 256: 300, 1024: 100, 8192: 18}


def run(argv):
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read().decode()
    _, status, ru = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit("tick_refill.py: %s failed: %s" % (" ".join(argv), err.strip()))
    return ru.ru_utime + ru.ru_stime, int(err.split()[1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--rate", type=int, default=400)
    ap.add_argument("--sizes", default="16,256,1024,8192")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    exe = os.path.join(tmp, "tick_refill")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tick_refill.c")
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-o", exe, src], check=True)
    clocks = ["none", "timer", "perf"]
    print("| working set KiB | CPU s, no clock | timer: signals | timer: us a signal "
          "| perf: signals | perf: us a signal |")
    print("|---:|---:|---:|---:|---:|---:|")
    for kib in [int(x) for x in a.sizes.split(",")]:
        steps = STEPS.get(kib, max(10, 100 * 1024 // kib))
        res = {c: [] for c in clocks}
        for r in range(a.rounds):
            k = r % len(clocks)
            for c in clocks[k:] + clocks[:k]:
                res[c].append(run([exe, str(kib), str(steps), c, str(a.rate)]))
        base = statistics.median(t for t, _ in res["none"])
        row = ["%d" % kib, "%.3f" % base]
        for c in clocks[1:]:
            extra = [(t - n) / s * 1e6 for (t, s), (n, _) in zip(res[c], res["none"]) if s]
            row += ["%d" % statistics.median(s for _, s in res[c]),
                    "%.0f" % statistics.median(extra) if extra else "n/a"]
        print("| " + " | ".join(row) + " |", flush=True)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
