#!/usr/bin/python3
"""armed_io_ab.py: what samples that wait cost a program's I/O, two builds, interleaved.

usage: armed_io_ab.py OLD_BUILD NEW_BUILD [--runs 4] [--client silent]
                      [--programs sqlite,gzip,io_linger] [--forge auto|yes|no]

Armed debug registers slow the kernel's copies for the program's read and
write calls (drcost.h).  Each run takes the default budget (no WITCH_RATE)
and prints, in the median over its runs: MB read or written with a
watchpoint armed (stat dr_bytes_armed), what the runtime priced them at
(cost_dr_ns), its ticks' cost in the runtime's own code (cost_inline_ns),
the handlers' time (cost_handler_ns), ticks, samples, samples let go at a
tick (watch_expired) and at an I/O call (watch_expired_io), the runtime's
whole estimate as `witch report --json` gives it (overhead_estimate: every
cost it counts, over the program's share of the profiled CPU time), and
the run's wall time.

--forge: where debug registers never trap (build/dr_probe exits 77), the
probes' answer is forged to "traps" with the EPYC's prices (0.28 ns a byte
copied armed, 1146.88 ns a page fault: docs/cost.md), so every sample is
armed and, no hit ever coming, waits for good: the worst case for this
cost, and what the budget's rules must bound.  The prices are then the
ones forged, not this machine's: the times measured are not what the
EPYC would take.  auto (the default): forge only where they never trap.
"""
import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(HERE, "real")
EPYC_FAULT_NS, EPYC_BYTE_NS = 1146.88, 0.28
HIT_NS = 10000.0  # a forged watchpoint hit's price (the EPYC's: ~10 us)


def programs(build, tmp):
    """name -> (argv, stdin path or None)"""
    return {
        "sqlite": (["sqlite3", "-batch", os.path.join(tmp, "test.db")], os.path.join(REAL, "sqlite.sql")),
        "gzip": (["gzip", "-9", "-c", os.path.join(tmp, "text.txt")], None),
        "io_linger": ([os.path.join(build, "tests", "programs", "io_linger")], None),
    }


def hexd(x):
    return struct.pack(">d", x).hex()


def forged_probes(build):
    """This machine's WITCH_PROBES with traps, SIGTRAP, the EPYC's prices and a hit's price set."""
    env = dict(os.environ, LD_PRELOAD=os.path.join(build, "libwitch.so"), WITCH_WATCHPOINTS="window")
    out = subprocess.run(["sh", "-c", 'echo "$WITCH_PROBES"'], env=env, capture_output=True, text=True).stdout
    f = out.split()
    if len(f) < 10:
        sys.exit("armed_io_ab: no WITCH_PROBES from %s" % build)
    f[4], f[5] = "1", "1"  # traps, SIGTRAP breakpoints open
    f[-3], f[-2], f[-1] = hexd(EPYC_FAULT_NS), hexd(EPYC_BYTE_NS), hexd(HIT_NS)
    return " ".join(f)


def report_of(build, tmp):
    """witch report --json of the run's profiles, merged (then removed)."""
    profs = [os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".prof")]
    out = subprocess.run([os.path.join(build, "witch"), "report", "--json"] + profs,
                         capture_output=True, text=True)
    for f in profs:
        os.unlink(f)
    if out.returncode != 0:
        sys.exit("armed_io_ab: witch report: %s" % out.stderr[:300])
    return json.loads(out.stdout)


def run_one(build, name, argv, stdin, client, probes, tmp):
    prof = os.path.join(tmp, "p-%p.prof")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WITCH_")}
    env.update(LD_PRELOAD=os.path.join(build, "libwitch.so"), WITCH_CLIENT=client, WITCH_OUTPUT=prof)
    if probes:
        env["WITCH_PROBES"] = probes
    for arg in argv:  # sqlite's database starts empty each run
        if arg.endswith(".db") and os.path.exists(arg):
            os.unlink(arg)
    fin = open(stdin) if stdin else subprocess.DEVNULL
    t0 = time.monotonic()
    rc = subprocess.run(argv, stdin=fin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.monotonic() - t0
    if stdin:
        fin.close()
    if rc.returncode != 0:
        sys.exit("armed_io_ab: %s under %s exited %d: %s" % (name, build, rc.returncode, rc.stderr[:300]))
    rep = report_of(build, tmp)
    s = rep["stats"]
    return {
        "MB armed": s.get("dr_bytes_armed", 0) / 1e6,
        "dr ms": s.get("cost_dr_ns", 0) / 1e6,
        "inline ms": s.get("cost_inline_ns", 0) / 1e6,
        "handler ms": s.get("cost_handler_ns", 0) / 1e6,
        "ticks": s.get("ticks", 0),
        "samples": s.get("samples", 0),
        "expired": s.get("watch_expired", 0),
        "expired io": s.get("watch_expired_io", 0),
        "estimate %": 100.0 * (rep.get("overhead_estimate") or 0.0),
        "wall s": wall,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--client", default="silent")
    ap.add_argument("--programs", default="sqlite,gzip,io_linger")
    ap.add_argument("--forge", choices=["auto", "yes", "no"], default="auto")
    a = ap.parse_args()
    traps = subprocess.run([os.path.join(a.new, "dr_probe")], capture_output=True).returncode == 0
    # (io_linger from the new build's tree: the same program for both)
    forge = a.forge == "yes" or (a.forge == "auto" and not traps)
    probes = forged_probes(a.new) if forge else None
    with tempfile.TemporaryDirectory(prefix="armed_io_ab.") as tmp:
        subprocess.run([sys.executable, os.path.join(REAL, "gen_inputs.py"), "text",
                        os.path.join(tmp, "text.txt"), "6"], check=True, stdout=subprocess.DEVNULL)
        table = programs(a.new, tmp)
        names = a.programs.split(",")
        res = {(n, b): [] for n in names for b in ("old", "new")}
        for r in range(a.runs):
            for n in names:
                argv, stdin = table[n]
                order = ("old", "new") if r % 2 == 0 else ("new", "old")
                for b in order:
                    pdir = os.path.join(tmp, "prof")
                    os.makedirs(pdir, exist_ok=True)
                    res[(n, b)].append(run_one(getattr(a, b), n, argv, stdin, a.client, probes, pdir))
    print("# armed I/O, %s client, %d runs each, default budget%s\n" %
          (a.client, a.runs, ", probes forged to trap at the EPYC's prices" if forge else ", real traps"))
    keys = list(res[(names[0], "old")][0].keys())
    print("| program | build | " + " | ".join(keys) + " |")
    print("|---|---|" + "---:|" * len(keys))
    for n in names:
        for b in ("old", "new"):
            rows = res[(n, b)]
            cells = []
            for k in keys:
                vals = [x[k] for x in rows]
                cells.append("%.4g (%.3g-%.3g)" % (statistics.median(vals), min(vals), max(vals)))
            print("| %s | %s | %s |" % (n, b, " | ".join(cells)))


if __name__ == "__main__":
    main()
