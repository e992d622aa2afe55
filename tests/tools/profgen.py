"""Hand-written profiles for the witch command's tests.

Builds tests/tools/prog.c with -O2 -g, finds the file addresses of its
MARK_* lines (nm + the line table, as test_report.sh does) and writes
profiles whose pcs point there, so reports of them have known frames.

    g = Prog(src_dir, work_dir)     # builds work_dir/prog
    g = Prog(src_dir, work_dir, cflags=[...])   # with more compiler flags
    g.addr["kill"]                  # file address of MARK_KILL in store_again
    g.call["alloc"]                 # a call site: the call's return address - 1
    g.module_line(1, base)          # a 'module' record for prog at base
    g.write(name, [records...])     # header lines are up to the caller
    check(cond, what); finish()     # collect failures, exit 1 if any
"""
import os
import re
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def finish(name):
    if failures:
        print("%s: %d check(s) failed" % (name, len(failures)), file=sys.stderr)
        sys.exit(1)
    print("%s: all checks passed" % name)


def run(witch, *args, **kw):
    p = subprocess.run([witch] + list(args), capture_output=True, text=True, **kw)
    return p.returncode, p.stdout, p.stderr


class Prog:
    # mark name -> (MARK_ suffix, function holding the instruction)
    WHERE = {
        "main_first": ("MAIN_FIRST", "main"),
        "main_again": ("MAIN_AGAIN", "main"),
        "main_sum": ("MAIN_SUM", "main"),
        "inline_store": ("INLINE_STORE", "store_first"),
        "kill": ("KILL", "store_again"),
        "load": ("LOAD", "sum"),
    }
    # call site name -> (function making the call, called function): the
    # pcs of an allocation context (docs/objects.md), as the runtime writes
    # them, return address minus one.
    CALLS = {
        "alloc": ("main", "malloc@plt"),
        "calloc": ("make_table", "calloc@plt"),
        "main_table": ("main", "make_table"),
    }

    def __init__(self, src_dir, work_dir, cflags=()):
        self.src = os.path.join(src_dir, "prog.c")
        self.prog = os.path.join(work_dir, "prog")
        self.dir = work_dir
        subprocess.run([os.environ.get("CC", "cc"), "-O2", "-g"] + list(cflags) +
                       ["-o", self.prog, self.src], check=True)
        self.marks = {}
        for i, l in enumerate(open(self.src), 1):
            m = re.search(r"MARK_(\w+) \*/", l)
            if m:
                self.marks[m.group(1)] = i
        self.syms = {}
        out = subprocess.run(["nm", "-S", "--defined-only", self.prog],
                             capture_output=True, text=True, check=True).stdout
        for l in out.splitlines():
            f = l.split()
            if len(f) == 4 and f[2] in "tT":
                self.syms[f[3]] = (int(f[0], 16), int(f[1], 16))
        self.rows = {}
        out = subprocess.run(["readelf", "--debug-dump=decodedline", self.prog],
                             capture_output=True, text=True, check=True).stdout
        for l in out.splitlines():
            f = l.split()
            if len(f) >= 3 and f[0].endswith("prog.c") and f[1].isdigit() and f[2].startswith("0x"):
                self.rows.setdefault(int(f[2], 16), set()).add(int(f[1]))
        out = subprocess.run(["readelf", "-n", self.prog], capture_output=True,
                             text=True, check=True).stdout
        self.build_id = re.search(r"Build ID: ([0-9a-f]+)", out).group(1)
        self.text_lo = min(a for a, s in self.syms.values())
        self.text_hi = max(a + s for a, s in self.syms.values()) + 16
        self.addr = {k: self._addr_of(*v) for k, v in self.WHERE.items()}
        out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", self.prog],
                             capture_output=True, text=True, check=True).stdout
        self.call = {k: self._call_site(out, *v) for k, v in self.CALLS.items()}

    def _call_site(self, dump, func, callee):
        """The return address - 1 of FUNC's call of CALLEE."""
        lo, size = self.syms[func]
        insns = [(int(m.group(1), 16), m.group(2)) for m in
                 re.finditer(r"^\s*([0-9a-f]+):\s*(.*)$", dump, re.M)]
        for i, (a, text) in enumerate(insns[:-1]):
            if lo <= a < lo + size and text.startswith("call") and text.endswith("<%s>" % callee):
                return insns[i + 1][0] - 1
        sys.exit("no call of %s in %s" % (callee, func))

    def _addr_of(self, mark, func):
        """An instruction of line MARK inside FUNC whose line-table rows all
        name that line, so any reader maps it back to it."""
        line = self.marks[mark]
        lo, size = self.syms[func]
        for a in sorted(self.rows):
            if lo <= a < lo + size and self.rows[a] == {line}:
                return a
        sys.exit("no address for line %d in %s" % (line, func))

    def module_line(self, mid, base):
        return "module %d %#x %#x %#x %s %s" % (mid, base, base + self.text_lo,
                                                base + self.text_hi, self.build_id, self.prog)

    def write(self, name, records):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write("\n".join(records + ["end", ""]))
        return path
