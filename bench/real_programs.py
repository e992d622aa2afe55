#!/usr/bin/env python3
"""real_programs.py: real Debian programs with and without libwitch (see real_programs.sh).

usage: real_programs.py [options] BUILD_DIR [RUNS] [CLIENT...]
  BUILD_DIR  has libwitch.so and witch (the report tool)
  RUNS       runs of each configuration (default 3)
  CLIENT...  clients to measure (default: dead)
options:
  --programs a,b,...   only these (python, sqlite, gzip, gcc, xz, pigz, redis)
  --tunables           profiled runs also get the GLIBC_TUNABLES `witch run` sets
  --timeout S          a run that takes longer is killed and counted a hang (default 300)
  --keep DIR           keep the working files (profiles, outputs, stderr) under DIR

For every program and client: RUNS native and RUNS profiled runs,
interleaved (native, profiled, native, profiled, ...), medians printed as
a markdown table.  Wall time is time.perf_counter() around the run (for
the server, around the load: redis-benchmark against the running server).
Peak RSS is ru_maxrss of wait4() on the program, which on Linux is the
largest RSS of that process and every descendant it reaped (gcc: the
largest of gcc, cc1, as, collect2, ld).  The wait4() is done by a small C
launcher (bench/real/rusage_run.c, built at start with cc): a child forked
straight from this Python process would report at least Python's own RSS,
since the kernel folds the pre-exec address space's high-water mark into
ru_maxrss at exec.

BUILD_DIR's libwitch.so and witch are copied at start (a rebuild during
the run cannot mix versions).  Profiled runs get LD_PRELOAD=libwitch.so,
WITCH_CLIENT and WITCH_OUTPUT=<fresh dir>/p-%e-%p.prof (one directory per
run) and otherwise inherit the environment (WITCH_RATE etc. only if exported);
native runs get neither LD_PRELOAD nor any WITCH_* variable.  The server
also gets WITCH_FLUSH=1.

After each profiled run every profile in its directory must read with
`witch report --json FILE` (exit 0); then all of them together are read
with `witch report --json FILE...` (merged: the processes of one run), and
the samples, traps and fraction columns are medians over runs of that
merged report: the sum over all processes of the run, not just the main
one.  So are samples per CPU-second (of the sampler's clock), kernel round
trips per sample and the runtime's own overhead estimate (`witch report`'s
overhead_estimate: handler, kernel, start-up, allocation sites), beside
the measured one (profiled / native - 1 of the median times, and of the
median user + system CPU times: for the server, the load takes as long
either way when the server is not the bottleneck).  A run without a profile, with an unreadable profile, or with zero
samples in all, is counted in the notes.

Each run's stdout, the checksums of the files it writes, and its exit
status are compared with the first native run's; every difference is
counted in the notes, and stderr of the first differing run is kept (and
printed after the table).  Stderr lines starting "witch:" other than the
expected "using software sampling" one are listed after the table.
The server (redis) runs on a free port of 127.0.0.1 with WITCH_FLUSH=1;
after the load, a fixed redis-cli session (REDIS_CHECK) stands for its
stdout, the flusher's profile must already be there and read while the
server runs, then SIGTERM (passed on by the launcher) must end it with
exit 0 and its final profile.

Soft sampler notes: "only N ticks per user CPU-s" when the clock ticked
less than half of WITCH_RATE (default 200) x the run's user CPU time
(threads that never take the clock signal, e.g. with all signals
blocked); "samples/ticks" when most ticks found no access to sample
(skip_* counters of the report, e.g. skip_steps: WITCH_MAX_STEPS single
steps reached no store); "ticks represented >= N%": the ticks whose time
the profile stands for (a sample, a window with no wanted byte, a sparse
window's draw of none, a byte-counted call), at least, counting each pick
lost on the way (skip_reach_far, skip_steps, ...) as a whole tick.  No
timing is asserted.
"""

