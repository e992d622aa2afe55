#!/usr/bin/env python3
"""script.py: a small CPU-bound Python workload for bench/real_programs.py.

Dict and list work (word counts, sorting, a sieve, a memoized recursion,
string building); deterministic output whatever PYTHONHASHSEED is (every
printed collection is sorted).  ~1-2 s with Debian's python3.11.

usage: script.py [SCALE]   (default 1; work grows linearly; 0.1 is a tenth)
"""
import sys


def lcg(seed):
    x = seed
    while True:
        x = (x * 6364136223846793005 + 1442695040888963407) & ((1 << 64) - 1)
        yield x >> 33


def words(n, seed):
    g = lcg(seed)
    syll = ["ka", "to", "ri", "ne", "su", "mo", "la", "pe", "chi", "wa", "zu", "bo"]
    out = []
    for _ in range(n):
        k = 1 + next(g) % 4
        out.append("".join(syll[next(g) % len(syll)] for _ in range(k)))
    return out


def word_counts(ws):
    counts = {}
    for w in ws:
        counts[w] = counts.get(w, 0) + 1
    bigrams = {}
    for a, b in zip(ws, ws[1:]):
        key = (a, b)
        bigrams[key] = bigrams.get(key, 0) + 1
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    topb = sorted(bigrams.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    return len(counts), top, len(bigrams), topb


def sieve(n):
    is_p = [True] * (n + 1)
    is_p[0] = is_p[1] = False
    for i in range(2, int(n ** 0.5) + 1):
        if is_p[i]:
            is_p[i * i::i] = [False] * len(range(i * i, n + 1, i))
    return [i for i, p in enumerate(is_p) if p]


def collatz_lengths(limit):
    memo = {1: 1}

    def length(n):
        path = []
        while n not in memo:
            path.append(n)
            n = n // 2 if n % 2 == 0 else 3 * n + 1
        k = memo[n]
        for m in reversed(path):
            k += 1
            memo[m] = k
        return k

    best = max(range(1, limit), key=length)
    return best, memo[best], len(memo)


def records(n, seed):
    g = lcg(seed)
    rows = [{"id": i, "group": next(g) % 97, "value": next(g) % 100000} for i in range(n)]
    rows.sort(key=lambda r: (r["group"], -r["value"], r["id"]))
    by_group = {}
    for r in rows:
        by_group.setdefault(r["group"], []).append(r["value"])
    summary = sorted((gk, len(v), sum(v) // len(v), max(v)) for gk, v in by_group.items())
    return summary[:3], summary[-1]


def text_build(n):
    parts = []
    for i in range(n):
        parts.append(f"{i:06d}:{i * i % 9973:04d}")
    s = ",".join(parts)
    return len(s), s.count("00"), hash_fnv(s)


def hash_fnv(s):
    h = 0xcbf29ce484222325
    for c in s.encode()[:200000]:
        h = ((h ^ c) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def main():
    scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    ws = words(int(300000 * scale), 1)
    print("words", word_counts(ws))
    ps = sieve(int(2000000 * scale))
    print("primes", len(ps), ps[-3:])
    print("collatz", collatz_lengths(int(200000 * scale)))
    print("records", records(int(150000 * scale), 7))
    print("text", text_build(int(200000 * scale)))


if __name__ == "__main__":
    main()
