#!/usr/bin/env python3
"""heap_cost: what data-centric attribution's heap tracking (libwitch/src/heap.c)
adds to programs that allocate: WITCH_OBJECTS=1 against WITCH_OBJECTS=0, both
under LD_PRELOAD=BUILD/libwitch.so with WITCH_WATCHPOINTS=0 (the sampler runs
in both; on a machine whose debug registers never trap nothing else runs).

    bench/heap_cost.py BUILD [RUNS]

Programs: python3 (an allocation-heavy loop), sqlite3 (an in-memory table of
300,000 rows, an index, queries, an update; skipped without sqlite3) and
bench/programs/hashtab (python3: the interpreter running this script, with
PYTHONHASHSEED=0, since string hashing moves dict probing by a few
percent from run to run).  Runs are interleaved (off, on, on, off, ...); the
medians of CPU time (user + sys of the child; steadier than wall time on a
shared machine) and of wall time are printed.  Then BUILD's static library
is linked into bench/heap_cost.c, whose ns per malloc+free pair is printed
for heap tracking off, sampled (the default) and all blocks.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PY = """
out = 0
for r in range(2):
    d = {}
    for i in range(150000):
        d[i] = [i, str(i), (i, i + 1)]
    s = [bytes(600) for _ in range(40000)]
    l = sorted(d.items(), key=lambda kv: -kv[0])
    out += len(l) + len(s)
print(out)
"""
SQL = """
create table t(a integer primary key, b text, c real);
with recursive c(x) as (select 1 union all select x+1 from c where x < 300000)
insert into t select x, printf('row-%d-%s', x, hex(randomblob(16))), x*1.5 from c;
create index tb on t(b);
select count(*), sum(length(b)) from t where b like 'row-1%';
select a % 97 as k, count(*) from t group by k order by k limit 3;
update t set b = b || 'x' where a % 3 = 0;
select count(*) from t;
"""


def run_one(cmd, env, stdin_path):
    t0 = time.time()
    with open(stdin_path or os.devnull) as fin:
        p = subprocess.Popen(cmd, env=env, stdin=fin, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        _, status, ru = os.wait4(p.pid, 0)
        err = p.stderr.read()
    if status or err:
        sys.exit(f"{cmd[0]}: status {status}, stderr {err[:300]!r}")
    return ru.ru_utime + ru.ru_stime, time.time() - t0


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = os.path.abspath(sys.argv[1])
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    tmp = tempfile.mkdtemp(prefix="heap_cost.")
    with open(os.path.join(tmp, "alloc.py"), "w") as f:
        f.write(PY)
    with open(os.path.join(tmp, "t.sql"), "w") as f:
        f.write(SQL)
    # The interpreter running this script, not a python3.11 found on PATH:
    # a pyenv shim is a tree of bash processes, each paying the runtime's
    # start-up (first touches of its tables, the symbol index), which
    # then outweighs the loop.
    progs = [("python3", [sys.executable, os.path.join(tmp, "alloc.py")], None)]
    if shutil.which("sqlite3"):
        progs.append(("sqlite3", ["sqlite3", ":memory:"], os.path.join(tmp, "t.sql")))
    progs.append(("hashtab", [os.path.join(build, "bench/programs/hashtab")], None))
    base = dict(os.environ, LD_PRELOAD=os.path.join(build, "libwitch.so"), PYTHONHASHSEED="0",
                WITCH_WATCHPOINTS="0", WITCH_OUTPUT=os.path.join(tmp, "p-%p.prof"))
    for name, cmd, stdin_path in progs:
        cpu = {"0": [], "1": []}
        wall = {"0": [], "1": []}
        for i in range(runs):
            for o in (("0", "1") if i % 2 == 0 else ("1", "0")):
                c, w = run_one(cmd, dict(base, WITCH_OBJECTS=o), stdin_path)
                cpu[o].append(c)
                wall[o].append(w)
        m = {o: statistics.median(cpu[o]) for o in cpu}
        w = {o: statistics.median(wall[o]) for o in wall}
        print(f"{name}: cpu off {m['0']:.3f} s, on {m['1']:.3f} s ({(m['1'] / m['0'] - 1) * 100:+.1f}%); "
              f"wall off {w['0']:.3f} s, on {w['1']:.3f} s ({(w['1'] / w['0'] - 1) * 100:+.1f}%); "
              f"{runs} runs each", flush=True)
    exe = os.path.join(tmp, "heap_cost")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "heap_cost.c")
    inc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "libwitch", "include")
    # libgcc_eh ahead of libunwind, as CMakeLists.txt links the runtime:
    # libunwind exports _Unwind_Backtrace too, a slower walk on unw_step.
    subprocess.run(["cc", "-O2", "-I", inc, src, os.path.join(build, "libwitch_static.a"),
                    "-Wl,--push-state,-Bstatic", "-lgcc_eh", "-Wl,--pop-state",
                    "-lunwind", "-lZydis", "-lpthread", "-ldl", "-o", exe], check=True)
    res = {m: ([], []) for m in ("off", "sampled", "all")}
    for i in range(runs):
        for mode in res:
            out = subprocess.run([exe, mode, "2000000"], check=True, capture_output=True,
                                 text=True).stdout.split()
            res[mode][0].append(float(out[2]))
            res[mode][1].append(float(out[4]))
    for mode, (pairs, live) in res.items():
        print(f"heap_cost {mode}: {statistics.median(pairs):.1f} ns per malloc+free pair, "
              f"{statistics.median(live):.1f} ns with 100,000 live (medians of {runs})")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