import argparse
import glob
import hashlib
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(HERE, "real")
sys.path.insert(0, HERE)
import overhead  # noqa: E402  (report_costs: what a report says the runtime did)
PYTHON = "/usr/bin/python3"  # Debian's, not a pyenv shim

RUN_TUNABLES = ("glibc.cpu.x86_rep_movsb_threshold=4294967295:"
                "glibc.cpu.x86_rep_stosb_threshold=4294967295")

# Input sizes: ~1-5 s native each on our loaded 2-core VM.
TEXT_MIB = 24         # gzip -9, pigz -p 2 -9
XZ_MIB = 12           # xz -T2 -3, 4 blocks of 3 MiB so both threads work
GCC_FUNCTIONS = 150   # gcc -O2 of a generated C file

# name -> spec.  argv items may use {data}, {xzdata}, {csrc}, {real}; a spec
# runs in a fresh cwd; "outputs" are files (relative to cwd) checksummed and
# compared; "stdin" a file fed on stdin; "kind": "batch" or "server".
PROGRAMS = {
    "python": dict(argv=[PYTHON, "{real}/script.py"], env={"PYTHONHASHSEED": "0"},
                   what="python3 bench/real/script.py"),
    "sqlite": dict(argv=["sqlite3", "-batch", "test.db"], stdin="{real}/sqlite.sql",
                   outputs=[], what="sqlite3 test.db < bench/real/sqlite.sql"),
    "gzip": dict(argv=["gzip", "-9", "-c", "{data}"],
                 what=f"gzip -9 -c {TEXT_MIB} MiB text (stdout compared by sha256)"),
    "gcc": dict(argv=["gcc", "-O2", "-o", "gen", "{csrc}"], outputs=["gen"],
                what=f"gcc -O2 gen.c ({GCC_FUNCTIONS} generated functions), output binary compared"),
    "xz": dict(argv=["xz", "-T2", "-3", "--block-size=3MiB", "-c", "{xzdata}"],
               what=f"xz -T2 -3 {XZ_MIB} MiB text (2 threads)"),
    "pigz": dict(argv=["pigz", "-p", "2", "-9", "-c", "{data}"],
                 what=f"pigz -p 2 -9 {TEXT_MIB} MiB text (2 threads + writer)"),
    "redis": dict(kind="server", what="redis-server 127.0.0.1, redis-benchmark -n 20000 "
                  "(8 tests, 50 clients), WITCH_FLUSH=1, SIGTERM"),
}
ORDER = ["python", "sqlite", "gzip", "gcc", "xz", "pigz", "redis"]

REDIS_TESTS = "set,get,incr,lpush,rpop,sadd,hset,lrange_100"
REDIS_REQUESTS = 20000
# A deterministic session after the load; its output is the server's "stdout".
REDIS_CHECK = """DBSIZE
DEL L
EVAL "for i=1,2000 do redis.call('rpush', KEYS[1], i * 7 % 1000) end return redis.call('llen', KEYS[1])" 1 L
LRANGE L 0 9
SORT L LIMIT 0 5
SET greeting hello
APPEND greeting ", world"
GET greeting
INCRBY counter:x 41
INCR counter:x
HSET h a 1 b 2 c 3
HGETALL h
ZADD z 3 c 1 a 2 b
ZRANGE z 0 -1 WITHSCORES
DEL L greeting counter:x h z
DBSIZE
"""


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


LAUNCHER = None  # path of the built rusage_run


def build_launcher(tmp):
    exe = os.path.join(tmp, "rusage_run")
    cc = os.environ.get("CC", "cc")
    r = subprocess.run([cc, "-O2", "-o", exe, os.path.join(REAL, "rusage_run.c")],
                       capture_output=True, text=True, env=CLEAN_ENV)
    if r.returncode != 0:
        sys.stderr.write(f"real_programs: cannot build rusage_run.c:\n{r.stderr}")
        return None
    return exe


