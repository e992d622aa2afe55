#!/usr/bin/env python3
"""rss_ab.py: peak RSS over native of one or more libwitch builds, real programs.

usage: rss_ab.py LIB[,LIB...] [--runs 5] [--programs a,b,...] [--bench DIR] [--scale 6] [--env K=V,...]

  LIB        one or more libwitch.so builds (an A/B: the old build first)
  --runs     rounds (default 5); each round runs every program natively and
             under each LIB, in that order
  --programs real_programs.py's names (python, sqlite, gzip, gcc, xz, pigz,
             redis), node, java where installed, and with --bench the six of
             bench/programs (lz, sort, hashtab, strings, interp, stencil)
             (default: all of them)
  --bench    a build directory whose bench/programs/ holds those six
  --scale    their argument (default 6: 3-5 s runs)
  --env      settings for the profiled runs (default WITCH_WATCHPOINTS=0,
             WITCH_CLIENT=dead: on a machine whose debug registers never
             trap the runtime would otherwise run unprofiled)

Peak RSS is ru_maxrss from wait4 through bench/real/rusage_run.c, as
bench/real_programs.py measures it (gcc: the largest of its processes),
with the same inputs and runners; node builds a Map of 100,000 strings,
java a HashMap of 100,000 (a class compiled at start).  Prints per
program the native median in MiB and, per build, the median of each
round's profiled - native in KiB (paired by round: a JVM's heap moves by
megabytes from run to run), with its range.  Issue 13 asks for +4 MiB a
process at most.  No figure is asserted.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import real_programs as rp  # noqa: E402

NODE_JS = ("const m = new Map(); for (let i = 0; i < 100000; i++) m.set('k' + i, i);\n"
           "let s = 0; for (const [k, v] of m) s += v; console.log(s);\n")
JAVA_SRC = ("import java.util.HashMap;\n"
            "public class Hello { public static void main(String[] a) {\n"
            "  HashMap<String, Integer> m = new HashMap<>();\n"
            "  for (int i = 0; i < 100000; i++) m.put(\"k\" + i, i);\n"
            "  long s = 0; for (int v : m.values()) s += v; System.out.println(s); } }\n")


def extra_programs(tmp):
    """node and java specs in real_programs' form, where installed."""
    specs = {}
    if shutil.which("node"):
        js = os.path.join(tmp, "map.js")
        with open(js, "w") as f:
            f.write(NODE_JS)
        specs["node"] = dict(argv=["node", js])
    if shutil.which("java") and shutil.which("javac"):
        with open(os.path.join(tmp, "Hello.java"), "w") as f:
            f.write(JAVA_SRC)
        if subprocess.run(["javac", "-d", tmp, os.path.join(tmp, "Hello.java")]).returncode == 0:
            specs["java"] = dict(argv=["java", "-cp", tmp, "Hello"])
    return specs


BENCH_PROGRAMS = ["lz", "sort", "hashtab", "strings", "interp", "stencil"]


def bench_programs(build, scale):
    """bench/programs' six in real_programs' form, from build."""
    specs = {}
    for n in BENCH_PROGRAMS:
        exe = os.path.join(build, "bench", "programs", n)
        if os.access(exe, os.X_OK):
            specs[n] = dict(argv=[exe, scale])
    return specs


def one_run(name, spec, subst, env, tmp, tag):
    cwd = os.path.join(tmp, f"{name}-{tag}")
    shutil.rmtree(cwd, ignore_errors=True)
    os.makedirs(cwd)
    if spec.get("kind") == "server":
        profdir = None
        if "LD_PRELOAD" in env:
            profdir = os.path.join(cwd, ".profiles")
            os.makedirs(profdir)
            env = dict(env, WITCH_OUTPUT=os.path.join(profdir, "p-%e-%p.prof"), WITCH_FLUSH="1")
        r = rp.run_server(spec, subst, env, cwd, 300, WITCH, profdir)
    else:
        if "LD_PRELOAD" in env:
            env = dict(env, WITCH_OUTPUT=os.path.join(cwd, "p-%e-%p.prof"))
        r = rp.run_batch(spec, subst, env, cwd, 300)
    if r.rc != 0 or r.hung or not r.rss:
        sys.stderr.write(f"rss_ab: {name} ({tag}) exit {r.rc}{' hung' if r.hung else ''}\n")
        return None
    return r.rss


