#!/usr/bin/env python3
"""check_objects.py PREFIX: objects_cases' exact objects (derived in objects_cases.c).

Reads PREFIX.dead.json and checks, per row, the object named NAME (or NAME
followed by " ("): its kind, its size, its waste on the pairs <kill, kill>
(the pair's "objects") and its total waste, in bytes, exactly (None: not
checked); ABSENT names must not be listed.  Rows keep their line numbers so
a failure names its case.
"""
import inspect
import json
import sys


def here():
    return inspect.currentframe().f_back.f_lineno


# (line, name, kind, size, waste on <kill, kill>, total waste); a static
# object's name is exact (no " (MODULE)": the executable's own).
ROWS = [
    (here(), "heap from regrow", "heap", 8000, 8000, 8000),
    (here(), "gwords", "static", 512, 512, 512),
    (here(), "cwords", "static", 256, 256, 256),
    (here(), "tls", "tls", None, 256, None),
    (here(), "stack of frame_user", "stack", 0, 256, 256),
    (here(), "heap from remap_site", "heap", 32 << 12, 256, 256),
    # 1024 (its first stores, killed by its second) + 1016: its second
    # stores killed by long_lived's, or by free's tcache pointer in word 0;
    # word 1 free reads first (glibc's double-free check of the tcache key).
    (here(), "heap from short_lived", "heap", 1024, None, 2040),
    (here(), "heap from long_lived", "heap", 1024, 1024, 1024),
]
# (line, name): never accessed by the program.  (make_block is: glibc's
# calloc zeroes its block, and realloc copies it or grows it in place.)
ABSENT = [
    (here(), "heap from map_site"),
]


def named(obj, name):
    if obj["kind"] == "static":
        return obj["name"] == name
    return obj["name"] == name or obj["name"].startswith(name + " (")


def main():
    doc = json.load(open(f"{sys.argv[1]}.dead.json"))
    objects = doc.get("objects", [])
    kill_waste = {}
    for p in doc["pairs"]:
        if p["watch"][0]["function"] == "kill" and p["trap"][0]["function"] == "kill":
            for o in p.get("objects", []):
                kill_waste[o["name"]] = kill_waste.get(o["name"], 0) + o["waste"]
    failures = 0
    for line, name, kind, size, kw, total in ROWS:
        mine = [o for o in objects if named(o, name)]
        if len(mine) != 1:
            print(f"{__file__}:{line}: {name}: {len(mine)} objects, expected 1")
            failures += 1
            continue
        o = mine[0]
        got = (o["kind"], o["size"] if size is not None else None,
               kill_waste.get(o["name"], 0) if kw is not None else None,
               o["waste"] if total is not None else None)
        if got != (kind, size, kw, total):
            print(f"{__file__}:{line}: {name}: kind/size/kill waste/waste {got}, "
                  f"expected {(kind, size, kw, total)}")
            failures += 1
    # "functions": bytes by the watched leaf's function, all pairs summed.
    # kill's waste is every row's <kill, kill> waste (each word's first
    # store killed by its second), and as much use (the load after).
    kill = [f for f in doc.get("functions", []) if f["function"] == "kill"]
    want = sum(kw for _, _, _, _, kw, _ in ROWS if kw is not None)
    if len(kill) != 1 or (kill[0]["waste"], kill[0]["use"]) != (want, want):
        print(f"{__file__}:{here()}: functions: kill {kill}, expected waste and use {want}")
        failures += 1
    if doc.get("functions_total", 0) <= len(doc.get("functions", [])) and (
            sum(f["waste"] for f in doc.get("functions", [])) != doc["waste"]
            or sum(f["use"] for f in doc.get("functions", [])) != doc["use"]):
        print(f"{__file__}:{here()}: functions: their sums are not the totals")
        failures += 1
    for line, name in ABSENT:
        if any(named(o, name) for o in objects):
            print(f"{__file__}:{line}: {name}: listed, expected absent")
            failures += 1
    print(f"check_objects: {'FAIL' if failures else 'PASS'} {len(ROWS) + len(ABSENT) + 2 - failures}"
          f" of {len(ROWS) + len(ABSENT) + 2} checks")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