def read_launcher(path):
    """{'pid': int, 'maxrss': KiB, 'user': s, 'sys': s} from rusage_run's FILE."""
    d = {}
    try:
        with open(path) as f:
            for line in f:
                k, _, v = line.partition(" ")
                d[k] = float(v) if k in ("user", "sys") else int(v)
    except (OSError, ValueError):
        pass
    return d


def wait_child(p, timeout):
    """Wait for Popen p (its own session); kill its group after timeout.
    Returns (exit status as subprocess reports it, ru_maxrss KiB, hung)."""
    deadline = time.monotonic() + timeout
    hung = False
    if p.returncode is not None:  # already reaped by p.poll()
        return p.returncode, None, False
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid == p.pid:
            break
        if time.monotonic() > deadline and not hung:
            hung = True
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.005)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru.ru_maxrss, hung


class Result:
    def __init__(self):
        self.time = self.rss = self.cpu = self.cpu_all = None
        self.rc = None
        self.hung = False
        self.fingerprint = None   # (rc, stdout sha, output shas)
        self.stderr = ""
        self.profdir = None
        self.extra = {}


def launcher_env(env):
    """env for rusage_run: the program's LD_PRELOAD passed aside (see rusage_run.c)."""
    env = dict(env)
    if "LD_PRELOAD" in env:
        env["RUSAGE_RUN_LD_PRELOAD"] = env.pop("LD_PRELOAD")
    return env


def run_batch(spec, subst, env, cwd, timeout):
    r = Result()
    argv = [a.format(**subst) for a in spec["argv"]]
    stdin = spec.get("stdin")
    out_path = os.path.join(cwd, ".stdout")
    err_path = os.path.join(cwd, ".stderr")
    with open(out_path, "wb") as out, open(err_path, "wb") as err, \
            open(stdin.format(**subst) if stdin else os.devnull, "rb") as inp:
        ru_path = os.path.join(cwd, ".rusage")
        t0 = time.perf_counter()
        p = subprocess.Popen([LAUNCHER, ru_path] + argv, env=launcher_env(env), cwd=cwd,
                             stdin=inp,
                             stdout=out, stderr=err, start_new_session=True)
        r.rc, _, r.hung = wait_child(p, timeout)
        r.time = time.perf_counter() - t0
    ru = read_launcher(ru_path)
    r.rss, r.cpu = ru.get("maxrss"), ru.get("user")
    if "user" in ru and "sys" in ru:
        r.cpu_all = ru["user"] + ru["sys"]
    outs = tuple((o, sha(os.path.join(cwd, o)) if os.path.exists(os.path.join(cwd, o))
                  else "missing") for o in spec.get("outputs", []))
    r.fingerprint = (r.rc, sha(out_path), outs)
    with open(err_path, "rb") as f:
        r.stderr = f.read().decode(errors="replace")
    return r


def redis_cli(port, args, stdin=None, timeout=30):
    return subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port)] + args,
                          input=stdin, capture_output=True, text=True, timeout=timeout,
                          env=CLEAN_ENV)