WITCH = None  # a `witch` for run_server's profile check


def main(argv):
    ap = argparse.ArgumentParser(usage=__doc__.strip().splitlines()[2].strip())
    ap.add_argument("libs")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--programs")
    ap.add_argument("--bench")
    ap.add_argument("--scale", default="6")
    ap.add_argument("--env", default="WITCH_WATCHPOINTS=0,WITCH_CLIENT=dead")
    a = ap.parse_args(argv)
    libs = [os.path.abspath(x) for x in a.libs.split(",")]
    for lib in libs:
        if not os.path.exists(lib):
            sys.stderr.write(f"rss_ab: {lib} not found\n")
            return 1
    global WITCH
    # redis's profile is read while it runs: any build's `witch` reads them.
    WITCH = next((w for w in (os.path.join(os.path.dirname(x), "witch") for x in libs)
                  if os.path.exists(w)), None)
    if WITCH is None and "redis" in (a.programs or "redis"):
        sys.stderr.write("rss_ab: no `witch` beside any LIB (redis's profile check needs one)\n")
        return 1
    env_prof = dict(kv.split("=", 1) for kv in a.env.split(",") if kv)
    tmp = tempfile.mkdtemp(prefix="witch-rss.")
    try:
        rp.LAUNCHER = rp.build_launcher(tmp)
        if rp.LAUNCHER is None:
            return 1
        # Snapshots: a rebuild during the run must not mix versions.
        snaps = []
        for i, lib in enumerate(libs):
            os.makedirs(os.path.join(tmp, f"lib{i}"))
            snaps.append(shutil.copy2(lib, os.path.join(tmp, f"lib{i}", "libwitch.so")))
        specs = dict(rp.PROGRAMS)
        specs.update(extra_programs(tmp))
        if a.bench:
            specs.update(bench_programs(os.path.abspath(a.bench), a.scale))
        names = (a.programs.split(",") if a.programs else
                 BENCH_PROGRAMS + rp.ORDER + ["node", "java"])
        names = [n for n in names if n in specs]
        subst = dict(real=rp.REAL, data=os.path.join(tmp, "data.txt"),
                     xzdata=os.path.join(tmp, "xzdata.txt"), csrc=os.path.join(tmp, "gen.c"))
        gen = os.path.join(rp.REAL, "gen_inputs.py")
        if {"gzip", "pigz"} & set(names):
            subprocess.run([rp.PYTHON, gen, "text", subst["data"], str(rp.TEXT_MIB)], check=True)
        if "xz" in names:
            subprocess.run([rp.PYTHON, gen, "text", subst["xzdata"], str(rp.XZ_MIB)], check=True)
        if "gcc" in names:
            subprocess.run([rp.PYTHON, gen, "csource", subst["csrc"], str(rp.GCC_FUNCTIONS)],
                           check=True)
        print(f"# peak RSS over native, {a.runs} rounds, paired by round; profiled: {a.env}")
        print()
        print("| program | native MiB | " + " | ".join(f"build {i + 1} KiB (range)"
                                                      for i in range(len(libs))) + " |")
        print("|---|---:|" + "---:|" * len(libs))
        for name in names:
            spec = specs[name]
            native, over = [], [[] for _ in libs]
            for rnd in range(a.runs):
                env = dict(rp.CLEAN_ENV)
                env.update(spec.get("env", {}))
                n = one_run(name, spec, subst, env, tmp, f"{rnd}-n")
                if n is None:
                    continue
                native.append(n)
                for i, lib in enumerate(snaps):
                    e = dict(env, LD_PRELOAD=lib, **env_prof)
                    p = one_run(name, spec, subst, e, tmp, f"{rnd}-{i}")
                    if p is not None:
                        over[i].append(p - n)
            if not native:
                continue
            cells = [f"{statistics.median(o):+.0f} ({min(o):+d} to {max(o):+d})" if o else "-"
                     for o in over]
            print(f"| {name} | {statistics.median(native) / 1024:.1f} | " + " | ".join(cells) + " |")
            sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
