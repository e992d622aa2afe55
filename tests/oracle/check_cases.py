#!/usr/bin/env python3
"""check_cases.py PREFIX: oracle_cases' exact answers (derived in oracle_cases.c).

Reads PREFIX.{dead,silent,load}.json and checks, per row, the pair whose
watch and trap leaf functions are the row's: waste, use and waste_approx
in bytes, exactly; rows keep their line numbers so a failure names its case.
"""
import inspect
import json
import sys

N = 1000


def here():
    return inspect.currentframe().f_back.f_lineno


# (line, client, watch leaf, trap leaf, waste, use, approx, trap caller or None)
ROWS = [
    (here(), "dead", "vec_dead", "vec_dead", (2 * N - 1) * 16, 0, 0, None),
    (here(), "load", "cas_fail", "cas_fail", (N - 1) * 8, 0, 0, None),
    (here(), "silent", "fp_nudge", "fp_nudge", (N - 1) * 64, 0, (N - 1) * 64, None),
    (here(), "silent", "counter_inc", "counter_inc", 0, (N - 1) * 8, 0, None),
    (here(), "dead", "after_jump", "after_jump", (2 * N - 1) * 8, 0, 0, "main"),
]
# (line, client, function): no pair may trap there
ABSENT = [
    (here(), "silent", "cas_fail"),
]


def physical(frames):
    """The frames of real functions: each case is its own noinline
    function, with intrinsics (vec_dead's) inlined into it."""
    return [f for f in frames if not f.get("inlined")]


def leaf(frames):
    frames = physical(frames)
    return frames[0]["function"] if frames else "??"


def main():
    prefix = sys.argv[1]
    docs = {c: json.load(open(f"{prefix}.{c}.json")) for c in ("dead", "silent", "load")}
    failures = 0
    for line, client, wfn, tfn, waste, use, approx, caller in ROWS:
        pairs = [p for p in docs[client]["pairs"]
                 if leaf(p["watch"]) == wfn and leaf(p["trap"]) == tfn]
        got = (sum(p["waste"] for p in pairs), sum(p["use"] for p in pairs),
               sum(p.get("waste_approx", 0) for p in pairs))
        if got != (waste, use, approx):
            print(f"{__file__}:{line}: {client} <{wfn}, {tfn}>: waste/use/approx {got}, "
                  f"expected {(waste, use, approx)}")
            failures += 1
        if caller and any(len(physical(p["trap"])) < 2
                          or physical(p["trap"])[1]["function"] != caller for p in pairs):
            print(f"{__file__}:{line}: {client} <{wfn}, {tfn}>: a trap context's caller "
                  f"is not {caller}: {[[f['function'] for f in p['trap'][:3]] for p in pairs]}")
            failures += 1
    for line, client, fn in ABSENT:
        bad = [p for p in docs[client]["pairs"] if leaf(p["trap"]) == fn]
        if bad:
            print(f"{__file__}:{line}: {client}: {len(bad)} pairs trap in {fn}")
            failures += 1
    # The sampled bytes by context: listed until all but 0.1% are
    # (tools/oracle/output.c), and "sampled_listed" their sum.
    line = here()
    for client, doc in docs.items():
        listed = sum(c["bytes"] for c in doc["sampled"])
        total = doc["sampled_total"]
        if doc.get("sampled_listed") != listed or listed < total - total // 1000:
            print(f"{__file__}:{line}: {client}: sampled list holds {listed} of {total} bytes, "
                  f"sampled_listed {doc.get('sampled_listed')}")
            failures += 1
    print(f"check_cases: {'PASS' if not failures else 'FAIL'} "
          f"{len(ROWS) + len(ABSENT) + 3 - failures} of {len(ROWS) + len(ABSENT) + 3} cases")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