def alive(pid):
    """pid exists and is not a zombie (without reaping it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except (OSError, IndexError):
        return False


def run_server(spec, subst, env, cwd, timeout, witch, profdir):
    """redis-server under load; profdir set: also check the flusher's file."""
    r = Result()
    port = free_port()
    log_path = os.path.join(cwd, ".stdout")
    err_path = os.path.join(cwd, ".stderr")
    argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--appendonly", "no", "--dir", cwd, "--daemonize", "no", "--logfile", "",
            "--protected-mode", "yes"]
    ru_path = os.path.join(cwd, ".rusage")
    with open(log_path, "wb") as out, open(err_path, "wb") as err:
        p = subprocess.Popen([LAUNCHER, ru_path] + argv, env=launcher_env(env), cwd=cwd,
                             stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                             start_new_session=True)
        for _ in range(500):
            server_pid = read_launcher(ru_path).get("pid")
            if server_pid:
                break
            time.sleep(0.01)
        notes = []
        ready = False
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and p.poll() is None:
            try:
                if redis_cli(port, ["PING"], timeout=5).stdout.strip() == "PONG":
                    ready = True
                    break
            except subprocess.TimeoutExpired:
                pass
            time.sleep(0.05)
        check_out = ""
        if ready:
            t0 = time.perf_counter()
            try:
                b = subprocess.run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(port),
                                    "-n", str(REDIS_REQUESTS), "-q", "-t", REDIS_TESTS],
                                   capture_output=True, text=True, timeout=timeout,
                                   env=CLEAN_ENV)
                r.time = time.perf_counter() - t0
                r.extra["bench_rc"] = b.returncode
                r.extra["bench"] = b.stdout
                if b.returncode != 0:
                    notes.append(f"redis-benchmark exit {b.returncode}")
            except subprocess.TimeoutExpired:
                r.time = time.perf_counter() - t0
                notes.append("redis-benchmark timed out")
                r.hung = True
            try:
                c = redis_cli(port, [], stdin=REDIS_CHECK)
                check_out = f"rc={c.returncode}\n{c.stdout}"
            except subprocess.TimeoutExpired:
                check_out = "redis-cli timed out"
            if profdir is not None:
                # WITCH_FLUSH=1: the flusher's profile must be there while the
                # server still runs, and read.
                snap = None
                for _ in range(40):
                    found = glob.glob(os.path.join(profdir, f"p-*-{server_pid}.prof"))
                    if found:
                        snap = os.path.join(cwd, "flushed.prof")
                        shutil.copyfile(found[0], snap)
                        break
                    time.sleep(0.1)
                if snap is None:
                    r.extra["flush"] = "no flushed profile while running"
                else:
                    rep = subprocess.run([witch, "report", "--json", snap],
                                         capture_output=True, text=True)
                    if rep.returncode != 0:
                        r.extra["flush"] = (f"flushed profile unreadable: "
                                            f"{rep.stderr.strip()[:200]}")
                    elif not alive(server_pid):
                        r.extra["flush"] = "the server had already ended"
                    else:
                        j = json.loads(rep.stdout)
                        r.extra["flush"] = f"flushed profile ok ({j.get('samples')} samples)"
                        r.extra["flush_ok"] = True
        else:
            notes.append("server never answered PING")
        if p.poll() is None:
            os.kill(p.pid, signal.SIGTERM)  # the launcher passes it on
        r.rc, _, hung = wait_child(p, 30)
        r.hung = r.hung or hung
    ru = read_launcher(ru_path)
    r.rss, r.cpu = ru.get("maxrss"), ru.get("user")
    if "user" in ru and "sys" in ru:
        r.cpu_all = ru["user"] + ru["sys"]
    with open(log_path, "rb") as f:
        log = f.read().decode(errors="replace")
    if "ready to exit, bye bye" not in log:
        notes.append("no clean shutdown in the server log")
    with open(err_path, "rb") as f:
        r.stderr = f.read().decode(errors="replace")
    r.extra["notes"] = notes
    r.fingerprint = (r.rc, hashlib.sha256(check_out.encode()).hexdigest(), ())
    r.extra["check_out"] = check_out
    return r


def read_profiles(witch, profdir):
    """Validate each profile alone, then merged.  Returns dict."""
    files = sorted(glob.glob(os.path.join(profdir, "*")))
    profs = [f for f in files if f.endswith(".prof")]
    info = dict(count=len(profs), bad=[], other=[os.path.basename(f) for f in files
                                                 if not f.endswith(".prof")],
                names=[], zero=[], merged=None)
    for f in profs:
        base = os.path.basename(f)
        # p-%e-%p.prof: program name between the first '-' and the last '-'
        name = base[2:base.rfind("-")] if base.startswith("p-") else base
        if base.endswith(".exec.prof"):
            name = base[2:base[:-len(".exec.prof")].rfind("-")] + " (exec)"
        info["names"].append(name)
        rep = subprocess.run([witch, "report", "--json", f], capture_output=True, text=True)
        if rep.returncode != 0:
            info["bad"].append(f"{base}: exit {rep.returncode}: {rep.stderr.strip()[:200]}")
            continue
        try:
            j = json.loads(rep.stdout)
        except ValueError as e:
            info["bad"].append(f"{base}: JSON: {e}")
            continue
        if not j.get("samples"):
            info["zero"].append(name)
    if profs:
        rep = subprocess.run([witch, "report", "--json"] + profs, capture_output=True,
                             text=True)
        if rep.returncode == 0:
            try:
                info["merged"] = json.loads(rep.stdout)
            except ValueError:
                pass
        if info["merged"] is None:
            info["bad"].append(f"merged report of {len(profs)} profiles: exit "
                               f"{rep.returncode}: {rep.stderr.strip()[:200]}")
    return info


