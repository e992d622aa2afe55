#!/usr/bin/python3
"""fuzz_config.py: random and hostile WITCH_* settings never change a program.

usage: fuzz_config.py BUILD_DIR [--cases N] [--seed S]

Each case runs /bin/sh -c 'echo fuzz; exit 7' (a real program that prints
one line and exits 7, in a few ms) under LD_PRELOAD=BUILD_DIR/libwitch.so with one to four WITCH_* variables
set to values drawn from hostile families: huge, negative and fractional
numbers, empty and very long strings, bytes that are not UTF-8, format
directives, paths into /proc and /sys, a symlink to another file, a missing
directory.  Every case must keep the program's stdout and exit status, write at
most one stderr line per setting that needs the user (each starting with "witch: "; WITCH_VERBOSE
may say more), and leave the symlink's
target untouched.  (The profiler's own runs against known answers are in
tests/; this checks only that no setting changes the program.)  Runs in a
temporary directory (the default profile name
lands there).  Prints one line per failure and a final
"fuzz_config: N passed, M failed" line; exit 0 when none failed.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

NAMES = ["WITCH_CLIENT", "WITCH_SAMPLER", "WITCH_RATE", "WITCH_PERIOD", "WITCH_WATCHPOINTS",
         "WITCH_OUTPUT", "WITCH_SEED", "WITCH_VERBOSE", "WITCH_MAX_STEPS", "WITCH_BUDGET",
         "WITCH_DEPTH", "WITCH_SLOW_REARM", "WITCH_FP_TOLERANCE", "WITCH_EVENT",
         "WITCH_FLUSH", "WITCH_MEMORY_MB"]


def values(rnd, tmp):
    """One hostile value (bytes)."""
    families = [
        lambda: str(rnd.choice([0, 1, 2, 3, 4, 5, 7, 100, 200, 2000, 10000, 10001, 100000])),
        lambda: str(rnd.choice([-1, -100, 2**31, 2**32, 2**63, 2**64, 2**64 + 1, 10**30])),
        lambda: rnd.choice(["1.5", "0.5", "1e3", "1e-9", "nan", "inf", "-0", "0x10", " 1", "1 ",
                            "+1", "01", "1%", "50.0001", "0.1", "1,5"]),
        lambda: rnd.choice(["", " ", "\t", "dead", "silent", "load", "auto", "soft", "pmu",
                            "DEAD", "dead ", "bogus"]),
        lambda: "x" * rnd.choice([255, 256, 1023, 1024, 5000]),
        lambda: rnd.choice(["%s%s%s%n", "%p", "%%", "%e", "%e-%p.prof", "%q", "%"]),
        lambda: rnd.choice(["/proc/self/mem", "/proc/1/environ", "/sys/kernel/x.prof",
                            "/proc/sys/kernel/perf_event_paranoid", "/dev/full",
                            "/nonexistent/dir/p.prof", tmp + "/link", tmp + "/",
                            tmp + "/p-%p.prof", "relative/p.prof", "."]),
        lambda: rnd.choice(["MEM_INST_RETIRED:ALL_STORES", "ibs_op", "::", "cycles",
                            "adl_glc::MEM_INST_RETIRED:ALL_STORES@1"]),
    ]
    v = rnd.choice(families)().encode()
    if rnd.random() < 0.1:
        v += bytes([rnd.choice([0xff, 0xfe, 0xc3, 0x80])])  # not UTF-8
    return v


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    build = os.path.abspath(args.build)
    prog = ["/bin/sh", "-c", "echo fuzz; exit 7"]
    lib = os.path.join(build, "libwitch.so")
    rnd = random.Random(args.seed)
    tmp = tempfile.mkdtemp(prefix="witch-fuzzcfg.")
    try:
        target = os.path.join(tmp, "target")
        with open(target, "w") as f:
            f.write("not a profile\n")
        os.symlink(target, os.path.join(tmp, "link"))
        base = {k: v for k, v in os.environb.items()
                if not k.startswith(b"WITCH_") and k != b"LD_PRELOAD"}
        native = subprocess.run(prog, env=base, cwd=tmp, capture_output=True)
        passed = failed = said = 0
        for case in range(args.cases):
            env = dict(base)
            env[b"LD_PRELOAD"] = lib.encode()
            chosen = rnd.sample(NAMES, rnd.randint(1, 4))
            for name in chosen:
                env[name.encode()] = values(rnd, tmp)
            r = subprocess.run(prog, env=env, cwd=tmp, capture_output=True, timeout=60)
            why = []
            if r.returncode != native.returncode:
                why.append("status %d, native %d" % (r.returncode, native.returncode))
            if r.stdout != native.stdout:
                why.append("stdout differs")
            lines = r.stderr.splitlines()
            said += len(lines) > 0
            # One line for each setting the user must act on, at most (a
            # verbose run says more on purpose), each a "witch: " line.
            verbose = env.get(b"WITCH_VERBOSE", b"").lstrip(b"0") in (b"1", b"2")
            if (not verbose and len(lines) > len(chosen)) or \
                    any(not line.startswith(b"witch: ") for line in lines):
                why.append("stderr: %r" % r.stderr[:300])
            with open(target) as f:
                if f.read() != "not a profile\n":
                    why.append("wrote through the symlink")
                    with open(target, "w") as g:
                        g.write("not a profile\n")
            if why:
                failed += 1
                shown = {k: env[k.encode()] for k in chosen}
                print("FAIL case %d %r: %s" % (case, shown, "; ".join(why)))
            else:
                passed += 1
            for f in os.listdir(tmp):  # profiles the cases wrote
                if f not in ("target", "link"):
                    p = os.path.join(tmp, f)
                    if os.path.isdir(p) and not os.path.islink(p):
                        shutil.rmtree(p, ignore_errors=True)
                    else:
                        os.unlink(p)
        print("fuzz_config: %d cases, %d with witch: lines" % (args.cases, said))
        print("fuzz_config: %d passed, %d failed" % (passed, failed))
        return 0 if failed == 0 else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
