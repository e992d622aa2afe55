#!/bin/sh
# witch report --json's "sampled" list: the contexts by the bytes their
# samples stand for, largest first.  250 contexts, context i (1..250)
# standing for i bytes: the total is 250 x 251 / 2 = 31375 either way; the
# list holds the largest 200 (250 down to 51) by default and with --top 5
# (--top limits pairs and objects, not this list), all 250 with --top 0.
#
# Usage: test_sampled_list.sh PATH/TO/witch
set -eu
WITCH=${1:?usage: test_sampled_list.sh PATH/TO/witch}
case $WITCH in /*) ;; *) WITCH=$(pwd)/$WITCH ;; esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 - "$WITCH" "$T" <<'PYEOF'
import json, os, subprocess, sys
witch, work = sys.argv[1:3]
prof = os.path.join(work, "many.prof")
lines = ["witch-profile 1", "client dead", "sampler soft", "stat samples 250", "pid 1",
         "exe /bin/true"]
for i in range(1, 251):
    lines.append("node %d 0 %#x" % (i, 0x401000 + 16 * i))
    lines.append("sampled %d %d" % (i, i))
open(prof, "w").write("\n".join(lines + ["end", ""]))
failures = 0
for args, want in [([], list(range(250, 50, -1))), (["--top", "5"], list(range(250, 50, -1))),
                   (["--top", "0"], list(range(250, 0, -1)))]:
    p = subprocess.run([witch, "report", "--json"] + args + [prof], capture_output=True, text=True)
    if p.returncode != 0:
        print("FAIL: report %s: rc %d %s" % (args, p.returncode, p.stderr))
        failures += 1
        continue
    j = json.loads(p.stdout)
    got = [s["bytes"] for s in j["sampled"]]
    if got != want or j["sampled_total"] != 31375:
        print("FAIL: report --json %s: %d listed (%s..%s), total %s; want %d (%d..%d), 31375"
              % (" ".join(args), len(got), got[:1], got[-1:], j["sampled_total"], len(want),
                 want[0], want[-1]))
        failures += 1
if failures:
    sys.exit(1)
print("test_sampled_list: all checks passed")
PYEOF