# Skip counters of picks the runtime found and then lost (stats.h).
LOST_PICKS = ["skip_reach_far", "skip_reach_busy", "skip_steps", "skip_no_step", "skip_step_watched", "skip_decode",
              "skip_unknown_addr", "skip_runtime_addr", "skip_unreadable", "skip_unwind",
              "skip_cct_full", "skip_pairs_full"]


def yield_notes(infos, prof, rate):
    """Soft sampler: flag runs whose clock ticked far less than rate x user
    CPU time (threads that never take the clock signal, e.g. all signals
    blocked), or whose ticks mostly found no access to sample."""
    notes = []
    ticks, samples, tpc, threads = [], [], [], []
    skips = {}
    for info, r in zip(infos, prof):
        m = info["merged"]
        if not m or m.get("sampler") != "soft":
            continue
        st = m.get("stats", {})
        ticks.append(st.get("ticks", 0))
        samples.append(m.get("samples", 0))
        threads.append(st.get("threads", 0))
        for k, v in st.items():
            if k.startswith("skip_") and v:
                skips.setdefault(k, []).append(v)
        if r.cpu:
            tpc.append(st.get("ticks", 0) / r.cpu)
    if not ticks:
        return notes
    t, sa, th = med(ticks), med(samples), med(threads)
    if th and th > 1:
        notes.append(f"{th:.0f} threads")
    if tpc and med(tpc) < 0.5 * rate:
        notes.append(f"only {med(tpc):.0f} ticks per user CPU-s (rate {rate})")
    if t:
        # A tick with no sample still stands for its time where its window
        # found no wanted byte (0 bytes: skip_no_access), kept no pick of a
        # sparse window (in expectation: look.c), fell in a byte-counted
        # call or arrived from a page fault (kernel time: faultlog.h); a
        # pick lost on the way (LOST_PICKS) is the only time that goes
        # unrepresented, at most a tick each (issue 12: >= 80%).
        lost = sum(med(skips[k]) for k in LOST_PICKS if k in skips)
        notes.append(f"ticks represented >= {100 * max(0.0, 1 - lost / t):.0f}%")
    if t and sa < 0.5 * t:
        top = sorted(((med(v), k) for k, v in skips.items()), reverse=True)[:2]
        notes.append(f"samples/ticks {sa:.0f}/{t:.0f} ("
                     + ", ".join(f"{k} {v:.0f}" for v, k in top) + ")")
    return notes


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec):
    return "n/a" if x is None else format(x, spec)


def ratio(a, b):
    return f"{b / a:.2f}" if a and b is not None else "n/a"


def witch_lines(stderr):
    return [ln for ln in stderr.splitlines() if ln.startswith("witch:")
            and "using software sampling" not in ln]


CLEAN_ENV = {k: v for k, v in os.environ.items()
             if k != "LD_PRELOAD" and not k.startswith("WITCH_")}


