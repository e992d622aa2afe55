#!/bin/sh
# `witch report --format pprof` without -o (issue 16):
#  - stdout a pipe: the gzipped profile goes there (`witch report ... |
#    cat > FILE`), the same profile as -o FILE writes, and go tool pprof
#    -top reads it back with the functions and bytes of `--json`;
#  - stdout redirected to a file: the same;
#  - stdout a terminal (a pty from python's pty module), without -o or
#    with -o -: refused with the message it always had, status 2, nothing
#    written to the terminal.
# (go tool pprof itself cannot read a pipe: it opens its input twice, the
# first time for 8 bytes of magic; hence the file between.)
# Skipped (77) without go (Debian's golang-go).
#
# Usage: test_pprof_pipe.sh PATH/TO/witch
set -eu
WITCH=${1:?usage: test_pprof_pipe.sh PATH/TO/witch}
case $WITCH in /*) ;; *) WITCH=$(pwd)/$WITCH ;; esac
SRC=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
HOME=$T python3 - "$WITCH" "$SRC" "$T" <<'PYEOF'
import gzip, json, os, pty, re, select, shutil, subprocess, sys
witch, src, work = sys.argv[1:4]
sys.path.insert(0, src)
from profgen import Prog, check, finish, run

go = shutil.which("go")
if go is None:
    print("go is not installed (apt-get install golang-go): skipped")
    sys.exit(77)
g = Prog(src, work)
A, B = g.addr, 0x555555554000
prof = g.write("p.prof", [
    "witch-profile 1", "client dead", "sampler soft", "stat samples 10", g.module_line(1, B),
    "node 1 0 %#x" % (B + A["main_first"]), "node 2 1 %#x" % (B + A["inline_store"]),
    "node 3 0 %#x" % (B + A["main_again"]), "node 4 3 %#x" % (B + A["kill"]),
    "node 5 0 %#x" % (B + A["main_sum"]), "node 6 5 %#x" % (B + A["load"]),
    "pair 2 4 300 100 6", "pair 4 6 0 50 2", "pair 6 4 40 0 1"])
ofile = os.path.join(work, "o.pb.gz")
rc, out, err = run(witch, "report", "--format", "pprof", "-o", ofile, prof)
check(rc == 0, "-o FILE: %d %r" % (rc, err))
want = gzip.decompress(open(ofile, "rb").read())

piped = os.path.join(work, "piped.pb.gz")
redir = os.path.join(work, "redir.pb.gz")
cases = [  # (what, shell command, file it leaves)
    ("a pipe", "'%s' report --format pprof '%s' | cat > '%s'" % (witch, prof, piped), piped),
    ("a pipe, -o -", "'%s' report --format pprof -o - '%s' | cat > '%s'" % (witch, prof, piped), piped),
    ("a file", "'%s' report --format=pprof '%s' > '%s'" % (witch, prof, redir), redir),
]
for what, cmd, path in cases:
    p = subprocess.run(["sh", "-c", "set -e; " + cmd], capture_output=True, text=True)
    if not check(p.returncode == 0 and p.stderr == "", "stdout %s: %d %r" % (what, p.returncode, p.stderr)):
        continue
    data = open(path, "rb").read()
    check(data[:2] == b"\x1f\x8b" and gzip.decompress(data) == want,
          "stdout %s: the profile -o FILE writes" % what)

# go tool pprof reads it back: flat and cum bytes per function as --json says.
top = subprocess.run([go, "tool", "pprof", "-top", "-unit=B", "-nodefraction=0", piped],
                     capture_output=True, text=True)
check(top.returncode == 0, "go tool pprof -top: %s" % top.stderr)
rows = {}
for l in top.stdout.splitlines():
    m = re.match(r"\s*(\d+)B?\s+\S+%\s+\S+%\s+(\d+)B?\s+\S+%\s+(.*\S)\s*$", l)
    if m:
        rows[m.group(3)] = (int(m.group(1)), int(m.group(2)))
j = json.loads(run(witch, "report", "--json", prof)[1])
flat, cum = {}, {}
for q in j["pairs"]:
    names = [f["function"] + (" (inline)" if f.get("inlined") else "") for f in q["trap"]] + \
            ["KILLED_BY"] + [f["function"] + (" (inline)" if f.get("inlined") else "") for f in q["watch"]]
    v = round(q["waste"])
    flat[names[0]] = flat.get(names[0], 0) + v
    for n in set(names):
        cum[n] = cum.get(n, 0) + v
expect = {n: (flat.get(n, 0), c) for n, c in cum.items() if c}
check({n: v for n, v in rows.items() if v != (0, 0)} == expect,
      "go tool pprof -top of the piped profile\n got: %r\n want: %r\n%s" % (rows, expect, top.stdout))

# A terminal is refused, as before.
for args in (["--format", "pprof", prof], ["--format", "pprof", "-o", "-", prof]):
    master, slave = pty.openpty()
    p = subprocess.Popen([witch, "report"] + args, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    got = b""
    while True:
        r, _, _ = select.select([master], [], [], 10)
        if not r:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        got += chunk
    err = p.stderr.read().decode()
    rc = p.wait()
    os.close(master)
    check(rc == 2 and got == b"" and err.splitlines()[0] ==
          "witch: report: --format pprof writes a binary file: give -o FILE",
          "stdout a terminal (%s): status %d, %d bytes on it, %r" % (" ".join(args), rc, len(got), err))
finish("test_pprof_pipe")
PYEOF
