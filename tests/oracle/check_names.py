#!/usr/bin/env python3
"""check_names.py PREFIX SOURCE STDOUT: names_cases' contexts and objects are
named as `witch report` names libwitch's (tools/oracle/frames.h).

Lines are found by their "at:NAME" markers in SOURCE; STDOUT is the
program's output under the oracle ("ret 0x..." is where_ret's return
address).  Each row keeps its line number so a failure names its case.
"""
import inspect
import json
import os
import re
import sys


def here():
    return inspect.currentframe().f_back.f_lineno


def frames(ctx):
    return [(f["function"], os.path.basename(f["file"]), f["line"], bool(f.get("inlined")))
            for f in ctx]


def main():
    prefix, source, stdout = sys.argv[1:4]
    at = {}
    for i, line in enumerate(open(source), 1):
        m = re.search(r"/\* at:(\w+) \*/", line)
        if m:
            at[m.group(1)] = i
    ret = int(re.search(r"ret (0x[0-9a-f]+)", open(stdout).read()).group(1), 16)
    doc = json.load(open(f"{prefix}.dead.json"))
    ctxs = [frames(c["context"]) for c in doc["sampled"]]
    objects = {o["name"] for o in doc["objects"] if o.get("sampled")}
    heaps = sorted(o for o in objects if o.startswith("heap from"))
    src = os.path.basename(source)
    # The load client's sums by function: a PLT stub's GOT load is named
    # "SYMBOL@plt", as witch report names it (Valgrind has no name there).
    plt = {f["function"]: f["waste"]
           for f in json.load(open(f"{prefix}.load.json")).get("functions", [])
           if f["function"].endswith("@plt")}
    fill = [c for c in ctxs if c and c[0][0] == "fill_inl"]
    ret_ctx = [c for c in doc["sampled"] if c["context"][0]["function"] == "where_ret"]
    main_ret = [f for c in ret_ctx for f in c["context"] if f["function"] == "main"]
    below = {f[0] for c in ctxs for f in c}
    rows = [
        # an inlined call is a frame of its own, then its caller at the call
        (here(), "inlined frame", bool(fill) and fill[0][:2] == [
            ("fill_inl", src, at["store"], True), ("store_site", src, at["fill_call"], False)],
         fill[:1]),
        # a caller is shown at its call: the return address - 1
        (here(), "caller address", bool(main_ret) and int(main_ret[0]["address"], 16) == ret - 1
         and main_ret[0]["line"] == at["ret_call"],
         [(f["address"], f["line"], hex(ret)) for f in main_ret[:1]]),
        # a heap block by its innermost frame, an inlined allocation helper's
        (here(), "inlined allocator", f"heap from alloc_inl ({src}:{at['alloc']})" in objects,
         heaps),
        (here(), "not the physical caller", not any(o.startswith("heap from make_") for o in objects),
         heaps),
        # a block the C library allocates (strdup) by the program's call
        (here(), "past the C library", f"heap from dup_site ({src}:{at['dup']})" in objects,
         heaps),
        # past an allocator inlined from a system header
        (here(), "past a system header", f"heap from hdr_site ({src}:{at['hdr']})" in objects,
         heaps),
        # start-up frames by their symbols, without a version
        (here(), "below main", "__libc_start_call_main" in below and "(below main)" not in below
         and not any("@" in n for n in below), sorted(below)[:12]),
        # main's 64 strlen calls load strlen@plt's GOT slot 64 times: the
        # first before lazy binding stores the slot, the second reads the
        # new value (use), the other 62 the same again: 62 x 8 bytes of waste;
        # print_site's 256 snprintf calls 254 x 8
        (here(), "PLT stub", plt.get("strlen@plt") == 62 * 8
         and plt.get("snprintf@plt") == 254 * 8, plt),
        # a weak alias (snprintf) by its global symbol, as libdwfl names it
        (here(), "global alias", "__snprintf" in below and "snprintf" not in below,
         sorted(n for n in below if "printf" in n)),
    ]
    failures = 0
    for line, what, ok, got in rows:
        if not ok:
            print(f"{__file__}:{line}: {what}: got {got}")
            failures += 1
    print(f"check_names: {'FAIL' if failures else 'PASS'} {len(rows) - failures} of {len(rows)} rows")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