def main(argv):
    ap = argparse.ArgumentParser(
        usage="real_programs.py [options] BUILD_DIR [RUNS] [CLIENT...]", add_help=False)
    ap.add_argument("-h", "--help", action="store_true")
    ap.add_argument("--programs", default=",".join(ORDER))
    ap.add_argument("--tunables", action="store_true")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--keep")
    ap.add_argument("build", nargs="?")
    ap.add_argument("runs", nargs="?", default="3")
    ap.add_argument("clients", nargs="*")
    a = ap.parse_args(argv)
    if a.help or not a.build:
        print(__doc__.strip())
        return 0 if a.help else 2
    try:
        runs = int(a.runs)
        assert runs >= 1
    except (ValueError, AssertionError):
        sys.stderr.write(f"real_programs: RUNS must be a number >= 1, got {a.runs!r}\n")
        return 2
    clients = a.clients or ["dead"]
    names = [n.strip() for n in a.programs.split(",") if n.strip()]
    for n in names:
        if n not in PROGRAMS:
            sys.stderr.write(f"real_programs: no program {n!r} (have {', '.join(ORDER)})\n")
            return 2
    build = os.path.abspath(a.build)
    lib = os.path.join(build, "libwitch.so")
    witch = os.path.join(build, "witch")
    for f in (lib, witch):
        if not os.path.exists(f):
            sys.stderr.write(f"real_programs: {f} not found\n")
            return 1

    inherited = {k: v for k, v in os.environ.items() if k.startswith("WITCH_")}
    tmp = a.keep or tempfile.mkdtemp(prefix="witch-real.")
    os.makedirs(tmp, exist_ok=True)
    later = []  # things to print after the table
    try:
        subst = dict(real=REAL, data=os.path.join(tmp, "data.txt"),
                     xzdata=os.path.join(tmp, "xzdata.txt"), csrc=os.path.join(tmp, "gen.c"))
        # A snapshot: a rebuild of BUILD_DIR during the run must not mix versions.
        built = time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(lib)))
        snap = os.path.join(tmp, "build")
        os.makedirs(snap, exist_ok=True)
        lib = shutil.copy2(lib, os.path.join(snap, "libwitch.so"))
        witch = shutil.copy2(witch, os.path.join(snap, "witch"))
        global LAUNCHER
        LAUNCHER = build_launcher(tmp)
        if LAUNCHER is None:
            return 1
        gen = os.path.join(REAL, "gen_inputs.py")
        if {"gzip", "pigz"} & set(names):
            subprocess.run([PYTHON, gen, "text", subst["data"], str(TEXT_MIB)], check=True)
        if "xz" in names:
            subprocess.run([PYTHON, gen, "text", subst["xzdata"], str(XZ_MIB)], check=True)
        if "gcc" in names:
            subprocess.run([PYTHON, gen, "csource", subst["csrc"], str(GCC_FUNCTIONS)],
                           check=True)

        load = os.getloadavg()
        print(f"# libwitch on real programs: {runs} native + {runs} profiled runs each, "
              f"interleaved; medians")
        print()
        print(f"- machine: {os.cpu_count()} CPUs, {platform.machine()}, Linux "
              f"{platform.release()}; load average at start {load[0]:.2f} {load[1]:.2f} "
              f"{load[2]:.2f} (other work shares the machine)")
        rev = subprocess.run(["git", "-C", os.path.dirname(HERE), "describe", "--always",
                              "--dirty"], capture_output=True, text=True).stdout.strip()
        print(f"- build: {build} (libwitch.so of {built}, copied at start; source tree "
              f"{rev or 'unknown'}); WITCH_RATE: "
              f"{inherited.get('WITCH_RATE', 'runtime default (not set)')}"
              + "".join(f"; {k}={v}" for k, v in sorted(inherited.items())
                        if k not in ("WITCH_RATE", "WITCH_CLIENT", "WITCH_OUTPUT"))
              + ("; profiled runs with witch run's GLIBC_TUNABLES" if a.tunables else
                 "; plain LD_PRELOAD (no GLIBC_TUNABLES)"))
        print("- samples, traps, fraction, samples/CPU-s, round trips/sample, estimate: "
              "`witch report --json` of all profiles of a run merged (sum over its "
              "processes), median over runs; measured: profiled / native - 1 of the "
              "median times; measured CPU: the same of the median user + system CPU "
              "time (wait4), which is what the estimate is of (a server that is not "
              "busy takes as long to serve the load either way)")
        print("- peak RSS: ru_maxrss from wait4 (largest over the process and the "
              "descendants it reaped); server time: the redis-benchmark load")
        for n in names:
            print(f"- {n}: {PROGRAMS[n]['what']}")
        print()
        print("| program | client | native s | profiled s | ratio | native peak RSS MiB "
              "| profiled peak RSS MiB | ratio | samples | traps | fraction "
              "| samples/CPU-s | round trips/sample | estimate % | measured % | measured CPU % "
              "| notes |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        sys.stdout.flush()

        for name in names:
            spec = PROGRAMS[name]
            server = spec.get("kind") == "server"
            for client in clients:
                native, prof, infos = [], [], []
                ref = None
                bad_native = bad_prof = hangs = crashes = 0
                first_bad = None
                wl = set()
                flush_notes = []
                extra_notes = set()
                for i in range(runs):
                    for profiled in (False, True):
                        cwd = os.path.join(tmp, f"{name}-{client}-{i}-{'p' if profiled else 'n'}")
                        shutil.rmtree(cwd, ignore_errors=True)
                        os.makedirs(cwd)
                        env = dict(CLEAN_ENV)
                        env.update(spec.get("env", {}))
                        profdir = None
                        if profiled:
                            profdir = os.path.join(cwd, ".profiles")
                            os.makedirs(profdir)
                            env.update(inherited)
                            env.update(LD_PRELOAD=lib, WITCH_CLIENT=client,
                                       WITCH_OUTPUT=os.path.join(profdir, "p-%e-%p.prof"))
                            if server:
                                env["WITCH_FLUSH"] = "1"
                            if a.tunables:
                                env["GLIBC_TUNABLES"] = RUN_TUNABLES
                        if server:
                            r = run_server(spec, subst, env, cwd, a.timeout, witch, profdir)
                            extra_notes.update(r.extra.get("notes", []))
                        else:
                            r = run_batch(spec, subst, env, cwd, a.timeout)
                        hangs += r.hung
                        if r.rc is not None and r.rc < 0:
                            crashes += profiled
                        if ref is None:
                            ref = r.fingerprint
                        differs = r.fingerprint != ref
                        if profiled:
                            prof.append(r)
                            bad_prof += differs
                            infos.append(read_profiles(witch, profdir))
                            wl.update(witch_lines(r.stderr))
                            if "flush" in r.extra:
                                flush_notes.append(r.extra["flush"])
                        else:
                            native.append(r)
                            bad_native += differs
                        if (differs or r.hung) and first_bad is None:
                            first_bad = (profiled, i, r, cwd)
                        if not a.keep:
                            # keep only what is needed later: the profile infos are read
                            shutil.rmtree(cwd, ignore_errors=True)
                notes = []
                if ref[0] != 0:
                    notes.append(f"native exit {ref[0]}")
                if bad_native:
                    notes.append(f"{bad_native}/{runs} native runs differ from the first")
                if bad_prof:
                    what = "exit status" if any(p.fingerprint[0] != ref[0] for p in prof) \
                        else "output"
                    notes.append(f"**{bad_prof}/{runs} profiled runs differ ({what})**")
                if hangs:
                    notes.append(f"**{hangs} run(s) killed after {a.timeout:.0f} s**")
                if crashes:
                    notes.append(f"**{crashes} profiled run(s) killed by a signal**")
                missing = sum(1 for x in infos if x["count"] == 0)
                if missing:
                    notes.append(f"**{missing}/{runs} runs left no profile**")
                bad = [b for x in infos for b in x["bad"]]
                if bad:
                    notes.append(f"**{len(bad)} invalid profile(s)**")
                    later.append(f"{name}/{client}: invalid profiles:\n  " + "\n  ".join(bad))
                empty = sum(1 for x in infos if x["merged"] is not None
                            and not x["merged"].get("samples"))
                if empty:
                    notes.append(f"**{empty}/{runs} runs with 0 samples**")
                other = sorted({o for x in infos for o in x["other"]})
                if other:
                    notes.append(f"stray files in the profile dir: {', '.join(other[:4])}")
                counts = sorted({x["count"] for x in infos})
                pnames = sorted(set(n for x in infos for n in x["names"]))
                if pnames and (len(pnames) > 1 or counts != [1]):
                    notes.append(f"{'/'.join(map(str, counts))} profiles per run "
                                 f"({', '.join(pnames)}), all valid" if not bad else
                                 f"{'/'.join(map(str, counts))} profiles per run "
                                 f"({', '.join(pnames)})")
                zero = sorted({z for x in infos for z in x["zero"]})
                if zero:
                    notes.append(f"0 samples in: {', '.join(zero)}")
                if flush_notes:
                    ok = sum(1 for x in prof if x.extra.get("flush_ok"))
                    notes.append(f"flushed profile read while running: {ok}/{runs}"
                                 + ("" if ok == runs else
                                    f" ({'; '.join(sorted(set(flush_notes)))})"))
                notes.extend(yield_notes(infos, prof, int(inherited.get("WITCH_RATE", 200))))
                if server:
                    notes.extend(sorted(extra_notes))
                    notes.append(f"native server exit {ref[0]} after SIGTERM")
                if wl:
                    notes.append(f"{len(wl)} witch: stderr line(s), below")
                    later.append(f"{name}/{client}: witch: lines on stderr:\n  "
                                 + "\n  ".join(sorted(wl)))
                if first_bad is not None:
                    profiled, i, r, cwd = first_bad
                    later.append(
                        f"{name}/{client}: first differing run: {'profiled' if profiled else 'native'} "
                        f"#{i + 1}: exit {r.rc} (first native: {ref[0]}), hung={r.hung}; "
                        f"stderr:\n  " + "\n  ".join(r.stderr.splitlines()[-20:])
                        + (f"\n  server check output:\n    "
                           + "\n    ".join(r.extra.get("check_out", "").splitlines())
                           if server else ""))
                mn, mp = med([x.time for x in native]), med([x.time for x in prof])
                rn = med([x.rss for x in native])
                rp = med([x.rss for x in prof])
                rn = rn / 1024 if rn is not None else None
                rp = rp / 1024 if rp is not None else None
                merged = [x["merged"] for x in infos if x["merged"]]
                samples = med([m.get("samples") for m in merged])
                traps = med([m.get("traps") for m in merged])
                frac = med([m.get("fraction") for m in merged])
                costs = [overhead.report_costs(m) for m in merged]  # a run's processes merged
                costs = [c for c in costs if c]
                per_s = med([c[0] for c in costs])
                trips = med([c[1] for c in costs])
                est = med([c[2] for c in costs])
                measured = 100 * (mp / mn - 1) if mn and mp else None
                cn, cp = med([x.cpu_all for x in native]), med([x.cpu_all for x in prof])
                measured_cpu = 100 * (cp / cn - 1) if cn and cp else None
                print(f"| {name} | {client} | {fmt(mn, '.3f')} | {fmt(mp, '.3f')} | "
                      f"{ratio(mn, mp)} | {fmt(rn, '.1f')} | {fmt(rp, '.1f')} | "
                      f"{ratio(rn, rp)} | {fmt(samples, '.0f')} | {fmt(traps, '.0f')} | "
                      f"{fmt(frac, '.3f')} | {fmt(per_s, '.0f')} | {fmt(trips, '.1f')} | "
                      f"{fmt(est, '.1f')} | {fmt(measured, '.1f')} | {fmt(measured_cpu, '.1f')} | "
                      f"{'; '.join(notes)} |")
                sys.stdout.flush()
        load = os.getloadavg()
        print()
        print(f"load average at end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        if later:
            print()
            for x in later:
                print(x)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
