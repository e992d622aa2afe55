#!/bin/bash
# accuracy.sh: sampled libwitch profiles against an exhaustive oracle
# (issue 7): waste-fraction differences, top pairs, and overhead.
#
# usage: bench/accuracy.sh BUILD_DIR [--quick] [--out DIR] [--jobs N] [--check]
#
# Writes DIR/accuracy.md (also printed), accuracy.png and accuracy.json
# (default DIR: ./accuracy-results).  ~20 min on a 2-core VM; --quick ~3 min
# (CI: `bench/accuracy.sh BUILD --quick --check`).  The work is in
# bench/accuracy.py; Debian's own python3 runs it, since it has
# python3-matplotlib (a python3 earlier on PATH may not).
set -u
exec /usr/bin/python3 "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/accuracy.py" "$@"
