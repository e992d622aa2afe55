#!/usr/bin/python3
"""zoo.py: a zoo of real programs behaves the same under libwitch.

usage: zoo.py [BUILD_DIR] [--runs N] [--rates R,...] [--clients C,...]
              [--timeout S] [--only NAME[,NAME...]] [--keep DIR] [--list]
  BUILD_DIR  has libwitch.so and witch (default: build)
  --runs N   rounds of each case (default 2): a native run, then one
             profiled run per client and rate, compared with that native run
  --rates    comma list of WITCH_RATE values; "default" means WITCH_RATE
             unset (default "2000,default": at 2000 ticks per CPU-second a
             tick comes every 0.5 ms, so the first one lands early in every
             process's life, often where the lazy load of the decoder and
             unwinder must not happen)
  --clients  comma list of WITCH_CLIENT values (default dead,silent,load)
  --timeout  seconds a run may take (default 120; the short C, signal and
             alarm cases wait at most 30-60 s: CASE_TIMEOUT)
  --only     only these cases (names as --list prints them)
  --keep DIR keep each run's stdout, stderr, status and profiles under
             DIR/CASE/RUN-LABEL/ (not the generated data)
  --list     print the cases and whether their tools are installed, and exit

Each case is a shell command (`bash -c`) over tools of a stock Debian 12:
coreutils pipelines over generated data, find/xargs, tar with gzip, xz,
bzip2 (and zstd/lz4 when installed), python3 (CPU loops, json, re, threads,
multiprocessing with fork, spawn and forkserver, subprocess, ~40 C
extension modules imported, ctypes, its own interval-timer handlers), perl
(regexes, hashes, XS modules, ithreads, fork, alarm and interval timers),
gcc (a program, a make -j2 build, crashes and the program's own SIGSEGV
handler, dlopen/dlclose and dl_iterate_phdr in threads, library
constructors that take a lock another thread holds or wait for a thread
of their own: both run under the loader's lock), git, sqlite3, bc, a
shell spawning hundreds of short processes, deep sh pipelines.  Every run
gets a fresh temporary working directory, LC_ALL=C, TZ=UTC, HOME set to
that directory and a plain PATH (not a pyenv shim); a case's output is
deterministic (checksums, counts; no dates, pids, timings or paths).  A case
whose tool is missing is skipped, and said so.

Checked for every profiled run (LD_PRELOAD=BUILD_DIR/libwitch.so,
WITCH_WATCHPOINTS=0, WITCH_CLIENT, WITCH_OUTPUT=TMP/prof/p-%p.prof, and
WITCH_RATE unless the rate is "default", then --env's settings):
  - exit status, stdout and stderr equal the native run's of the same round
    (so stderr gains no "witch:" line);
  - it ends within --timeout s; one that does not fails, with the stacks of
    every thread of every process of its session (gdb -p, when installed)
    in the failure report, and the session is killed;
  - at least one profile was written (p-PID.prof, p-PID.prof.exec), no
    temporary file of a write cut short is left (p-PID.prof.tmp.PID), and
    `witch report --json` reads all of the run's profiles together (exit 0);
and for every native run after the first of a case: the same output as the
first (a case that is not deterministic by itself is reported as such).
A run whose preload failed to load (the library being rebuilt meanwhile)
is tried once more.  Prints one line per failure and a summary; exit 1 on
any failure.  Nothing is timed: the wall clock is printed only as the
run's total length.
"""
import argparse
import difflib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

# Shell functions every case may use (prefixed to each command).
PRELUDE = r"""
ulimit -c 0
gen_text() { awk -v n="$1" -v s="${2:-1}" 'BEGIN{srand(s); k=split("alpha beta gamma delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu one two three four five six seven eight nine zero",w," "); for(i=1;i<=n;i++){ m=3+int(rand()*9); l=w[1+int(rand()*k)]; for(j=2;j<=m;j++) l=l " " w[1+int(rand()*k)]; print l } }'; }
gen_nums() { seq 1 "$1" | awk -v m="${2:-100003}" '{ print ($1 * 7919 + 13) % m }'; }
gen_tree() { for d in $(seq 1 "$1"); do mkdir -p "src/d$d/sub"; gen_text "$2" "$d" > "src/d$d/a.txt"; gen_nums "$2" > "src/d$d/sub/n.txt"; done; }
"""

