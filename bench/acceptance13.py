#!/usr/bin/python3
"""acceptance13.py: issue 13's acceptance, measured in one command.

usage: acceptance13.py BUILD [--old OLD_BUILD] [--runs 5] [--clients dead,silent,load] [--save FILE]
                       [--programs lz,...,python,...] [--scale 6] [--env K=V,...]

The issue asks, at default settings and with a plain LD_PRELOAD, interleaved
medians of at least 5 runs:
  1. a geomean time ratio of at most 1.02 over bench/programs and the real
     programs, for each client, and no program above 1.05;
  2. peak RSS at most +4 MiB a process;
  3. the runtime's overhead estimate within a factor 1.5 of the measured
     overhead on each program;
  4. at the same overhead, at least 4x the samples a CPU-second of the build
     the issue was filed against (e273a7a; --old names its build);
  5. accuracy at the default budget no worse than at 200/s.
This script measures 1-4 and prints each beside its bound.  Item 5 is the
accuracy benchmark's (bench/accuracy.sh BUILD, once at the default budget
and once with WITCH_RATE=200 exported); it takes an hour and the oracle.

Programs: bench/programs (built in BUILD) at --scale, and real_programs.py's
batch programs and server, with its launcher (wait4's CPU time and peak RSS
of the process and the descendants it reaped).  Each round runs native, BUILD
and OLD in an order that rotates from round to round: on these VMs the run
that comes first in a round was seen 1% slower than the same program run
last (2026-12-07), which a fixed order puts into every ratio.

A time ratio is paired: the median over rounds of a profiled run's time over
its round's native run (a vCPU slowed for a while moves a whole round); "its
rounds" gives the lowest and highest of those, this machine's noise for that
program.  Samples a CPU-second against --old compare both builds at their
default budget, so at the same nominal overhead.  --save keeps every run.
The measured overhead beside the estimate is the paired ratio of CPU time
(user + system), the clock the estimate is of, less one.  The estimate and
the samples come from `witch report --json` of all of a run's profiles
merged; samples a CPU-second are those samples over the run's CPU time
(wait4), not over the sampler's clock (stat clock_ns), which counts only
the threads a build profiled.  Below each client's table, what 1% of
measured CPU overhead buys in samples a CPU-second (the issue's item 5),
pooled over the programs, for both builds: item 4 at the same overhead
rather than the same nominal budget (e273a7a's 200/s cost gcc 19%).

Where the debug registers never trap (BUILD/dr_probe exits 77) the runtime
would run unprofiled; the profiled runs then get WITCH_WATCHPOINTS=0, which
samples and arms nothing, and the header says so: items 1-4 then hold for
the sampler alone, not for a run whose picks trap.  --env adds settings to
every profiled run (e.g. WITCH_PROBES to forge the probes' answer).
No timing is asserted; this is a benchmark.
"""
import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import real_programs as rp  # noqa: E402  (launcher, real programs' specs, profiles)

BENCH = ["lz", "sort", "hashtab", "strings", "interp", "stencil"]
BOUND_GEOMEAN, BOUND_WORST, BOUND_RSS_MIB, BOUND_FACTOR, BOUND_GAIN = 1.02, 1.05, 4.0, 1.5, 4.0


def traps_here(build):
    """True when BUILD's dr_probe says the debug registers trap."""
    probe = os.path.join(build, "dr_probe")
    if not os.path.exists(probe):
        return None
    return subprocess.run([probe], capture_output=True).returncode == 0


def spec_of(name, build, scale):
    if name in rp.PROGRAMS:
        return rp.PROGRAMS[name]
    return dict(argv=[os.path.join(build, "bench", "programs", name), scale], what=name)


