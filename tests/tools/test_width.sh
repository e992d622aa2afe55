#!/bin/sh
# Tests of the width of `witch report` text: frame lines longer than the
# width are cut to it with "..." at the end; other lines stay whole.
#  - --width 60 on a hand-written profile gives exactly the expected lines
#    (prog.c is built with -fdebug-prefix-map and its module is given by
#    a relative path, so every frame line is known to the byte; lines of
#    exactly 60 and 61 columns; a module path with multi-byte UTF-8
#    characters, which count one column each and are never split);
#  - --width 0, and output to a pipe with $COLUMNS set, do not cut;
#  - on a pseudo-terminal the terminal's width (TIOCGWINSZ) cuts, and
#    $COLUMNS does when the terminal reports 0 columns; --width wins.
#
# Usage: test_width.sh PATH/TO/witch      (needs cc, nm, readelf, python3)
set -eu
WITCH=${1:?usage: test_width.sh PATH/TO/witch}
case $WITCH in /*) ;; *) WITCH=$(pwd)/$WITCH ;; esac
SRC=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

python3 - "$WITCH" "$SRC" "$T" <<'PYEOF'
import fcntl, os, pty, struct, subprocess, sys, termios
witch, src, work = sys.argv[1:4]
sys.path.insert(0, src)
from profgen import Prog, check, finish, run

# DWARF names the source /src/prog.c wherever the checkout is.
g = Prog(src, work, cflags=["-fdebug-prefix-map=%s=/src" % src])
A, L = g.addr, g.marks
B = 0x555555554000
# The module by a path relative to the working directory (the test runs
# witch there), long enough that every prog frame is cut before its
# address, which depends on the compiler.
MOD = "obj/witch-width-test-dir/prog"
os.makedirs(os.path.join(work, "obj/witch-width-test-dir"))
os.rename(g.prog, os.path.join(work, MOD))
# Modules that do not exist: their frames are
# "[unknown in BASE] at ?? in PATH [ADDR]", 10 + 12 + len(BASE) + 1 + 10 +
# len(PATH) + 17 columns: these two give 60 and 61.
P60 = "/nx/l60"
P61 = "/nxx/l61"
PU = "/nonexistent/ünïcødé-ünïcødé-ünïcødé.so"   # 40 characters, 52 bytes
UNK = "      #0  [unknown in %s] at ?? in %s [%s]"
assert (len(UNK % ("l60", P60, "0x7f0000001234")), len(UNK % ("l61", P61, "0x7f1000001234"))) == (60, 61)
prof = g.write("w.prof", [
    "witch-profile 1", "client dead", "sampler soft", "stat samples 10",
    "exe /a/very/long/program/path/that/is/not/a/frame/line/and/stays/whole/prog",
    g.module_line(1, B).rsplit(" ", 1)[0] + " " + MOD,
    "module 2 0x7f0000000000 0x7f0000001000 0x7f0000009000 - " + P60,
    "module 3 0x7f1000000000 0x7f1000001000 0x7f1000009000 - " + P61,
    "module 4 0x7f2000000000 0x7f2000001000 0x7f2000009000 - " + PU,
    "node 1 0 %#x" % (B + A["main_first"]), "node 2 1 %#x" % (B + A["inline_store"]),
    "node 3 0 %#x" % (B + A["main_again"]), "node 4 3 %#x" % (B + A["kill"]),
    "node 5 0 0x7f0000001234", "node 6 0 0x7f1000001234", "node 7 0 0x7f2000001234",
    "node 8 0 0x1000",
    "pair 2 4 300 100 6", "pair 5 6 20 0 1", "pair 7 8 10 0 1", "end"][:-1])

want60 = """\
#1  share 90.91%%  waste 300 bytes  use 100 bytes  traps 6
    dead store
      #0  fill (inlined) at /src/prog.c:%(INLINE_STORE)d in obj/witch-w...
      #1  store_first at /src/prog.c:%(CALL_FILL)d in obj/witch-widt...
      #2  main at /src/prog.c:%(MAIN_FIRST)d in obj/witch-width-test-...
    killed by
      #0  store_again at /src/prog.c:%(KILL)d in obj/witch-widt...
      #1  main at /src/prog.c:%(MAIN_AGAIN)d in obj/witch-width-test-...

#2  share 6.06%%  waste 20 bytes  use 0 bytes  traps 1
    dead store
      #0  [unknown in l60] at ?? in /nx/l60 [0x7f0000001234]
    killed by
      #0  [unknown in l61] at ?? in /nxx/l61 [0x7f1000001...

#3  share 3.03%%  waste 10 bytes  use 0 bytes  traps 1
    dead store
      #0  [unknown in ünïcødé-ünïcødé-ünïcødé.so] at ?? i...
    killed by
      #0  [JIT] at ?? in ?? [0x1000]
""" % L

def pairs_part(out):
    i = out.find("\n#1  share")
    return out[i + 1:] if i >= 0 else ""

def frame_lines(out):
    return [l for l in out.splitlines() if l.startswith("      #")]

def cols(s):
    return len(s)   # Python counts characters, as witch counts columns

rc, out, err = run(witch, "report", "--width", "60", prof, cwd=work)
check(rc == 0 and all(l.startswith("witch: warning: cannot open module /n")
                      for l in err.splitlines()),
      "--width 60: rc %d, stderr %r" % (rc, err))
got = pairs_part(out)
check(got == want60, "--width 60 pairs:\n got:\n%s\n expected:\n%s" % (got, want60))
check(all(cols(l) <= 60 for l in frame_lines(out)) and
      sum(cols(l) == 60 for l in frame_lines(out)) == 8,
      "--width 60: frame lines are at most 60 columns, 8 of them exactly")
check("program:           /a/very/long/program/path/that/is/not/a/frame/line/and/stays/whole/prog\n" in out,
      "--width 60 leaves the summary whole")
rc, out2, err = run(witch, "report", "--width=60", prof, cwd=work)
check(out2 == out, "--width=60 is --width 60")

# No limit: --width 0, a pipe (even with $COLUMNS), -o FILE.
rc, full, err = run(witch, "report", prof, cwd=work, env=dict(os.environ, COLUMNS="40"))
check(rc == 0 and "..." not in full and
      "      #0  [unknown in ünïcødé-ünïcødé-ünïcødé.so] at ?? in %s [0x7f2000001234]\n" % PU in full and
      "      #0  fill (inlined) at /src/prog.c:%d in %s [0x" % (L["INLINE_STORE"], MOD) in full,
      "a pipe is not cut, whatever $COLUMNS says:\n%s" % full)
rc, out, err = run(witch, "report", "--width", "0", prof, cwd=work)
check(out == full, "--width 0 is no limit")
# --top keeps working with --width.
rc, out, err = run(witch, "report", "--width", "60", "--top", "1", prof, cwd=work)
check(rc == 0 and "top 1 of 3 pairs by waste:" in out and pairs_part(out) == want60.split("\n\n#2")[0] + "\n",
      "--top 1 --width 60:\n%s" % out)

def on_tty(args, cols_, env_columns=None):
    """witch with stdout (and stdin) on a pseudo-terminal of cols_ columns."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols_, 0, 0))
    # Raw mode: the terminal must not turn "\n" into "\r\n".
    attrs = termios.tcgetattr(slave)
    attrs[1] &= ~termios.OPOST
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    if env_columns is not None:
        env["COLUMNS"] = env_columns
    p = subprocess.Popen([witch] + args, stdout=slave, stdin=slave,
                         stderr=subprocess.PIPE, cwd=work, env=env)
    os.close(slave)
    data = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:   # EIO: the slave side is closed
            break
        if not chunk:
            break
        data += chunk
    p.wait(timeout=20)
    os.close(master)
    return p.returncode, data.decode()

rc, out = on_tty(["report", prof], 60)
check(rc == 0 and pairs_part(out) == want60,
      "a 60-column terminal cuts as --width 60:\n%s" % out)
rc, out = on_tty(["report", prof], 0, env_columns="60")
check(rc == 0 and pairs_part(out) == want60,
      "a terminal without a size uses $COLUMNS:\n%s" % out)
rc, out = on_tty(["report", prof], 0)
check(rc == 0 and out == full, "a terminal without a size or $COLUMNS is not cut:\n%s" % out)
rc, out = on_tty(["report", "--width", "0", prof], 60)
check(rc == 0 and out == full, "--width 0 on a terminal is not cut")
rc, out = on_tty(["report", prof], 8)
check(rc == 0 and all(cols(l) == 20 for l in frame_lines(out)),
      "a terminal narrower than 20 columns cuts at 20:\n%s" % out)
finish("test_width")
PYEOF