# (name, tools needed besides bash and coreutils, command)
CASES = [
    ("sort_uniq", ["awk"], r"""
gen_nums 3000000 > n.txt
sort -n n.txt | uniq -c | sort -k1,1nr -k2,2n | head -5
sort -n -u n.txt | wc -l
sort -n n.txt | md5sum
"""),
    ("sort_parallel", ["awk"], r"""
gen_text 600000 > t.txt
sort --parallel=2 -S 64M t.txt | md5sum
sort --parallel=2 -S 64M -k2,2 -k1,1r -s t.txt | tail -3
sort -R --random-source=t.txt t.txt | md5sum
"""),
    ("tr_sed_wc", ["awk", "sed"], r"""
gen_text 400000 > t.txt
tr 'a-z' 'A-Z' < t.txt | sed -e 's/ALPHA/omega/g' -e 's/\([A-Z]*\) \([A-Z]*\)/\2 \1/' | tr -s ' ' '\n' | sort | uniq -c | sort -k1,1nr -k2 | head
wc t.txt
sed -n '/^golf.*zulu$/p' t.txt | wc -l
tr -d 'aeiou' < t.txt | tr -s 'a-z' | md5sum
"""),
    ("awk_agg", ["awk"], r"""
gen_text 300000 > t.txt
awk '{for(i=1;i<=NF;i++){c[$i]++; l[$i]+=length($i)*i}} END{for(w in c) print w, c[w], l[w]}' t.txt | sort
awk 'NR%3==0{s+=NF} END{print s, NR}' t.txt
awk '{print NF, $1, $NF}' t.txt | sort | uniq -c | sort -k1,1nr -k2 | head -3
"""),
    ("grep_regex", ["awk", "grep"], r"""
gen_text 500000 > t.txt
grep -c -E 'alpha.*(beta|gamma)$' t.txt
grep -o -E '\b[a-d][a-z]+o\b' t.txt | sort | uniq -c
grep -v -F -e delta -e echo t.txt | md5sum
grep -n -P '\b(\w+) \1\b' t.txt | tail -2
grep -c -i -w 'ZULU' t.txt
"""),
    ("join_cut_paste", ["awk"], r"""
seq 1 400000 | awk '{print "k" ($1 * 37 % 400009), $1}' | sort -k1,1 > a.txt
seq 1 400000 | awk '{print "k" ($1 * 53 % 400009), $1 * 2}' | sort -k1,1 > b.txt
join a.txt b.txt | md5sum
join -v1 a.txt b.txt | wc -l
cut -d' ' -f2 a.txt | paste -d+ - - - - | head -3
paste a.txt b.txt | cut -c1-12 | sort | md5sum
"""),
    ("checksums", ["awk"], r"""
gen_text 500000 > t.txt
md5sum t.txt; sha1sum t.txt; sha256sum t.txt; sha512sum t.txt | cut -c1-40; b2sum t.txt | cut -c1-40; cksum t.txt
base64 t.txt | base64 -d | cmp - t.txt && echo base64 same
"""),
    ("split_od_cmp", ["awk", "od", "split", "cmp"], r"""
gen_text 300000 > t.txt
split -b 1M t.txt part_
cat part_* | cmp - t.txt && echo split same
ls part_* | wc -l
od -An -tx1 -w4 -v t.txt | sort | uniq -c | sort -k1,1nr -k2 | head -3
sed 's/kilo/KILO/' t.txt > u.txt; cmp -l t.txt u.txt | wc -l
diff --label a --label b -u t.txt u.txt | head -12
diff t.txt u.txt | md5sum
"""),
    ("find_xargs", ["find", "xargs", "awk"], r"""
for d in $(seq 1 40); do mkdir -p "d$d/sub"; for f in $(seq 1 50); do echo "file $d $f" > "d$d/f$f.txt"; done; printf 'int x%d;\n' "$d" > "d$d/sub/x.c"; done
find . -type f -name '*.txt' | sort | xargs -n 100 cat | md5sum
find . -type f | sort | xargs -P2 -n 50 md5sum | sort | md5sum
find . -type d | wc -l
find . -name '*.c' -exec cat {} + | sort | md5sum
find . -type f -exec grep -l 'file 7 ' {} + | sort | head -3
find . -type f -print0 | xargs -0 -P2 -n 20 sh -c 'wc -c "$@" | tail -1' sh | awk '{s+=$1} END{print s}'
"""),
    ("tar_gzip", ["tar", "gzip", "awk"], r"""
gen_tree 20 40000
tar cf - src | gzip -6 > a.tgz
mkdir out && tar xzf a.tgz -C out && diff -r src out/src && echo same
find out -type f | sort | xargs sha256sum | sha256sum
gen_text 400000 > big.txt
gzip -9 -n -c big.txt | sha256sum
gzip -1 -n -c big.txt | gzip -dc | cmp - big.txt && echo gzip round trip
zcat a.tgz | tar tf - | sort | md5sum
"""),
    ("tar_xz", ["tar", "xz", "awk"], r"""
gen_tree 10 40000
tar cf - src | xz -T2 -3 > a.txz
mkdir out && tar xJf a.txz -C out && diff -r src out/src && echo same
gen_text 300000 > big.txt
xz -T2 -6 --block-size=2MiB -c big.txt | sha256sum
xz -T1 -2 -c big.txt | xz -dc | cmp - big.txt && echo xz round trip
"""),
    ("bzip2", ["bzip2", "tar", "awk"], r"""
gen_text 300000 > big.txt
bzip2 -9 -c big.txt | sha256sum
bzip2 -1 -c big.txt | bzip2 -dc | cmp - big.txt && echo bzip2 round trip
gen_tree 5 30000
tar cjf a.tbz src && mkdir out && tar xjf a.tbz -C out && diff -r src out/src && echo same
"""),
    ("zstd_lz4", ["zstd", "lz4", "awk"], r"""
gen_text 400000 > big.txt
zstd -q -T2 -9 -c big.txt | sha256sum
zstd -q -c big.txt | zstd -q -dc | cmp - big.txt && echo zstd round trip
lz4 -q -9 -c big.txt | lz4 -q -dc | cmp - big.txt && echo lz4 round trip
"""),
    ("py_cpu", ["python3"], r"""
cat > s.py <<'EOF'
def sieve(n):
    s = bytearray([1]) * (n + 1); s[0] = s[1] = 0
    for i in range(2, int(n ** 0.5) + 1):
        if s[i]:
            s[i * i::i] = bytearray(len(range(i * i, n + 1, i)))
    return s
s = sieve(3_000_000)
print(sum(s), max(i for i in range(len(s)) if s[i]))
acc = 0
for i in range(1_500_000):
    acc = (acc * 31 + i * i) % 1_000_000_007
print(acc)
print(sum(x * x for x in range(1_000_000)) % 97, sorted(str(i) for i in range(200_000))[-3:])
EOF
python3 s.py
"""),
    ("py_json", ["python3"], r"""
cat > s.py <<'EOF'
import json, hashlib, random
r = random.Random(5)
data = [{"id": i, "name": "n%d" % r.randrange(10**6), "tags": [r.choice("abcdef") * r.randrange(1, 6) for _ in range(5)],
         "v": r.random(), "sub": {"x": list(range(i % 17)), "y": None, "z": i % 3 == 0}} for i in range(120_000)]
s = json.dumps(data, sort_keys=True)
print(len(s), hashlib.sha256(s.encode()).hexdigest())
back = json.loads(s)
print(back == data, sum(d["id"] for d in back))
s2 = json.dumps(back, indent=2, sort_keys=True)
print(hashlib.md5(s2.encode()).hexdigest())
EOF
python3 s.py
"""),
    ("py_re", ["python3"], r"""
cat > s.py <<'EOF'
import re, random, hashlib
r = random.Random(3)
words = "alpha beta gamma delta echo foxtrot golf hotel india juliet kilo lima".split()
text = "\n".join(" ".join(r.choice(words) for _ in range(r.randrange(3, 12))) + " %d" % r.randrange(100000) for _ in range(150_000))
print(len(re.findall(r"\b(\w+) \1\b", text)))
print(len(re.findall(r"^a\w+ .*?(\d+)$", text, re.M)))
out = re.sub(r"(\w+)a\b", lambda m: m.group(1).upper(), text)
print(hashlib.md5(out.encode()).hexdigest())
print(sorted(re.split(r"\s+(?:golf|hotel)\s+", text[:200000]))[:2])
pat = re.compile(r"(?P<w>[a-e]\w*) (?P<n>\d{3,})")
print(sum(int(m.group("n")) for m in pat.finditer(text)) % 1000003)
EOF
python3 s.py
"""),
    ("py_threads", ["python3"], r"""
cat > s.py <<'EOF'
import threading, hashlib, zlib
res = {}
def work(k):
    h = hashlib.sha256()
    blob = bytes(range(256)) * 4096 * (k + 1)
    for i in range(30):
        h.update(blob)                       # releases the GIL
        h.update(zlib.compress(blob[:65536], 6))
    acc = 0
    for i in range(300_000):                 # holds it
        acc = (acc * 7 + i) % 999983
    res[k] = (h.hexdigest()[:16], acc)
ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in ts: t.start()
for t in ts: t.join()
for k in sorted(res): print(k, *res[k])
ev = threading.Event(); cond = threading.Condition(); box = []
def prod():
    for i in range(20000):
        with cond:
            box.append(i); cond.notify()
    ev.set()
def cons():
    got = 0
    while got < 20000:
        with cond:
            while not box: cond.wait()
            got += len(box); box.clear()
    print("consumed", got)
a = threading.Thread(target=prod); b = threading.Thread(target=cons); b.start(); a.start(); a.join(); b.join()
EOF
python3 s.py
"""),
    ("py_mp_fork", ["python3"], r"""
cat > s.py <<'EOF'
import multiprocessing as mp, hashlib
def f(n):
    acc = 0
    for i in range(n * 2000):
        acc = (acc * 13 + i) % 1000003
    return acc
def g(x):
    return hashlib.sha1(str(x).encode() * 1000).hexdigest()[:8]
if __name__ == "__main__":
    with mp.Pool(2) as p:
        print(sum(p.map(f, range(200))))
        print(sorted(p.imap_unordered(g, range(2000)))[:3])
    q = mp.Queue(); ps = [mp.Process(target=lambda i=i: q.put(f(i + 50)), args=()) for i in range(4)]
    for p in ps: p.start()
    got = sorted(q.get() for _ in ps)
    for p in ps: p.join()
    print(got, [p.exitcode for p in ps])
EOF
python3 s.py
"""),
    ("py_mp_spawn", ["python3"], r"""
cat > s.py <<'EOF'
import multiprocessing as mp
def f(n):
    acc = 0
    for i in range(n * 3000):
        acc = (acc * 13 + i) % 1000003
    return acc
if __name__ == "__main__":
    for method in ("spawn", "forkserver"):
        ctx = mp.get_context(method)
        with ctx.Pool(2) as p:
            print(method, sum(p.map(f, range(120))))
        pr = ctx.Process(target=f, args=(30,)); pr.start(); pr.join(); print(method, "exit", pr.exitcode)
EOF
python3 s.py
"""),
    ("py_subprocess", ["python3", "sort", "gzip"], r"""
cat > s.py <<'EOF'
import subprocess, hashlib, os, sys
outs = [subprocess.run(["/bin/echo", str(i)], capture_output=True, text=True).stdout for i in range(150)]
print(hashlib.md5("".join(outs).encode()).hexdigest())
data = "".join("%08d line\n" % ((i * 7919) % 1000003) for i in range(400_000)).encode()
p = subprocess.Popen(["sort"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
out, _ = p.communicate(data); print(p.returncode, hashlib.md5(out).hexdigest())
p = subprocess.Popen("gzip -n -c | gzip -dc | wc -l", shell=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
print(p.communicate(data)[0].decode().strip())
print(subprocess.run([sys.executable, "-c", "import sys; sys.exit(7)"]).returncode)
print(subprocess.run("exit 3", shell=True).returncode)
pid = os.posix_spawn("/bin/sh", ["sh", "-c", "exit 5"], os.environ); print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
sys.stdout.flush()
pid = os.fork()
if pid == 0:
    os.execv("/bin/sh", ["sh", "-c", "echo from exec"])
print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
try:
    subprocess.run(["sleep", "5"], timeout=0.2)
except subprocess.TimeoutExpired:
    print("timeout ok")
EOF
python3 s.py
"""),
    ("py_imports", ["python3"], r"""
cat > s.py <<'EOF'
import importlib, sys
mods = ["ssl", "sqlite3", "ctypes", "decimal", "hashlib", "zlib", "lzma", "bz2", "curses", "readline",
        "_json", "array", "math", "cmath", "select", "mmap", "socket", "unicodedata", "_csv", "_struct",
        "xml.etree.ElementTree", "pyexpat", "_pickle", "_datetime", "_random", "_bisect", "_heapq",
        "binascii", "_posixsubprocess", "fcntl", "termios", "resource", "grp", "_asyncio", "_queue",
        "_multiprocessing", "_statistics", "_zoneinfo", "_uuid", "_ctypes", "_elementtree", "_lsprof",
        "_opcode", "_sha3", "_blake2", "audioop", "_contextvars", "asyncio", "email.mime.text", "zoneinfo",
        "_dbm", "_gdbm", "_crypt", "nis", "spwd", "ossaudiodev", "_tkinter", "_decimal", "_hashlib"]
ok = []
for m in mods:
    try:
        importlib.import_module(m); ok.append(m)
    except ImportError as e:
        ok.append(m + "!")
print(" ".join(ok))
import ssl, sqlite3, decimal, hashlib, zlib, lzma, bz2, ctypes, ctypes.util, unicodedata, xml.etree.ElementTree as ET
decimal.getcontext().prec = 300
print(str(decimal.Decimal(2).sqrt())[-12:])
db = sqlite3.connect(":memory:"); db.execute("create table t(a,b)")
db.executemany("insert into t values(?,?)", ((i, i % 7) for i in range(100000)))
print(db.execute("select b, count(*), sum(a) from t group by b order by b").fetchall()[:2])
blob = b"witch " * 200000
print(len(zlib.compress(blob)), len(lzma.compress(blob)), len(bz2.compress(blob)), hashlib.sha3_256(blob).hexdigest()[:12])
print(ssl.create_default_context().verify_mode, ssl.OPENSSL_VERSION.split()[0])
print(unicodedata.name("\u00e9"), ET.fromstring("<a><b x='1'/><b x='2'/></a>").findall("b")[1].get("x"))
libc = ctypes.CDLL(None); print(libc.strlen(b"hello"))
EOF
python3 s.py
"""),
    ("py_ctypes", ["python3"], r"""
cat > s.py <<'EOF'
import ctypes, threading, random
libc = ctypes.CDLL("libc.so.6")
CMP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
calls = [0]
def cmp(a, b):
    calls[0] += 1
    return (a[0] > b[0]) - (a[0] < b[0])
r = random.Random(9); n = 60000
arr = (ctypes.c_int * n)(*[r.randrange(10**6) for _ in range(n)])
libc.qsort(arr, n, ctypes.sizeof(ctypes.c_int), CMP(cmp))
print(all(arr[i] <= arr[i + 1] for i in range(n - 1)), calls[0] > n)
names = ["libz.so.1", "libm.so.6", "libbz2.so.1.0", "liblzma.so.5", "libexpat.so.1", "libffi.so.8", "libuuid.so.1", "libcrypt.so.1", "libsqlite3.so.0", "libcrypto.so.3"]
got = {}
def load(k):
    for i in range(200):
        nm = names[(i + k) % len(names)]
        try:
            ctypes.CDLL(nm); got[nm] = 1
        except OSError:
            got[nm] = 0
ts = [threading.Thread(target=load, args=(k,)) for k in range(3)]
for t in ts: t.start()
for t in ts: t.join()
print(sorted(got.items()))
z = ctypes.CDLL("libz.so.1"); z.crc32.restype = ctypes.c_ulong
buf = b"abc" * 100000
print(z.crc32(0, buf, len(buf)))
m = ctypes.CDLL("libm.so.6"); m.cos.restype = ctypes.c_double; m.cos.argtypes = [ctypes.c_double]
print(round(sum(m.cos(i / 1000) for i in range(200000)), 6))
EOF
python3 s.py
"""),
    ("py_signals", ["python3"], r"""
cat > s.py <<'EOF'
import signal, os, time, threading, select
counts = {}
def h(sig, frm):
    counts[sig] = counts.get(sig, 0) + 1
for s in (signal.SIGALRM, signal.SIGVTALRM, signal.SIGPROF, signal.SIGUSR1):
    signal.signal(s, h)
for which, sig in ((signal.ITIMER_REAL, signal.SIGALRM), (signal.ITIMER_VIRTUAL, signal.SIGVTALRM),
                   (signal.ITIMER_PROF, signal.SIGPROF)):
    signal.setitimer(which, 0.001, 0.001)
    x = 0
    while counts.get(sig, 0) < 300:
        x += 1
    signal.setitimer(which, 0)
    print(signal.Signals(sig).name, "reached 300")
for i in range(2000):
    os.kill(os.getpid(), signal.SIGUSR1)
print("usr1 handled:", counts.get(signal.SIGUSR1, 0) > 0)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})
os.kill(os.getpid(), signal.SIGUSR2)
print("sigwait:", signal.Signals(signal.sigwait({signal.SIGUSR2})).name)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR2})
signal.setitimer(signal.ITIMER_REAL, 0.002, 0.002)
t0 = counts.get(signal.SIGALRM, 0)
time.sleep(0.3)          # PEP 475: EINTR retried
r, w = os.pipe(); select.select([r], [], [], 0.2)
signal.setitimer(signal.ITIMER_REAL, 0)
print("sleep interrupted and resumed:", counts[signal.SIGALRM] > t0)
def spin():
    x = 0
    for i in range(2_000_000): x += i
signal.setitimer(signal.ITIMER_PROF, 0.001, 0.001)
ts = [threading.Thread(target=spin) for _ in range(3)]
for t in ts: t.start()
for t in ts: t.join()
signal.setitimer(signal.ITIMER_PROF, 0)
print("threads with SIGPROF done")
EOF
python3 s.py
"""),
    ("perl_regex", ["perl"], r"""
perl -e '
srand(11); my @w = qw(alpha beta gamma delta echo foxtrot golf hotel india juliet kilo lima);
my @lines = map { join " ", map { $w[int rand @w] } 1 .. 3 + int rand 9 } 1 .. 200000;
my $text = join "\n", @lines;
my $n = () = $text =~ /\b(\w+) \1\b/g; print "dups $n\n";
(my $t2 = $text) =~ s/(\w+)a\b/\U$1/g; print length($t2), "\n";
my %c; $c{$_}++ for split /\s+/, $text; print join(",", map { "$_=$c{$_}" } sort keys %c), "\n";
my $m = grep { /^(?:g\w+) .*(?:a|o)$/ } @lines; print "match $m\n";
(my $t3 = $text) =~ tr/a-m/n-z/; print substr($t3, 0, 40), "\n";
my $e = 0; $text =~ s/(\d*)(\w+)/$e += length $2; $2/ge; print "e $e\n";
'
"""),
    ("perl_hash", ["perl"], r"""
perl -e '
my %h; for my $i (1 .. 600000) { $h{"k" . ($i * 7919 % 1000003)} += $i; }
my $s = 0; $s += $h{$_} for keys %h; print scalar(keys %h), " $s\n";
delete $h{"k" . $_} for 1 .. 300000; print scalar(keys %h), "\n";
my %g; for my $k (keys %h) { push @{ $g{ length $k } }, $h{$k} } print join(" ", map { "$_:" . scalar @{ $g{$_} } } sort { $a <=> $b } keys %g), "\n";
my @sorted = (sort { $h{$a} <=> $h{$b} or $a cmp $b } keys %h)[0 .. 4]; print "@sorted\n";
my %nest; $nest{$_ % 100}{$_ % 7}++ for 1 .. 500000; print scalar(keys %nest), " ", $nest{3}{4}, "\n";
'
"""),
    ("perl_xs", ["perl"], r"""
perl -e '
use POSIX qw(floor strftime); use Storable qw(dclone freeze thaw); use Digest::MD5 qw(md5_hex);
use Digest::SHA qw(sha256_hex); use List::Util qw(sum max shuffle); use Data::Dumper; use Encode qw(encode decode);
use Socket; use Time::HiRes; use Fcntl qw(:flock); use Compress::Zlib; use IO::Compress::Gzip qw(gzip);
use File::Temp; use Scalar::Util qw(reftype); use MIME::Base64; use Sys::Hostname; use IPC::Open3; use Math::BigInt;
$Data::Dumper::Sortkeys = 1; $Storable::canonical = 1; $Data::Dumper::Indent = 1;
my $d = { map { ("k$_" => [ $_, { x => $_ * 2 } ]) } 1 .. 20000 };
my $c = dclone($d); my $f = freeze($c); my $t = thaw($f);
print md5_hex(Dumper($t)), " ", sha256_hex($f) eq sha256_hex(freeze($t)) ? "same" : "diff", "\n";
print floor(7.9), " ", sum(1 .. 1000), " ", max(3, 9, 2), "\n";
my $z = compress("witch " x 100000); print length($z), " ", length(uncompress($z)), "\n";
print encode_base64(encode("UTF-8", decode("UTF-8", "\xc3\xa9t\xc3\xa9")));
print Math::BigInt->new(2)->bpow(500)->bstr() % 1000003, "\n";
print inet_ntoa(inet_aton("127.0.0.1")), " ", reftype($d), "\n";
'
"""),
    ("perl_threads_fork", ["perl"], r"""
perl -e '
use threads; use threads::shared; use Thread::Queue;
my $total :shared = 0;
my @t = map { my $k = $_; threads->create(sub { my $a = 0; $a = ($a * 31 + $_) % 1000003 for 1 .. 400000 + $k; { lock $total; $total += $a } return $a }) } 1 .. 4;
my @r = map { $_->join } @t; print "@r $total\n";
my $q = Thread::Queue->new; my $c = threads->create(sub { my $s = 0; while (defined(my $x = $q->dequeue)) { $s += $x } $s });
$q->enqueue($_) for 1 .. 20000; $q->end; print $c->join, "\n";
my @kids; for my $i (1 .. 4) { my $p = fork; if (!$p) { my $a = 0; $a += $_ % 7 for 1 .. 200000 * $i; exit($a % 50) } push @kids, $p }
my @st = map { waitpid($_, 0); $? >> 8 } @kids; print "@st\n";
'
"""),
    ("perl_alarm", ["perl"], r"""
perl -e '
use Time::HiRes qw(ualarm setitimer ITIMER_VIRTUAL ITIMER_PROF ITIMER_REAL);
my %n; $SIG{ALRM} = sub { $n{ALRM}++ }; $SIG{VTALRM} = sub { $n{VTALRM}++ }; $SIG{PROF} = sub { $n{PROF}++ };
my $x = 0;
ualarm(1000, 1000); $x++ while ($n{ALRM} // 0) < 300; ualarm(0); print "ALRM ok\n";
setitimer(ITIMER_VIRTUAL, 0.001, 0.001); $x++ while ($n{VTALRM} // 0) < 300; setitimer(ITIMER_VIRTUAL, 0); print "VTALRM ok\n";
setitimer(ITIMER_PROF, 0.001, 0.001); $x++ while ($n{PROF} // 0) < 300; setitimer(ITIMER_PROF, 0); print "PROF ok\n";
my $r = eval { local $SIG{ALRM} = sub { die "timeout\n" }; alarm 1; my $y = 0; while (1) { $y++ } }; print "caught: $@";
$SIG{ALRM} = sub { }; alarm 1; my $slept = sleep 4; print "sleep cut short: ", ($slept < 4 ? 1 : 0), "\n";
'
"""),
    ("gcc_run", ["gcc"], r"""
cat > p.c <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define N 300
static double a[N][N], b[N][N], c[N][N];
struct e { char k[16]; int v; struct e *next; };
int main(void) {
	for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { a[i][j] = (i * 7 + j) % 13; b[i][j] = (i + j * 3) % 11; }
	for (int i = 0; i < N; i++) for (int k = 0; k < N; k++) for (int j = 0; j < N; j++) c[i][j] += a[i][k] * b[k][j];
	double s = 0; for (int i = 0; i < N; i++) s += c[i][i];
	printf("%.0f\n", s);
	enum { B = 65536 }; struct e **tab = calloc(B, sizeof *tab); long hits = 0;
	for (int r = 0; r < 3; r++) for (long i = 0; i < 400000; i++) {
		char k[16]; snprintf(k, sizeof k, "k%ld", (i * 7919) % 200003);
		unsigned h = 5381; for (char *p = k; *p; p++) h = h * 33 + *p; h %= B;
		struct e *x = tab[h]; while (x && strcmp(x->k, k)) x = x->next;
		if (x) { x->v++; hits++; } else { x = malloc(sizeof *x); strcpy(x->k, k); x->v = 1; x->next = tab[h]; tab[h] = x; }
	}
	printf("%ld\n", hits);
	return 0;
}
EOF
gcc -O2 -Wall -o p p.c && ./p
gcc -O0 -g -o p0 p.c && ./p0
gcc -O2 -fsyntax-only -x c - <<< 'int main(void) { return 0; }' && echo syntax ok
echo 'int f(void) { return undefined_thing; }' | gcc -x c -c -o /dev/null - 2>&1 | grep -c error
"""),
    ("make_j2", ["gcc", "make"], r"""
for i in $(seq 1 24); do
  printf '#include <stdio.h>\nlong f%d(long x) { long s = 0; for (long i = 0; i < x; i++) s += (i * %d) %% 7; return s; }\n' "$i" "$i" > "f$i.c"
done
{ echo '#include <stdio.h>'; for i in $(seq 1 24); do echo "long f$i(long);"; done
  echo 'int main(void) { long s = 0;'; for i in $(seq 1 24); do echo "s += f$i(100000);"; done
  echo 'printf("%ld\n", s); return 0; }'; } > main.c
{ echo 'OBJS = main.o '"$(seq -f 'f%g.o' -s ' ' 1 24)"
  printf 'prog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n%%.o: %%.c\n\t$(CC) -O2 -c -o $@ $<\nclean:\n\trm -f prog $(OBJS)\n'; } > Makefile
make -s -j2 && ./prog
make -s clean && make -s -j2 CC='gcc -g' && ./prog
make -s -j2 nothing 2>&1 | sed 's/^make: //'; echo "status $?"
"""),
    ("gcc_crash", ["gcc"], r"""
cat > c.c <<'EOF'
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static sigjmp_buf jb; static volatile int faults;
static void on_segv(int s) { (void)s; faults++; siglongjmp(jb, 1); }
static volatile long sink;
static void spin(long n) { for (long i = 0; i < n; i++) sink += i % 7; }
static void *crasher(void *a) { spin(20000000); *(volatile int *)a = 1; return 0; }
static void *exiter(void *a) { (void)a; spin(10000000); exit(3); }
int main(int argc, char **argv) {
	const char *m = argc > 1 ? argv[1] : "recover";
	if (!strcmp(m, "recover")) {
		struct sigaction sa; memset(&sa, 0, sizeof sa); sa.sa_handler = on_segv; sa.sa_flags = SA_NODEFER; sigaction(SIGSEGV, &sa, 0);
		for (int i = 0; i < 3000; i++) { if (!sigsetjmp(jb, 1)) { spin(2000); *(volatile int *)0 = i; } }
		printf("faults %d\n", faults); return 0;
	}
	pthread_t t;
	if (!strcmp(m, "thread")) { pthread_create(&t, 0, crasher, 0); pthread_join(t, 0); }
	if (!strcmp(m, "exit")) { pthread_create(&t, 0, exiter, 0); spin(1L << 40); }
	if (!strcmp(m, "abort")) { spin(20000000); abort(); }
	if (!strcmp(m, "term")) { spin(20000000); raise(SIGTERM); }
	if (!strcmp(m, "fpe")) { spin(20000000); volatile int z = 0; printf("%d\n", 100 / z); }
	return 9;
}
EOF
gcc -O1 -pthread -o c c.c || exit 1
for m in recover thread exit abort term fpe; do bash -c "./c $m; exit \$?" 2>/dev/null; echo "$m rc=$?"; done
"""),
    ("gcc_dlopen", ["gcc"], r"""
cat > plug.c <<'EOF'
#include <pthread.h>
extern pthread_mutex_t registry_lock; extern int registry_count; extern volatile long sink;
__attribute__((constructor)) static void reg(void) {   /* runs under the loader's lock */
	pthread_mutex_lock(&registry_lock); registry_count++; pthread_mutex_unlock(&registry_lock);
	for (long i = 0; i < 2000000; i++) sink += i % 3;   /* and is slow */
}
int plug_fn(int x) { return x * 2; }
EOF
cat > d.c <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER; int registry_count; volatile long sink;
static volatile int done;
static const char *libs[] = {"libz.so.1", "libbz2.so.1.0", "liblzma.so.5", "libexpat.so.1", "libffi.so.8", "libuuid.so.1", "libcrypt.so.1", "libgmp.so.10"};
static void *holder(void *a) {   /* holds the program's lock for long CPU spans */
	(void)a;
	while (!done) { pthread_mutex_lock(&registry_lock); for (long i = 0; i < 300000; i++) sink += i % 5; pthread_mutex_unlock(&registry_lock); }
	return 0;
}
static void *loader(void *a) {
	long k = (long)a; int fails = 0;
	for (int i = 0; i < 1500; i++) { void *h = dlopen(libs[(i + k) % 8], RTLD_NOW | RTLD_LOCAL); if (!h) fails++; else dlclose(h); }
	return (void *)(long)fails;
}
static int cb(struct dl_phdr_info *info, size_t size, void *data) {
	(void)info; (void)size; for (long i = 0; i < 20000; i++) sink += i % 3; ++*(int *)data; return 0;
}
static void *iterator(void *a) { (void)a; int n = 0; for (int i = 0; i < 300; i++) dl_iterate_phdr(cb, &n); return (void *)(long)(n > 0); }
int main(void) {
	pthread_t h, l[2], it; void *r; long fails = 0;
	pthread_create(&h, 0, holder, 0);
	for (int i = 0; i < 10; i++) {
		void *p = dlopen("./libplug.so", RTLD_NOW);
		if (!p) { printf("dlopen failed\n"); return 1; }
		int (*fn)(int) = (int (*)(int))dlsym(p, "plug_fn"); if (fn(i) != 2 * i) return 2;
		dlclose(p);
	}
	printf("plugin registered %d times\n", registry_count);
	pthread_create(&l[0], 0, loader, (void *)0); pthread_create(&l[1], 0, loader, (void *)3); pthread_create(&it, 0, iterator, 0);
	for (int i = 0; i < 2; i++) { pthread_join(l[i], &r); fails += (long)r; }
	pthread_join(it, &r); done = 1; pthread_join(h, 0);
	printf("load failures %ld, iterated %ld\n", fails, (long)r);
	return 0;
}
EOF
gcc -O1 -shared -fPIC -o libplug.so plug.c && gcc -O1 -pthread -rdynamic -o d d.c -ldl && ./d
"""),
    ("gcc_ctor_thread", ["gcc"], r"""
cat > lib.c <<'EOF'
#include <pthread.h>
static volatile long sink;
static void *work(void *a) { (void)a; for (long i = 0; i < 60000000; i++) sink += i % 3; return 0; }
/* a constructor that runs its set-up on a thread and waits for it, under the loader's lock */
__attribute__((constructor)) static void init(void) { pthread_t t; pthread_create(&t, 0, work, 0); pthread_join(t, 0); }
int lib_fn(void) { return 42; }
EOF
cat > m.c <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(void) {
	void *h = dlopen("./libinit.so", RTLD_NOW);
	if (!h) { printf("dlopen failed\n"); return 1; }
	printf("%d\n", ((int (*)(void))dlsym(h, "lib_fn"))());
	return 0;
}
EOF
gcc -O1 -shared -fPIC -pthread -o libinit.so lib.c && gcc -O1 -o m m.c -ldl && ./m
"""),
    ("git", ["git"], r"""
export GIT_AUTHOR_NAME=Zoo GIT_AUTHOR_EMAIL=zoo@example.org GIT_COMMITTER_NAME=Zoo GIT_COMMITTER_EMAIL=zoo@example.org
export GIT_AUTHOR_DATE='2020-01-01T00:00:00Z' GIT_COMMITTER_DATE='2020-01-01T00:00:00Z' GIT_CONFIG_NOSYSTEM=1
git init -q -b main repo && cd repo || exit 1
for d in $(seq 1 20); do mkdir "d$d"; for f in $(seq 1 60); do echo "content $d $f $((d * f))" > "d$d/f$f.txt"; done; done
gen_text 100000 > big.txt
git add -A && git commit -q -m first && git rev-parse HEAD
for i in $(seq 1 15); do echo "change $i" >> "d$i/f1.txt"; sed -i "s/alpha/ALPHA$i/" big.txt; git commit -q -am "change $i"; done
git rev-parse HEAD
git log --oneline | wc -l
git log --stat --format=%s -3 | md5sum
git diff HEAD~5 --stat | tail -1
git gc -q --aggressive && git fsck --no-progress && echo fsck ok
git count-objects -v | grep -E '^(count|in-pack|packs)'
git grep -c ALPHA1 | head -3
git clone -q . ../clone && git -C ../clone rev-parse HEAD
"""),
    ("sqlite3", ["sqlite3"], r"""
sqlite3 -batch db.sqlite <<'EOF'
create table t(id integer primary key, a int, b text);
with recursive c(x) as (select 1 union all select x + 1 from c where x < 300000)
insert into t(a, b) select (x * 7919) % 100003, 'v' || (x % 977) from c;
create index ta on t(a);
select count(*), sum(a), count(distinct b) from t;
select b, count(*), avg(a) from t group by b order by count(*) desc, b limit 3;
select count(*) from t x join t y on x.a = y.a + 1 where x.id < 20000;
select id, a, sum(a) over (order by id rows between 2 preceding and current row) from t where id % 50000 = 0;
update t set b = upper(b) where a % 3 = 0; select count(*) from t where b glob 'V*';
delete from t where a % 5 = 0; vacuum; select count(*) from t;
pragma integrity_check;
EOF
"""),
    ("bc", ["bc"], r"""
echo 'scale=1200; 4*a(1)' | bc -l | md5sum
echo 'define f(n) { if (n < 2) return n; return f(n-1) + f(n-2); } f(22)' | bc
echo '2^20000' | bc | md5sum
"""),
    ("bash_spawn", [], r"""
for i in $(seq 1 300); do /bin/true; x=$(expr "$i" \* 3); echo "$x"; done | md5sum
for i in $(seq 1 150); do echo "$i" | cat | tr 1 x > /dev/null; done
for i in $(seq 1 100); do sh -c 'exit $(( $1 % 4 ))' sh "$i"; echo -n "$?"; done; echo
seq 1 200 | xargs -P2 -n 1 sh -c 'echo $(( $1 * $1 ))' sh | sort -n | md5sum
( for i in $(seq 1 20); do ( sleep 0.01; echo "bg $i" ) & done; wait ) | sort | md5sum
"""),
    ("sh_pipeline", ["awk", "sed"], r"""
gen_text 200000 > t.txt
sh -c 'cat t.txt | cat | tr a-z A-Z | cat | tr A-Z a-z | sed s/a/b/g | cat | awk "{print NF, \$0}" | cut -c1-40 | sort | uniq | cat | tr -d 0-9 | sed -e "s/^ //" | sort | uniq -c | sort -k1,1nr -k2 | head -c 2000 | md5sum'
sh -c 'i=0; while [ $i -lt 20 ]; do printf "%s\n" $i; i=$((i+1)); done | while read n; do echo $n | sed "s/^/x/" ; done | tr "\n" " "'; echo
dash -c 'x=$(seq 1 2000 | paste -sd+ | bc 2>/dev/null || echo 2001000); echo $x' 2>/dev/null || echo nodash
"""),
]