def run_once(spec, subst, env, tmp, witch, profiled):
    """One run: {'wall', 'cpu', 'rss', 'samples', 'clock_s', 'est'} (None where not known)."""
    cwd = tempfile.mkdtemp(dir=tmp)
    profdir = os.path.join(cwd, "prof")
    os.makedirs(profdir)
    if profiled:
        env = dict(env, WITCH_OUTPUT=os.path.join(profdir, "p-%e-%p.prof"))
        if spec.get("kind") == "server":
            env["WITCH_FLUSH"] = "1"
    if spec.get("kind") == "server":
        r = rp.run_server(spec, subst, env, cwd, 300, witch, None)
    else:
        r = rp.run_batch(spec, subst, env, cwd, 300)
    out = dict(wall=r.time, cpu=r.cpu_all, rss=r.rss, rc=r.rc, fingerprint=r.fingerprint,
               samples=None, clock_s=None, est=None)
    if profiled:
        merged = rp.read_profiles(witch, profdir)["merged"]
        if merged:
            st = merged.get("stats", {})
            out["samples"] = merged.get("samples", 0)
            out["clock_s"] = st.get("clock_ns", 0) / 1e9
            out["est"] = merged.get("overhead_estimate")
    shutil.rmtree(cwd, ignore_errors=True)
    return out


def measure(a, builds, client, names, subst, tmp):
    """{(program, variant): [run, ...]} over a.runs rounds, order rotated."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("WITCH_") and k != "LD_PRELOAD"}
    variants = ["native"] + list(builds)
    res = {}
    for name in names:
        spec = spec_of(name, builds["new"], a.scale)
        for r in range(a.runs):
            k = r % len(variants)
            for v in variants[k:] + variants[:k]:
                env = dict(base, **spec.get("env", {}))
                if v != "native":
                    env.update(a.extra, LD_PRELOAD=os.path.join(builds[v], "libwitch.so"),
                               WITCH_CLIENT=client, WITCH_SEED=str(r + 1))
                res.setdefault((name, v), []).append(
                    run_once(spec, subst, env, tmp, os.path.join(builds["new"], "witch"),
                             v != "native"))
        sys.stderr.write("acceptance13: %s %s done\n" % (client, name))
    return res


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratios(runs, native, key):
    """Each run's key over its round's native run's."""
    return [p[key] / n[key] for p, n in zip(runs, native) if p[key] and n[key]]


def model(res, names, variants):
    """Per program and variant: the figures the bounds are about."""
    rows = {}
    for name in names:
        native = res[(name, "native")]
        for v in variants:
            runs = res[(name, v)]
            cpu_ratio = med(ratios(runs, native, "cpu"))
            est = med([r["est"] for r in runs])
            measured = cpu_ratio - 1 if cpu_ratio else None
            factor = None
            if est and measured and measured > 0:
                factor = max(est / measured, measured / est)
            # over the run's CPU time, not the sampler's clock: e273a7a sampled
            # 0.01 s of xz's 4 s (its workers went unprofiled) and read 72 a second
            sps = med([r["samples"] / r["cpu"] for r in runs if r["cpu"] and r["samples"] is not None])
            rss_n, rss_p = med([r["rss"] for r in native]), med([r["rss"] for r in runs])
            each = ratios(runs, native, "wall")
            rows[(name, v)] = dict(
                time=med(each), cpu=cpu_ratio,
                spread=(min(each), max(each)) if each else None, est=est, measured=measured,
                factor=factor, sps=sps,
                rss_mib=(rss_p - rss_n) / 1024 if rss_n and rss_p else None,
                differs=sum(r["fingerprint"] != native[0]["fingerprint"] for r in runs + native))
    return rows


def fmt(x, spec, none="n/a"):
    return none if x is None else format(x, spec)


