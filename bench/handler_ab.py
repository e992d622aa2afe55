#!/usr/bin/python3
"""handler_ab.py: a tick's handler time, two builds, interleaved.

usage: handler_ab.py OLD_BUILD NEW_BUILD [--runs 5] [--rate 2000|budget] [--scale 1]
                     [--programs lz,sort,...] [--real] [--env K=V,...]

The profile's own clock around each handler run (stat cost_handler_ns)
over its ticks: the part of a sample's cost the handler's code decides,
without the kernel's round trips, so it moves less than a time ratio does
(bench/compare_builds.py) and shows a change to the window, the decoder or
the reads of the program's memory in a few runs.  Every profile of a
process tree is summed (gcc writes five).  Prints a markdown table of
medians: us a tick, instructions emulated a tick, reads through the kernel
a tick (stat peek_remote), and, where the build counts them, the decode
cache's misses, the lookups Zydis decoded (stat decode_misses), and its
growth a process (stat decode_grown, decode_zcache.h: threads whose cache
grew until 2026-12-04, since then 1 where a thread turned the process's
shared cache on).  Default WITCH_WATCHPOINTS=0, so it
runs where debug registers never trap and measures the handler alone.

--rate budget: no WITCH_RATE, so the default budget sets each thread's
rate, and the ticks find the handler's tables and the program's code cold
as an always-on profile does; the table then also gives samples a
CPU-second (stat samples over cpu_ns), what a cheaper tick buys there.

A second table splits the new build's tick where it counts the parts
(stats cost_part_*_ns, cost.h): the look (window and run ahead), of it
Zydis's decodings, the picks, of them the contexts' walks, and the rest
(arrival checks, the next interval, steps).  The parts are the TSC as read,
so they may sum a little above us/tick, where a preempted run counts at
the mean.

--real: python3, sqlite3, gzip and gcc of bench/real_programs.py (inputs
from bench/real/gen_inputs.py) instead of bench/programs.
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(HERE, "real")
PROGRAMS = ["lz", "sort", "hashtab", "strings", "interp", "stencil"]
# name -> (argv, stdin); {t} is the temporary directory
REAL_PROGRAMS = {
    "python": (["/usr/bin/python3", REAL + "/script.py"], None),
    "sqlite": (["sqlite3", "-batch", "{t}/test.db"], REAL + "/sqlite.sql"),
    "gzip": (["gzip", "-9", "-c", "{t}/text.txt"], None),
    "gcc": (["gcc", "-O2", "-c", "-o", "{t}/gen.o", "{t}/gen.c"], None),
}


# stats cost_<part>_ns, in the order the second table gives them
PARTS = ["part_look", "decode", "part_picks", "unwind", "part_other"]


def one_run(build, argv, stdin, tmp, env):
    for f in glob.glob(os.path.join(tmp, "p-*.prof")) + [os.path.join(tmp, "test.db")]:
        if os.path.exists(f):
            os.unlink(f)
    with open(stdin or os.devnull) as f:
        subprocess.run(argv, env=env, stdin=f, stdout=subprocess.DEVNULL, check=True)
    ticks = ns = emulated = remote = misses = hits = grown = procs = samples = cpu_ns = 0
    parts = {k: 0 for k in PARTS}
    has_parts = True
    for path in glob.glob(os.path.join(tmp, "p-*.prof")):
        out = subprocess.run([os.path.join(build, "witch"), "report", "--json", path],
                             capture_output=True, text=True, check=True).stdout
        st = json.loads(out)["stats"]
        ticks += st["ticks"]
        ns += st["cost_handler_ns"]
        emulated += st["emulated"]
        remote += st["peek_remote"]
        misses += st.get("decode_misses", 0)
        hits += st.get("decode_hits", 0)
        grown += st.get("decode_grown", 0)
        samples += st["samples"]
        cpu_ns += st["cpu_ns"]
        procs += 1
        has_parts = has_parts and all(("cost_" + k + "_ns") in st for k in PARTS)
        for k in PARTS:
            parts[k] += st.get("cost_" + k + "_ns", 0)
    t = max(ticks, 1)
    return {"us": ns / t / 1000, "insns": emulated / t, "remote": remote / t,
            "parts": {k: v / t / 1000 for k, v in parts.items()} if has_parts and procs else None,
            "miss": misses / (hits + misses) if hits + misses else None,
            "grown": grown / max(procs, 1), "per_cpu_s": samples / (cpu_ns / 1e9) if cpu_ns else 0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rate", default="2000")
    ap.add_argument("--scale", default="1")
    ap.add_argument("--programs")
    ap.add_argument("--real", action="store_true")
    ap.add_argument("--env", default="WITCH_WATCHPOINTS=0",
                    help="K=V,... for the profiled runs")
    a = ap.parse_args()
    extra = dict(kv.split("=", 1) for kv in a.env.split(",") if kv)
    base = {k: v for k, v in os.environ.items() if not k.startswith("WITCH_") and k != "LD_PRELOAD"}
    tmp = tempfile.mkdtemp(prefix="witch-handler.")
    if a.real:
        gen = [sys.executable, os.path.join(REAL, "gen_inputs.py")]
        subprocess.run(gen + ["text", os.path.join(tmp, "text.txt"), "6"], check=True)
        subprocess.run(gen + ["csource", os.path.join(tmp, "gen.c"), "300"], check=True)
        table = REAL_PROGRAMS
    else:
        table = {p: ([os.path.join(a.new, "bench", "programs", p), a.scale], None) for p in PROGRAMS}
    names = a.programs.split(",") if a.programs else list(table)
    rate = "the default budget" if a.rate == "budget" else a.rate + "/s"
    print("# handler time a tick: %s vs %s, %s, %s, %d interleaved runs, medians\n"
          % (a.old, a.new, rate, a.env, a.runs))
    print("| program | old us/tick | new us/tick | new/old | insns a tick | remote reads a tick "
          "(old -> new) | decode misses (old -> new) | caches grown a process (new) "
          "| samples a CPU-second (old -> new) |")
    print("|---|---:|---:|---:|---:|---|---|---:|---|")
    split = []
    for name in names:
        argv, stdin = table[name]
        argv = [x.format(t=tmp) for x in argv]
        res = {"old": [], "new": []}
        for _ in range(a.runs):
            for v, build in (("old", a.old), ("new", a.new)):
                env = dict(base, **extra, LD_PRELOAD=os.path.join(build, "libwitch.so"),
                           WITCH_CLIENT="dead", WITCH_OUTPUT=os.path.join(tmp, "p-%p.prof"))
                if a.rate != "budget":
                    env["WITCH_RATE"] = a.rate
                res[v].append(one_run(build, argv, stdin, tmp, env))
        med = {v: {k: statistics.median(r[k] for r in res[v])
                   for k in ("us", "insns", "remote", "per_cpu_s")} for v in res}
        miss = {v: [r["miss"] for r in res[v] if r["miss"] is not None] for v in res}
        miss = {v: "%.1f%%" % (100 * statistics.median(m)) if m else "-" for v, m in miss.items()}
        print("| %s | %.1f | %.1f | %.3f | %.0f | %.2f -> %.2f | %s -> %s | %.2f | %.0f -> %.0f |" % (
            name, med["old"]["us"], med["new"]["us"], med["new"]["us"] / med["old"]["us"],
            med["new"]["insns"], med["old"]["remote"], med["new"]["remote"], miss["old"],
            miss["new"], statistics.median(r["grown"] for r in res["new"]),
            med["old"]["per_cpu_s"], med["new"]["per_cpu_s"]), flush=True)
        with_parts = [r["parts"] for r in res["new"] if r["parts"]]
        if with_parts:
            split.append((name, {k: statistics.median(p[k] for p in with_parts) for k in PARTS}))
    if split:
        print("\n## Where the new build's tick goes (us a tick, medians)\n")
        print("| program | look | of it decoding | picks | of them walks | rest |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, m in split:
            print("| %s | %.1f | %.1f | %.1f | %.1f | %.1f |" % (
                name, m["part_look"], m["decode"], m["part_picks"], m["unwind"], m["part_other"]))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