# Cases that end in a few seconds natively wait less than --timeout for a hang.
CASE_TIMEOUT = {"gcc_dlopen": 40, "gcc_ctor_thread": 30, "gcc_crash": 60, "py_signals": 60, "perl_alarm": 60}


def clean_env(work):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("WITCH_", "PYENV", "PYTHON", "GIT_")) and k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    env.update(PATH=PATH, LC_ALL="C", LANG="C", TZ="UTC", HOME=work, TMPDIR=work, TERM="dumb")
    return env


def which(tool):
    return shutil.which(tool, path=PATH)


def session_pids(sid):
    r = subprocess.run(["pgrep", "-s", str(sid)], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


def tree_stacks(sid):
    """gdb's stacks of every thread of every process of session sid."""
    gdb = which("gdb")
    out = []
    for pid in session_pids(sid):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")[:160]
        except OSError:
            continue
        out.append(f"--- pid {pid}: {cmd}")
        if not gdb:
            continue
        try:
            r = subprocess.run([gdb, "-p", str(pid), "-batch", "-ex", "thread apply all bt 20"],
                               capture_output=True, text=True, timeout=90,
                               env={"PATH": PATH, "HOME": os.environ.get("HOME", "/")})
            out += [l for l in r.stdout.splitlines() if l.startswith(("Thread", "#"))]
        except subprocess.SubprocessError as e:
            out.append(f"(gdb failed: {e})")
    return "\n".join(out)


def kill_session(sid):
    for _ in range(3):
        pids = session_pids(sid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)


class Result:
    def __init__(self, rc, out, err, timed_out=False, stacks=""):
        self.rc, self.out, self.err, self.timed_out, self.stacks = rc, out, err, timed_out, stacks


def run_once(cmd, tmp, env, timeout):
    """One run of cmd in tmp/work (made fresh)."""
    work = os.path.join(tmp, "work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(env, HOME=work, TMPDIR=work)
    p = subprocess.Popen(["bash", "-c", PRELUDE + cmd], cwd=work, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        kill_session(p.pid)
        return Result(p.returncode, out, err)
    except subprocess.TimeoutExpired:
        stacks = tree_stacks(p.pid)
        kill_session(p.pid)
        try:
            out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            out, err = b"", b""
        return Result(p.returncode, out, err, True, stacks)


def first_diff(a, b, what):
    al = a.decode(errors="replace").splitlines()
    bl = b.decode(errors="replace").splitlines()
    d = [l for l in difflib.unified_diff(al, bl, "native", "profiled", n=0, lineterm="")
         if not l.startswith(("---", "+++", "@@"))]
    shown = "; ".join(l[:160] for l in d[:4])
    more = f" (+{len(d) - 4} more)" if len(d) > 4 else ""
    return f"{what} differs: {shown}{more}"


def compare(nat, prof):
    probs = []
    if prof.timed_out:
        probs.append("timed out")
    if nat.rc != prof.rc:
        probs.append(f"exit status {nat.rc} native, {prof.rc} profiled")
    witch_lines = [l for l in prof.err.decode(errors="replace").splitlines() if "witch:" in l]
    if witch_lines:
        probs.append("stderr has witch lines: " + "; ".join(l[:200] for l in witch_lines[:3]))
    if nat.out != prof.out:
        probs.append(first_diff(nat.out, prof.out, "stdout"))
    rest = b"\n".join(l for l in prof.err.split(b"\n") if b"witch:" not in l)
    if rest != nat.err:   # a difference besides the witch lines
        probs.append(first_diff(nat.err, rest, "stderr"))
    return probs


def load_failed(res):
    return b"cannot be preloaded" in res.err or b"libwitch.so" in res.err and b"ERROR: ld.so" in res.err


def check_profiles(witch, prof_dir):
    names = sorted(os.listdir(prof_dir)) if os.path.isdir(prof_dir) else []
    # p-PID.prof, and p-PID.prof.exec for an image that exec'd; p-PID.prof.tmp.PID is a
    # write that never finished (the profile of that process is lost)
    files = [os.path.join(prof_dir, f) for f in names if f.endswith((".prof", ".prof.exec"))]
    left = [f"{f} ({os.path.getsize(os.path.join(prof_dir, f))} bytes)" for f in names if ".tmp." in f]
    probs = [f"{len(left)} temporary profile(s) left, their writes cut short: " + ", ".join(left[:3])] \
        if left else []
    if not files:
        return probs + ["no profile written"], 0
    r = subprocess.run([witch, "report", "--json"] + files, capture_output=True, timeout=600)
    if r.returncode == 0:
        return probs, len(files)
    bad = []
    for f in files:
        r1 = subprocess.run([witch, "report", "--json", f], capture_output=True, timeout=120)
        if r1.returncode:
            bad.append(f"{os.path.basename(f)}: {r1.stderr.decode(errors='replace').strip()[:160]}")
    return probs + [f"witch report --json of {len(files)} profiles exited {r.returncode}: "
            + ("; ".join(bad[:3]) if bad else r.stderr.decode(errors="replace").strip()[:200])], len(files)


def keep_run(keep, case, label, res, tmp):
    d = os.path.join(keep, case, label)
    os.makedirs(d, exist_ok=True)
    for name, data in (("stdout", res.out), ("stderr", res.err),
                       ("status", f"{res.rc}\n".encode()), ("stacks", res.stacks.encode())):
        if data:
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
    prof = os.path.join(tmp, "prof")
    if os.path.isdir(prof):
        shutil.copytree(prof, os.path.join(d, "prof"), dirs_exist_ok=True)


def main(argv):
    ap = argparse.ArgumentParser(description="real programs behave the same under libwitch")
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--rates", default="2000,default")
    ap.add_argument("--clients", default="dead,silent,load")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--only", default="")
    ap.add_argument("--keep", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--env", default="",
                    help="K=V,... for the profiled runs, after the defaults (WITCH_WATCHPOINTS=0 "
                         "among them): e.g. WITCH_WATCHPOINTS=4 and a WITCH_PROBES saying "
                         "debug registers trap, to open breakpoints where they never fire")
    a = ap.parse_args(argv)
    build = os.path.abspath(a.build)
    lib, witch = os.path.join(build, "libwitch.so"), os.path.join(build, "witch")
    rates = [r for r in a.rates.split(",") if r]
    clients = [c for c in a.clients.split(",") if c]
    extra = dict(kv.split("=", 1) for kv in a.env.split(",") if kv)
    only = [n for n in a.only.split(",") if n]
    names = [c[0] for c in CASES]
    for n in only:
        if n not in names:
            sys.exit(f"zoo: no case {n}; cases: {' '.join(names)}")
    if not a.list and not (os.path.exists(lib) and os.path.exists(witch)):
        sys.exit(f"zoo: {lib} or {witch} missing")

    cases, skipped = [], []
    for name, tools, cmd in CASES:
        if only and name not in only:
            continue
        missing = [t for t in ["bash", "sort", "md5sum"] + tools if not which(t)]
        if missing:
            skipped.append(f"{name} (no {', '.join(missing)})")
        else:
            cases.append((name, cmd))
    if a.list:
        for name, cmd in cases:
            print(name)
        for s in skipped:
            print("skipped:", s)
        return 0
    print(f"zoo: {len(cases)} cases, {a.runs} round(s), clients {','.join(clients)}, rates {','.join(rates)}, "
          f"timeout {a.timeout:g} s; {lib}", flush=True)
    if skipped:
        print("zoo: skipped: " + "; ".join(skipped), flush=True)

    t_start = time.monotonic()
    failures, nruns, nprof, nprofiles, retries = [], 0, 0, 0, 0
    for name, cmd in cases:
        timeout = min(a.timeout, CASE_TIMEOUT.get(name, a.timeout))
        first_native = None
        case_fail = 0
        for run in range(1, a.runs + 1):
            tmp = tempfile.mkdtemp(prefix=f"witch-zoo-{name}.")
            try:
                nat = run_once(cmd, tmp, clean_env(tmp), timeout)
                nruns += 1
                if a.keep:
                    keep_run(a.keep, name, f"{run}-native", nat, tmp)
                if nat.timed_out:
                    failures.append(f"{name} native run {run}: timed out (the case is too long)")
                    case_fail += 1
                    print("FAIL " + failures[-1], flush=True)
                    continue
                if first_native is None:
                    first_native = nat
                elif (nat.rc, nat.out, nat.err) != (first_native.rc, first_native.out, first_native.err):
                    p = compare(first_native, nat)
                    failures.append(f"{name} native run {run}: not deterministic natively: " + "; ".join(p))
                    case_fail += 1
                    print("FAIL " + failures[-1], flush=True)
                for client in clients:
                    for rate in rates:
                        label = f"{run}-{client}-{rate}"
                        for attempt in range(2):
                            prof_dir = os.path.join(tmp, "prof")
                            shutil.rmtree(prof_dir, ignore_errors=True)
                            os.makedirs(prof_dir)
                            env = clean_env(tmp)
                            env.update(LD_PRELOAD=lib, WITCH_WATCHPOINTS="0", WITCH_CLIENT=client,
                                       WITCH_OUTPUT=os.path.join(prof_dir, "p-%p.prof"))
                            if rate != "default":
                                env["WITCH_RATE"] = rate
                            env.update(extra)
                            m0 = os.stat(lib).st_mtime_ns
                            res = run_once(cmd, tmp, env, timeout)
                            nruns += 1
                            nprof += 1
                            probs = compare(nat, res)
                            if not res.timed_out:
                                pp, n = check_profiles(witch, prof_dir)
                                probs += pp
                                nprofiles += n
                            changed = os.path.exists(lib) and os.stat(lib).st_mtime_ns != m0
                            if probs and attempt == 0 and (load_failed(res) or changed):
                                retries += 1
                                print(f"zoo: {name} {label}: library changed or failed to load; again",
                                      flush=True)
                                continue
                            break
                        if a.keep:
                            keep_run(a.keep, name, label, res, tmp)
                        if probs:
                            case_fail += 1
                            msg = f"{name} client={client} rate={rate} run {run}: " + "; ".join(probs)
                            if res.stacks:
                                msg += "\n  stacks:\n    " + res.stacks.replace("\n", "\n    ")
                            failures.append(msg)
                            print("FAIL " + msg, flush=True)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        print(f"zoo: {name}: {'ok' if not case_fail else f'{case_fail} failure(s)'} "
              f"({time.monotonic() - t_start:.0f} s so far)", flush=True)

    took = time.monotonic() - t_start
    print(f"\nzoo: {len(cases)} cases ({len(skipped)} skipped), {nruns} runs ({nprof} profiled), "
          f"{nprofiles} profiles read, {retries} retried, {len(failures)} failure(s); {took:.0f} s in all")
    for f in failures:
        print("  " + f.splitlines()[0][:300])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