def render_client(client, rows, names, has_old):
    print("\n## %s client\n" % client)
    print("| program | time ratio | its rounds | CPU ratio | estimate % | measured CPU % | factor "
          "| peak RSS +MiB | samples/CPU-s" + (" | old samples/CPU-s | new / old" if has_old else "")
          + " | output differs |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if has_old else "") + "---:|")
    for name in names:
        n = rows[(name, "new")]
        cells = [fmt(n["time"], ".3f"),
                 "%.2f-%.2f" % n["spread"] if n["spread"] else "n/a", fmt(n["cpu"], ".3f"),
                 fmt(n["est"] and 100 * n["est"], ".2f"),
                 fmt(n["measured"] and 100 * n["measured"], ".2f"), fmt(n["factor"], ".2f"),
                 fmt(n["rss_mib"], "+.1f"), fmt(n["sps"], ".0f")]
        if has_old:
            o = rows[(name, "old")]
            gain = n["sps"] / o["sps"] if n["sps"] and o["sps"] else None
            cells += [fmt(o["sps"], ".0f"), fmt(gain, ".2f")]
        cells.append(str(n["differs"]))
        print("| %s | %s |" % (name, " | ".join(cells)))


def verdicts(client, rows, names, has_old):
    """[(item, asked, measured, met)] for one client."""
    times = [rows[(n, "new")]["time"] for n in names if rows[(n, "new")]["time"]]
    geo = math.exp(statistics.mean(math.log(t) for t in times)) if times else None
    worst = max(times) if times else None
    worst_name = max(names, key=lambda n: rows[(n, "new")]["time"] or 0)
    rss = [(rows[(n, "new")]["rss_mib"], n) for n in names if rows[(n, "new")]["rss_mib"] is not None]
    factors = [(rows[(n, "new")]["factor"], n) for n in names]
    unread = [n for f, n in factors if f is None]
    out = [
        ("%s: geomean time ratio" % client, "<= %.2f" % BOUND_GEOMEAN, fmt(geo, ".3f"),
         geo is not None and geo <= BOUND_GEOMEAN),
        ("%s: worst time ratio" % client, "<= %.2f" % BOUND_WORST,
         "%s (%s)" % (fmt(worst, ".3f"), worst_name), worst is not None and worst <= BOUND_WORST),
        ("%s: peak RSS added, largest" % client, "<= +%.0f MiB" % BOUND_RSS_MIB,
         "%+.1f (%s)" % max(rss) if rss else "n/a",
         bool(rss) and max(rss)[0] <= BOUND_RSS_MIB),
        ("%s: estimate / measured, worst factor" % client, "<= %.1f" % BOUND_FACTOR,
         ("%.2f (%s)" % max((f, n) for f, n in factors if f is not None)
          if len(unread) < len(names) else "n/a")
         + ("; not readable (measured <= 0): %s" % ", ".join(unread) if unread else ""),
         not unread and max(f for f, _ in factors) <= BOUND_FACTOR),
    ]
    if has_old:
        gains = [rows[(n, "new")]["sps"] / rows[(n, "old")]["sps"] for n in names
                 if rows[(n, "new")]["sps"] and rows[(n, "old")]["sps"]]
        g = med(gains)
        out.append(("%s: samples a CPU-second at each build's default, new / old (median)" % client,
                    ">= %.0fx" % BOUND_GAIN, fmt(g, ".2f") + "x", g is not None and g >= BOUND_GAIN))
        _, got = bought_by_build(rows, names, ["new", "old"])
        same = got["new"] / got["old"] if got["new"] and got["old"] else None
        out.append(("%s: samples a CPU-second at the same overhead (per 1%% measured, pooled), "
                    "new / old" % client, ">= %.0fx" % BOUND_GAIN, fmt(same, ".2f") + "x",
                    same is not None and same >= BOUND_GAIN))
    return out


def bought(rows, names, v):
    """What 1% of measured CPU overhead buys, pooled over the programs: the
    sum of their samples a CPU-second over the sum of their measured CPU
    overhead in percent (one program's overhead is within this VM's noise,
    and reads below zero now and then; over all of them it does not)."""
    sps = [rows[(n, v)]["sps"] for n in names]
    over = [rows[(n, v)]["measured"] for n in names]
    if not names or sum(over) <= 0:
        return None
    return sum(sps) / (100 * sum(over))


def bought_by_build(rows, names, variants):
    """bought() for each build, over the programs every build has both
    figures for (e273a7a's redis run took no samples): (programs, {v: x})."""
    common = [n for n in names if all(rows[(n, v)]["sps"] is not None
                                      and rows[(n, v)]["measured"] is not None for v in variants)]
    return common, {v: bought(rows, common, v) for v in variants}


def render_bought(client, rows, names, variants):
    common, got = bought_by_build(rows, names, variants)
    line = "\n1%% of measured CPU overhead buys %s samples a CPU-second (%s, pooled over %d programs: %s)" % (
        fmt(got["new"], ".0f"), client, len(common), ", ".join(common))
    if "old" in got:
        new, old = got["new"], got["old"]
        line += "; e273a7a: %s; new / old: %s" % (
            fmt(old, ".0f"), fmt(new / old if new and old else None, ".2f") + "x")
    print(line + ".")


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    ap.add_argument("build")
    ap.add_argument("--old", help="the build to compare samples a CPU-second with (e273a7a)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--clients", default="dead,silent,load")
    ap.add_argument("--programs", default=",".join(BENCH + rp.ORDER))
    ap.add_argument("--scale", default="6")
    ap.add_argument("--env", default="", help="K=V,... for the profiled runs")
    ap.add_argument("--save", help="write every run's figures to this JSON file")
    a = ap.parse_args()
    if a.runs < 1:
        sys.exit("acceptance13: --runs must be at least 1")
    builds = {"new": os.path.abspath(a.build)}
    if a.old:
        builds["old"] = os.path.abspath(a.old)
    for b in builds.values():
        if not os.path.exists(os.path.join(b, "libwitch.so")):
            sys.exit("acceptance13: %s has no libwitch.so" % b)
    names = [n for n in a.programs.split(",") if n]
    for n in names:
        if n not in BENCH and n not in rp.PROGRAMS:
            sys.exit("acceptance13: no program %r (have %s)" % (n, ", ".join(BENCH + rp.ORDER)))
    a.extra = dict(kv.split("=", 1) for kv in a.env.split(",") if kv)
    traps = traps_here(builds["new"])
    if not traps and "WITCH_WATCHPOINTS" not in a.extra:
        a.extra["WITCH_WATCHPOINTS"] = "0"
    tmp = tempfile.mkdtemp(prefix="witch-acc13.")
    try:
        rp.LAUNCHER = rp.build_launcher(tmp)
        if rp.LAUNCHER is None:
            return 1
        subst = dict(real=rp.REAL, data=os.path.join(tmp, "data.txt"),
                     xzdata=os.path.join(tmp, "xzdata.txt"), csrc=os.path.join(tmp, "gen.c"))
        gen = [rp.PYTHON, os.path.join(rp.REAL, "gen_inputs.py")]
        subprocess.run(gen + ["text", subst["data"], str(rp.TEXT_MIB)], check=True)
        subprocess.run(gen + ["text", subst["xzdata"], str(rp.XZ_MIB)], check=True)
        subprocess.run(gen + ["csource", subst["csrc"], str(rp.GCC_FUNCTIONS)], check=True)
        print("# Issue 13's acceptance: %s%s, %d rounds, order rotated\n"
              % (builds["new"], " against " + builds["old"] if a.old else "", a.runs))
        print("- debug registers: %s" % (
            "they trap" if traps else
            "they never trap here (dr_probe): profiled runs with %s, so these figures are "
            "the sampler's alone, with nothing armed" % ", ".join(
                "%s=%s" % kv for kv in sorted(a.extra.items()))
            if traps is False else "not probed (no dr_probe in the build)"))
        print("- time ratio: paired wall time; measured CPU %: paired user + system CPU "
              "time less one, beside the runtime's estimate")
        allv, saved = [], {}
        for client in a.clients.split(","):
            res = measure(a, builds, client, names, subst, tmp)
            saved[client] = {"%s/%s" % k: v for k, v in res.items()}
            if a.save:
                with open(a.save, "w") as f:
                    json.dump(saved, f, indent=1, default=str)
            rows = model(res, names, list(builds))
            render_client(client, rows, names, "old" in builds)
            render_bought(client, rows, names, list(builds))
            allv += verdicts(client, rows, names, "old" in builds)
        print("\n## Against the issue's bounds\n")
        print("| item | asked | measured | met |")
        print("|---|---|---|---|")
        for item, asked, got, met in allv:
            print("| %s | %s | %s | %s |" % (item, asked, got, "yes" if met else "no"))
        if not a.old:
            print("\nSamples a CPU-second against e273a7a: not measured (no --old build).")
        print("Accuracy at the default budget against 200/s: bench/accuracy.sh, not run here.")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
