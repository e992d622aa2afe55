#!/usr/bin/env python3
"""weights: what the software sampler's weights add up to, on loops whose
bytes are known (bench/weights.c): the estimator's bias by the way code runs.

    bench/weights.py BUILD [--rate R] [--seeds N] [--kernels K,...] [--out FILE]

bench/weights.c is compiled (-O2 -g) into a temporary directory; each kernel
runs natively once for its true bytes, then under LD_PRELOAD=BUILD/libwitch.so
with WITCH_WATCHPOINTS=0 (samples weighed, nothing armed: the estimate
alone, on any machine) for N seeds, dead client for stores and load client
for loads.  The estimate is the sum of the "sampled" bytes whose innermost
frame is the kernel's function (witch report --json).  Printed, and written
to FILE as markdown: estimate / truth per seed and the median (1.00 is
count-faithful).
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# kernel: (its function, clients measured)
KERNELS = {
    "scalar": ("k_scalar", ["dead"]),
    "scalar_big": ("k_scalar", ["dead"]),
    "calls": ("k_calls", ["dead"]),
    "sum": ("k_sum", ["load"]),
    "branchy": ("k_branchy", ["dead", "load"]),
    "pattern": ("k_pattern", ["dead", "load"]),
    "locked": ("k_locked", ["dead", "load"]),
    "chase": ("k_chase", ["dead", "load"]),
    "horner": ("k_horner", ["dead", "load"]),
    "stream": ("k_stream", ["dead", "load"]),
    "column": ("k_column", ["dead"]),
    "syscalls": ("k_syscalls", ["dead"]),
}
WHAT = {
    "scalar": "store loop in L1, ~2 cycles an iteration",
    "scalar_big": "the same over 8 MiB, 1M iterations a run",
    "calls": "a call an iteration",
    "sum": "load loop into a sum, 1 cycle an iteration",
    "branchy": "branch on a random bit (mispredicted half the time)",
    "pattern": "branch on 4096 random bytes the CPU learns",
    "locked": "an atomic add beside each store (a lock, a refcount)",
    "chase": "pointer chase through 64 MiB (DRAM)",
    "horner": "a degree-12 polynomial an element: FP latency the core overlaps",
    "stream": "copy of 32 MiB (DRAM bandwidth)",
    "column": "stores down a column of 4 KiB rows (a few cache sets)",
    "syscalls": "64 stores after each read() of 64 KiB (most time the kernel's)",
}


def truth(exe, kernel):
    out = subprocess.run([exe, kernel], stdout=subprocess.PIPE, check=True).stdout.decode().split()
    return {"dead": int(out[2]), "load": int(out[4])}


def estimate(build, exe, kernel, client, rate, seed, tmp):
    for f in glob.glob(os.path.join(tmp, "p.prof*")):
        os.unlink(f)
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("WITCH_")}
    env.update(LD_PRELOAD=os.path.join(build, "libwitch.so"), WITCH_WATCHPOINTS="0",
               WITCH_SAMPLER="soft", WITCH_SEED=str(seed), WITCH_CLIENT=client,
               WITCH_OUTPUT=os.path.join(tmp, "p.prof"))
    if rate:
        env["WITCH_RATE"] = str(rate)
    subprocess.run([exe, kernel], env=env, stdout=subprocess.DEVNULL, check=True)
    rep = subprocess.run([os.path.join(build, "witch"), "report", "--json", "--top", "0"]
                         + glob.glob(os.path.join(tmp, "p.prof*")),
                         stdout=subprocess.PIPE, check=True).stdout
    r = json.loads(rep)
    fn = KERNELS[kernel][0]
    return sum(s["bytes"] for s in r.get("sampled", []) if s["context"][0]["function"] == fn)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--rate", type=int, default=2000,
                    help="WITCH_RATE (0: the default budget); default 2000")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", default="")
    ap.add_argument("--kernels", default=",".join(KERNELS), metavar="K,...",
                    help="the kernels to run (default: all)")
    a = ap.parse_args()
    unknown = [k for k in a.kernels.split(",") if k not in KERNELS]
    if unknown:
        ap.error("unknown kernel(s): " + ", ".join(unknown))
    build = os.path.abspath(a.build)
    with tempfile.TemporaryDirectory(prefix="weights.") as tmp:
        exe = os.path.join(tmp, "weights")
        subprocess.run(["gcc", "-O2", "-g", "-o", exe, os.path.join(HERE, "weights.c")], check=True)
        rows = []
        for kernel, (fn, clients) in KERNELS.items():
            if kernel not in a.kernels.split(","):
                continue
            t = truth(exe, kernel)
            for client in clients:
                ratios = [estimate(build, exe, kernel, client, a.rate, s, tmp) / t[client]
                          for s in range(1, a.seeds + 1)]
                rows.append((kernel, client, t[client], ratios))
                print(f"{kernel:11s} {client:5s} " + " ".join(f"{x:.2f}" for x in ratios)
                      + f"   median {statistics.median(ratios):.2f}", flush=True)
    if a.out:
        with open(a.out, "w") as f:
            f.write(f"# Sampler weights against known bytes (bench/weights.py, "
                    f"{'WITCH_RATE=' + str(a.rate) if a.rate else 'default budget'}, "
                    f"{a.seeds} seeds)\n\n")
            f.write("estimate / true bytes of the kernel's function; 1.00 is count-faithful\n\n")
            f.write("| kernel | what | client | true bytes | per seed | median |\n|---|---|---|---|---|---|\n")
            for kernel, client, t, ratios in rows:
                f.write(f"| {kernel} | {WHAT[kernel]} | {client} | {t:.3g} | "
                        + " ".join(f"{x:.2f}" for x in ratios)
                        + f" | {statistics.median(ratios):.2f} |\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
